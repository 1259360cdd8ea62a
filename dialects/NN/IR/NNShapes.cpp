//===- NNShapes.cpp - result-type inference and verifiers of nn ops -------===//
//
// Every nn op infers its result types from its operand types, attributes and,
// where an operand describes a shape, that operand's constant value. The same
// code verifies ops: a result type must be compatible with the inferred one.
//
//===----------------------------------------------------------------------===//

#include "dialects/NN/IR/NNOps.h"
#include "dialects/NN/IR/CheckedInt.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using namespace nnc;
using namespace nnc::nn;

static constexpr int64_t kDynamic = ShapedType::kDynamic;

namespace {
/// Emits "'nn.x' op <message>" at `loc` (when inference runs for verification).
LogicalResult fail(std::optional<Location> loc, StringRef opName, const Twine &message) {
  return emitOptionalError(loc, "'", opName, "' op ", message);
}

RankedTensorType ranked(Type type) { return cast<RankedTensorType>(type); }

/// Broadcast of one dim pair, or nullopt when two static dims differ and neither is 1.
std::optional<int64_t> broadcastDim(int64_t a, int64_t b) {
  if (a == 1)
    return b;
  if (b == 1 || a == b)
    return a;
  if (ShapedType::isDynamic(a))
    return b;
  if (ShapedType::isDynamic(b))
    return a;
  return std::nullopt;
}

/// Merges two dims that must be equal: a static one wins over a dynamic one.
std::optional<int64_t> mergeDim(int64_t a, int64_t b) {
  if (ShapedType::isDynamic(a))
    return b;
  if (ShapedType::isDynamic(b) || a == b)
    return a;
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    std::optional<int64_t> d = broadcastDim(da, db);
    if (!d)
      return std::nullopt;
    out[i] = *d;
  }
  return out;
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      shape, os, [&](int64_t d) { os << (ShapedType::isDynamic(d) ? "?" : std::to_string(d)); },
      "x");
  return s;
}

/// The dims of a 1-D shape operand: its constant values, or `?` for each.
std::optional<SmallVector<int64_t>> shapeOperandDims(Value shape) {
  auto type = ranked(shape.getType());
  if (type.getRank() != 1 || type.isDynamicDim(0))
    return std::nullopt;
  if (auto values = getConstantInts(shape))
    return *values;
  // Elements the model took from tensors' static dims, or constants, are
  // known; the rest are dynamic.
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < type.getDimSize(0); ++i) {
    std::optional<ShapeElement> e = traceShapeElement(shape, i);
    if (e && e->constant)
      dims.push_back(*e->constant);
    else if (e && e->of && !cast<RankedTensorType>(e->of.getType()).isDynamicDim(e->dim))
      dims.push_back(cast<RankedTensorType>(e->of.getType()).getDimSize(e->dim));
    else
      dims.push_back(kDynamic);
  }
  return dims;
}

/// `value`, or an error saying that `what` overflowed or divided by zero.
FailureOr<int64_t> checked(std::optional<Location> loc, StringRef opName, CheckedInt value,
                           const Twine &what) {
  if (std::optional<int64_t> v = value.get())
    return *v;
  return fail(loc, opName, what + " " + value.problem());
}

/// The element count of `dims`: dynamic when one is, an error naming `what` on overflow.
FailureOr<int64_t> product(std::optional<Location> loc, StringRef opName, ArrayRef<int64_t> dims,
                           const Twine &what) {
  if (ShapedType::isDynamicShape(dims))
    return kDynamic;
  return checked(loc, opName, checkedProduct(dims),
                 "element count of " + what + " '" + shapeString(dims) + "'");
}
} // namespace

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

bool nnc::nn::areCompatibleResultTypes(TypeRange inferred, TypeRange actual) {
  if (inferred.size() != actual.size())
    return false;
  for (auto [a, b] : llvm::zip(inferred, actual))
    if (getElementTypeOrSelf(a) != getElementTypeOrSelf(b) || failed(verifyCompatibleShape(a, b)))
      return false;
  return true;
}

Type nnc::nn::refineType(Type current, Type inferred) {
  auto cur = dyn_cast<RankedTensorType>(current);
  auto inf = dyn_cast<RankedTensorType>(inferred);
  if (!cur || !inf || cur.getRank() != inf.getRank() ||
      cur.getElementType() != inf.getElementType())
    return nullptr;
  SmallVector<int64_t> dims;
  for (auto [a, b] : llvm::zip(cur.getShape(), inf.getShape())) {
    std::optional<int64_t> d = mergeDim(a, b);
    if (!d)
      return nullptr;
    dims.push_back(*d);
  }
  return cur.clone(dims);
}

std::optional<SmallVector<int64_t>> nnc::nn::getConstantInts(Value value) {
  DenseIntElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<int64_t> out;
  bool isUnsigned = attr.getElementType().isUnsignedInteger();
  for (const APInt &v : attr.getValues<APInt>())
    out.push_back(isUnsigned ? (int64_t)v.getZExtValue() : v.getSExtValue());
  return out;
}

std::optional<SmallVector<double>> nnc::nn::getConstantFloats(Value value) {
  DenseFPElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  SmallVector<double> out;
  for (const APFloat &v : attr.getValues<APFloat>())
    out.push_back(v.convertToDouble());
  return out;
}

LogicalResult nnc::nn::checkInferredShapes(std::optional<Location> loc, StringRef opName,
                                           ArrayRef<Type> types) {
  for (auto [i, type] : llvm::enumerate(types)) {
    auto shaped = dyn_cast<RankedTensorType>(type);
    if (!shaped)
      continue;
    if (std::optional<std::string> problem =
            tensorShapeProblem(shaped.getShape(), shaped.getElementType()))
      return fail(loc, opName, "result #" + Twine(i) + " has " + *problem);
  }
  return success();
}

LogicalResult nnc::nn::verifyTensorShapes(Operation *op) {
  auto check = [&](Type type, StringRef what, unsigned i) -> LogicalResult {
    auto shaped = dyn_cast<RankedTensorType>(type);
    if (!shaped)
      return success();
    if (std::optional<std::string> problem =
            tensorShapeProblem(shaped.getShape(), shaped.getElementType()))
      return op->emitOpError() << what << " #" << i << " has " << *problem;
    return success();
  };
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(check(type, "operand", i)))
      return failure();
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(check(type, "result", i)))
      return failure();
  return success();
}

LogicalResult nnc::nn::checkAxis(std::optional<Location> loc, StringRef opName, Type input,
                                 int64_t axis) {
  int64_t rank = ranked(input).getRank();
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
    return fail(loc, opName, "expected axis in [0, " + Twine(rank) + ") (got " + Twine(axis) + ")");
  return success();
}

LogicalResult nnc::nn::inferBroadcast(std::optional<Location> loc, StringRef opName,
                                      ValueRange operands, Type elementType,
                                      SmallVectorImpl<Type> &types) {
  SmallVector<int64_t> shape;
  for (Value v : operands) {
    auto next = broadcastShapes(shape, ranked(v.getType()).getShape());
    if (!next)
      return fail(loc, opName,
                  "expected broadcastable shapes (got " + shapeString(shape) + " and " +
                      shapeString(ranked(v.getType()).getShape()) + ")");
    shape = *next;
  }
  types.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

LogicalResult nnc::nn::inferReduce(std::optional<Location> loc, StringRef opName, Type input,
                                   ArrayRef<int64_t> axes, bool keepDims,
                                   SmallVectorImpl<Type> &types) {
  auto type = ranked(input);
  int64_t rank = type.getRank();
  if (axes.empty() && rank > 0)
    return fail(loc, opName, "expected at least one axis");
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= std::max<int64_t>(rank, 1))
      return fail(loc, opName, "expected axes in [0, " + Twine(rank) + ") (got " + Twine(axes[i]) + ")");
    if (i > 0 && axes[i] <= axes[i - 1])
      return fail(loc, opName, "expected strictly increasing axes");
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!llvm::is_contained(axes, d))
      shape.push_back(type.getDimSize(d));
    else if (keepDims)
      shape.push_back(1);
  }
  types.push_back(type.clone(shape));
  return success();
}

/// Checks the per-spatial-dim attributes of windowed ops (conv, pooling).
static LogicalResult checkWindow(std::optional<Location> loc, StringRef opName, int64_t spatial,
                                 ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                                 ArrayRef<int64_t> pads) {
  if ((int64_t)strides.size() != spatial || (int64_t)dilations.size() != spatial)
    return fail(loc, opName, "expected " + Twine(spatial) + " strides and dilations (got " +
                                 Twine(strides.size()) + " and " + Twine(dilations.size()) + ")");
  if ((int64_t)pads.size() != 2 * spatial)
    return fail(loc, opName,
                "expected " + Twine(2 * spatial) + " pads (got " + Twine(pads.size()) + ")");
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d < 1; }))
    return fail(loc, opName, "expected positive strides and dilations");
  if (llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return fail(loc, opName, "expected non-negative pads");
  return success();
}

LogicalResult nnc::nn::inferPool(std::optional<Location> loc, StringRef opName, Type input,
                                 ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                                 ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads,
                                 bool ceilMode, SmallVectorImpl<Type> &types) {
  auto type = ranked(input);
  int64_t spatial = type.getRank() - 2;
  if (spatial < 1)
    return fail(loc, opName, "expected input rank >= 3 (got " + Twine(type.getRank()) + ")");
  if ((int64_t)kernel.size() != spatial)
    return fail(loc, opName, "expected " + Twine(spatial) + " kernel dims (got " +
                                 Twine(kernel.size()) + ")");
  if (llvm::any_of(kernel, [](int64_t k) { return k < 1; }))
    return fail(loc, opName, "expected positive kernel dims");
  if (failed(checkWindow(loc, opName, spatial, strides, dilations, pads)))
    return failure();
  SmallVector<int64_t> shape(type.getShape().take_front(2));
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = type.getDimSize(i + 2);
    if (ShapedType::isDynamic(in)) {
      shape.push_back(kDynamic);
      continue;
    }
    FailureOr<int64_t> padded =
        checked(loc, opName, CheckedInt(in) + pads[i] + pads[i + spatial],
                "padded input size along dim " + Twine(i + 2));
    FailureOr<int64_t> window = checked(loc, opName, (CheckedInt(kernel[i]) - 1) * dilations[i] + 1,
                                        "dilated window size along dim " + Twine(i + 2));
    if (failed(padded) || failed(window))
      return failure();
    if (*padded < *window)
      return fail(loc, opName, "expected the window to fit in the padded input along dim " +
                                   Twine(i + 2));
    // No overflow from here: span >= 0 and strides >= 1.
    int64_t span = *padded - *window;
    int64_t out = (ceilMode ? llvm::divideCeilSigned(span, strides[i]) : span / strides[i]) + 1;
    // With ceil_mode, a last window that would start in the trailing padding is
    // dropped. Its start may overflow (then it is past the padding, too);
    // in + pads[i] <= padded cannot.
    if (ceilMode && ((CheckedInt(out) - 1) * strides[i]).valueOr(INT64_MAX) >= in + pads[i])
      --out;
    shape.push_back(out);
  }
  types.push_back(type.clone(shape));
  return success();
}

/// How many of the taps first, first + dilation, ..., first + (kernel - 1) *
/// dilation lie in [begin, end), without visiting them (kernels may be huge).
static int64_t countedTaps(int64_t first, int64_t kernel, int64_t dilation, int64_t begin,
                           int64_t end) {
  // Smallest k with first + k * dilation >= begin, largest with < end.
  int64_t lo = begin <= first ? 0 : llvm::divideCeilSigned(begin - first, dilation);
  int64_t hi = end <= first ? -1 : llvm::divideFloorSigned(end - 1 - first, dilation);
  hi = std::min(hi, kernel - 1);
  return std::max<int64_t>(0, hi - lo + 1);
}

SmallVector<int64_t> nnc::nn::avgPoolDivisors(AvgPoolOp op, int64_t dim) {
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  auto outType = cast<RankedTensorType>(op.getType());
  int64_t spatial = inType.getRank() - 2;
  ArrayRef<int64_t> pads = op.getPads();
  int64_t in = inType.getDimSize(dim + 2);
  bool includePad = op.getCountIncludePad();
  int64_t begin = includePad ? -pads[dim] : 0, end = includePad ? in + pads[dim + spatial] : in;
  SmallVector<int64_t> counts;
  for (int64_t o = 0; o < outType.getDimSize(dim + 2); ++o)
    counts.push_back(countedTaps(o * op.getStrides()[dim] - pads[dim], op.getKernel()[dim],
                                 op.getDilations()[dim], begin, end));
  return counts;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult CastOp::inferReturnTypes(MLIRContext *, std::optional<Location>, Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  types.push_back(ranked(adaptor.getInput().getType()).clone(adaptor.getTo()));
  return success();
}

LogicalResult ModOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferBroadcast(loc, getOperationName(), adaptor.getOperands(),
                        getElementTypeOrSelf(adaptor.getLhs().getType()), types);
}

LogicalResult ModOp::verify() {
  Type element = getElementTypeOrSelf(getLhs().getType());
  if (element != getElementTypeOrSelf(getRhs().getType()))
    return emitOpError("expected operands of one element type");
  if (isa<FloatType>(element) && !getFmod())
    return emitOpError("expected fmod = true for floating-point operands");
  return success();
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  Type element = getElementTypeOrSelf(adaptor.getX().getType());
  if (element != getElementTypeOrSelf(adaptor.getY().getType()))
    return fail(loc, getOperationName(), "expected 'x' and 'y' of one element type");
  return inferBroadcast(loc, getOperationName(), adaptor.getOperands(), element, types);
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution, normalization
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto lhs = ranked(adaptor.getLhs().getType());
  auto rhs = ranked(adaptor.getRhs().getType());
  StringRef name = getOperationName();
  if (lhs.getElementType() != rhs.getElementType())
    return fail(loc, name, "expected operands of one element type");
  if (lhs.getRank() < 1 || rhs.getRank() < 1)
    return fail(loc, name, "expected operands of rank >= 1");
  // 1-D operands are promoted to matrices; the promoted dim is dropped again.
  SmallVector<int64_t> a(lhs.getShape()), b(rhs.getShape());
  if (a.size() == 1)
    a.insert(a.begin(), 1);
  if (b.size() == 1)
    b.push_back(1);
  if (!mergeDim(a.back(), b[b.size() - 2]))
    return fail(loc, name, "expected matching contraction dims (got " + shapeString(lhs.getShape()) +
                               " and " + shapeString(rhs.getShape()) + ")");
  auto batch = broadcastShapes(ArrayRef<int64_t>(a).drop_back(2), ArrayRef<int64_t>(b).drop_back(2));
  if (!batch)
    return fail(loc, name, "expected broadcastable batch dims");
  SmallVector<int64_t> shape(*batch);
  if (lhs.getRank() > 1)
    shape.push_back(a[a.size() - 2]);
  if (rhs.getRank() > 1)
    shape.push_back(b.back());
  types.push_back(lhs.clone(shape));
  return success();
}

/// Checks a per-channel parameter: 1-D with `channels` elements.
static LogicalResult checkChannelParam(std::optional<Location> loc, StringRef opName,
                                       StringRef what, Value param, int64_t channels) {
  auto type = ranked(param.getType());
  if (type.getRank() != 1 || !mergeDim(type.getDimSize(0), channels))
    return fail(loc, opName, "expected '" + what + "' of shape " +
                                 shapeString({channels}) + " (got " +
                                 shapeString(type.getShape()) + ")");
  return success();
}

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  auto input = ranked(adaptor.getInput().getType());
  auto filter = ranked(adaptor.getFilter().getType());
  int64_t spatial = input.getRank() - 2;
  if (spatial < 1 || filter.getRank() != input.getRank())
    return fail(loc, name, "expected input and filter of one rank >= 3 (got " +
                               Twine(input.getRank()) + " and " + Twine(filter.getRank()) + ")");
  if (failed(checkWindow(loc, name, spatial, adaptor.getStrides(), adaptor.getDilations(),
                         adaptor.getPads())))
    return failure();
  int64_t group = adaptor.getGroup();
  int64_t channels = input.getDimSize(1), filterChannels = filter.getDimSize(1);
  int64_t outChannels = filter.getDimSize(0);
  if (group < 1)
    return fail(loc, name, "expected group >= 1");
  if (!ShapedType::isDynamic(channels) && !ShapedType::isDynamic(filterChannels) &&
      (CheckedInt(filterChannels) * group).valueOr(-1) != channels)
    return fail(loc, name, "expected input channels (" + Twine(channels) +
                               ") = filter channels (" + Twine(filterChannels) + ") * group (" +
                               Twine(group) + ")");
  if (!ShapedType::isDynamic(outChannels) && outChannels % group != 0)
    return fail(loc, name, "expected output channels divisible by group");
  if (adaptor.getBias() &&
      failed(checkChannelParam(loc, name, "bias", adaptor.getBias(), outChannels)))
    return failure();
  ArrayRef<int64_t> strides = adaptor.getStrides(), dilations = adaptor.getDilations(),
                    pads = adaptor.getPads();
  SmallVector<int64_t> shape{input.getDimSize(0), outChannels};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = input.getDimSize(i + 2), k = filter.getDimSize(i + 2);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(k)) {
      shape.push_back(kDynamic);
      continue;
    }
    FailureOr<int64_t> padded = checked(loc, name, CheckedInt(in) + pads[i] + pads[i + spatial],
                                        "padded input size along dim " + Twine(i + 2));
    FailureOr<int64_t> window = checked(loc, name, (CheckedInt(k) - 1) * dilations[i] + 1,
                                        "dilated filter size along dim " + Twine(i + 2));
    if (failed(padded) || failed(window))
      return failure();
    if (*padded < *window)
      return fail(loc, name, "expected the filter to fit in the padded input along dim " +
                                 Twine(i + 2));
    // An empty filter dim makes the window size negative, so even the span
    // can overflow; with a span in [0, INT64_MAX] and strides >= 1 nothing else can.
    FailureOr<int64_t> span = checked(loc, name, CheckedInt(*padded) - *window,
                                      "output size along dim " + Twine(i + 2));
    if (failed(span))
      return failure();
    shape.push_back(*span / strides[i] + 1);
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult ConvTransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                Adaptor adaptor, SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  auto input = ranked(adaptor.getInput().getType());
  auto filter = ranked(adaptor.getFilter().getType());
  int64_t spatial = input.getRank() - 2;
  if (spatial < 1 || filter.getRank() != input.getRank())
    return fail(loc, name, "expected input and filter of one rank >= 3 (got " +
                               Twine(input.getRank()) + " and " + Twine(filter.getRank()) + ")");
  if (failed(checkWindow(loc, name, spatial, adaptor.getStrides(), adaptor.getDilations(),
                         adaptor.getPads())))
    return failure();
  ArrayRef<int64_t> outputPadding = adaptor.getOutputPadding();
  if ((int64_t)outputPadding.size() != spatial)
    return fail(loc, name, "expected " + Twine(spatial) + " output_padding values");
  int64_t group = adaptor.getGroup();
  if (group < 1)
    return fail(loc, name, "expected group >= 1");
  if (!mergeDim(input.getDimSize(1), filter.getDimSize(0)))
    return fail(loc, name, "expected input channels = filter dim 0");
  int64_t outChannels = kDynamic;
  if (!ShapedType::isDynamic(filter.getDimSize(1))) {
    FailureOr<int64_t> c =
        checked(loc, name, CheckedInt(filter.getDimSize(1)) * group, "output channel count");
    if (failed(c))
      return failure();
    outChannels = *c;
  }
  if (adaptor.getBias() &&
      failed(checkChannelParam(loc, name, "bias", adaptor.getBias(), outChannels)))
    return failure();
  ArrayRef<int64_t> strides = adaptor.getStrides(), dilations = adaptor.getDilations(),
                    pads = adaptor.getPads();
  SmallVector<int64_t> shape{input.getDimSize(0), outChannels};
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = input.getDimSize(i + 2), k = filter.getDimSize(i + 2);
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(k)) {
      shape.push_back(kDynamic);
      continue;
    }
    FailureOr<int64_t> out =
        checked(loc, name,
                CheckedInt(strides[i]) * (CheckedInt(in) - 1) + outputPadding[i] +
                    (CheckedInt(k) - 1) * dilations[i] + 1 - pads[i] - pads[i + spatial],
                "output size along dim " + Twine(i + 2));
    if (failed(out))
      return failure();
    if (*out < 1)
      return fail(loc, name, "expected a positive output size along dim " + Twine(i + 2));
    shape.push_back(*out);
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  if (input.getRank() < 2)
    return fail(loc, getOperationName(), "expected input rank >= 2");
  int64_t channels = input.getDimSize(1);
  for (auto [what, v] : {std::pair<StringRef, Value>{"scale", adaptor.getScale()},
                         {"bias", adaptor.getBias()},
                         {"mean", adaptor.getMean()},
                         {"variance", adaptor.getVariance()}})
    if (failed(checkChannelParam(loc, getOperationName(), what, v, channels)))
      return failure();
  types.push_back(input);
  return success();
}

LogicalResult InstanceNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                               Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  if (input.getRank() < 3)
    return fail(loc, getOperationName(), "expected input rank >= 3");
  int64_t channels = input.getDimSize(1);
  if (failed(checkChannelParam(loc, getOperationName(), "scale", adaptor.getScale(), channels)) ||
      failed(checkChannelParam(loc, getOperationName(), "bias", adaptor.getBias(), channels)))
    return failure();
  types.push_back(input);
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  if (failed(checkAxis(loc, getOperationName(), input, adaptor.getAxis())))
    return failure();
  ArrayRef<int64_t> normalized = input.getShape().drop_front(adaptor.getAxis());
  for (Value param : {adaptor.getScale(), adaptor.getBias()}) {
    if (!param)
      continue;
    auto shape = ranked(param.getType()).getShape();
    auto b = broadcastShapes(normalized, shape);
    if (shape.size() > normalized.size() || !b || !areCompatibleResultTypes(
            input.clone(*b), input.clone(SmallVector<int64_t>(normalized))))
      return fail(loc, getOperationName(),
                  "expected scale and bias broadcastable to " + shapeString(normalized));
  }
  types.push_back(input);
  return success();
}

LogicalResult CumSumOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  if (failed(checkAxis(loc, getOperationName(), adaptor.getInput().getType(), adaptor.getAxis())))
    return failure();
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult TriluOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  if (ranked(adaptor.getInput().getType()).getRank() < 2)
    return fail(loc, getOperationName(), "expected input rank >= 2");
  if (ranked(adaptor.getK().getType()).getRank() != 0)
    return fail(loc, getOperationName(), "expected a 0-D 'k'");
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult EinsumOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  auto [lhs, output] = adaptor.getEquation().split("->");
  if (output.data() == nullptr || adaptor.getEquation().count("->") != 1)
    return fail(loc, name, "expected an explicit '->' in the equation");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  ValueRange inputs = adaptor.getInputs();
  if (terms.size() != inputs.size())
    return fail(loc, name, "expected " + Twine(terms.size()) + " operands for the equation (got " +
                               Twine(inputs.size()) + ")");
  llvm::DenseMap<char, int64_t> dims;
  Type element;
  for (auto [term, v] : llvm::zip(terms, inputs)) {
    auto type = ranked(v.getType());
    term = term.trim();
    if (element && element != type.getElementType())
      return fail(loc, name, "expected operands of one element type");
    element = type.getElementType();
    if ((int64_t)term.size() != type.getRank())
      return fail(loc, name, "expected term '" + term + "' to name each of " +
                                 Twine(type.getRank()) + " dims");
    for (auto [c, d] : llvm::zip(term, type.getShape())) {
      if (!llvm::isAlpha(c))
        return fail(loc, name, "expected letters in the equation (got '" + Twine(c) + "')");
      auto [it, inserted] = dims.try_emplace(c, d);
      if (inserted)
        continue;
      std::optional<int64_t> merged = broadcastDim(it->second, d);
      if (!merged)
        return fail(loc, name, "expected one size for subscript '" + Twine(c) + "'");
      it->second = *merged;
    }
  }
  SmallVector<int64_t> shape;
  for (char c : output.trim()) {
    auto it = dims.find(c);
    if (it == dims.end())
      return fail(loc, name, "expected output subscript '" + Twine(c) + "' among the inputs'");
    shape.push_back(it->second);
  }
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement and shapes
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                           Adaptor adaptor, SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getValue().getType());
  return success();
}

LogicalResult ShapeOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  int64_t rank = ranked(adaptor.getInput().getType()).getRank();
  int64_t start = adaptor.getStart(), end = adaptor.getEnd();
  if (start < 0 || end > rank || start > end)
    return fail(loc, getOperationName(), "expected 0 <= start <= end <= " + Twine(rank));
  types.push_back(RankedTensorType::get({end - start}, IntegerType::get(context, 64)));
  return success();
}

LogicalResult SizeOp::inferReturnTypes(MLIRContext *context, std::optional<Location>, Adaptor,
                                       SmallVectorImpl<Type> &types) {
  types.push_back(RankedTensorType::get({}, IntegerType::get(context, 64)));
  return success();
}

LogicalResult CheckOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  if (ranked(adaptor.getHolds().getType()).getRank() != 0)
    return fail(loc, getOperationName(), "expected a 0-D 'holds'");
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult NonZeroOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto type = ranked(adaptor.getInput().getType());
  types.push_back(RankedTensorType::get({type.getRank(), kDynamic}, IntegerType::get(context, 64)));
  return success();
}

LogicalResult StringNormalizerOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                   Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto type = ranked(adaptor.getInput().getType());
  // ONNX's two forms: [C] and [1, C].
  if (type.getRank() != 1 && (type.getRank() != 2 || type.getDimSize(0) != 1))
    return fail(loc, getOperationName(), "expected a [C] or [1, C] input");
  if (adaptor.getCaseChange() < 0 || adaptor.getCaseChange() > 2)
    return fail(loc, getOperationName(), "expected case_change 0 (none), 1 (lower) or 2 (upper)");
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = kDynamic;
  types.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult CompressOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto type = ranked(adaptor.getInput().getType());
  auto condition = ranked(adaptor.getCondition().getType());
  int64_t axis = adaptor.getAxis();
  if (!type.hasStaticShape() || !condition.hasStaticShape())
    return fail(loc, getOperationName(), "expected an input and a condition of static shape");
  if (axis < 0 || axis >= type.getRank())
    return fail(loc, getOperationName(), "expected 0 <= axis < " + Twine(type.getRank()));
  if (condition.getRank() != 1 || condition.getDimSize(0) > type.getDimSize(axis))
    return fail(loc, getOperationName(),
                "expected a 1-D condition at most as long as dim " + Twine(axis) + " (" +
                    Twine(type.getDimSize(axis)) + ")");
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = kDynamic;
  types.push_back(RankedTensorType::get(shape, type.getElementType()));
  return success();
}

LogicalResult NonMaxSuppressionOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                                                    Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto boxes = ranked(adaptor.getBoxes().getType()), scores = ranked(adaptor.getScores().getType());
  // The box count N may be dynamic (boxes a detector's earlier stages
  // selected); the lowering checks that the two agree.
  auto agree = [](int64_t a, int64_t b) { return a == b || a == kDynamic || b == kDynamic; };
  if (boxes.getRank() != 3 || scores.getRank() != 3 || boxes.isDynamicDim(0) ||
      scores.isDynamicDim(0) || scores.isDynamicDim(1) || boxes.getDimSize(2) != 4 ||
      scores.getDimSize(0) != boxes.getDimSize(0) || !agree(scores.getDimSize(2), boxes.getDimSize(1)))
    return fail(loc, getOperationName(),
                "expected boxes [B, N, 4] and scores [B, C, N] of the same B and N, B and C static");
  if (boxes.getElementType() != scores.getElementType())
    return fail(loc, getOperationName(), "expected boxes and scores of one element type");
  for (Value v : {adaptor.getMaxOutput(), adaptor.getIouThreshold(), adaptor.getScoreThreshold()}) {
    auto type = ranked(v.getType());
    if (!type.hasStaticShape() || type.getNumElements() != 1)
      return fail(loc, getOperationName(), "expected one-element thresholds and max_output");
  }
  types.push_back(RankedTensorType::get({kDynamic, 3}, IntegerType::get(context, 64)));
  return success();
}

LogicalResult UniqueOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto type = ranked(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis();
  if (!type.hasStaticShape() || axis < 0 || axis >= type.getRank())
    return fail(loc, getOperationName(), "expected a static input of rank above the axis");
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = kDynamic;
  auto i64 = IntegerType::get(context, 64);
  types.push_back(RankedTensorType::get(shape, type.getElementType()));
  types.push_back(RankedTensorType::get({kDynamic}, i64));
  types.push_back(RankedTensorType::get({type.getDimSize(axis)}, i64));
  types.push_back(RankedTensorType::get({kDynamic}, i64));
  return success();
}

LogicalResult ConstantOfShapeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                  Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto dims = shapeOperandDims(adaptor.getShape());
  if (!dims)
    return fail(loc, getOperationName(), "expected a 1-D 'shape' of static length");
  if (adaptor.getValue().getNumElements() != 1)
    return fail(loc, getOperationName(), "expected a one-element 'value'");
  if (llvm::any_of(*dims, [](int64_t d) { return d < 0 && !ShapedType::isDynamic(d); }))
    return fail(loc, getOperationName(), "expected non-negative dims");
  types.push_back(RankedTensorType::get(*dims, adaptor.getValue().getElementType()));
  return success();
}

LogicalResult RangeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  Type element = getElementTypeOrSelf(adaptor.getStart().getType());
  for (Value v : adaptor.getOperands())
    if (ranked(v.getType()).getRank() != 0 || getElementTypeOrSelf(v.getType()) != element)
      return fail(loc, getOperationName(), "expected 0-D operands of one element type");
  int64_t length = kDynamic;
  if (isa<IntegerType>(element)) {
    auto s = getConstantInts(adaptor.getStart()), l = getConstantInts(adaptor.getLimit()),
         d = getConstantInts(adaptor.getDelta());
    if (s && l && d) {
      if ((*d)[0] == 0)
        return fail(loc, getOperationName(), "expected a nonzero delta");
      // ceil((limit - start) / delta) in integers: a double quotient rounds
      // large distances.
      FailureOr<int64_t> count = checked(loc, getOperationName(),
                                         ceilDiv(CheckedInt((*l)[0]) - (*s)[0], (*d)[0]),
                                         "element count");
      if (failed(count))
        return failure();
      length = std::max<int64_t>(0, *count);
    }
  } else {
    auto s = getConstantFloats(adaptor.getStart()), l = getConstantFloats(adaptor.getLimit()),
         d = getConstantFloats(adaptor.getDelta());
    if (s && l && d) {
      if (!std::isfinite((*s)[0]) || !std::isfinite((*l)[0]) || !std::isfinite((*d)[0]))
        return fail(loc, getOperationName(), "expected finite start, limit and delta");
      if ((*d)[0] == 0)
        return fail(loc, getOperationName(), "expected a nonzero delta");
      // In the element type, as ONNX Runtime and NumPy count: Range(0, 0.3,
      // 0.1) in f32 has 3 elements (f64 arithmetic on the same values, 4).
      double quotient = element.isF64() ? ((*l)[0] - (*s)[0]) / (*d)[0]
                                        : (double)(((float)(*l)[0] - (float)(*s)[0]) / (float)(*d)[0]);
      FailureOr<int64_t> count =
          checked(loc, getOperationName(), CheckedInt::fromDouble(std::ceil(quotient)), "element count");
      if (failed(count))
        return failure();
      length = std::max<int64_t>(0, *count);
    }
  }
  types.push_back(RankedTensorType::get({length}, element));
  return success();
}

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  auto input = ranked(adaptor.getInput().getType());
  auto dims = shapeOperandDims(adaptor.getShape());
  if (!dims)
    return fail(loc, name, "expected a 1-D 'shape' of static length");
  SmallVector<int64_t> shape(*dims);
  std::optional<size_t> inferred;
  // Dynamic input dims copied to the same position (a 0 in `shape`) cancel out
  // when inferring the -1 dim, so [?, 4, 8] reshaped by [0, -1] gives [?, 32].
  SmallVector<int64_t> inputRest(input.getShape());
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t &d = shape[i];
    if (ShapedType::isDynamic(d))
      continue;
    if (d == 0 && !adaptor.getAllowzero()) {
      if ((int64_t)i >= input.getRank())
        return fail(loc, name, "expected a 0 in 'shape' to copy an input dim (index " + Twine(i) +
                                   " is past rank " + Twine(input.getRank()) + ")");
      d = input.getDimSize(i);
      inputRest[i] = 1;
      continue;
    }
    if (d == -1) {
      if (inferred)
        return fail(loc, name, "expected at most one -1 in 'shape'");
      inferred = i;
      continue;
    }
    if (d < 0)
      return fail(loc, name, "expected dims >= -1 in 'shape' (got " + Twine(d) + ")");
  }
  // The input's count fits (verified types), but that of the target shape is
  // model data.
  FailureOr<int64_t> totalOr = product(loc, name, inputRest, "the input");
  if (failed(totalOr))
    return failure();
  int64_t total = *totalOr;
  SmallVector<int64_t> knownDims;
  bool knownStatic = true;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (inferred && i == *inferred)
      continue;
    bool copied = (*dims)[i] == 0 && !adaptor.getAllowzero();
    if (copied)
      continue;
    if (ShapedType::isDynamic(shape[i]))
      knownStatic = false;
    else
      knownDims.push_back(shape[i]);
  }
  FailureOr<int64_t> knownChecked =
      checked(loc, name, checkedProduct(knownDims),
              "element count of the result shape '" + shapeString(shape) + "'");
  if (failed(knownChecked))
    return failure();
  int64_t known = *knownChecked;
  if (inferred) {
    shape[*inferred] = kDynamic;
    if (!ShapedType::isDynamic(total) && knownStatic) {
      if (known == 0 || total % known != 0)
        return fail(loc, name, "cannot infer the -1 dim: " + Twine(total) +
                                   " elements do not split into parts of " + Twine(known));
      shape[*inferred] = total / known;
    }
  } else if (!ShapedType::isDynamic(total) && knownStatic && total != known) {
    return fail(loc, name, "expected " + Twine(total) + " elements in the result shape " +
                               shapeString(shape) + " (got " + Twine(known) + ")");
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis > input.getRank())
    return fail(loc, getOperationName(),
                "expected axis in [0, " + Twine(input.getRank()) + "] (got " + Twine(axis) + ")");
  FailureOr<int64_t> outer =
      product(loc, getOperationName(), input.getShape().take_front(axis), "the leading dims");
  FailureOr<int64_t> inner =
      product(loc, getOperationName(), input.getShape().drop_front(axis), "the trailing dims");
  if (failed(outer) || failed(inner))
    return failure();
  types.push_back(input.clone({*outer, *inner}));
  return success();
}

/// Checks that `axes` are strictly increasing and in [0, limit).
static LogicalResult checkAxes(std::optional<Location> loc, StringRef opName,
                               ArrayRef<int64_t> axes, int64_t limit) {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= limit)
      return fail(loc, opName, "expected axes in [0, " + Twine(limit) + ") (got " + Twine(axes[i]) + ")");
    if (i > 0 && axes[i] <= axes[i - 1])
      return fail(loc, opName, "expected strictly increasing axes");
  }
  return success();
}

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  if (failed(checkAxes(loc, getOperationName(), axes, input.getRank())))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < input.getRank(); ++d) {
    int64_t size = input.getDimSize(d);
    if (!llvm::is_contained(axes, d))
      shape.push_back(size);
    else if (size != 1 && !ShapedType::isDynamic(size))
      return fail(loc, getOperationName(), "expected squeezed dim " + Twine(d) +
                                               " to have size 1 (got " + Twine(size) + ")");
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult UnsqueezeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  int64_t rank = input.getRank() + axes.size();
  if (failed(checkAxes(loc, getOperationName(), axes, rank)))
    return failure();
  SmallVector<int64_t> shape;
  auto it = input.getShape().begin();
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(llvm::is_contained(axes, d) ? 1 : *it++);
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  SmallVector<bool> seen(input.getRank(), false);
  if ((int64_t)perm.size() != input.getRank())
    return fail(loc, getOperationName(), "expected a permutation of " + Twine(input.getRank()) +
                                             " dims (got " + Twine(perm.size()) + ")");
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= input.getRank() || seen[p])
      return fail(loc, getOperationName(), "expected 'perm' to be a permutation");
    seen[p] = true;
    shape.push_back(input.getDimSize(p));
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return fail(loc, name, "expected at least one operand");
  auto first = ranked(inputs[0].getType());
  if (failed(checkAxis(loc, name, first, adaptor.getAxis())))
    return failure();
  int64_t axis = adaptor.getAxis();
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value v : inputs) {
    auto type = ranked(v.getType());
    if (type.getRank() != first.getRank() || type.getElementType() != first.getElementType())
      return fail(loc, name, "expected operands of one rank and element type");
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t size = type.getDimSize(d);
      if (d == axis) {
        if (ShapedType::isDynamic(size) || ShapedType::isDynamic(shape[d])) {
          shape[d] = kDynamic;
          continue;
        }
        FailureOr<int64_t> sum =
            checked(loc, name, CheckedInt(shape[d]) + size, "result size along axis " + Twine(d));
        if (failed(sum))
          return failure();
        shape[d] = *sum;
        continue;
      }
      std::optional<int64_t> merged = mergeDim(shape[d], size);
      if (!merged)
        return fail(loc, name, "expected operands to agree on dim " + Twine(d));
      shape[d] = *merged;
    }
  }
  types.push_back(first.clone(shape));
  return success();
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  if (failed(checkAxis(loc, getOperationName(), input, adaptor.getAxis())))
    return failure();
  int64_t axis = adaptor.getAxis();
  CheckedInt total = 0;
  for (int64_t size : adaptor.getSizes()) {
    if (size < 0)
      return fail(loc, getOperationName(), "expected non-negative sizes");
    total += size;
    SmallVector<int64_t> shape(input.getShape());
    shape[axis] = size;
    types.push_back(input.clone(shape));
  }
  if (failed(checked(loc, getOperationName(), total, "sum of the sizes")))
    return failure();
  if (!input.isDynamicDim(axis) && *total.get() != input.getDimSize(axis))
    return fail(loc, getOperationName(), "expected sizes to add up to " +
                                             Twine(input.getDimSize(axis)) + " (got " +
                                             Twine(*total.get()) + ")");
  return success();
}

LogicalResult TopKOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  if (failed(checkAxis(loc, getOperationName(), input, adaptor.getAxis())))
    return failure();
  auto k = ranked(adaptor.getK().getType());
  if (!k.hasStaticShape() || k.getNumElements() != 1)
    return fail(loc, getOperationName(), "expected a one-element 'k'");
  int64_t axis = adaptor.getAxis();
  SmallVector<int64_t> shape(input.getShape());
  shape[axis] = kDynamic;
  if (auto value = getConstantInts(adaptor.getK())) {
    int64_t size = input.getDimSize(axis);
    if ((*value)[0] < 0 || (!ShapedType::isDynamic(size) && (*value)[0] > size))
      return fail(loc, getOperationName(), "expected 0 <= k <= " + Twine(size) + " (got " +
                                               Twine((*value)[0]) + ")");
    shape[axis] = (*value)[0];
  }
  types.push_back(input.clone(shape));
  types.push_back(RankedTensorType::get(shape, IntegerType::get(context, 64)));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  StringRef name = getOperationName();
  auto input = ranked(adaptor.getInput().getType());
  int64_t rank = input.getRank();
  int64_t count = kDynamic;
  for (Value v : {adaptor.getStarts(), adaptor.getEnds(), adaptor.getAxes(), adaptor.getSteps()}) {
    auto type = ranked(v.getType());
    if (type.getRank() != 1)
      return fail(loc, name, "expected 1-D starts, ends, axes and steps");
    std::optional<int64_t> merged = mergeDim(count, type.getDimSize(0));
    if (!merged)
      return fail(loc, name, "expected starts, ends, axes and steps of one length");
    count = *merged;
  }
  SmallVector<int64_t> shape(input.getShape());
  auto axes = getConstantInts(adaptor.getAxes());
  if (!axes) {
    // Without known axes any dim may be sliced.
    types.push_back(input.clone(SmallVector<int64_t>(rank, kDynamic)));
    return success();
  }
  auto starts = getConstantInts(adaptor.getStarts()), ends = getConstantInts(adaptor.getEnds()),
       steps = getConstantInts(adaptor.getSteps());
  SmallVector<bool> seen(rank, false);
  for (size_t i = 0; i < axes->size(); ++i) {
    int64_t axis = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
    if (axis < 0 || axis >= rank || seen[axis])
      return fail(loc, name, "expected distinct axes in [-" + Twine(rank) + ", " + Twine(rank) +
                                 ") (got " + Twine((*axes)[i]) + ")");
    seen[axis] = true;
    int64_t dim = input.getDimSize(axis);
    if (steps && (*steps)[i] == 0)
      return fail(loc, name, "expected nonzero steps");
    if (!starts || !ends || !steps || ShapedType::isDynamic(dim)) {
      shape[axis] = kDynamic;
      continue;
    }
    if (dim == 0) { // nothing to clamp the bounds to
      shape[axis] = 0;
      continue;
    }
    int64_t start = (*starts)[i], end = (*ends)[i], step = (*steps)[i];
    // Negative bounds count from the end (no overflow: dim >= 0); after
    // clamping, the distance covered is at most dim + 1, and the count is
    // written so that no step, however large, overflows: 1 + (distance - 1) / |step|.
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      shape[axis] = end > start ? 1 + (end - start - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      // -step overflows for INT64_MIN; dividing by the negative step and
      // negating cannot (the quotient is at most dim in magnitude).
      shape[axis] = start > end ? 1 - (start - end - 1) / step : 0;
    }
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  if (input.getRank() < 1)
    return fail(loc, getOperationName(), "expected input rank >= 1");
  if (failed(checkAxis(loc, getOperationName(), input, adaptor.getAxis())))
    return failure();
  int64_t axis = adaptor.getAxis();
  SmallVector<int64_t> shape(input.getShape().take_front(axis));
  llvm::append_range(shape, ranked(adaptor.getIndices().getType()).getShape());
  llvm::append_range(shape, input.getShape().drop_front(axis + 1));
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                 Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  auto indices = ranked(adaptor.getIndices().getType());
  if (indices.getRank() != input.getRank())
    return fail(loc, getOperationName(), "expected indices of the input's rank " +
                                             Twine(input.getRank()) + " (got " +
                                             Twine(indices.getRank()) + ")");
  if (failed(checkAxis(loc, getOperationName(), input, adaptor.getAxis())))
    return failure();
  // Off the axis, each index coordinate is also an input coordinate.
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (d != adaptor.getAxis() && !input.isDynamicDim(d) && !indices.isDynamicDim(d) &&
        indices.getDimSize(d) > input.getDimSize(d))
      return fail(loc, getOperationName(), "expected indices dim " + Twine(d) + " (" +
                                               Twine(indices.getDimSize(d)) +
                                               ") not to exceed the input's (" +
                                               Twine(input.getDimSize(d)) + ")");
  types.push_back(indices.clone(input.getElementType()));
  return success();
}

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  auto indices = ranked(adaptor.getIndices().getType());
  int64_t b = adaptor.getBatchDims(), q = indices.getRank(), r = input.getRank();
  if (q < 1 || indices.isDynamicDim(q - 1))
    return fail(loc, getOperationName(), "expected indices whose last dim is static");
  int64_t k = indices.getDimSize(q - 1);
  if (b < 0 || b >= q || b >= r || k > r - b)
    return fail(loc, getOperationName(), "expected batch_dims + index length (" + Twine(b) + " + " +
                                             Twine(k) + ") within the input's rank " + Twine(r));
  for (int64_t d = 0; d < b; ++d)
    if (!mergeDim(input.getDimSize(d), indices.getDimSize(d)))
      return fail(loc, getOperationName(), "expected input and indices to agree on batch dim " + Twine(d));
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, input.getShape().drop_front(b + k));
  types.push_back(input.clone(shape));
  return success();
}

/// The reduction of a scatter and its updates' element type.
static LogicalResult verifyScatter(Operation *op, Value input, Value updates, StringRef reduction) {
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return op->emitOpError("expected reduction 'none', 'add', 'mul', 'max' or 'min' (got '")
           << reduction << "')";
  if (getElementTypeOrSelf(input.getType()) != getElementTypeOrSelf(updates.getType()))
    return op->emitOpError("expected updates of the input's element type");
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  auto input = ranked(getInput().getType()), indices = ranked(getIndices().getType()),
       updates = ranked(getUpdates().getType());
  if (failed(verifyScatter(*this, getInput(), getUpdates(), getReduction())))
    return failure();
  // Dynamic dims (regions a detector kept) agree with anything here; the
  // lowering checks them.
  auto agree = [](int64_t a, int64_t b) { return a == b || a == kDynamic || b == kDynamic; };
  if (indices.getRank() != updates.getRank() || indices.getRank() != input.getRank() ||
      !llvm::all_of(llvm::zip(indices.getShape(), updates.getShape()),
                    [&](auto pair) { return agree(std::get<0>(pair), std::get<1>(pair)); }))
    return emitOpError("expected indices and updates of one shape and the input's rank");
  if (getAxis() < 0 || getAxis() >= input.getRank())
    return emitOpError("expected axis in [0, ") << input.getRank() << ")";
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (d != getAxis() && !input.isDynamicDim(d) && !indices.isDynamicDim(d) &&
        indices.getDimSize(d) > input.getDimSize(d))
      return emitOpError("expected indices dim ") << d << " not to exceed the input's";
  return success();
}

LogicalResult ScatterNDOp::verify() {
  auto input = ranked(getInput().getType()), indices = ranked(getIndices().getType()),
       updates = ranked(getUpdates().getType());
  if (failed(verifyScatter(*this, getInput(), getUpdates(), getReduction())))
    return failure();
  int64_t q = indices.getRank();
  if (q < 1 || indices.isDynamicDim(q - 1) || indices.getDimSize(q - 1) > input.getRank())
    return emitOpError("expected index tuples no longer than the input's rank");
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, input.getShape().drop_front(indices.getDimSize(q - 1)));
  if (failed(verifyCompatibleShape(updates.getShape(), expected)))
    return emitOpError("expected updates of shape indices.shape[:-1] + input.shape[k:]");
  return success();
}

LogicalResult ExpandOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  auto dims = shapeOperandDims(adaptor.getShape());
  if (!dims)
    return fail(loc, getOperationName(), "expected a 1-D 'shape' of static length");
  for (int64_t d : *dims)
    if (d < 0 && !ShapedType::isDynamic(d))
      return fail(loc, getOperationName(),
                  "expected non-negative dims in 'shape' (got '" + Twine(d) + "')");
  auto shape = broadcastShapes(input.getShape(), *dims);
  if (!shape)
    return fail(loc, getOperationName(), "expected input " + shapeString(input.getShape()) +
                                             " broadcastable to " + shapeString(*dims));
  types.push_back(input.clone(*shape));
  return success();
}

LogicalResult TileOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  auto repeats = shapeOperandDims(adaptor.getRepeats());
  if (!repeats || (int64_t)repeats->size() != input.getRank())
    return fail(loc, getOperationName(), "expected 'repeats' with one value per input dim");
  SmallVector<int64_t> shape;
  for (auto [d, r] : llvm::zip(input.getShape(), *repeats)) {
    if (!ShapedType::isDynamic(r) && r < 0)
      return fail(loc, getOperationName(), "expected non-negative repeats");
    if (ShapedType::isDynamic(d) || ShapedType::isDynamic(r)) {
      shape.push_back(kDynamic);
      continue;
    }
    FailureOr<int64_t> size = checked(loc, getOperationName(), CheckedInt(d) * r,
                                      "result size along dim " + Twine(shape.size()));
    if (failed(size))
      return failure();
    shape.push_back(*size);
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  int64_t rank = input.getRank();
  auto pads = shapeOperandDims(adaptor.getPads());
  if (!pads || (int64_t)pads->size() != 2 * rank)
    return fail(loc, getOperationName(), "expected " + Twine(2 * rank) + " pads");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = input.getDimSize(d), lo = (*pads)[d], hi = (*pads)[d + rank];
    if (ShapedType::isDynamic(size) || ShapedType::isDynamic(lo) || ShapedType::isDynamic(hi)) {
      shape.push_back(kDynamic);
      continue;
    }
    FailureOr<int64_t> padded = checked(loc, getOperationName(), CheckedInt(size) + lo + hi,
                                        "padded size of dim " + Twine(d));
    if (failed(padded))
      return failure();
    if (*padded < 0)
      return fail(loc, getOperationName(), "expected pads to leave dim " + Twine(d) + " non-negative");
    shape.push_back(*padded);
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult PadOp::verify() {
  if (!llvm::is_contained({"constant", "reflect", "edge", "wrap"}, getMode()))
    return emitOpError("expected mode 'constant', 'reflect', 'edge' or 'wrap' (got '")
           << getMode() << "')";
  auto value = ranked(getValue().getType());
  if (value.getRank() != 0 || value.getElementType() != ranked(getInput().getType()).getElementType())
    return emitOpError("expected a 0-D 'value' of the input's element type");
  return success();
}

LogicalResult ResizeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto input = ranked(adaptor.getInput().getType());
  int64_t rank = input.getRank();
  SmallVector<int64_t> shape(rank, kDynamic);
  if (adaptor.getSizes()) {
    auto sizes = shapeOperandDims(adaptor.getSizes());
    if (!sizes || (int64_t)sizes->size() != rank)
      return fail(loc, getOperationName(), "expected " + Twine(rank) + " sizes");
    shape = *sizes;
  } else if (adaptor.getScales()) {
    auto type = ranked(adaptor.getScales().getType());
    if (type.getRank() != 1 || !mergeDim(type.getDimSize(0), rank))
      return fail(loc, getOperationName(), "expected " + Twine(rank) + " scales");
    if (auto scales = getConstantFloats(adaptor.getScales())) {
      for (int64_t d = 0; d < rank; ++d) {
        // Written to refuse NaN, too.
        if (!((*scales)[d] > 0))
          return fail(loc, getOperationName(), "expected positive scales");
        if (input.isDynamicDim(d))
          continue;
        double size = std::floor((double)input.getDimSize(d) * (float)(*scales)[d]);
        FailureOr<int64_t> checkedSize = checked(loc, getOperationName(),
                                                 CheckedInt::fromDouble(size),
                                                 "result size along dim " + Twine(d));
        if (failed(checkedSize))
          return failure();
        shape[d] = *checkedSize;
      }
    }
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult ResizeOp::verify() {
  if (!getScales() == !getSizes())
    return emitOpError("expected exactly one of 'scales' and 'sizes'");
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, getMode()))
    return emitOpError("expected mode 'nearest', 'linear' or 'cubic' (got '") << getMode() << "')";
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                           "tf_half_pixel_for_nn", "tf_crop_and_resize",
                           "align_corners", "asymmetric"},
                          getCoordinateTransformationMode()))
    return emitOpError("unsupported coordinate_transformation_mode '")
           << getCoordinateTransformationMode() << "'";
  bool crops = getCoordinateTransformationMode() == "tf_crop_and_resize";
  if (crops != bool(getRoi()))
    return emitOpError("expected 'roi' exactly with tf_crop_and_resize");
  if (auto roi = getRoi()) {
    auto type = cast<RankedTensorType>(roi.getType());
    int64_t rank = cast<RankedTensorType>(getInput().getType()).getRank();
    if (type.getRank() != 1 || !mergeDim(type.getDimSize(0), 2 * rank))
      return emitOpError("expected ") << 2 * rank << " roi values (every dim's start, then its end)";
  }
  if (!llvm::is_contained({"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
                          getNearestMode()))
    return emitOpError("unsupported nearest_mode '") << getNearestMode() << "'";
  return success();
}
