//===- QuantizedOps.cpp - 8-bit quantization and integer arithmetic -------===//
//
// (De)quantization is spelled out in nn ops: scale, round half to even, add
// the zero point, saturate. The integer products (MatMulInteger, ConvInteger
// and the QLinear ops built on them) subtract the zero points first, so they
// are exact in any accumulator that holds the sums: matmuls accumulate in i32
// as ONNX defines; convolutions in f32 where every sum is below 2^24, else in
// f64, both exact, since nn's convolution is a float op.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

#include <cmath>

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
/// A 1-D per-channel parameter viewed along `axis` of a rank-`rank` tensor.
Value alongAxis(NodeImporter &n, Value param, int64_t axis, int64_t rank) {
  auto type = NodeImporter::type(param);
  if (type.getRank() != 1 || rank == 0)
    return param;
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = type.getDimSize(0);
  return n.create<nn::ReshapeOp>(param, n.constI64(shape), n.builder.getBoolAttr(false));
}

/// saturate(round_half_even(real) + zero_point) in `target`, an 8-bit type.
Value requantize(NodeImporter &n, Value real, Value zeroPoint, Type target) {
  Type f32 = n.builder.getF32Type();
  Value q = n.create<nn::RoundOp>(real);
  q = n.create<nn::AddOp>(q, n.create<nn::CastOp>(zeroPoint, TypeAttr::get(f32)));
  unsigned width = target.getIntOrFloatBitWidth();
  double lo = target.isUnsignedInteger() ? 0 : -std::ldexp(1.0, width - 1);
  double hi = target.isUnsignedInteger() ? std::ldexp(1.0, width) - 1 : std::ldexp(1.0, width - 1) - 1;
  q = n.create<nn::MinOp>(n.create<nn::MaxOp>(q, n.scalar(f32, lo)), n.scalar(f32, hi));
  return n.create<nn::CastOp>(q, TypeAttr::get(target));
}

/// saturate(round_half_even(x / scale) + zero_point) in the zero point's type.
Value quantize(NodeImporter &n, Value x, Value scale, Value zeroPoint, Type target) {
  return requantize(n, n.create<nn::DivOp>(x, scale), zeroPoint, target);
}

LogicalResult importQuantizeLinear(NodeImporter &n) {
  Value x = n.input(0);
  int64_t rank = NodeImporter::rank(x);
  if (getElementTypeOrSelf(x.getType()) != n.builder.getF32Type())
    return n.fail("expected an f32 input");
  // The axis only matters for a per-axis (1-D) scale.
  FailureOr<int64_t> axis = 0;
  if (NodeImporter::rank(n.input(1)) == 1)
    axis = n.normalizeAxis(n.attrInt("axis", 1), rank);
  if (failed(axis))
    return failure();
  Value zeroPoint = n.input(2);
  Type target = zeroPoint ? getElementTypeOrSelf(zeroPoint.getType())
                          : n.builder.getIntegerType(8, /*isSigned=*/false);
  if (!target.isInteger(8))
    return n.fail("expected an 8-bit integer zero point");
  if (!zeroPoint)
    zeroPoint = n.scalar(target, 0);
  n.setOutputs(quantize(n, x, alongAxis(n, n.input(1), *axis, rank), alongAxis(n, zeroPoint, *axis, rank), target));
  return success();
}

LogicalResult importDequantizeLinear(NodeImporter &n) {
  Value x = n.input(0);
  int64_t rank = NodeImporter::rank(x);
  // The axis only matters for a per-axis (1-D) scale.
  FailureOr<int64_t> axis = 0;
  if (NodeImporter::rank(n.input(1)) == 1)
    axis = n.normalizeAxis(n.attrInt("axis", 1), rank);
  if (failed(axis))
    return failure();
  Type f32 = n.builder.getF32Type();
  Value xf = n.create<nn::CastOp>(x, TypeAttr::get(f32));
  if (Value zeroPoint = n.input(2))
    xf = n.create<nn::SubOp>(xf, n.create<nn::CastOp>(alongAxis(n, zeroPoint, *axis, rank), TypeAttr::get(f32)));
  n.setOutputs(n.create<nn::MulOp>(xf, alongAxis(n, n.input(1), *axis, rank)));
  return success();
}

/// uint8 quantization with a scale and zero point that cover [min(x, 0), max(x, 0)].
LogicalResult importDynamicQuantizeLinear(NodeImporter &n) {
  Value x = n.input(0);
  auto &b = n.builder;
  Type f32 = b.getF32Type(), u8 = b.getIntegerType(8, false);
  int64_t rank = NodeImporter::rank(x);
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < rank; ++d)
    all.push_back(d);
  auto axes = b.getDenseI64ArrayAttr(all);
  Value zero = n.scalar(f32, 0);
  Value lo = n.create<nn::MinOp>(n.create<nn::ReduceMinOp>(x, axes, b.getBoolAttr(false)), zero);
  Value hi = n.create<nn::MaxOp>(n.create<nn::ReduceMaxOp>(x, axes, b.getBoolAttr(false)), zero);
  Value scale = n.create<nn::DivOp>(n.create<nn::SubOp>(hi, lo), n.scalar(f32, 255));
  Value zp = n.create<nn::RoundOp>(n.create<nn::SubOp>(zero, n.create<nn::DivOp>(lo, scale)));
  zp = n.create<nn::MinOp>(n.create<nn::MaxOp>(zp, zero), n.scalar(f32, 255));
  Value zeroPoint = n.create<nn::CastOp>(zp, TypeAttr::get(u8));
  n.setOutputs({quantize(n, x, scale, zeroPoint, u8), scale, zeroPoint});
  return success();
}

//===----------------------------------------------------------------------===//
// Integer products
//===----------------------------------------------------------------------===//

/// Checks that `param` (called `what`) is a scalar or a 1-D tensor of 1 or
/// `channels` values; a per-channel one needs the channel count static.
LogicalResult checkPerChannel(NodeImporter &n, Value param, int64_t channels, const std::string &what) {
  auto type = NodeImporter::type(param);
  if (type.getRank() == 0 || (type.getRank() == 1 && type.getDimSize(0) == 1))
    return success();
  if (ShapedType::isDynamic(channels))
    return n.fail(what + " holds one value per channel, whose count is dynamic; pin it with --dim "
                  "or --input-shape");
  if (type.getRank() > 1 || type.getDimSize(0) != channels)
    return n.fail(what + " must be a scalar or hold 1 or " + Twine(channels) + " values");
  return success();
}

/// Checks that quantized operand `index` is 8-bit and that its zero point
/// (input `zeroPointIndex`, when present) has its type and is a scalar or a
/// 1-D tensor of 1 or `channels` values.
LogicalResult checkQuantized(NodeImporter &n, size_t index, size_t zeroPointIndex, int64_t channels,
                             StringRef what) {
  Type element = getElementTypeOrSelf(n.input(index).getType());
  if (!element.isInteger(8)) {
    std::string got;
    llvm::raw_string_ostream(got) << element;
    return n.fail("expected an 8-bit integer " + what + " (got " + got + ")");
  }
  Value zeroPoint = n.input(zeroPointIndex);
  if (!zeroPoint)
    return success();
  if (getElementTypeOrSelf(zeroPoint.getType()) != element)
    return n.fail("the " + what + "'s zero point must have its element type");
  return checkPerChannel(n, zeroPoint, channels, ("the " + what + "'s zero point").str());
}

/// `x` minus its zero point (may be null) in `type`; a 1-D zero point is
/// viewed along `axis` of `x`.
Value centered(NodeImporter &n, Value x, Value zeroPoint, int64_t axis, Type type) {
  Value v = n.create<nn::CastOp>(x, TypeAttr::get(type));
  if (!zeroPoint)
    return v;
  Value zp = alongAxis(n, zeroPoint, axis, NodeImporter::rank(x));
  return n.create<nn::SubOp>(v, n.create<nn::CastOp>(zp, TypeAttr::get(type)));
}

/// (A - a_zero_point) x (B - b_zero_point) in i32; A's zero point is per row,
/// B's per column. Inputs: A, B and the zero points at `aZp` and `bZp`.
FailureOr<Value> integerMatMul(NodeImporter &n, size_t a, size_t aZp, size_t b, size_t bZp) {
  Value lhs = n.input(a), rhs = n.input(b);
  if (NodeImporter::rank(lhs) < 2 || NodeImporter::rank(rhs) < 2)
    return n.fail("expected operands of rank 2 or more");
  int64_t rows = NodeImporter::type(lhs).getDimSize(NodeImporter::rank(lhs) - 2);
  int64_t cols = NodeImporter::type(rhs).getDimSize(NodeImporter::rank(rhs) - 1);
  if (failed(checkQuantized(n, a, aZp, rows, "A")) || failed(checkQuantized(n, b, bZp, cols, "B")))
    return failure();
  Type i32 = n.builder.getI32Type();
  Value x = centered(n, lhs, n.input(aZp), NodeImporter::rank(lhs) - 2, i32);
  Value y = centered(n, rhs, n.input(bZp), NodeImporter::rank(rhs) - 1, i32);
  return n.create<nn::MatMulOp>(x, y);
}

/// The float type that holds every sum of `terms` products of two values
/// within [-255, 255] exactly.
Type exactAccumulator(NodeImporter &n, int64_t terms) {
  bool f32 = terms >= 0 && terms <= (int64_t(1) << 24) / (255 * 255);
  return f32 ? n.builder.getF32Type() : n.builder.getF64Type();
}

/// conv(x - x_zero_point, w - w_zero_point) + bias in an exact float type
/// (the bias, when given, forces f64: it is i32). Inputs x, w, their zero
/// points at `xZp` and `wZp`, the bias at `bias` (or none).
FailureOr<Value> integerConv(NodeImporter &n, size_t x, size_t xZp, size_t w, size_t wZp,
                             std::optional<size_t> bias) {
  Value input = n.input(x), filter = n.input(w);
  auto filterType = NodeImporter::type(filter);
  if (filterType.getRank() < 3 || !filterType.hasStaticShape())
    return n.fail("expected a static filter of rank 3 or more");
  int64_t outChannels = filterType.getDimSize(0);
  if (failed(checkQuantized(n, x, xZp, 1, "input")) ||
      failed(checkQuantized(n, w, wZp, outChannels, "filter")))
    return failure();
  Value biasValue = bias ? n.input(*bias) : Value();
  if (biasValue && (!getElementTypeOrSelf(biasValue.getType()).isInteger(32) ||
                    NodeImporter::rank(biasValue) != 1))
    return n.fail("expected a 1-D int32 bias");
  Type acc = biasValue ? n.builder.getF64Type()
                       : exactAccumulator(n, filterType.getNumElements() / std::max<int64_t>(outChannels, 1));
  Value xs = centered(n, input, n.input(xZp), 1, acc);
  Value ws = centered(n, filter, n.input(wZp), 0, acc);
  if (biasValue)
    biasValue = n.create<nn::CastOp>(biasValue, TypeAttr::get(acc));
  return buildConvolution(n, xs, ws, biasValue);
}

LogicalResult importMatMulInteger(NodeImporter &n) {
  FailureOr<Value> y = integerMatMul(n, 0, 2, 1, 3);
  if (failed(y))
    return failure();
  n.setOutputs(*y);
  return success();
}

LogicalResult importConvInteger(NodeImporter &n) {
  FailureOr<Value> y = integerConv(n, 0, 2, 1, 3, std::nullopt);
  if (failed(y))
    return failure();
  n.setOutputs(n.create<nn::CastOp>(*y, TypeAttr::get(n.builder.getI32Type())));
  return success();
}

/// Checks that input `index` is an f32 scale holding one value or, for a
/// per-channel scale, `channels`.
LogicalResult checkScale(NodeImporter &n, size_t index, int64_t channels, StringRef what) {
  if (!NodeImporter::type(n.input(index)).getElementType().isF32())
    return n.fail("expected an f32 " + what + " scale");
  return checkPerChannel(n, n.input(index), channels, ("the " + what + " scale").str());
}

/// The result's zero point (input `index`) and its type, checked.
FailureOr<Value> outputZeroPoint(NodeImporter &n, size_t index) {
  Value zp = n.input(index);
  auto type = NodeImporter::type(zp);
  if (!type.getElementType().isInteger(8) || type.getNumElements() != 1)
    return n.fail("expected an 8-bit integer scalar output zero point");
  return zp;
}

/// QLinearMatMul: inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point,
/// y_scale, y_zero_point.
LogicalResult importQLinearMatMul(NodeImporter &n) {
  FailureOr<Value> product = integerMatMul(n, 0, 2, 3, 5);
  if (failed(product))
    return failure();
  Value a = n.input(0), b = n.input(3);
  int64_t rows = NodeImporter::type(a).getDimSize(NodeImporter::rank(a) - 2);
  int64_t cols = NodeImporter::type(b).getDimSize(NodeImporter::rank(b) - 1);
  FailureOr<Value> yZp = outputZeroPoint(n, 7);
  if (failed(checkScale(n, 1, rows, "A")) || failed(checkScale(n, 4, cols, "B")) ||
      failed(checkScale(n, 6, 1, "output")) || failed(yZp))
    return failure();
  // The real multiplier a_scale * b_scale / y_scale, per row and column.
  Value scale = n.create<nn::MulOp>(alongAxis(n, n.input(1), 0, 2), n.input(4));
  scale = n.create<nn::DivOp>(scale, n.input(6));
  Value real = n.create<nn::MulOp>(n.create<nn::CastOp>(*product, TypeAttr::get(n.builder.getF32Type())), scale);
  n.setOutputs(requantize(n, real, *yZp, getElementTypeOrSelf(yZp->getType())));
  return success();
}

/// QLinearConv: inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point,
/// y_scale, y_zero_point, B.
LogicalResult importQLinearConv(NodeImporter &n) {
  FailureOr<Value> acc = integerConv(n, 0, 2, 3, 5, n.input(8) ? std::optional<size_t>(8) : std::nullopt);
  if (failed(acc))
    return failure();
  int64_t outChannels = NodeImporter::type(n.input(3)).getDimSize(0);
  FailureOr<Value> yZp = outputZeroPoint(n, 7);
  if (failed(checkScale(n, 1, 1, "input")) || failed(checkScale(n, 4, outChannels, "filter")) ||
      failed(checkScale(n, 6, 1, "output")) || failed(yZp))
    return failure();
  int64_t rank = NodeImporter::rank(*acc);
  // The real multiplier x_scale * w_scale / y_scale, per output channel.
  Value scale = n.create<nn::MulOp>(n.input(1), alongAxis(n, n.input(4), 1, rank));
  scale = n.create<nn::DivOp>(scale, n.input(6));
  Value real = n.create<nn::MulOp>(n.create<nn::CastOp>(*acc, TypeAttr::get(n.builder.getF32Type())), scale);
  n.setOutputs(requantize(n, real, *yZp, getElementTypeOrSelf(yZp->getType())));
  return success();
}
} // namespace

void nnc::onnx_frontend::addQuantizedHandlers(std::vector<HandlerEntry> &t) {
  constexpr int64_t M = kMaxOpset;
  t.insert(t.end(), {
      {"QuantizeLinear", 10, M, importQuantizeLinear},
      {"DequantizeLinear", 10, M, importDequantizeLinear},
      {"DynamicQuantizeLinear", 11, M, importDynamicQuantizeLinear},
      {"MatMulInteger", 10, M, importMatMulInteger},
      {"ConvInteger", 10, M, importConvInteger},
      {"QLinearMatMul", 10, M, importQLinearMatMul},
      {"QLinearConv", 10, M, importQLinearConv},
  });
}
