//===- ScalarElements.cpp - small nn tensors' elements as scalars --------===//
//
// A shape given at run time often goes through a few nn ops before it
// reaches a Reshape or a Slice: an Unsqueeze whose axes are an input is a
// Reshape to a shape computed by comparisons, sums and a gather over its axes
// (frontends/ONNX/RuntimeParameters.cpp). Read with tensor.extract, those
// elements would come from buffers the function computes, which the memory
// plan cannot size before the run and which the shape function would have to
// compute too. Instead, an element of such a small tensor is rebuilt here as
// scalar arithmetic on the elements of the function's inputs and on dims:
// code the shape function and the memory plan evaluate as they evaluate dims.
// What is not covered (large tensors, other ops) is read as before.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::lowering;

namespace {
/// Tensors evaluated element by element are shape-sized.
constexpr int64_t kMaxElements = 64;
/// Elements evaluated for one request: the ops below nest (a gather of a
/// reduction of comparisons), and each level multiplies the work.
constexpr int64_t kMaxEvaluations = 4096;

using Pred = arith::CmpIPredicate;

SmallVector<int64_t> delinearize(int64_t i, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> index(shape.size());
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    index[d] = shape[d] == 0 ? 0 : i % shape[d];
    i = shape[d] == 0 ? 0 : i / shape[d];
  }
  return index;
}

int64_t linearize(ArrayRef<int64_t> index, ArrayRef<int64_t> shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    i = i * shape[d] + index[d];
  return i;
}

bool small(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getNumElements() <= kMaxElements;
}

class Evaluator {
public:
  Evaluator(ConversionPatternRewriter &b, Location loc) : b(b), loc(loc) {}

  /// Element `i` (row-major) of `v`, signless, or null.
  Value at(Value v, int64_t i) {
    auto key = std::make_pair(v, i);
    if (auto found = memo.find(key); found != memo.end())
      return found->second;
    if (--budget < 0)
      return {};
    Value result = compute(v, i);
    memo[key] = result;
    return result;
  }

private:
  ConversionPatternRewriter &b;
  Location loc;
  DenseMap<std::pair<Value, int64_t>, Value> memo;
  int64_t budget = kMaxEvaluations;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i64(Value indexValue) {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), indexValue);
  }

  /// Element `i` of an operand broadcast to `shape`.
  Value broadcastAt(Value operand, ArrayRef<int64_t> shape, int64_t i) {
    ArrayRef<int64_t> own = tensorType(operand).getShape();
    SmallVector<int64_t> out = delinearize(i, shape), in(own.size());
    for (size_t d = 0; d < own.size(); ++d)
      in[d] = own[d] == 1 ? 0 : out[d + shape.size() - own.size()];
    return at(operand, linearize(in, own));
  }

  Value compute(Value v, int64_t i) {
    auto type = tensorType(v);
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      // An input's element, read from the argument itself: the shape
      // function and the plan are given the values of such inputs.
      // (A function whose signature the conversion changed holds its old
      // block detached, and maps its arguments.)
      Operation *parent = arg.getOwner()->getParentOp();
      if (parent && !isa<func::FuncOp>(parent))
        return {};
      Value converted = b.getRemappedValue(arg);
      if (!converted || !type.hasStaticShape())
        return {};
      SmallVector<Value> indices;
      for (int64_t x : delinearize(i, type.getShape()))
        indices.push_back(index(x));
      return tensor::ExtractOp::create(b, loc, converted, indices);
    }
    Operation *op = v.getDefiningOp();
    if (!op || !small(v))
      return {};
    ArrayRef<int64_t> shape = type.getShape();
    Type element = signlessElement(type);
    bool isUnsigned = isUnsignedType(type);

    if (auto constant = dyn_cast<nn::ConstantOp>(op)) {
      Attribute value = cast<ElementsAttr>(constant.getValue()).getValues<Attribute>()[i];
      if (auto integer = dyn_cast<IntegerAttr>(value))
        return arith::ConstantOp::create(b, loc, IntegerAttr::get(element, integer.getValue()));
      if (auto real = dyn_cast<FloatAttr>(value))
        return arith::ConstantOp::create(b, loc, real);
      if (auto flag = dyn_cast<BoolAttr>(value))
        return arith::ConstantOp::create(b, loc, b.getIntegerAttr(element, flag.getValue()));
      return {};
    }
    if (auto check = dyn_cast<nn::CheckOp>(op))
      return at(check.getInput(), i);
    if (auto dims = dyn_cast<nn::ShapeOp>(op)) {
      Value input = b.getRemappedValue(dims.getInput());
      return input ? i64(dimOf(b, loc, input, dims.getStart() + i)) : Value();
    }
    // Reshapes keep the row-major order.
    if (isa<nn::ReshapeOp, nn::UnsqueezeOp, nn::SqueezeOp, nn::FlattenOp>(op)) {
      Value input = op->getOperand(0);
      return tensorType(input).hasStaticShape() ? at(input, i) : Value();
    }
    if (auto cast = dyn_cast<nn::CastOp>(op)) {
      // Text is read by the run (Strings.cpp), not here: its element is an
      // address.
      if (isa<nn::StringType>(getElementTypeOrSelf(cast.getInput().getType())) ||
          isa<nn::StringType>(cast.getTo()))
        return Value();
      Value x = at(cast.getInput(), i);
      return x ? castScalar(b, loc, x, element, isUnsignedType(cast.getInput().getType()), isUnsigned)
               : Value();
    }
    if (auto no = dyn_cast<nn::NotOp>(op)) {
      Value x = at(no.getInput(), i);
      return x ? arith::XOrIOp::create(b, loc, x, arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1))
               : Value();
    }
    if (auto floor = dyn_cast<nn::FloorOp>(op)) {
      Value x = at(floor.getInput(), i);
      return x ? math::FloorOp::create(b, loc, x) : Value();
    }
    if (auto where = dyn_cast<nn::WhereOp>(op)) {
      Value c = broadcastAt(where.getCondition(), shape, i), x = broadcastAt(where.getX(), shape, i),
            y = broadcastAt(where.getY(), shape, i);
      return c && x && y ? arith::SelectOp::create(b, loc, c, x, y) : Value();
    }
    if (op->getNumOperands() == 2 && isElementwise(op))
      return binary(op, shape, i);
    if (auto gather = dyn_cast<nn::GatherOp>(op))
      return gatherAt(gather, i);
    if (isa<nn::ReduceSumOp, nn::ReduceMaxOp, nn::ReduceMinOp, nn::ReduceProdOp>(op))
      return reduceAt(op, i);
    if (auto cumsum = dyn_cast<nn::CumSumOp>(op))
      return cumsumAt(cumsum, i);
    if (auto slice = dyn_cast<nn::SliceOp>(op))
      return sliceAt(slice, i);
    if (auto concat = dyn_cast<nn::ConcatOp>(op)) {
      SmallVector<int64_t> out = delinearize(i, shape);
      int64_t axis = concat.getAxis();
      for (Value part : concat.getInputs()) {
        ArrayRef<int64_t> own = tensorType(part).getShape();
        if (out[axis] < own[axis])
          return at(part, linearize(out, own));
        out[axis] -= own[axis];
      }
      return {};
    }
    return {};
  }

  Value binary(Operation *op, ArrayRef<int64_t> shape, int64_t i) {
    Value x = broadcastAt(op->getOperand(0), shape, i), y = broadcastAt(op->getOperand(1), shape, i);
    if (!x || !y)
      return {};
    bool isUnsigned = isUnsignedType(op->getOperand(0).getType());
    if (isa<FloatType>(x.getType())) {
      using F = arith::CmpFPredicate;
      auto compare = [&](F p) { return Value(arith::CmpFOp::create(b, loc, p, x, y)); };
      return TypeSwitch<Operation *, Value>(op)
          .Case([&](nn::AddOp) { return arith::AddFOp::create(b, loc, x, y); })
          .Case([&](nn::SubOp) { return arith::SubFOp::create(b, loc, x, y); })
          .Case([&](nn::MulOp) { return arith::MulFOp::create(b, loc, x, y); })
          .Case([&](nn::DivOp) { return arith::DivFOp::create(b, loc, x, y); })
          .Case([&](nn::EqualOp) { return compare(F::OEQ); })
          .Case([&](nn::LessOp) { return compare(F::OLT); })
          .Case([&](nn::LessEqualOp) { return compare(F::OLE); })
          .Case([&](nn::GreaterOp) { return compare(F::OGT); })
          .Case([&](nn::GreaterEqualOp) { return compare(F::OGE); })
          .Default([](Operation *) { return Value(); });
    }
    auto compare = [&](Pred s, Pred u) {
      return Value(arith::CmpIOp::create(b, loc, isUnsigned ? u : s, x, y));
    };
    return TypeSwitch<Operation *, Value>(op)
        .Case([&](nn::AddOp) { return arith::AddIOp::create(b, loc, x, y); })
        .Case([&](nn::SubOp) { return arith::SubIOp::create(b, loc, x, y); })
        .Case([&](nn::MulOp) { return arith::MulIOp::create(b, loc, x, y); })
        .Case([&](nn::DivOp) { return integerDivide(b, loc, x, y, isUnsigned); })
        .Case([&](nn::MaxOp) {
          return isUnsigned ? Value(arith::MaxUIOp::create(b, loc, x, y))
                            : Value(arith::MaxSIOp::create(b, loc, x, y));
        })
        .Case([&](nn::MinOp) {
          return isUnsigned ? Value(arith::MinUIOp::create(b, loc, x, y))
                            : Value(arith::MinSIOp::create(b, loc, x, y));
        })
        .Case([&](nn::AndOp) { return arith::AndIOp::create(b, loc, x, y); })
        .Case([&](nn::OrOp) { return arith::OrIOp::create(b, loc, x, y); })
        .Case([&](nn::XorOp) { return arith::XOrIOp::create(b, loc, x, y); })
        .Case([&](nn::EqualOp) { return compare(Pred::eq, Pred::eq); })
        .Case([&](nn::LessOp) { return compare(Pred::slt, Pred::ult); })
        .Case([&](nn::LessEqualOp) { return compare(Pred::sle, Pred::ule); })
        .Case([&](nn::GreaterOp) { return compare(Pred::sgt, Pred::ugt); })
        .Case([&](nn::GreaterEqualOp) { return compare(Pred::sge, Pred::uge); })
        .Default([](Operation *) { return Value(); });
  }

  /// A gather at an index known only at run time: the candidates, selected.
  Value gatherAt(nn::GatherOp gather, int64_t i) {
    Value input = gather.getInput(), indices = gather.getIndices();
    if (!small(input) || !small(indices))
      return {};
    ArrayRef<int64_t> inShape = tensorType(input).getShape();
    ArrayRef<int64_t> idxShape = tensorType(indices).getShape();
    int64_t axis = gather.getAxis();
    SmallVector<int64_t> out = delinearize(i, tensorType(gather.getResult()).getShape());
    ArrayRef<int64_t> idxAt = ArrayRef<int64_t>(out).slice(axis, idxShape.size());
    Value position = at(indices, linearize(idxAt, idxShape));
    int64_t dim = inShape[axis];
    // Each candidate is a select (the ops built, beyond the elements read).
    budget -= dim;
    if (!position || budget < 0)
      return {};
    // As the Gather lowering reads it: negative positions count from the
    // end, then clamp to the dim (DataMovement.cpp, indexCoordinate).
    Value wrapped = isUnsignedType(indices.getType())
                        ? Value(arith::IndexCastUIOp::create(b, loc, b.getIndexType(), position))
                        : Value(arith::IndexCastOp::create(b, loc, b.getIndexType(), position));
    wrapped = arith::SelectOp::create(b, loc, arith::CmpIOp::create(b, loc, Pred::slt, wrapped, index(0)),
                                      arith::AddIOp::create(b, loc, wrapped, index(dim)), wrapped);
    wrapped = arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, wrapped, index(0)),
                                     index(dim - 1));
    SmallVector<int64_t> in;
    llvm::append_range(in, ArrayRef<int64_t>(out).take_front(axis));
    in.push_back(0);
    llvm::append_range(in, ArrayRef<int64_t>(out).drop_front(axis + idxShape.size()));
    Value result;
    for (int64_t j = 0; j < dim; ++j) {
      in[axis] = j;
      Value candidate = at(input, linearize(in, inShape));
      if (!candidate)
        return {};
      if (!result) {
        result = candidate;
        continue;
      }
      Value here = arith::CmpIOp::create(b, loc, Pred::eq, wrapped, index(j));
      result = arith::SelectOp::create(b, loc, here, candidate, result);
    }
    return result;
  }

  Value combine(Operation *op, Value acc, Value x) {
    bool isFloat = isa<FloatType>(x.getType());
    bool isUnsigned = isUnsignedType(op->getOperand(0).getType());
    return TypeSwitch<Operation *, Value>(op)
        .Case([&](nn::ReduceSumOp) {
          return isFloat ? Value(arith::AddFOp::create(b, loc, acc, x))
                         : Value(arith::AddIOp::create(b, loc, acc, x));
        })
        .Case([&](nn::ReduceProdOp) {
          return isFloat ? Value(arith::MulFOp::create(b, loc, acc, x))
                         : Value(arith::MulIOp::create(b, loc, acc, x));
        })
        .Case([&](nn::ReduceMaxOp) {
          if (isFloat)
            return poolMax(b, loc, acc, x);
          return isUnsigned ? Value(arith::MaxUIOp::create(b, loc, acc, x))
                            : Value(arith::MaxSIOp::create(b, loc, acc, x));
        })
        .Case([&](nn::ReduceMinOp) {
          if (isFloat)
            return poolMin(b, loc, acc, x);
          return isUnsigned ? Value(arith::MinUIOp::create(b, loc, acc, x))
                            : Value(arith::MinSIOp::create(b, loc, acc, x));
        })
        .Default([](Operation *) { return Value(); });
  }

  /// A reduction's element: its input's elements over the reduced dims,
  /// combined in order (an empty reduction is not evaluated here).
  Value reduceAt(Operation *op, int64_t i) {
    Value input = op->getOperand(0);
    if (!small(input))
      return {};
    ArrayRef<int64_t> inShape = tensorType(input).getShape();
    auto axes = cast<DenseI64ArrayAttr>(op->getAttr("axes")).asArrayRef();
    bool keep = cast<BoolAttr>(op->getAttr("keepdims")).getValue();
    SmallVector<int64_t> out = delinearize(i, tensorType(op->getResult(0)).getShape());
    // The input index with the kept dims fixed, the reduced ones at 0.
    SmallVector<int64_t> in;
    for (int64_t d = 0, o = 0; d < (int64_t)inShape.size(); ++d) {
      bool reduced = llvm::is_contained(axes, d);
      in.push_back(reduced ? 0 : out[o]);
      if (!reduced || keep)
        ++o;
    }
    int64_t count = 1;
    for (int64_t a : axes)
      count *= inShape[a];
    if (count == 0)
      return {};
    Value acc;
    for (int64_t k = 0; k < count; ++k) {
      int64_t rest = k;
      for (int64_t a = axes.size() - 1; a >= 0; --a) {
        in[axes[a]] = rest % inShape[axes[a]];
        rest /= inShape[axes[a]];
      }
      Value x = at(input, linearize(in, inShape));
      if (!x)
        return {};
      acc = acc ? combine(op, acc, x) : x;
      if (!acc)
        return {};
    }
    return acc;
  }

  Value cumsumAt(nn::CumSumOp cumsum, int64_t i) {
    Value input = cumsum.getInput();
    ArrayRef<int64_t> shape = tensorType(input).getShape();
    int64_t axis = cumsum.getAxis();
    SmallVector<int64_t> in = delinearize(i, shape);
    int64_t here = in[axis];
    Value acc;
    for (int64_t j = 0; j < shape[axis]; ++j) {
      bool counted = cumsum.getReverse() ? j >= here : j <= here;
      if (!counted || (cumsum.getExclusive() && j == here))
        continue;
      in[axis] = j;
      Value x = at(input, linearize(in, shape));
      if (!x)
        return {};
      acc = !acc ? x
                 : isa<FloatType>(x.getType()) ? Value(arith::AddFOp::create(b, loc, acc, x))
                                               : Value(arith::AddIOp::create(b, loc, acc, x));
    }
    if (acc)
      return acc;
    Type element = signlessElement(tensorType(input));
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  }

  /// A slice with constant bounds (a part of a computed list).
  Value sliceAt(nn::SliceOp slice, int64_t i) {
    auto starts = nn::getConstantInts(slice.getStarts()), ends = nn::getConstantInts(slice.getEnds()),
         axes = nn::getConstantInts(slice.getAxes()), steps = nn::getConstantInts(slice.getSteps());
    Value input = slice.getInput();
    if (!starts || !ends || !axes || !steps || !tensorType(input).hasStaticShape())
      return {};
    ArrayRef<int64_t> inShape = tensorType(input).getShape();
    SmallVector<int64_t> in = delinearize(i, tensorType(slice.getResult()).getShape());
    for (size_t k = 0; k < axes->size(); ++k) {
      int64_t rank = inShape.size();
      int64_t axis = (*axes)[k] < 0 ? (*axes)[k] + rank : (*axes)[k];
      int64_t dim = inShape[axis], step = (*steps)[k];
      int64_t start = (*starts)[k] < 0 ? (*starts)[k] + dim : (*starts)[k];
      start = step > 0 ? std::clamp<int64_t>(start, 0, dim) : std::clamp<int64_t>(start, 0, dim - 1);
      in[axis] = start + in[axis] * step;
    }
    return at(input, linearize(in, inShape));
  }
};
} // namespace

Value lowering::scalarElement(ConversionPatternRewriter &b, Location loc, Value original, int64_t i) {
  return Evaluator(b, loc).at(original, i);
}
