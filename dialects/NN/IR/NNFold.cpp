//===- NNFold.cpp - folders of nn ops -------------------------------------===//
//
// Folding exists to turn the shape arithmetic exporters emit (Shape -> Gather
// -> Concat -> Reshape, ConstantOfShape, Range) into constants, so folders
// evaluate small tensors only. Float math folds only where IEEE 754 defines
// the result exactly (+ - * /, 1 / x, min and max, comparisons, rounding to an
// integer, casts): the folded value is the one the compiled code would
// compute, so numerics do not depend on where they were computed (the one
// exception is nn-fold-batch-norm, which trades that for a pass over memory
// per norm). Exporters compute sizes in floats (torchvision's detection
// transform: ceil(size / stride) * stride). Each folder also removes ops that
// provably do nothing.
//
//===----------------------------------------------------------------------===//

#include "dialects/NN/IR/NNOps.h"

#include "mlir/IR/PatternMatch.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/APSInt.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace nnc::nn;

namespace {
/// Larger constants are weights, not shape arithmetic: never fold them.
constexpr int64_t kMaxFoldElements = 1 << 12;

/// A small constant tensor in row-major order: integers as int64, floats in
/// their element type's own semantics.
template <typename T> struct SmallTensor {
  SmallVector<int64_t> shape;
  SmallVector<T> data;
};
using IntTensor = SmallTensor<int64_t>;
using FloatTensor = SmallTensor<APFloat>;

/// The elements of `attr`, a dense constant of `Dense` kind no larger than
/// kMaxFoldElements, each as `read` gives it.
template <typename Dense, typename T, typename Element>
std::optional<SmallTensor<T>> readSmall(Attribute attr, function_ref<T(const Element &)> read) {
  auto dense = dyn_cast_or_null<Dense>(attr);
  if (!dense || dense.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  SmallTensor<T> t;
  t.shape.assign(dense.getType().getShape().begin(), dense.getType().getShape().end());
  for (const Element &v : dense.template getValues<Element>())
    t.data.push_back(read(v));
  return t;
}

std::optional<IntTensor> asInts(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseIntElementsAttr>(attr);
  bool isUnsigned = dense && (dense.getElementType().isUnsignedInteger() || dense.getElementType().isInteger(1));
  return readSmall<DenseIntElementsAttr, int64_t, APInt>(attr, [&](const APInt &v) {
    return isUnsigned ? (int64_t)v.getZExtValue() : v.getSExtValue();
  });
}

std::optional<FloatTensor> asFloats(Attribute attr) {
  return readSmall<DenseFPElementsAttr, APFloat, APFloat>(attr, [](const APFloat &v) { return v; });
}

/// The result type of `op` if it is a static tensor small enough to fold into.
RankedTensorType foldableType(Value result) {
  auto type = dyn_cast<RankedTensorType>(result.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() > kMaxFoldElements)
    return nullptr;
  return type;
}

/// Builds a constant of `type` (integer or float element type) from int64 values.
Attribute makeConstant(RankedTensorType type, ArrayRef<int64_t> values) {
  Type element = type.getElementType();
  if (auto intType = dyn_cast<IntegerType>(element)) {
    SmallVector<APInt> ints;
    for (int64_t v : values)
      ints.push_back(APInt(intType.getWidth(), (uint64_t)v, /*isSigned=*/!intType.isUnsigned(),
                           /*implicitTrunc=*/true));
    return DenseElementsAttr::get(type, ints);
  }
  if (auto floatType = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> floats;
    for (int64_t v : values) {
      APFloat f((double)v);
      bool lost;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      floats.push_back(f);
    }
    return DenseElementsAttr::get(type, floats);
  }
  return nullptr;
}

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Row-major index into a tensor of `shape` broadcast to `outShape`.
int64_t broadcastIndex(int64_t flat, ArrayRef<int64_t> outShape, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> outStrides = stridesOf(outShape), strides = stridesOf(shape);
  int64_t offset = outShape.size() - shape.size(), index = 0;
  for (size_t d = 0; d < outShape.size(); ++d) {
    int64_t coord = (flat / outStrides[d]) % outShape[d];
    if ((int64_t)d >= offset && shape[d - offset] != 1)
      index += coord * strides[d - offset];
  }
  return index;
}

/// Evaluates an elementwise op over broadcast integer operands into `type`.
Attribute foldElementwise(RankedTensorType type, ArrayRef<IntTensor> operands,
                          function_ref<std::optional<int64_t>(ArrayRef<int64_t>)> fn) {
  SmallVector<int64_t> out;
  SmallVector<int64_t> args(operands.size());
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    for (size_t k = 0; k < operands.size(); ++k)
      args[k] = operands[k].data[broadcastIndex(i, type.getShape(), operands[k].shape)];
    std::optional<int64_t> v = fn(args);
    if (!v)
      return nullptr;
    out.push_back(*v);
  }
  return makeConstant(type, out);
}

/// Evaluates an elementwise op over broadcast float operands into `type`:
/// floats of the operands' type, or booleans (comparisons).
Attribute foldFloatElementwise(RankedTensorType type, ArrayRef<FloatTensor> operands,
                               function_ref<std::optional<APFloat>(ArrayRef<APFloat>)> fn) {
  SmallVector<APFloat> out;
  SmallVector<APFloat> args;
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    args.clear();
    for (const FloatTensor &operand : operands)
      args.push_back(operand.data[broadcastIndex(i, type.getShape(), operand.shape)]);
    std::optional<APFloat> v = fn(args);
    if (!v)
      return nullptr;
    out.push_back(*v);
  }
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> bits;
    for (const APFloat &v : out)
      bits.push_back(!v.isZero());
    return DenseElementsAttr::get(type, bits);
  }
  if (!isa<FloatType>(type.getElementType()))
    return nullptr;
  return DenseElementsAttr::get(type, out);
}

/// Whether a maximum or minimum of `a` and `b` is left open by the compiled
/// code: it may pick either zero of a -0, +0 pair (poolMax in the lowering),
/// so such a result is not folded.
bool zerosOfBothSigns(const APFloat &a, const APFloat &b) {
  return a.isZero() && b.isZero() && a.isNegative() != b.isNegative();
}

/// A boolean as the float 0 or 1 that foldFloatElementwise reads back.
APFloat truth(bool v) { return APFloat(v ? 1.0f : 0.0f); }

/// Folds a shape-preserving op (reshape and friends) of a constant.
OpFoldResult foldReshapeLike(Operation *op, Attribute input) {
  Value result = op->getResult(0);
  // Equal static types: nothing moves. Equal dynamic ones say nothing of a
  // Reshape to a shape given at run time ([?, ?] to [?, ?] may transpose
  // the dims' sizes).
  auto same = dyn_cast<RankedTensorType>(result.getType());
  if (op->getOperand(0).getType() == result.getType() && (!isa<ReshapeOp>(op) || (same && same.hasStaticShape())))
    return op->getOperand(0);
  auto type = foldableType(result);
  if (!type)
    return {};
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(input))
    return dense.reshape(type);
  return {};
}
} // namespace

OpFoldResult nnc::nn::foldUnary(Operation *op, Attribute operand) {
  auto type = foldableType(op->getResult(0));
  if (!type)
    return {};
  StringRef name = op->getName().stripDialect();
  if (auto floats = asFloats(operand)) {
    auto round = [](APFloat v, APFloat::roundingMode mode) {
      v.roundToIntegral(mode);
      return v;
    };
    return foldFloatElementwise(type, {*floats}, [&](ArrayRef<APFloat> v) -> std::optional<APFloat> {
      if (name == "neg") return neg(v[0]);
      if (name == "abs") return abs(v[0]);
      if (name == "floor") return round(v[0], APFloat::rmTowardNegative);
      if (name == "ceil") return round(v[0], APFloat::rmTowardPositive);
      if (name == "round") return round(v[0], APFloat::rmNearestTiesToEven);
      // A division, correctly rounded as the compiled 1 / x (torchvision's
      // resize scale: min_size * (1 / size)).
      if (name == "reciprocal") {
        APFloat one(v[0].getSemantics(), 1);
        one.divide(v[0], APFloat::rmNearestTiesToEven);
        return one;
      }
      return std::nullopt;
    });
  }
  auto input = asInts(operand);
  if (!input)
    return {};
  // Unsigned values arrive zero-extended, the largest as negative int64s:
  // nothing of them is negative.
  bool isUnsigned = getElementTypeOrSelf(op->getOperand(0).getType()).isUnsignedInteger();
  auto fn = [&](ArrayRef<int64_t> v) -> std::optional<int64_t> {
    int64_t a = v[0];
    bool negative = !isUnsigned && a < 0;
    // Negation wraps, as in the compiled code.
    if (name == "neg") return (int64_t)(0 - (uint64_t)a);
    if (name == "abs") return negative ? (int64_t)(0 - (uint64_t)a) : a;
    if (name == "sign") return negative ? -1 : a != 0;
    if (name == "relu") return negative ? 0 : a;
    if (name == "not") return !a;
    return std::nullopt;
  };
  return foldElementwise(type, {*input}, fn);
}

OpFoldResult nnc::nn::foldBinary(Operation *op, ArrayRef<Attribute> operands) {
  auto type = foldableType(op->getResult(0));
  if (!type)
    return {};
  StringRef name = op->getName().stripDialect();
  if (auto x = asFloats(operands[0]), y = asFloats(operands[1]); x && y) {
    return foldFloatElementwise(type, {*x, *y}, [&](ArrayRef<APFloat> v) -> std::optional<APFloat> {
      APFloat a = v[0], b = v[1];
      auto apply = [&](APFloat::opStatus (APFloat::*fn)(const APFloat &, APFloat::roundingMode)) {
        (a.*fn)(b, APFloat::rmNearestTiesToEven);
        return a;
      };
      if (name == "add") return apply(&APFloat::add);
      if (name == "sub") return apply(&APFloat::subtract);
      if (name == "mul") return apply(&APFloat::multiply);
      if (name == "div") return apply(&APFloat::divide);
      // NaN-propagating, as the compiled max and min (arith.maximumf).
      if ((name == "max" || name == "min") && zerosOfBothSigns(a, b))
        return std::nullopt;
      if (name == "max") return maximum(a, b);
      if (name == "min") return minimum(a, b);
      APFloat::cmpResult order = a.compare(b);
      if (name == "equal") return truth(order == APFloat::cmpEqual);
      if (name == "less") return truth(order == APFloat::cmpLessThan);
      if (name == "less_equal") return truth(order == APFloat::cmpLessThan || order == APFloat::cmpEqual);
      if (name == "greater") return truth(order == APFloat::cmpGreaterThan);
      if (name == "greater_equal")
        return truth(order == APFloat::cmpGreaterThan || order == APFloat::cmpEqual);
      return std::nullopt; // pow, mod and friends are not exact
    });
  }
  auto lhs = asInts(operands[0]), rhs = asInts(operands[1]);
  if (!lhs || !rhs)
    return {};
  bool isUnsigned = getElementTypeOrSelf(op->getOperand(0).getType()).isUnsignedInteger();
  auto fn = [&](ArrayRef<int64_t> v) -> std::optional<int64_t> {
    int64_t a = v[0], b = v[1];
    // Integer tensors wrap like the compiled code's arithmetic (and unlike
    // int64 in C++, where overflow is undefined).
    if (name == "add") return (int64_t)((uint64_t)a + (uint64_t)b);
    if (name == "sub") return (int64_t)((uint64_t)a - (uint64_t)b);
    if (name == "mul") return (int64_t)((uint64_t)a * (uint64_t)b);
    if (name == "div") {
      // Division by zero and INT64_MIN / -1 have no value (the latter traps
      // here): left to the compiled code.
      if (b == 0 || (!isUnsigned && b == -1 && a == std::numeric_limits<int64_t>::min()))
        return std::nullopt;
      return isUnsigned ? (int64_t)((uint64_t)a / (uint64_t)b) : a / b;
    }
    // Unsigned values arrive zero-extended: the largest compare as unsigned.
    bool less = isUnsigned ? (uint64_t)a < (uint64_t)b : a < b;
    bool greater = isUnsigned ? (uint64_t)a > (uint64_t)b : a > b;
    if (name == "max") return greater ? a : b;
    if (name == "min") return less ? a : b;
    if (name == "and") return a && b;
    if (name == "or") return a || b;
    if (name == "xor") return (a != 0) != (b != 0);
    if (name == "equal") return a == b;
    if (name == "less") return less;
    if (name == "less_equal") return !greater;
    if (name == "greater") return greater;
    if (name == "greater_equal") return !less;
    return std::nullopt; // pow and friends are not shape arithmetic
  };
  return foldElementwise(type, {*lhs, *rhs}, fn);
}

OpFoldResult nnc::nn::foldReduce(Operation *op, Attribute operand, ArrayRef<int64_t> axes) {
  auto type = foldableType(op->getResult(0));
  auto inputType = cast<RankedTensorType>(op->getOperand(0).getType());
  // An empty input has no maximum or minimum (and its sum needs no folding).
  if (!type || !inputType.hasStaticShape() || inputType.getNumElements() == 0)
    return {};
  StringRef name = op->getName().stripDialect();
  // Each input element's place in the result: the reduced dims at 0, which
  // is also its place without them (keepdims or not).
  SmallVector<int64_t> kept(inputType.getShape());
  for (int64_t axis : axes)
    kept[axis] = 1;
  auto place = [&](int64_t i) { return broadcastIndex(i, inputType.getShape(), kept); };
  int64_t count = inputType.getNumElements();
  if (auto floats = asFloats(operand)) {
    // Only the order-free reductions: a sum's rounding depends on its order.
    bool isMax = name == "reduce_max";
    if (!isMax && name != "reduce_min")
      return {};
    SmallVector<std::optional<APFloat>> out(type.getNumElements());
    for (int64_t i = 0; i < count; ++i) {
      std::optional<APFloat> &slot = out[place(i)];
      const APFloat &v = floats->data[i];
      if (slot && zerosOfBothSigns(*slot, v))
        return {};
      slot = !slot ? v : isMax ? maximum(*slot, v) : minimum(*slot, v);
    }
    SmallVector<APFloat> values;
    for (std::optional<APFloat> &v : out)
      values.push_back(*v);
    return DenseElementsAttr::get(type, values);
  }
  auto ints = asInts(operand);
  if (!ints)
    return {};
  bool isUnsigned = getElementTypeOrSelf(op->getOperand(0).getType()).isUnsignedInteger();
  std::function<int64_t(int64_t, int64_t)> combine;
  // Wrapping, as the compiled code's integer arithmetic.
  if (name == "reduce_sum")
    combine = [](int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); };
  else if (name == "reduce_prod")
    combine = [](int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); };
  else if (name == "reduce_max")
    combine = [=](int64_t a, int64_t b) { return (isUnsigned ? (uint64_t)a < (uint64_t)b : a < b) ? b : a; };
  else if (name == "reduce_min")
    combine = [=](int64_t a, int64_t b) { return (isUnsigned ? (uint64_t)a > (uint64_t)b : a > b) ? b : a; };
  else
    return {};
  SmallVector<std::optional<int64_t>> out(type.getNumElements());
  for (int64_t i = 0; i < count; ++i) {
    std::optional<int64_t> &slot = out[place(i)];
    slot = slot ? combine(*slot, ints->data[i]) : ints->data[i];
  }
  SmallVector<int64_t> values;
  for (std::optional<int64_t> v : out)
    values.push_back(*v);
  return makeConstant(type, values);
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto type = foldableType(getResult());
  if (!type || !type.getElementType().isIntOrFloat())
    return {};
  Type to = type.getElementType();
  if (auto floats = asFloats(adaptor.getInput())) {
    if (auto real = dyn_cast<FloatType>(to)) {
      for (APFloat &v : floats->data) {
        bool lost;
        v.convert(real.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      }
      return DenseElementsAttr::get(type, floats->data);
    }
    if (to.isInteger(1)) {
      SmallVector<bool> bits;
      for (const APFloat &v : floats->data)
        bits.push_back(!v.isZero());
      return DenseElementsAttr::get(type, bits);
    }
    // Toward zero, as the compiled conversion; a value out of the integer
    // type's range has none (the compiled code's is undefined): not folded.
    SmallVector<APInt> ints;
    for (const APFloat &v : floats->data) {
      APSInt value(to.getIntOrFloatBitWidth(), to.isUnsignedInteger());
      bool exact;
      if (v.convertToInteger(value, APFloat::rmTowardZero, &exact) & APFloat::opInvalidOp)
        return {};
      ints.push_back(value);
    }
    return DenseElementsAttr::get(type, ints);
  }
  auto input = asInts(adaptor.getInput());
  if (!input)
    return {};
  if (auto real = dyn_cast<FloatType>(to)) {
    // Rounded once, from the integer (through a double, a 64-bit value
    // would round twice).
    bool isSigned = !getElementTypeOrSelf(getInput().getType()).isUnsignedInteger() &&
                    !getElementTypeOrSelf(getInput().getType()).isInteger(1);
    SmallVector<APFloat> values;
    for (int64_t v : input->data) {
      APFloat f(real.getFloatSemantics());
      f.convertFromAPInt(APInt(64, (uint64_t)v, isSigned), isSigned, APFloat::rmNearestTiesToEven);
      values.push_back(f);
    }
    return DenseElementsAttr::get(type, values);
  }
  if (to.isInteger(1))
    for (int64_t &v : input->data)
      v = v != 0;
  return makeConstant(type, input->data);
}

OpFoldResult ModOp::fold(FoldAdaptor adaptor) {
  // Of integers only (Swin Transformer pads its feature map to whole windows
  // by (w - size % w) % w); a float remainder is left to the compiled code.
  auto type = foldableType(getResult());
  auto lhs = asInts(adaptor.getLhs()), rhs = asInts(adaptor.getRhs());
  if (!type || !lhs || !rhs)
    return {};
  bool isUnsigned = getElementTypeOrSelf(getLhs().getType()).isUnsignedInteger();
  bool fmod = getFmod();
  return foldElementwise(type, {*lhs, *rhs}, [&](ArrayRef<int64_t> v) -> std::optional<int64_t> {
    int64_t a = v[0], b = v[1];
    // Left to the compiled code, as a division by zero.
    if (b == 0)
      return std::nullopt;
    if (isUnsigned)
      return (int64_t)((uint64_t)a % (uint64_t)b);
    // INT64_MIN % -1 traps in C++; its remainder is 0.
    int64_t r = b == -1 ? 0 : a % b;
    // The sign of the divisor, as Python's %.
    if (!fmod && r != 0 && (r < 0) != (b < 0))
      r += b;
    return r;
  });
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  auto condition = dyn_cast_or_null<DenseIntElementsAttr>(adaptor.getCondition());
  if (condition && condition.isSplat()) {
    Value picked = condition.getSplatValue<bool>() ? getX() : getY();
    if (picked.getType() == getType())
      return picked;
  }
  auto type = foldableType(getResult());
  auto c = asInts(adaptor.getCondition()), x = asInts(adaptor.getX()), y = asInts(adaptor.getY());
  if (!type || !c || !x || !y)
    return {};
  return foldElementwise(type, {*c, *x, *y},
                         [](ArrayRef<int64_t> v) -> std::optional<int64_t> { return v[0] ? v[1] : v[2]; });
}

OpFoldResult ShapeOp::fold(FoldAdaptor) {
  auto input = cast<RankedTensorType>(getInput().getType());
  ArrayRef<int64_t> dims = input.getShape().slice(getStart(), getEnd() - getStart());
  if (ShapedType::isDynamicShape(dims))
    return {};
  return makeConstant(cast<RankedTensorType>(getType()), dims);
}

OpFoldResult SizeOp::fold(FoldAdaptor) {
  auto input = cast<RankedTensorType>(getInput().getType());
  if (!input.hasStaticShape())
    return {};
  return makeConstant(cast<RankedTensorType>(getType()), {input.getNumElements()});
}

OpFoldResult CheckOp::fold(FoldAdaptor adaptor) {
  // A check that holds whatever the inputs is no check.
  auto holds = dyn_cast_if_present<DenseElementsAttr>(adaptor.getHolds());
  if (holds && holds.getSplatValue<bool>())
    return getInput();
  return {};
}

OpFoldResult ConstantOfShapeOp::fold(FoldAdaptor) {
  // A splat is stored once whatever its size.
  auto type = dyn_cast<RankedTensorType>(getType());
  auto value = dyn_cast<DenseElementsAttr>(getValue());
  if (!type || !type.hasStaticShape() || !value)
    return {};
  return DenseElementsAttr::get(type, value.getValues<Attribute>()[0]);
}

OpFoldResult RangeOp::fold(FoldAdaptor adaptor) {
  auto type = foldableType(getResult());
  auto start = asInts(adaptor.getStart()), delta = asInts(adaptor.getDelta());
  if (!type || !start || !delta)
    return {};
  SmallVector<int64_t> values;
  // Wrapping, as above: the values stay within [start, limit) for the inferred
  // length, but the result type may come from elsewhere.
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    values.push_back((int64_t)((uint64_t)start->data[0] + (uint64_t)i * (uint64_t)delta->data[0]));
  return makeConstant(type, values);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(getOperation(), adaptor.getInput());
}
OpFoldResult FlattenOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(getOperation(), adaptor.getInput());
}
OpFoldResult SqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(getOperation(), adaptor.getInput());
}
OpFoldResult UnsqueezeOp::fold(FoldAdaptor adaptor) {
  return foldReshapeLike(getOperation(), adaptor.getInput());
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  // Only with the shape known: a shape given at run time must still be
  // checked to broadcast with the input.
  if (getInput().getType() == getType() && cast<RankedTensorType>(getType()).hasStaticShape() &&
      getConstantInts(getShape()))
    return getInput();
  auto type = foldableType(getResult());
  auto input = asInts(adaptor.getInput());
  if (!type || !input)
    return {};
  return foldElementwise(type, {*input}, [](ArrayRef<int64_t> v) -> std::optional<int64_t> { return v[0]; });
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getInput();
  // Exporters compute pads by transposing a constant (PyTorch's F.pad).
  auto type = foldableType(getResult());
  auto input = asInts(adaptor.getInput());
  if (!type || !input)
    return {};
  SmallVector<int64_t> inStrides = stridesOf(input->shape), outStrides = stridesOf(type.getShape());
  SmallVector<int64_t> values;
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    int64_t index = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      index += ((i / outStrides[d]) % type.getDimSize(d)) * inStrides[perm[d]];
    values.push_back(input->data[index]);
  }
  return makeConstant(type, values);
}

namespace {
/// transpose(transpose(x, p), q) = transpose(x, p o q): backward graphs
/// transpose what the forward transposed (Gemm's transB, a matmul's operands).
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return failure();
    SmallVector<int64_t> perm;
    for (int64_t q : op.getPerm())
      perm.push_back(inner.getPerm()[q]);
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), inner.getInput(),
                                             rewriter.getDenseI64ArrayAttr(perm));
    return success();
  }
};

/// transpose(a @ b) over the last two dims = b^T @ a^T, when the product is
/// used only there: the operands' transposes often cancel with their own
/// (a weight gradient of x @ W^T is g^T @ x, with no transpose of x or W).
struct TransposeOfMatMul : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rewriter) const override {
    auto matmul = op.getInput().getDefiningOp<MatMulOp>();
    int64_t rank = cast<RankedTensorType>(op.getType()).getRank();
    if (!matmul || !matmul->hasOneUse() || rank < 2)
      return failure();
    auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
    auto rhs = cast<RankedTensorType>(matmul.getRhs().getType());
    if (lhs.getRank() < 2 || rhs.getRank() < 2)
      return failure();
    ArrayRef<int64_t> perm = op.getPerm();
    for (int64_t i = 0; i < rank - 2; ++i)
      if (perm[i] != i)
        return failure();
    if (perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
      return failure();
    auto swapLast = [&](Value v) {
      int64_t r = cast<RankedTensorType>(v.getType()).getRank();
      SmallVector<int64_t> p = llvm::to_vector(llvm::seq<int64_t>(0, r));
      std::swap(p[r - 1], p[r - 2]);
      SmallVector<int64_t> shape(cast<RankedTensorType>(v.getType()).getShape());
      std::swap(shape[r - 1], shape[r - 2]);
      auto type = RankedTensorType::get(shape, cast<RankedTensorType>(v.getType()).getElementType());
      return rewriter.create<TransposeOp>(op.getLoc(), type, v, rewriter.getDenseI64ArrayAttr(p));
    };
    Value b = swapLast(matmul.getRhs()), a = swapLast(matmul.getLhs());
    rewriter.replaceOpWithNewOp<MatMulOp>(op, op.getType(), b, a);
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<ComposeTransposes, TransposeOfMatMul>(context);
}

/// traceShapeElement, through at most `arithmetic` nested Add/Sub/Mul/Div:
/// each looks into both operands, so a deep chain (n + n, repeated) would
/// cost exponential time; exporters nest one or two.
static std::optional<ShapeElement> traceElement(Value shape, int64_t i, int arithmetic) {
  auto type = dyn_cast<RankedTensorType>(shape.getType());
  if (!type || type.getRank() > 1 || !type.hasStaticShape() || i < 0 || i >= type.getNumElements())
    return std::nullopt;
  if (auto values = getConstantInts(shape))
    return ShapeElement{(*values)[i], Value(), -1};
  Operation *def = shape.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto of = dyn_cast<ShapeOp>(def))
    return ShapeElement{std::nullopt, of.getInput(), static_cast<int64_t>(of.getStart()) + i};
  if (auto cast = dyn_cast<CastOp>(def)) {
    // Through widening integer casts only: a narrower one (to uint8, bool)
    // changes the values.
    auto from = dyn_cast<IntegerType>(getElementTypeOrSelf(cast.getInput().getType()));
    auto to = dyn_cast<IntegerType>(getElementTypeOrSelf(cast.getType()));
    if (!from || !to || from.getWidth() < 32 || to.getWidth() < from.getWidth() ||
        (from.isUnsigned() && to.getWidth() == from.getWidth()))
      return std::nullopt;
    return traceElement(cast.getInput(), i, arithmetic);
  }
  if (isa<UnsqueezeOp, SqueezeOp, ReshapeOp>(def)) // the same elements
    return traceElement(def->getOperand(0), i, arithmetic);
  if (auto concat = dyn_cast<ConcatOp>(def)) {
    for (Value piece : concat.getInputs()) {
      auto pieceType = cast<RankedTensorType>(piece.getType());
      if (pieceType.getRank() != 1 || pieceType.isDynamicDim(0))
        return std::nullopt;
      if (i < pieceType.getDimSize(0))
        return traceElement(piece, i, arithmetic);
      i -= pieceType.getDimSize(0);
    }
    return std::nullopt;
  }
  if (auto gather = dyn_cast<GatherOp>(def)) {
    auto indices = getConstantInts(gather.getIndices());
    auto data = cast<RankedTensorType>(gather.getInput().getType());
    if (!indices || gather.getAxis() != 0 || data.getRank() != 1 || data.isDynamicDim(0))
      return std::nullopt;
    int64_t index = (*indices)[i];
    return traceElement(gather.getInput(), index < 0 ? index + data.getDimSize(0) : index, arithmetic);
  }
  if (isa<AddOp, SubOp, MulOp, DivOp>(def) && isa<IntegerType>(type.getElementType()) &&
      arithmetic > 0) {
    // Known when both operands' elements are (a static dim divided by the
    // heads); else computed at run time from theirs.
    auto known = [&](Value operand) -> std::optional<int64_t> {
      auto operandType = cast<RankedTensorType>(operand.getType());
      std::optional<ShapeElement> e =
          traceElement(operand, operandType.getNumElements() == 1 ? 0 : i, arithmetic - 1);
      if (e && e->constant)
        return e->constant;
      if (e && e->of && !cast<RankedTensorType>(e->of.getType()).isDynamicDim(e->dim))
        return cast<RankedTensorType>(e->of.getType()).getDimSize(e->dim);
      return std::nullopt;
    };
    std::optional<int64_t> x = known(def->getOperand(0)), y = known(def->getOperand(1));
    // Dims are small and non-negative: no overflow, and C's division is ONNX's.
    auto small = [](std::optional<int64_t> v) { return v && *v >= 0 && *v < (int64_t(1) << 31); };
    if (small(x) && small(y)) {
      if (isa<AddOp>(def))
        return ShapeElement{*x + *y, Value(), -1};
      if (isa<SubOp>(def))
        return ShapeElement{*x - *y, Value(), -1};
      if (isa<MulOp>(def))
        return ShapeElement{*x * *y, Value(), -1};
      if (*y > 0)
        return ShapeElement{*x / *y, Value(), -1};
    }
    return ShapeElement{std::nullopt, Value(), i, def};
  }
  return std::nullopt;
}

std::optional<ShapeElement> nnc::nn::traceShapeElement(Value shape, int64_t i) {
  return traceElement(shape, i, /*arithmetic=*/4);
}

/// Where dim `dim` of `value` comes from: the first (value, dim) up its
/// producers that it provably equals, through ops that keep a dim (each
/// input's dims of an elementwise op, the kept dims of gathers, matmuls,
/// transposes, slices, concats, scatters, flattens and (un)squeezes, and the dims a
/// Reshape or ConstantOfShape takes from another tensor's). Two dims of one
/// origin are equal at run time, whatever their sizes: a detector's box
/// regression reshaped to the proposals' count. `steps` bounds the walk
/// (broadcasts look into each operand).
static std::pair<Value, int64_t> dimOrigin(Value value, int64_t dim, int &steps) {
  while (steps-- > 0) {
    Operation *def = value.getDefiningOp();
    auto type = cast<RankedTensorType>(value.getType());
    if (!def || !type.isDynamicDim(dim))
      break;
    int64_t rank = type.getRank();
    auto follow = [&](Value next, int64_t nextDim) {
      value = next;
      dim = nextDim;
      return true;
    };
    bool moved = false;
    if (isa<SqrtOp, ExpOp, LogOp, ErfOp, SigmoidOp, TanhOp, SoftplusOp, HardSwishOp, FloorOp,
            CeilOp, RoundOp, ReciprocalOp, SinOp, CosOp, TanOp, AsinOp, AcosOp, AtanOp, SinhOp,
            CoshOp, AsinhOp, AcoshOp, AtanhOp, SoftsignOp, NegOp, AbsOp, SignOp, ReluOp, NotOp,
            LeakyReluOp, EluOp, SeluOp, HardSigmoidOp, CastOp>(def)) {
      moved = follow(def->getOperand(0), dim);
    } else if (isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp, ShiftLeftOp, ShiftRightOp,
                   AndOp, OrOp, XorOp, EqualOp, LessOp, LessEqualOp, GreaterOp, GreaterEqualOp,
                   WhereOp>(def)) {
      // NumPy broadcasting: the operands whose aligned dim is not a static 1
      // set it; dynamic ones of one origin give that origin.
      std::optional<std::pair<Value, int64_t>> origin;
      bool agree = true;
      for (Value operand : def->getOperands()) {
        auto operandType = cast<RankedTensorType>(operand.getType());
        int64_t aligned = dim - (rank - operandType.getRank());
        if (aligned < 0 || operandType.getDimSize(aligned) == 1)
          continue;
        if (!operandType.isDynamicDim(aligned)) {
          agree = false;
          break;
        }
        std::pair<Value, int64_t> o = dimOrigin(operand, aligned, steps);
        if (origin && *origin != o)
          agree = false;
        origin = o;
      }
      if (agree && origin)
        moved = follow(origin->first, origin->second);
    } else if (auto gather = dyn_cast<GatherOp>(def)) {
      int64_t axis = gather.getAxis(), indices = cast<RankedTensorType>(gather.getIndices().getType()).getRank();
      moved = dim < axis              ? follow(gather.getInput(), dim)
              : dim < axis + indices ? follow(gather.getIndices(), dim - axis)
                                      : follow(gather.getInput(), dim - indices + 1);
    } else if (auto matmul = dyn_cast<MatMulOp>(def)) {
      auto lhs = cast<RankedTensorType>(matmul.getOperand(0).getType());
      auto rhs = cast<RankedTensorType>(matmul.getOperand(1).getType());
      if (dim == rank - 1 && rhs.getRank() >= 2)
        moved = follow(matmul.getOperand(1), rhs.getRank() - 1);
      else if (dim == rank - 2 && lhs.getRank() >= 2 && rhs.getRank() >= 2)
        moved = follow(matmul.getOperand(0), lhs.getRank() - 2);
    } else if (auto transpose = dyn_cast<TransposeOp>(def)) {
      moved = follow(transpose.getInput(), transpose.getPerm()[dim]);
    } else if (auto flatten = dyn_cast<FlattenOp>(def)) {
      int64_t inputRank = cast<RankedTensorType>(flatten.getInput().getType()).getRank();
      if (dim == 0 && flatten.getAxis() == 1)
        moved = follow(flatten.getInput(), 0);
      else if (dim == 1 && flatten.getAxis() == inputRank - 1)
        moved = follow(flatten.getInput(), inputRank - 1);
    } else if (auto concat = dyn_cast<ConcatOp>(def)) {
      // The inputs' other dims match (checked before the run).
      if (dim != concat.getAxis())
        moved = follow(concat.getInputs().front(), dim);
    } else if (isa<ScatterElementsOp>(def)) {
      moved = follow(def->getOperand(0), dim);
    } else if (auto unsqueeze = dyn_cast<UnsqueezeOp>(def)) {
      // The inserted dims are 1s: a dynamic one is the input's.
      int64_t inputDim = dim;
      for (int64_t axis : unsqueeze.getAxes())
        if ((axis < 0 ? axis + rank : axis) < dim)
          --inputDim;
      moved = follow(unsqueeze.getInput(), inputDim);
    } else if (auto squeeze = dyn_cast<SqueezeOp>(def)) {
      int64_t inputRank = cast<RankedTensorType>(squeeze.getInput().getType()).getRank();
      SmallVector<bool> removed(inputRank, false);
      for (int64_t axis : squeeze.getAxes())
        removed[axis < 0 ? axis + inputRank : axis] = true;
      for (int64_t d = 0, kept = 0; d < inputRank; ++d)
        if (!removed[d] && kept++ == dim) {
          moved = follow(squeeze.getInput(), d);
          break;
        }
    } else if (auto slice = dyn_cast<SliceOp>(def)) {
      // A dim no axis slices.
      std::optional<SmallVector<int64_t>> axes = getConstantInts(slice.getAxes());
      if (axes && llvm::none_of(*axes, [&](int64_t a) { return (a < 0 ? a + rank : a) == dim; }))
        moved = follow(slice.getInput(), dim);
    } else if (isa<ReshapeOp, ConstantOfShapeOp>(def)) {
      // A dim a shape element takes from another tensor.
      Value shape = isa<ReshapeOp>(def) ? cast<ReshapeOp>(def).getShape() : def->getOperand(0);
      std::optional<ShapeElement> e = traceShapeElement(shape, dim);
      auto reshape = dyn_cast<ReshapeOp>(def);
      bool copies = reshape && !reshape.getAllowzero() &&
                    dim < cast<RankedTensorType>(reshape.getInput().getType()).getRank();
      if (e && e->of && !copies) {
        moved = follow(e->of, e->dim);
      } else if (e && e->of) {
        // An element that is 0 at run time copies the input's dim: the
        // named dim's origin only where the input's dim has it too.
        std::pair<Value, int64_t> named = dimOrigin(e->of, e->dim, steps);
        if (named == dimOrigin(reshape.getInput(), dim, steps))
          moved = follow(named.first, named.second);
      } else if (e && e->constant == 0 && copies) {
        moved = follow(reshape.getInput(), dim); // a 0 copies the input's dim
      }
    }
    if (!moved)
      break;
  }
  return {value, dim};
}

/// Whether dim `a` of `x` and dim `b` of `y` are the same at run time.
static bool sameDim(Value x, int64_t a, Value y, int64_t b) {
  if (x == y && a == b)
    return true;
  int steps = 256;
  return dimOrigin(x, a, steps) == dimOrigin(y, b, steps);
}

namespace {
/// A Reshape to the shape of its own input at some positions (x.view(
/// x.size(0), -1)): each such element becomes 0, which copies the input's dim,
/// so that the shape is a constant and the result's dims are known. The
/// element may name another tensor's dim of the same origin (dimOrigin).
struct ReshapeToOwnDims : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getShape().getType());
    if (op.getAllowzero() || !type.hasStaticShape() || getConstantInts(op.getShape()))
      return failure();
    SmallVector<int64_t> values;
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      std::optional<ShapeElement> e = traceShapeElement(op.getShape(), i);
      if (e && e->constant)
        values.push_back(*e->constant);
      else if (e && e->of && i < cast<RankedTensorType>(op.getInput().getType()).getRank() &&
               sameDim(e->of, e->dim, op.getInput(), i))
        values.push_back(0);
      else
        return failure();
    }
    Value shape = ConstantOp::create(rewriter, op.getLoc(),
                                     cast<ElementsAttr>(DenseElementsAttr::get(type, ArrayRef<int64_t>(values))));
    rewriter.modifyOpInPlace(op, [&] { op.getShapeMutable().assign(shape); });
    return success();
  }
};
} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<ReshapeToOwnDims>(context);
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  auto type = foldableType(getResult());
  if (!type)
    return {};
  // Concatenation along `axis`: walk the result's outer slices, taking each
  // operand's contiguous block in turn. Any element type: float settings (a
  // resize's scales) are concatenated too.
  int64_t axis = getAxis();
  SmallVector<SmallVector<Attribute>> inputs;
  for (Attribute a : adaptor.getInputs()) {
    auto dense = dyn_cast_or_null<DenseElementsAttr>(a);
    if (!dense)
      return {};
    inputs.push_back(llvm::to_vector(dense.getValues<Attribute>()));
  }
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= type.getDimSize(d);
  SmallVector<Attribute> values;
  for (int64_t o = 0; o < outer; ++o)
    for (const SmallVector<Attribute> &t : inputs) {
      int64_t block = t.size() / std::max<int64_t>(outer, 1);
      values.append(t.begin() + o * block, t.begin() + (o + 1) * block);
    }
  return DenseElementsAttr::get(type, values);
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  auto type = foldableType(getResult());
  auto input = asInts(adaptor.getInput());
  auto starts = asInts(adaptor.getStarts()), axes = asInts(adaptor.getAxes()),
       steps = asInts(adaptor.getSteps());
  if (!type || !input || !starts || !axes || !steps)
    return {};
  // Per-dim start and step; the result type already holds the clamped counts.
  int64_t rank = input->shape.size();
  SmallVector<int64_t> start(rank, 0), step(rank, 1);
  for (size_t i = 0; i < axes->data.size(); ++i) {
    int64_t axis = axes->data[i] < 0 ? axes->data[i] + rank : axes->data[i];
    int64_t dim = input->shape[axis], s = starts->data[i];
    step[axis] = steps->data[i];
    if (s < 0)
      s += dim;
    // An empty dim has no last element to clamp to (and nothing to read).
    start[axis] = step[axis] > 0 || dim == 0 ? std::clamp<int64_t>(s, 0, dim)
                                             : std::clamp<int64_t>(s, 0, dim - 1);
  }
  SmallVector<int64_t> inStrides = stridesOf(input->shape), outStrides = stridesOf(type.getShape());
  SmallVector<int64_t> values;
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    int64_t index = 0;
    for (int64_t d = 0; d < rank; ++d)
      index += (start[d] + ((i / outStrides[d]) % type.getDimSize(d)) * step[d]) * inStrides[d];
    values.push_back(input->data[index]);
  }
  return makeConstant(type, values);
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  auto type = foldableType(getResult());
  auto input = asInts(adaptor.getInput()), indices = asInts(adaptor.getIndices());
  // Static dims of a shape with dynamic ones (a symbolic batch): the
  // exporters' Shape -> Gather chains keep the rest of the graph static.
  if (auto shape = getInput().getDefiningOp<ShapeOp>(); type && !input && indices && shape) {
    ArrayRef<int64_t> dims = cast<RankedTensorType>(shape.getInput().getType())
                                 .getShape()
                                 .slice(shape.getStart(), shape.getEnd() - shape.getStart());
    SmallVector<int64_t> values;
    for (int64_t index : indices->data) {
      if (index < -(int64_t)dims.size() || index >= (int64_t)dims.size())
        return {};
      int64_t dim = dims[index < 0 ? index + dims.size() : index];
      if (ShapedType::isDynamic(dim))
        return {};
      values.push_back(dim);
    }
    return makeConstant(type, values);
  }
  if (!type || !input || !indices)
    return {};
  int64_t axis = getAxis(), dim = input->shape[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= input->shape[d];
  for (size_t d = axis + 1; d < input->shape.size(); ++d)
    inner *= input->shape[d];
  SmallVector<int64_t> values;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t index : indices->data) {
      if (index < -dim || index >= dim)
        return {}; // out of range: leave it to the runtime check
      if (index < 0)
        index += dim;
      for (int64_t i = 0; i < inner; ++i)
        values.push_back(input->data[(o * dim + index) * inner + i]);
    }
  return makeConstant(type, values);
}

namespace {
/// Inference: dropout is the identity. (nn-autodiff has rewritten the
/// dropouts of a training step before the graph stage canonicalizes.)
struct DropoutIsIdentity : OpRewritePattern<DropoutOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DropoutOp op, PatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};
} // namespace

void DropoutOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<DropoutIsIdentity>(context);
}
