//===- ValueShapes.cpp - result dims read from operand values at run time --===//
//
// Reshape, Expand, Tile and Slice take their result's shape from operands
// (a shape, repeats, bounds) that may be known only at run time: a graph
// input, or computed from one. Their result type then has dynamic dims, and
// the lowering here computes those dims from the operands' values
// (tensor.extract), states what the values must meet as checks (the
// function's prepare evaluates them and names the node,
// docs/dynamic-shapes.md), and moves the data by a generic that reads the
// input at computed indices. Pad, Resize, Range, ConstantOfShape and TopK,
// whose static lowerings already read their operands, take the same dims
// helpers (DataMovement.cpp, TopK.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::lowering;

namespace {
using Pred = arith::CmpIPredicate;

/// Index arithmetic at one place, so the formulas below read as formulas.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivSIOp::create(b, loc, x, y); }
  Value rem(Value x, Value y) { return arith::RemSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value cmp(Pred p, Value x, Value y) { return arith::CmpIOp::create(b, loc, p, x, y); }
  Value select(Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y); }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value either(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value clamp(Value x, Value lo, Value hi) { return min(max(x, lo), hi); }
  /// A divisor that is never 0 (a check reports the 0 itself).
  Value nonzero(Value x) { return select(cmp(Pred::eq, x, c(0)), c(1), x); }
  /// x * y for x, y >= 0, clearing `fits` when the product leaves int64
  /// (values that fail a check reach here too: prepare evaluates them all).
  Value checkedMul(Value x, Value y, Value &fits) {
    Type i64 = b.getI64Type();
    auto wide = arith::MulSIExtendedOp::create(b, loc, arith::IndexCastOp::create(b, loc, i64, x),
                                               arith::IndexCastOp::create(b, loc, i64, y));
    Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
    Value inRange = both(arith::CmpIOp::create(b, loc, Pred::eq, wide.getHigh(), zero),
                         arith::CmpIOp::create(b, loc, Pred::sge, wide.getLow(), zero));
    fits = both(fits, inRange);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), wide.getLow());
  }
};

/// Whether every operand after the first (the data) has a static shape: the
/// shape-giving operands' lengths fix the result's rank.
bool staticParameters(Operation *op) {
  return llvm::all_of(op->getOperands().drop_front(), [](Value v) {
    return cast<RankedTensorType>(v.getType()).hasStaticShape();
  });
}

/// A tensor of `type` (dynamic dims `sizes`) whose element at each index is
/// `input` read where `at` maps that index; written into `init` when given.
Value readAt(OpBuilder &b, Location loc, RankedTensorType type, Value input, ValueRange sizes,
             function_ref<SmallVector<Value>(IndexMath &, ArrayRef<Value>)> at, Value init = {}) {
  return buildGather(
      b, loc, type,
      [&](OpBuilder &nb, Location nl, ArrayRef<Value> out) {
        IndexMath n{nb, nl};
        return tensor::ExtractOp::create(nb, nl, input, at(n, out)).getResult();
      },
      sizes, init);
}

/// Whether one of the patterns below lowers `op`: it has a dynamic dim, on
/// its result (read from the operands' values) or on its data.
bool lowersHere(Operation *op) {
  auto dynamic = [](Type t) { return !cast<RankedTensorType>(t).hasStaticShape(); };
  if (!isValueShaped(op))
    return false;
  // An Expand's result can be static while its shape is not known (an input
  // dim > 1 decides): the shape is still checked.
  if (auto expand = dyn_cast<nn::ExpandOp>(op))
    if (!nn::getConstantInts(expand.getShape()))
      return true;
  return llvm::any_of(op->getResultTypes(), dynamic) || llvm::any_of(op->getOperandTypes(), dynamic);
}

/// Reshape: the shape's -1 is inferred and a 0 copies the input's dim
/// (unless allowzero).
struct ReshapePattern : OpConversionPattern<nn::ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::ReshapeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto type = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    if (!lowersHere(op))
      return failure();
    Location loc = op.getLoc();
    IndexMath m{b, loc};
    Value input = adaptor.getInput(), shape = adaptor.getShape();
    int64_t inRank = tensorType(input).getRank(), rank = type.getRank();
    Value count = m.c(1);
    for (int64_t d = 0; d < inRank; ++d)
      count = m.mul(count, dimOf(b, loc, input, d));
    SmallVector<Value> dims, inferred;
    Value known = m.c(1), minusOnes = m.c(0);
    for (int64_t i = 0; i < rank; ++i) {
      Value s = shapeElement(b, loc, op.getShape(), shape, i);
      // A dim of a tensor (PyTorch's Shape -> Gather -> Concat) is never -1:
      // saying so keeps the result's dims plain dims, which later analyses
      // (bufferization's) follow layer after layer.
      std::optional<nn::ShapeElement> traced = nn::traceShapeElement(op.getShape(), i);
      bool isDim = traced && traced->of && !traced->computed;
      if (!isDim)
        check(b, loc, m.cmp(Pred::sge, s, m.c(-1)), "a dim of the shape is below -1");
      Value isInferred = isDim ? arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0).getResult()
                               : m.cmp(Pred::eq, s, m.c(-1));
      Value dim = s;
      if (!op.getAllowzero()) {
        Value isZero = m.cmp(Pred::eq, s, m.c(0));
        if (i < inRank)
          dim = m.select(isZero, dimOf(b, loc, input, i), s);
        else
          check(b, loc, m.cmp(Pred::ne, s, m.c(0)),
                "a 0 in the shape copies an input dim, but the input has fewer dims");
      }
      known = m.mul(known, m.select(isInferred, m.c(1), dim));
      minusOnes = m.add(minusOnes, m.select(isInferred, m.c(1), m.c(0)));
      dims.push_back(dim);
      inferred.push_back(isInferred);
    }
    check(b, loc, m.cmp(Pred::sle, minusOnes, m.c(1)), "the shape has more than one -1");
    // A positive divisor: prepare evaluates every check, so this runs with
    // values that failed one (a negative dim) too.
    Value rest = m.div(count, m.select(m.cmp(Pred::sgt, known, m.c(0)), known, m.c(1)));
    // The product of the dims, past int64 or not: with a 0 among them the
    // count is 0 whatever the others ([2^40, 2^40, 0] with allowzero).
    Value product = m.c(1), fits = m.cmp(Pred::eq, m.c(0), m.c(0)), empty = m.cmp(Pred::ne, m.c(0), m.c(0));
    for (int64_t i = 0; i < rank; ++i) {
      // Where the type knows the -1's size (the other dims copy or name the
      // input's: [N, 364] to [N, -1]), that size, which the count check
      // below confirms; a quotient of counts (N * 364 / N) no check on
      // counts could prove before the run.
      Value size = type.isDynamicDim(i) ? rest : m.c(type.getDimSize(i));
      dims[i] = m.select(inferred[i], size, dims[i]);
      product = m.checkedMul(product, dims[i], fits);
      empty = m.either(empty, m.cmp(Pred::eq, dims[i], m.c(0)));
    }
    Value zero = m.cmp(Pred::eq, count, m.c(0));
    check(b, loc,
          m.either(m.both(fits, m.cmp(Pred::eq, product, count)), m.both(empty, zero)),
          "the shape's element count differs from the input's");
    // Checks the static dims of the result against the shape's.
    resultSizes(b, loc, type, dims);

    // The input as one dim.
    Value flat = input;
    if (inRank == 0) {
      flat = tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get({1}, type.getElementType()),
                                           input, ArrayRef<ReassociationIndices>{});
    } else if (inRank > 1) {
      ReassociationIndices all;
      for (int64_t d = 0; d < inRank; ++d)
        all.push_back(d);
      flat = tensor::CollapseShapeOp::create(b, loc, input, ArrayRef<ReassociationIndices>{all});
    }
    // The flat input expanded to the result's dims: a view, no copy (a
    // group of several dynamic dims is cast by nnc-expand-dynamic-views).
    bool dynamic = !type.hasStaticShape();
    int64_t length = dynamic ? ShapedType::kDynamic : type.getNumElements();
    flat = tensor::CastOp::create(b, loc, RankedTensorType::get({length}, type.getElementType()), flat);
    if (rank == 0) {
      b.replaceOpWithNewOp<tensor::CollapseShapeOp>(op, type, flat, ArrayRef<ReassociationIndices>{});
      return success();
    }
    if (rank == 1) {
      b.replaceOpWithNewOp<tensor::CastOp>(op, type, flat);
      return success();
    }
    ReassociationIndices all;
    SmallVector<OpFoldResult> outputShape;
    for (int64_t d = 0; d < rank; ++d) {
      all.push_back(d);
      outputShape.push_back(type.isDynamicDim(d) ? OpFoldResult(dims[d])
                                                 : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
    }
    b.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, type, flat, ArrayRef<ReassociationIndices>{all},
                                                outputShape);
    return success();
  }
};

/// Expand: NumPy broadcasting of the input against the shape; a dim of 1 on
/// the input's side reads index 0.
struct ExpandPattern : OpConversionPattern<nn::ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::ExpandOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto type = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    if (!lowersHere(op))
      return failure();
    Location loc = op.getLoc();
    IndexMath m{b, loc};
    Value input = adaptor.getInput(), shape = adaptor.getShape();
    auto inType = tensorType(input);
    int64_t rank = type.getRank(), inRank = inType.getRank(),
            shapeLength = tensorType(shape).getDimSize(0);
    SmallVector<Value> dims, reads; // reads: the input's dim is 1 (read index 0)
    for (int64_t d = 0; d < rank; ++d) {
      int64_t k = d - (rank - inRank), j = d - (rank - shapeLength);
      Value s = j >= 0 ? shapeElement(b, loc, op.getShape(), shape, j) : m.c(1);
      check(b, loc, m.cmp(Pred::sge, s, m.c(0)), "a dim of the shape is negative");
      if (k < 0) {
        dims.push_back(s);
        continue;
      }
      Value in = dimOf(b, loc, input, k);
      Value one = m.cmp(Pred::eq, in, m.c(1));
      check(b, loc,
            m.either(one, m.either(m.cmp(Pred::eq, s, m.c(1)), m.cmp(Pred::eq, s, in))),
            "the shape does not broadcast with the input");
      dims.push_back(m.select(one, s, in));
      reads.push_back(one);
    }
    SmallVector<Value> sizes = resultSizes(b, loc, type, dims);
    b.replaceOp(op, readAt(b, loc, type, input, sizes, [&](IndexMath &n, ArrayRef<Value> out) {
      SmallVector<Value> at;
      for (int64_t k = 0; k < inRank; ++k)
        at.push_back(n.select(reads[k], n.c(0), out[k + rank - inRank]));
      return at;
    }));
    return success();
  }
};

/// Tile: the input repeated along each dim; index i reads i mod the dim.
struct TilePattern : OpConversionPattern<nn::TileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::TileOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto type = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    if (!lowersHere(op))
      return failure();
    Location loc = op.getLoc();
    IndexMath m{b, loc};
    Value input = adaptor.getInput();
    int64_t rank = type.getRank();
    SmallVector<Value> in, dims;
    for (int64_t d = 0; d < rank; ++d) {
      Value r = shapeElement(b, loc, op.getRepeats(), adaptor.getRepeats(), d);
      check(b, loc, m.cmp(Pred::sge, r, m.c(0)), "a repeat count is negative");
      in.push_back(dimOf(b, loc, input, d));
      Value fits = m.cmp(Pred::eq, m.c(0), m.c(0));
      dims.push_back(m.checkedMul(in.back(), r, fits));
      check(b, loc, fits, "a repeated dim is too large");
    }
    SmallVector<Value> sizes = resultSizes(b, loc, type, dims);
    b.replaceOp(op, readAt(b, loc, type, input, sizes, [&](IndexMath &n, ArrayRef<Value> out) {
      SmallVector<Value> at;
      for (int64_t d = 0; d < rank; ++d)
        at.push_back(n.rem(out[d], in[d]));
      return at;
    }));
    return success();
  }
};

/// Slice with bounds, axes or steps known at run time, with ONNX's rules:
/// negative bounds count from the end, bounds clamp to the dim (to [0,
/// dim - 1] and [-1, dim - 1] for a negative step), and the result has
/// ceil((end - start) / step) elements, at least 0.
struct SlicePattern : OpConversionPattern<nn::SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::SliceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto type = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    if (!lowersHere(op))
      return failure();
    Location loc = op.getLoc();
    IndexMath m{b, loc};
    Value input = adaptor.getInput();
    int64_t rank = type.getRank(), count = tensorType(adaptor.getStarts()).getDimSize(0);
    SmallVector<Value> axes, starts, ends, steps;
    for (int64_t i = 0; i < count; ++i) {
      Value a = shapeElement(b, loc, op.getAxes(), adaptor.getAxes(), i);
      check(b, loc, m.both(m.cmp(Pred::sge, a, m.c(-rank)), m.cmp(Pred::slt, a, m.c(rank))),
            "an axis is out of range");
      axes.push_back(m.select(m.cmp(Pred::slt, a, m.c(0)), m.add(a, m.c(rank)), a));
      for (int64_t j = 0; j < i; ++j)
        check(b, loc, m.cmp(Pred::ne, axes[j], axes[i]), "an axis is repeated");
      starts.push_back(shapeElement(b, loc, op.getStarts(), adaptor.getStarts(), i));
      ends.push_back(shapeElement(b, loc, op.getEnds(), adaptor.getEnds(), i));
      steps.push_back(shapeElement(b, loc, op.getSteps(), adaptor.getSteps(), i));
      check(b, loc, m.cmp(Pred::ne, steps.back(), m.c(0)), "a step is 0");
    }
    SmallVector<Value> first, step, dims;
    std::optional<SmallVector<int64_t>> namedAxes = nn::getConstantInts(op.getAxes());
    auto untouched = [&](int64_t d) {
      return namedAxes && llvm::none_of(*namedAxes, [&](int64_t a) { return a == d || a + rank == d; });
    };
    for (int64_t d = 0; d < rank; ++d) {
      Value dim = dimOf(b, loc, input, d);
      // The slice of dim d: the last axis naming it (they are distinct).
      Value start = m.c(0), end = dim, stride = m.c(1);
      for (int64_t i = 0; i < count; ++i) {
        Value here = m.cmp(Pred::eq, axes[i], m.c(d));
        start = m.select(here, starts[i], start);
        end = m.select(here, ends[i], end);
        stride = m.select(here, steps[i], stride);
      }
      start = m.select(m.cmp(Pred::slt, start, m.c(0)), m.add(start, dim), start);
      end = m.select(m.cmp(Pred::slt, end, m.c(0)), m.add(end, dim), end);
      Value forward = m.cmp(Pred::sgt, stride, m.c(0));
      Value last = m.sub(dim, m.c(1));
      start = m.select(forward, m.clamp(start, m.c(0), dim), m.clamp(start, m.c(0), last));
      end = m.select(forward, m.clamp(end, m.c(0), dim), m.clamp(end, m.c(-1), last));
      // The distance covered, along the step's direction, and how many steps
      // fit: ceil(distance / |step|), written so that no sum can overflow.
      Value distance = m.select(forward, m.sub(end, start), m.sub(start, end));
      Value magnitude = m.nonzero(m.select(forward, stride, m.sub(m.c(0), stride)));
      Value size = m.select(m.cmp(Pred::sgt, distance, m.c(0)),
                            m.add(m.div(m.sub(distance, m.c(1)), magnitude), m.c(1)), m.c(0));
      // |INT64_MIN| wraps to itself: a distance below it takes one step.
      size = m.select(m.cmp(Pred::slt, magnitude, m.c(0)),
                      m.select(m.cmp(Pred::sgt, distance, m.c(0)), m.c(1), m.c(0)), size);
      first.push_back(start);
      step.push_back(stride);
      // A dim no axis names is the input's, itself (a count stays the same
      // count: what it meets can be checked against it).
      if (untouched(d)) {
        dims.push_back(dim);
        continue;
      }
      dims.push_back(type.isDynamicDim(d) ? boundByOperand(b, loc, op, size, dim) : size);
    }
    SmallVector<Value> sizes = resultSizes(b, loc, type, dims);
    // Positive steps known when compiling (a causal mask cut to the
    // sequence's length): a view of the input, which its readers read in
    // place and vectorize, not a copy of its elements one at a time.
    if (std::optional<SmallVector<int64_t>> constantSteps = nn::getConstantInts(op.getSteps()),
        constantAxes = nn::getConstantInts(op.getAxes());
        constantSteps && constantAxes &&
        llvm::all_of(*constantSteps, [](int64_t s) { return s > 0; }) &&
        llvm::all_of(*constantAxes, [&](int64_t a) { return a >= -rank && a < rank; })) {
      SmallVector<OpFoldResult> offsets, extents, strides(rank, b.getIndexAttr(1));
      for (auto [axis, stride] : llvm::zip(*constantAxes, *constantSteps))
        strides[axis < 0 ? axis + rank : axis] = b.getIndexAttr(stride);
      for (int64_t d = 0; d < rank; ++d) {
        offsets.push_back(first[d]);
        extents.push_back(type.isDynamicDim(d) ? OpFoldResult(dims[d])
                                               : b.getIndexAttr(type.getDimSize(d)));
      }
      b.replaceOp(op, tensor::ExtractSliceOp::create(b, loc, type, input, offsets, extents, strides));
      return success();
    }
    // A slice of a static input is never larger: its buffer is the input's
    // size, so the workspace is known when the bounds are computed in the
    // run (axes given at run time, RuntimeParameters.cpp).
    Value init;
    auto inputType = tensorType(input);
    // (An empty input's slices are empty: no init, whose zero offsets the
    // verifier would find past the end of a zero-sized dim.)
    if (inputType.hasStaticShape() && inputType.getNumElements() > 0 && !type.hasStaticShape()) {
      Value whole = emptyTensor(b, loc, RankedTensorType::get(inputType.getShape(), type.getElementType()), {});
      SmallVector<OpFoldResult> zeros(rank, b.getIndexAttr(0)), ones(rank, b.getIndexAttr(1)), extents;
      for (int64_t d = 0; d < rank; ++d)
        extents.push_back(type.isDynamicDim(d) ? OpFoldResult(dims[d]) : b.getIndexAttr(type.getDimSize(d)));
      init = tensor::ExtractSliceOp::create(b, loc, type, whole, zeros, extents, ones);
    }
    b.replaceOp(op, readAt(b, loc, type, input, sizes, [&](IndexMath &n, ArrayRef<Value> out) {
      SmallVector<Value> at;
      for (int64_t d = 0; d < rank; ++d)
        at.push_back(n.add(first[d], n.mul(out[d], step[d])));
      return at;
    }, init));
    return success();
  }
};

/// A run-time condition on operand values: one of the function's checks,
/// the input passed on.
struct CheckPattern : OpConversionPattern<nn::CheckOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::CheckOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Value holds = scalarElement(b, op.getLoc(), op.getHolds(), 0);
    if (!holds)
      holds = tensor::ExtractOp::create(b, op.getLoc(), adaptor.getHolds(), ValueRange{});
    check(b, op.getLoc(), holds, op.getMessage());
    b.replaceOp(op, adaptor.getInput());
    return success();
  }
};
} // namespace

bool lowering::isValueShaped(Operation *op) {
  // Resize reads its input's dims as constants (DataMovement.cpp).
  if (auto resize = dyn_cast<nn::ResizeOp>(op))
    return staticParameters(op) && tensorType(resize.getInput()).hasStaticShape();
  if (!isa<nn::ReshapeOp, nn::ExpandOp, nn::TileOp, nn::SliceOp, nn::PadOp, nn::RangeOp,
           nn::ConstantOfShapeOp, nn::TopKOp>(op))
    return false;
  return staticParameters(op);
}

/// shapeElement, inside `depth` computed elements: each evaluates both of
/// its operands, so the depth is bounded as nn::traceShapeElement bounds it.
static Value shapeElementAt(ConversionPatternRewriter &b, Location loc, Value original,
                            Value converted, int64_t i, int depth) {
  std::optional<nn::ShapeElement> e = nn::traceShapeElement(original, i);
  if (e && e->computed && depth >= 4)
    e.reset();
  if (e) {
    if (e->constant)
      return arith::ConstantIndexOp::create(b, loc, *e->constant);
    if (e->of) {
      if (Value of = b.getRemappedValue(e->of))
        return dimOf(b, loc, of, e->dim);
    } else if (Operation *op = e->computed) {
      // Computed from dims, so that what the dims give is known before the
      // run (the shape function computes it the same way).
      SmallVector<Value> operands;
      for (Value operand : op->getOperands()) {
        int64_t at = tensorType(operand).getNumElements() == 1 ? 0 : e->dim;
        operands.push_back(shapeElementAt(b, loc, operand, b.getRemappedValue(operand), at, depth + 1));
      }
      // In the op's own integer type, wrapping as the run's elementwise
      // op does (an i32 product past 2^31 is negative there too); index
      // arithmetic is already i64's.
      auto type = cast<IntegerType>(getElementTypeOrSelf(op->getResult(0).getType()));
      bool wide = type.getWidth() == 64 && !type.isUnsigned();
      Type narrow = wide ? Type(b.getIndexType()) : Type(b.getIntegerType(type.getWidth()));
      Value x = operands[0], y = operands[1];
      if (!wide) {
        x = arith::IndexCastOp::create(b, loc, narrow, x);
        y = arith::IndexCastOp::create(b, loc, narrow, y);
      }
      Value result;
      if (isa<nn::AddOp>(op)) {
        result = arith::AddIOp::create(b, loc, x, y);
      } else if (isa<nn::SubOp>(op)) {
        result = arith::SubIOp::create(b, loc, x, y);
      } else if (isa<nn::MulOp>(op)) {
        result = arith::MulIOp::create(b, loc, x, y);
      } else {
        // A division by zero is refused rather than taken as the run's 0:
        // no shape divides by zero on purpose.
        Value zero = scalarConstant(b, loc, narrow, 0);
        check(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, y, zero),
              "a shape divides by zero");
        result = integerDivide(b, loc, x, y, type.isUnsigned());
      }
      if (wide)
        return result;
      if (type.isUnsigned())
        return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), result);
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), result);
    }
  }
  if (Value scalar = scalarElement(b, loc, original, i)) {
    if (isUnsignedType(original.getType()))
      return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), scalar);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), scalar);
  }
  return elementIndex(b, loc, converted, i);
}

Value lowering::shapeElement(ConversionPatternRewriter &b, Location loc, Value original,
                             Value converted, int64_t i) {
  return shapeElementAt(b, loc, original, converted, i, 0);
}

Value lowering::elementIndex(OpBuilder &b, Location loc, Value tensor, int64_t i) {
  // A constant's element as a constant, so that static shapes stay static.
  DenseIntElementsAttr constant;
  if (matchPattern(tensor, m_Constant(&constant)))
    return arith::ConstantIndexOp::create(b, loc, constant.getValues<APInt>()[i].getSExtValue());
  // A 0-D tensor holds one element (a TopK's k given as a scalar).
  SmallVector<Value> at;
  if (tensorType(tensor).getRank() != 0)
    at.push_back(arith::ConstantIndexOp::create(b, loc, i));
  Value raw = tensor::ExtractOp::create(b, loc, tensor, at);
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
}

SmallVector<Value> lowering::resultSizes(OpBuilder &b, Location loc, RankedTensorType type,
                                         ArrayRef<Value> dims) {
  SmallVector<Value> dynamic;
  for (auto [d, size] : llvm::enumerate(dims)) {
    if (type.isDynamicDim(d)) {
      dynamic.push_back(size);
      continue;
    }
    Value stated = arith::ConstantIndexOp::create(b, loc, type.getDimSize(d));
    checkSameSize(b, loc, size, stated,
                  "dim " + Twine(d) + " computed from the operands and its size known when compiling");
  }
  return dynamic;
}

void lowering::populateValueShapePatterns(NNTypeConverter &converter, RewritePatternSet &patterns) {
  // Before the static lowerings of the same ops, which need static results.
  patterns.add<ReshapePattern, ExpandPattern, TilePattern, SlicePattern>(converter,
                                                                          patterns.getContext(), 5);
  patterns.add<CheckPattern>(converter, patterns.getContext());
}
