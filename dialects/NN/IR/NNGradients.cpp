//===- NNGradients.cpp - vector-Jacobian products of nn ops ---------------===//
//
// Each differentiable op's GradientOpInterface: given the loss's gradients
// with respect to the op's results, build those with respect to its operands
// out of nn ops. The formulas use the op's results where that saves work
// (exp, tanh, sigmoid, softmax), so the backward sweep keeps those alive
// instead of recomputing them. Shapes are static here (nn-autodiff requires
// it), which lets broadcasting be undone by summing with constant axes.
//
//===----------------------------------------------------------------------===//

#include "dialects/NN/IR/NNBuilder.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace nnc::nn;

#include "dialects/NN/IR/NNGradient.cpp.inc"

namespace {

/// dy/dx * g for an elementwise unary op, from its input x and result y.
template <typename Op>
LogicalResult unary(Op op, OpBuilder &ob, ArrayRef<Value> dy, SmallVectorImpl<Value> &dx,
                    function_ref<Value(NNBuilder &, Value x, Value y, Value g)> rule) {
  NNBuilder b{ob, op.getLoc()};
  dx.assign(1, rule(b, op.getInput(), op.getResult(), dy[0]));
  return success(dx[0] != nullptr);
}

template <typename Op> struct Gradient;

/// Attaches `Gradient<Op>` to each op.
template <typename... Ops> void attach(MLIRContext *context) {
  (Ops::template attachInterface<Gradient<Ops>>(*context), ...);
}

#define NN_UNARY_GRADIENT(OP, ...)                                                            \
  template <> struct Gradient<OP> : GradientOpInterface::ExternalModel<Gradient<OP>, OP> {      \
    LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,             \
                                 SmallVectorImpl<Value> &dx) const {                           \
      return unary<OP>(cast<OP>(op), ob, dy, dx,                                               \
                       [&](NNBuilder &b, Value x, Value y, Value g) -> Value __VA_ARGS__);              \
    }                                                                                          \
  };

NN_UNARY_GRADIENT(NegOp, { return b.neg(g); })
NN_UNARY_GRADIENT(ExpOp, { return b.mul(g, y); })
NN_UNARY_GRADIENT(LogOp, { return b.div(g, x); })
NN_UNARY_GRADIENT(SqrtOp, { return b.div(b.mulScalar(g, 0.5), y); })
NN_UNARY_GRADIENT(ReciprocalOp, { return b.neg(b.mul(g, b.mul(y, y))); })
NN_UNARY_GRADIENT(TanhOp, { return b.mul(g, b.sub(b.scalar(y, 1.0), b.mul(y, y))); })
NN_UNARY_GRADIENT(SigmoidOp, { return b.mul(g, b.mul(y, b.sub(b.scalar(y, 1.0), y))); })
NN_UNARY_GRADIENT(SoftplusOp, { return b.mul(g, b.make<SigmoidOp>(x)); })
NN_UNARY_GRADIENT(AbsOp, { return b.mul(g, b.make<SignOp>(x)); })
NN_UNARY_GRADIENT(SinOp, { return b.mul(g, b.make<CosOp>(x)); })
NN_UNARY_GRADIENT(CosOp, { return b.neg(b.mul(g, b.make<SinOp>(x))); })
// d/dx erf(x) = 2 / sqrt(pi) * exp(-x^2)
NN_UNARY_GRADIENT(ErfOp, {
  return b.mul(g, b.mulScalar(b.make<ExpOp>(b.neg(b.mul(x, x))), 2.0 / std::sqrt(M_PI)));
})
// The subgradient at 0 is 0, as in PyTorch.
NN_UNARY_GRADIENT(ReluOp, {
  return b.where(b.make<GreaterOp>(x, b.scalar(x, 0.0)), g, b.scalar(g, 0.0));
})
// Rounding is piecewise constant: its gradient is zero almost everywhere.
NN_UNARY_GRADIENT(FloorOp, { return b.zerosLike(g); })
NN_UNARY_GRADIENT(CeilOp, { return b.zerosLike(g); })
NN_UNARY_GRADIENT(RoundOp, { return b.zerosLike(g); })
NN_UNARY_GRADIENT(SignOp, { return b.zerosLike(g); })
#undef NN_UNARY_GRADIENT

template <> struct Gradient<LeakyReluOp> : GradientOpInterface::ExternalModel<Gradient<LeakyReluOp>, LeakyReluOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    double alpha = cast<LeakyReluOp>(op).getAlpha().convertToDouble();
    return unary<LeakyReluOp>(cast<LeakyReluOp>(op), ob, dy, dx,
                              [&](NNBuilder &b, Value x, Value, Value g) -> Value {
                                return b.where(b.make<GreaterOp>(x, b.scalar(x, 0.0)), g,
                                               b.mulScalar(g, alpha));
                              });
  }
};

/// Binary elementwise ops with broadcasting: each operand's gradient is
/// summed back to its shape.
template <typename Op>
LogicalResult binary(Operation *op, OpBuilder &ob, ArrayRef<Value> dy, SmallVectorImpl<Value> &dx,
                     function_ref<std::pair<Value, Value>(NNBuilder &, Value x, Value y, Value r,
                                                          Value g)>
                         rule) {
  NNBuilder b{ob, op->getLoc()};
  Value x = op->getOperand(0), y = op->getOperand(1);
  if (!isa<FloatType>(NNBuilder::type(x).getElementType())) {
    dx.assign(2, Value());
    return success();
  }
  auto [gx, gy] = rule(b, x, y, op->getResult(0), dy[0]);
  dx.assign({b.unbroadcast(gx, x.getType()), b.unbroadcast(gy, y.getType())});
  return success();
}

#define NN_BINARY_GRADIENT(OP, ...)                                                           \
  template <> struct Gradient<OP> : GradientOpInterface::ExternalModel<Gradient<OP>, OP> {      \
    LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,             \
                                 SmallVectorImpl<Value> &dx) const {                           \
      return binary<OP>(op, ob, dy, dx,                                                        \
                        [&](NNBuilder &b, Value x, Value y, Value r,                             \
                            Value g) -> std::pair<Value, Value> __VA_ARGS__);                         \
    }                                                                                          \
  };

NN_BINARY_GRADIENT(AddOp, { return {g, g}; })
NN_BINARY_GRADIENT(SubOp, { return {g, b.neg(g)}; })
NN_BINARY_GRADIENT(MulOp, { return {b.mul(g, y), b.mul(g, x)}; })
// d(x/y)/dy = -x / y^2 = -r / y
NN_BINARY_GRADIENT(DivOp, {
  Value gx = b.div(g, y);
  return {gx, b.neg(b.mul(gx, r))};
})
// d(x^y)/dx = y x^(y-1); d(x^y)/dy = x^y log x
NN_BINARY_GRADIENT(PowOp, {
  Value gx = b.mul(g, b.mul(y, b.make<PowOp>(x, b.sub(y, b.scalar(y, 1.0)))));
  return {gx, b.mul(g, b.mul(r, b.make<LogOp>(x)))};
})
// Ties send the gradient to the first operand, as PyTorch's maximum splits it
// evenly; both are subgradients.
NN_BINARY_GRADIENT(MaxOp, {
  Value first = b.make<GreaterEqualOp>(x, y);
  Value zero = b.scalar(g, 0.0);
  return {b.where(first, g, zero), b.where(first, zero, g)};
})
NN_BINARY_GRADIENT(MinOp, {
  Value first = b.make<LessEqualOp>(x, y);
  Value zero = b.scalar(g, 0.0);
  return {b.where(first, g, zero), b.where(first, zero, g)};
})
#undef NN_BINARY_GRADIENT

template <> struct Gradient<WhereOp> : GradientOpInterface::ExternalModel<Gradient<WhereOp>, WhereOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto where = cast<WhereOp>(op);
    NNBuilder b{ob, op->getLoc()};
    Value g = dy[0], zero = b.scalar(g, 0.0), c = where.getCondition();
    dx.assign({Value(), b.unbroadcast(b.where(c, g, zero), where.getX().getType()),
          b.unbroadcast(b.where(c, zero, g), where.getY().getType())});
    return success();
  }
};

template <> struct Gradient<CastOp> : GradientOpInterface::ExternalModel<Gradient<CastOp>, CastOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto cast = llvm::cast<CastOp>(op);
    Type from = NNBuilder::type(cast.getInput()).getElementType();
    dx.assign(1, Value());
    if (isa<FloatType>(from) && isa<FloatType>(cast.getTo())) {
      NNBuilder b{ob, op->getLoc()};
      dx[0] = b.make<CastOp>(dy[0], TypeAttr::get(from));
    }
    return success();
  }
};

/// Reshape-like ops: the gradient takes the input's shape back.
template <typename Op> struct ReshapeGradient : GradientOpInterface::ExternalModel<ReshapeGradient<Op>, Op> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    NNBuilder b{ob, op->getLoc()};
    dx.assign(op->getNumOperands(), Value());
    dx[0] = b.reshape(dy[0], NNBuilder::type(op->getOperand(0)).getShape());
    return success();
  }
};
template <> struct Gradient<ReshapeOp> : ReshapeGradient<ReshapeOp> {};
template <> struct Gradient<FlattenOp> : ReshapeGradient<FlattenOp> {};
template <> struct Gradient<SqueezeOp> : ReshapeGradient<SqueezeOp> {};
template <> struct Gradient<UnsqueezeOp> : ReshapeGradient<UnsqueezeOp> {};

template <> struct Gradient<ExpandOp> : GradientOpInterface::ExternalModel<Gradient<ExpandOp>, ExpandOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    NNBuilder b{ob, op->getLoc()};
    dx.assign({b.unbroadcast(dy[0], op->getOperand(0).getType()), Value()});
    return success();
  }
};

template <> struct Gradient<TransposeOp> : GradientOpInterface::ExternalModel<Gradient<TransposeOp>, TransposeOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    ArrayRef<int64_t> perm = cast<TransposeOp>(op).getPerm();
    SmallVector<int64_t> inverse(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      inverse[p] = i;
    NNBuilder b{ob, op->getLoc()};
    dx.assign({b.transpose(dy[0], inverse)});
    return success();
  }
};

/// matmul with NumPy semantics: 1-D operands are viewed as matrices, batch
/// dims broadcast. dA = g B^T, dB = A^T g, each summed over the batch dims
/// it was broadcast along.
template <> struct Gradient<MatMulOp> : GradientOpInterface::ExternalModel<Gradient<MatMulOp>, MatMulOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto matmul = cast<MatMulOp>(op);
    NNBuilder b{ob, op->getLoc()};
    Value a = matmul.getLhs(), w = matmul.getRhs();
    if (!isa<FloatType>(NNBuilder::type(a).getElementType())) {
      dx.assign(2, Value());
      return success();
    }
    ArrayRef<int64_t> aShape = NNBuilder::type(a).getShape(), wShape = NNBuilder::type(w).getShape();
    // Promote 1-D operands to matrices, and the gradient to the promoted product's shape.
    Value a2 = aShape.size() == 1 ? b.reshape(a, {1, aShape[0]}) : a;
    Value w2 = wShape.size() == 1 ? b.reshape(w, {wShape[0], 1}) : w;
    // The product of the promoted operands has the dims the 1-D ones dropped.
    SmallVector<int64_t> shape(NNBuilder::type(dy[0]).getShape());
    if (wShape.size() == 1)
      shape.push_back(1);
    if (aShape.size() == 1)
      shape.insert(shape.end() - 1, 1);
    Value g = b.reshape(dy[0], shape);
    Value ga = b.make<MatMulOp>(g, b.transposeLast(w2));
    Value gw = b.make<MatMulOp>(b.transposeLast(a2), g);
    ga = b.reshape(b.unbroadcast(ga, a2.getType()), aShape);
    gw = b.reshape(b.unbroadcast(gw, w2.getType()), wShape);
    dx.assign({ga, gw});
    return success();
  }
};

template <typename Op> struct ReduceGradient : GradientOpInterface::ExternalModel<ReduceGradient<Op>, Op> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto reduce = cast<Op>(op);
    NNBuilder b{ob, op->getLoc()};
    auto inType = NNBuilder::type(reduce.getInput());
    // The gradient with the reduced dims kept (as size 1), then broadcast back.
    SmallVector<int64_t> kept(inType.getShape());
    int64_t count = 1;
    for (int64_t axis : reduce.getAxes()) {
      count *= kept[axis];
      kept[axis] = 1;
    }
    Value g = b.expand(b.reshape(dy[0], kept), inType.getShape());
    if constexpr (std::is_same_v<Op, ReduceMeanOp>)
      g = b.mulScalar(g, 1.0 / (double)std::max<int64_t>(count, 1));
    dx.assign({g});
    return success();
  }
};
template <> struct Gradient<ReduceSumOp> : ReduceGradient<ReduceSumOp> {};
template <> struct Gradient<ReduceMeanOp> : ReduceGradient<ReduceMeanOp> {};

// softmax: dx = y * (g - sum(g * y)) along the axis.
template <> struct Gradient<SoftmaxOp> : GradientOpInterface::ExternalModel<Gradient<SoftmaxOp>, SoftmaxOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto softmax = cast<SoftmaxOp>(op);
    NNBuilder b{ob, op->getLoc()};
    Value y = softmax.getResult(), g = dy[0];
    int64_t axis = softmax.getAxis();
    Value dot = b.reduceSum(b.mul(g, y), {axis}, /*keepDims=*/true);
    dx.assign({b.mul(y, b.sub(g, dot))});
    return success();
  }
};

// log_softmax: dx = g - exp(y) * sum(g) along the axis.
template <> struct Gradient<LogSoftmaxOp> : GradientOpInterface::ExternalModel<Gradient<LogSoftmaxOp>, LogSoftmaxOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto logSoftmax = cast<LogSoftmaxOp>(op);
    NNBuilder b{ob, op->getLoc()};
    Value g = dy[0];
    Value sum = b.reduceSum(g, {static_cast<int64_t>(logSoftmax.getAxis())}, /*keepDims=*/true);
    dx.assign({b.sub(g, b.mul(b.make<ExpOp>(logSoftmax.getResult()), sum))});
    return success();
  }
};

/// concat: each input's gradient is its slice of g along the axis.
template <> struct Gradient<ConcatOp> : GradientOpInterface::ExternalModel<Gradient<ConcatOp>, ConcatOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto concat = cast<ConcatOp>(op);
    NNBuilder b{ob, op->getLoc()};
    int64_t axis = concat.getAxis(), start = 0;
    dx.clear();
    for (Value input : concat.getInputs()) {
      int64_t size = NNBuilder::type(input).getDimSize(axis);
      dx.push_back(b.make<SliceOp>(dy[0], b.i64s({start}), b.i64s({start + size}), b.i64s({axis}),
                                   b.i64s({1})));
      start += size;
    }
    return success();
  }
};

/// split: the results' gradients concatenated, zeros for results the loss
/// does not reach.
template <> struct Gradient<SplitOp> : GradientOpInterface::ExternalModel<Gradient<SplitOp>, SplitOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto split = cast<SplitOp>(op);
    NNBuilder b{ob, op->getLoc()};
    SmallVector<Value> parts;
    for (auto [result, g] : llvm::zip(split.getResults(), dy))
      parts.push_back(g ? g : b.zerosLike(result));
    dx.assign({b.make<ConcatOp>(parts, b.b.getI64IntegerAttr(split.getAxis()))});
    return success();
  }
};

/// slice with constant bounds and unit steps: g padded with zeros back to the
/// input's shape.
template <> struct Gradient<SliceOp> : GradientOpInterface::ExternalModel<Gradient<SliceOp>, SliceOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto slice = cast<SliceOp>(op);
    auto starts = getConstantInts(slice.getStarts()), ends = getConstantInts(slice.getEnds()),
         axes = getConstantInts(slice.getAxes()), steps = getConstantInts(slice.getSteps());
    if (!starts || !ends || !axes || !steps || llvm::any_of(*steps, [](int64_t s) { return s != 1; }))
      return op->emitOpError("has no gradient unless its bounds are constants and its steps 1");
    auto inType = NNBuilder::type(slice.getInput());
    int64_t rank = inType.getRank();
    SmallVector<int64_t> pads(2 * rank, 0);
    for (auto [start, end, axisIn] : llvm::zip(*starts, *ends, *axes)) {
      int64_t axis = axisIn < 0 ? axisIn + rank : axisIn, size = inType.getDimSize(axis);
      int64_t s = std::clamp<int64_t>(start < 0 ? start + size : start, 0, size);
      int64_t e = std::clamp<int64_t>(end < 0 ? end + size : end, 0, size);
      pads[axis] = s;
      pads[rank + axis] = size - std::max(s, e);
    }
    NNBuilder b{ob, op->getLoc()};
    dx.assign(5, Value());
    dx[0] = b.make<PadOp>(dy[0], b.i64s(pads), b.scalar(dy[0], 0.0), b.b.getStringAttr("constant"));
    return success();
  }
};

/// layer_norm over the dims from `axis`: with x^ = (x - mean) * rstd,
/// dscale = sum(g * x^), dbias = sum(g) over the other dims, and
/// dx = rstd * (g' - mean(g') - x^ * mean(g' * x^)) with g' = g * scale.
/// The statistics are recomputed from x.
template <> struct Gradient<LayerNormOp> : GradientOpInterface::ExternalModel<Gradient<LayerNormOp>, LayerNormOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto norm = cast<LayerNormOp>(op);
    NNBuilder b{ob, op->getLoc()};
    Value x = norm.getInput(), g = dy[0];
    int64_t rank = NNBuilder::type(x).getRank();
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(norm.getAxis(), rank));
    auto mean = [&](Value v) {
      return b.make<ReduceMeanOp>(v, b.b.getDenseI64ArrayAttr(axes), b.b.getBoolAttr(true));
    };
    Value centered = b.sub(x, mean(x));
    Value variance = mean(b.mul(centered, centered));
    Value rstd = b.make<ReciprocalOp>(
        b.make<SqrtOp>(b.add(variance, b.scalar(x, norm.getEpsilon().convertToDouble()))));
    Value xhat = b.mul(centered, rstd);
    Value gScaled = b.mul(g, norm.getScale());
    Value gx = b.mul(rstd, b.sub(b.sub(gScaled, mean(gScaled)), b.mul(xhat, mean(b.mul(gScaled, xhat)))));
    dx.assign({gx, b.unbroadcast(b.mul(g, xhat), norm.getScale().getType())});
    if (norm.getBias())
      dx.push_back(b.unbroadcast(g, norm.getBias().getType()));
    return success();
  }
};

/// `v` cropped to `shape`: the leading part of every dim that is longer.
static Value cropTo(NNBuilder &b, Value v, ArrayRef<int64_t> shape) {
  auto type = NNBuilder::type(v);
  SmallVector<int64_t> starts, ends, axes, steps;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.getDimSize(i) != shape[i]) {
      starts.push_back(0);
      ends.push_back(shape[i]);
      axes.push_back(i);
      steps.push_back(1);
    }
  if (axes.empty())
    return v;
  return b.make<SliceOp>(v, b.i64s(starts), b.i64s(ends), b.i64s(axes), b.i64s(steps));
}

/// A convolution's bias gradient: `g` summed over all dims but the channels.
static Value biasGradient(NNBuilder &b, Value g) {
  SmallVector<int64_t> reduced{0};
  for (int64_t i = 2; i < NNBuilder::type(g).getRank(); ++i)
    reduced.push_back(i);
  return b.reduceSum(g, reduced, /*keepDims=*/false);
}

/// The filter gradient of a convolution of input `x` (with output gradient
/// `g`) and a filter of `wType`: it correlates x with g, as a convolution with
/// the roles of batch and channels exchanged per group and stride and
/// dilation swapped, then cropped to the kernel. Null when the IR cannot be
/// built.
static Value filterGradient(NNBuilder &b, Value x, Value g, RankedTensorType wType,
                            ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                            ArrayRef<int64_t> pads, int64_t group) {
  auto xType = NNBuilder::type(x);
  int64_t spatial = xType.getRank() - 2;
  auto attr = [&](ArrayRef<int64_t> v) { return b.b.getDenseI64ArrayAttr(v); };
  // x [N, G*Cg, S...] -> [Cg, G*N, S...]; dy [N, G*Mg, O...] -> [G*Mg, N, O...].
  int64_t n = xType.getDimSize(0), cg = xType.getDimSize(1) / group;
  SmallVector<int64_t> split{n, group, cg};
  SmallVector<int64_t> perm{2, 1, 0}, swap01{1, 0};
  for (int64_t i = 0; i < spatial; ++i) {
    split.push_back(xType.getDimSize(i + 2));
    perm.push_back(3 + i);
    swap01.push_back(2 + i);
  }
  SmallVector<int64_t> merged{cg, group * n};
  merged.append(xType.getShape().begin() + 2, xType.getShape().end());
  Value xr = b.reshape(b.transpose(b.reshape(x, split), perm), merged);
  Value gr = b.transpose(g, swap01);
  Value corr = b.make<ConvOp>(xr, gr, Value(), attr(dilations), attr(strides), attr(pads),
                              b.b.getI64IntegerAttr(group));
  if (!corr)
    return nullptr;
  // [Cg, M, K'...] cropped to the kernel, then [M, Cg, K...].
  SmallVector<int64_t> kernel(NNBuilder::type(corr).getShape().take_front(2));
  kernel.append(wType.getShape().begin() + 2, wType.getShape().end());
  return b.transpose(cropTo(b, corr, kernel), swap01);
}

/// conv: dbias sums dy over all but the channels; dx is the transposed
/// convolution of dy with the same filter (the output padding restores the
/// input rows the last window did not reach); dW is filterGradient's.
template <> struct Gradient<ConvOp> : GradientOpInterface::ExternalModel<Gradient<ConvOp>, ConvOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto conv = cast<ConvOp>(op);
    NNBuilder b{ob, op->getLoc()};
    Value x = conv.getInput(), w = conv.getFilter(), g = dy[0];
    auto xType = NNBuilder::type(x), wType = NNBuilder::type(w), gType = NNBuilder::type(g);
    int64_t spatial = xType.getRank() - 2, group = conv.getGroup();
    ArrayRef<int64_t> strides = conv.getStrides(), dilations = conv.getDilations(),
                      pads = conv.getPads();
    auto attr = [&](ArrayRef<int64_t> v) { return b.b.getDenseI64ArrayAttr(v); };

    SmallVector<int64_t> outputPadding;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t reached = (gType.getDimSize(i + 2) - 1) * strides[i] +
                        (wType.getDimSize(i + 2) - 1) * dilations[i] + 1 - pads[i] -
                        pads[i + spatial];
      outputPadding.push_back(xType.getDimSize(i + 2) - reached);
    }
    Value gx = b.make<ConvTransposeOp>(g, w, Value(), attr(strides), attr(dilations), attr(pads),
                                       attr(outputPadding), b.b.getI64IntegerAttr(group));

    Value gw = filterGradient(b, x, g, wType, strides, dilations, pads, group);
    if (!gw)
      return op->emitOpError("could not build the filter gradient");

    dx.assign({gx, gw});
    if (conv.getBias())
      dx.push_back(biasGradient(b, g));
    return success();
  }
};

/// conv_transpose is the adjoint of the convolution with its filter, strides,
/// dilations, pads and groups: dx is that convolution of dy (cropped when an
/// output padding of a dilation's size adds an input row), dW the filter
/// gradient of that convolution with dy as its input and x as its output
/// gradient (the filter layout [C, M/G, K...] is the convolution's).
template <> struct Gradient<ConvTransposeOp> : GradientOpInterface::ExternalModel<Gradient<ConvTransposeOp>, ConvTransposeOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto convT = cast<ConvTransposeOp>(op);
    NNBuilder b{ob, op->getLoc()};
    Value x = convT.getInput(), w = convT.getFilter(), g = dy[0];
    auto xType = NNBuilder::type(x), wType = NNBuilder::type(w);
    int64_t group = convT.getGroup();
    ArrayRef<int64_t> strides = convT.getStrides(), dilations = convT.getDilations(),
                      pads = convT.getPads();
    auto attr = [&](ArrayRef<int64_t> v) { return b.b.getDenseI64ArrayAttr(v); };
    Value gx = b.make<ConvOp>(g, w, Value(), attr(strides), attr(dilations), attr(pads),
                              b.b.getI64IntegerAttr(group));
    if (!gx)
      return op->emitOpError("could not build the input gradient");
    gx = cropTo(b, gx, xType.getShape());
    Value gw = filterGradient(b, g, x, wType, strides, dilations, pads, group);
    if (!gw)
      return op->emitOpError("could not build the filter gradient");
    dx.assign({gx, gw});
    if (convT.getBias())
      dx.push_back(biasGradient(b, g));
    return success();
  }
};

/// The gradient of a pooling's input from `routed(t)`, the gradient that tap
/// t (row-major over the kernel) passes back from each output position
/// (shaped like the output). The input positions p with p = Y*s + r (stride
/// s, phase r) are reached by the taps k with r + pad - k*d = e*s, from
/// output Y + e. So each phase of the input gradient is a sum of the taps'
/// gradients shifted by e (a pad or crop), with no scatter and no
/// multiply-adds; the phases then interleave (a transpose).
static Value scatterToWindows(NNBuilder &b, RankedTensorType xType, RankedTensorType yType,
                              ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                              ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads,
                              llvm::function_ref<Value(int64_t)> routed) {
  Type element = xType.getElementType();
  int64_t rank = xType.getRank(), spatial = rank - 2, taps = 1;
  for (int64_t k : kernel)
    taps *= k;
  Value zero = b.splat(RankedTensorType::get({}, element), 0.0);
  // Phase by phase: each phase sums its taps' shifted gradients over the
  // phase grid of ceil(X / s) rows per dim.
  int64_t n = xType.getDimSize(0), c = xType.getDimSize(1), phases = 1;
  SmallVector<int64_t> grid;
  for (int64_t i = 0; i < spatial; ++i) {
    grid.push_back((xType.getDimSize(i + 2) + strides[i] - 1) / strides[i]);
    phases *= strides[i];
  }
  // Each phase is at least one op: bounded, so a huge stride cannot blow up
  // the graph (the callers report the failure at their op). The taps that
  // reach a phase are counted below, against the same bound.
  if (phases > 4096)
    return nullptr;
  int64_t terms = 0;
  SmallVector<int64_t> phaseShape{n, c, 1};
  phaseShape.append(grid);
  SmallVector<Value> phaseSums;
  for (int64_t ph = 0; ph < phases; ++ph) {
    SmallVector<int64_t> r(spatial);
    for (int64_t i = spatial - 1, rest = ph; i >= 0; --i) {
      r[i] = rest % strides[i];
      rest /= strides[i];
    }
    Value sum;
    for (int64_t t = 0; t < taps; ++t) {
      SmallVector<int64_t> shift(2 * rank, 0);
      bool reaches = true;
      for (int64_t i = spatial - 1, rest = t; i >= 0; --i) {
        int64_t k = rest % kernel[i];
        rest /= kernel[i];
        int64_t v = r[i] + pads[i] - k * dilations[i];
        // Euclid: the tap reaches this phase when s divides v.
        int64_t e = v >= 0 ? v / strides[i] : -((-v + strides[i] - 1) / strides[i]);
        int64_t out = yType.getDimSize(i + 2), lo = -e, hi = grid[i] - out + e;
        reaches &= e * strides[i] == v &&
                   out - std::max<int64_t>(0, -lo) - std::max<int64_t>(0, -hi) > 0;
        shift[i + 2] = lo;
        shift[rank + i + 2] = hi;
      }
      if (!reaches)
        continue;
      if (++terms > 4096)
        return nullptr;
      Value term = b.make<PadOp>(routed(t), b.i64s(shift), zero, b.b.getStringAttr("constant"));
      sum = sum ? b.add(sum, term) : term;
    }
    SmallVector<int64_t> gridShape{n, c};
    gridShape.append(grid);
    if (!sum)
      sum = b.splat(RankedTensorType::get(gridShape, element), 0.0);
    phaseSums.push_back(b.reshape(sum, phaseShape));
  }
  // [N, C, s0*s1..., Y...] -> [N, C, Y0, s0, Y1, s1, ...] -> [N, C, Y0*s0, ...],
  // cropped to the input's size.
  Value stacked = phaseSums.size() == 1 ? phaseSums[0]
                                        : b.make<ConcatOp>(phaseSums, b.b.getI64IntegerAttr(2));
  SmallVector<int64_t> split{n, c}, perm{0, 1}, merged{n, c};
  split.append(strides.begin(), strides.end());
  split.append(grid);
  for (int64_t i = 0; i < spatial; ++i) {
    perm.append({2 + spatial + i, 2 + i});
    merged.push_back(grid[i] * strides[i]);
  }
  return cropTo(b, b.reshape(b.transpose(b.reshape(stacked, split), perm), merged),
                xType.getShape());
}

/// max_pool: each output's gradient goes to the first tap of its window
/// holding the maximum (PyTorch's choice), and back through scatterToWindows.
template <> struct Gradient<MaxPoolOp> : GradientOpInterface::ExternalModel<Gradient<MaxPoolOp>, MaxPoolOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto pool = cast<MaxPoolOp>(op);
    NNBuilder b{ob, op->getLoc()};
    Value x = pool.getInput(), y = pool.getResult(), g = dy[0];
    auto xType = NNBuilder::type(x), yType = NNBuilder::type(y);
    Type element = xType.getElementType();
    if (!isa<FloatType>(element)) {
      dx.assign(1, Value());
      return success();
    }
    int64_t rank = xType.getRank(), spatial = rank - 2;
    ArrayRef<int64_t> kernel = pool.getKernel(), strides = pool.getStrides(),
                      dilations = pool.getDilations(), pads = pool.getPads();
    // The input padded (or cropped) to exactly the rows the windows read.
    SmallVector<int64_t> padding(2 * rank, 0), used;
    int64_t taps = 1;
    for (int64_t i = 0; i < spatial; ++i) {
      used.push_back((yType.getDimSize(i + 2) - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1);
      padding[i + 2] = pads[i];
      padding[rank + i + 2] = used[i] - xType.getDimSize(i + 2) - pads[i];
      taps *= kernel[i];
    }
    auto lowest = APFloat::getInf(cast<FloatType>(element).getFloatSemantics(), /*Negative=*/true);
    Value lowestValue = b.make<ConstantOp>(cast<ElementsAttr>(
        DenseElementsAttr::get(RankedTensorType::get({}, element), lowest)));
    Value padded = b.make<PadOp>(x, b.i64s(padding), lowestValue, b.b.getStringAttr("constant"));
    Value zero = b.scalar(g, 0.0), taken;
    SmallVector<Value> routed;
    for (int64_t t = 0; t < taps; ++t) {
      SmallVector<int64_t> starts, ends, axes, steps;
      for (int64_t i = spatial - 1, rest = t; i >= 0; --i) {
        int64_t k = rest % kernel[i];
        rest /= kernel[i];
        starts.insert(starts.begin(), k * dilations[i]);
        ends.insert(ends.begin(), k * dilations[i] + (yType.getDimSize(i + 2) - 1) * strides[i] + 1);
        axes.insert(axes.begin(), i + 2);
        steps.insert(steps.begin(), strides[i]);
      }
      Value tap = b.make<SliceOp>(padded, b.i64s(starts), b.i64s(ends), b.i64s(axes), b.i64s(steps));
      Value hit = b.make<EqualOp>(tap, y);
      if (taken)
        hit = b.make<AndOp>(hit, b.make<NotOp>(taken));
      taken = taken ? b.make<OrOp>(taken, hit) : hit;
      routed.push_back(b.where(hit, g, zero));
    }
    dx.assign({scatterToWindows(b, xType, yType, kernel, strides, dilations, pads,
                                [&](int64_t t) { return routed[t]; })});
    if (!dx[0])
      return op->emitOpError("has no gradient for more than 4096 phases (strides) or window taps reaching them");
    return success(dx[0] != nullptr);
  }
};

/// avg_pool: every tap of a window gets the window's gradient over its
/// divisor (avgPoolDivisors, a product of per-dim tables).
template <> struct Gradient<AvgPoolOp> : GradientOpInterface::ExternalModel<Gradient<AvgPoolOp>, AvgPoolOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto pool = cast<AvgPoolOp>(op);
    NNBuilder b{ob, op->getLoc()};
    auto xType = NNBuilder::type(pool.getInput()), yType = NNBuilder::type(pool.getResult());
    Type element = xType.getElementType();
    int64_t spatial = xType.getRank() - 2;
    Value share = dy[0];
    for (int64_t i = 0; i < spatial; ++i) {
      SmallVector<int64_t> shape(xType.getRank(), 1);
      shape[i + 2] = yType.getDimSize(i + 2);
      // A window with no counted tap (only padding) divides by 0 forward; its
      // gradient reaches no input, so any finite factor will do.
      SmallVector<Attribute> values;
      for (int64_t counted : avgPoolDivisors(pool, i))
        values.push_back(FloatAttr::get(element, 1.0 / std::max<int64_t>(counted, 1)));
      Value factor = b.make<ConstantOp>(cast<ElementsAttr>(
          DenseElementsAttr::get(RankedTensorType::get(shape, element), values)));
      share = b.mul(share, factor);
    }
    dx.assign({scatterToWindows(b, xType, yType, pool.getKernel(), pool.getStrides(),
                                pool.getDilations(), pool.getPads(),
                                [&](int64_t) { return share; })});
    if (!dx[0])
      return op->emitOpError("has no gradient for more than 4096 phases (strides) or window taps reaching them");
    return success();
  }
};

/// pad (constant mode): the gradient is dy with the padding cropped off and
/// the cropped rows (negative pads) padded back with zeros, a pad by the
/// negated pads; the fill value's is the sum of dy over the padding (a setting
/// unless a parameter reaches it another way, when it counts).
template <> struct Gradient<PadOp> : GradientOpInterface::ExternalModel<Gradient<PadOp>, PadOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto pad = cast<PadOp>(op);
    NNBuilder b{ob, op->getLoc()};
    dx.assign(op->getNumOperands(), Value());
    if (!isa<FloatType>(NNBuilder::type(pad.getInput()).getElementType()))
      return success();
    if (pad.getMode() != "constant")
      return op->emitOpError("has no gradient in '") << pad.getMode() << "' mode";
    std::optional<SmallVector<int64_t>> pads = getConstantInts(pad.getPads());
    if (!pads)
      return op->emitOpError("has no gradient unless its pads are constants");
    SmallVector<int64_t> negated = llvm::map_to_vector(*pads, [](int64_t p) { return -p; });
    dx[0] = b.make<PadOp>(dy[0], b.i64s(negated), b.scalar(dy[0], 0.0), b.b.getStringAttr("constant"));
    if (!dx[0])
      return failure();
    // The padding's share: all of dy but the interior it crops back to.
    Value interior = b.make<PadOp>(dx[0], pad.getPads(), b.scalar(dy[0], 0.0),
                                   b.b.getStringAttr("constant"));
    if (!interior)
      return failure();
    Value border = b.sub(b.reduceAll<ReduceSumOp>(dy[0]), b.reduceAll<ReduceSumOp>(interior));
    dx[2] = b.reshape(border, NNBuilder::type(pad.getValue()).getShape());
    return success();
  }
};

/// resize is linear in its input and separable: along each resized dim d it
/// multiplies by a matrix R [out, in]. R is read off the op itself, as the
/// same resize of the identity (basis vectors along another dim), so the
/// gradient follows every mode and coordinate transformation exactly (and the
/// forward pass's f32 coordinates): dx is dy times R^T along each such dim.
template <> struct Gradient<ResizeOp> : GradientOpInterface::ExternalModel<Gradient<ResizeOp>, ResizeOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto resize = cast<ResizeOp>(op);
    NNBuilder b{ob, op->getLoc()};
    auto xType = NNBuilder::type(resize.getInput()), yType = NNBuilder::type(resize.getResult());
    Type element = xType.getElementType();
    dx.assign(op->getNumOperands(), Value());
    if (!isa<FloatType>(element))
      return success();
    int64_t rank = xType.getRank();
    std::optional<SmallVector<double>> scales;
    if (resize.getScales() && !(scales = getConstantFloats(resize.getScales())))
      return op->emitOpError("has no gradient unless its scales are constants");
    if (rank < 2 && xType.getShape() != yType.getShape())
      return op->emitOpError("has no gradient for a 1-D input");
    // Not linear: outside the crop it gives the extrapolation value.
    if (resize.getRoi())
      return op->emitOpError("has no gradient with tf_crop_and_resize");
    Type f32 = b.b.getF32Type();
    Value g = dy[0];
    for (int64_t d = 0; d < rank; ++d) {
      int64_t in = xType.getDimSize(d), out = yType.getDimSize(d);
      if (in == out && (!scales || (*scales)[d] == 1.0))
        continue;
      // The identity: basis vector i along `basis`, its element i along d.
      int64_t basis = d == 0 ? 1 : 0;
      SmallVector<int64_t> eyeShape(rank, 1);
      eyeShape[basis] = in;
      eyeShape[d] = in;
      SmallVector<Attribute> ones;
      for (int64_t i = 0; i < in; ++i)
        for (int64_t j = 0; j < in; ++j)
          ones.push_back(FloatAttr::get(element, i == j ? 1.0 : 0.0));
      Value eye = b.make<ConstantOp>(cast<ElementsAttr>(
          DenseElementsAttr::get(RankedTensorType::get(eyeShape, element), ones)));
      Value scalesOf, sizesOf;
      if (scales) {
        SmallVector<Attribute> values(rank, FloatAttr::get(f32, 1.0));
        values[d] = FloatAttr::get(f32, (*scales)[d]);
        scalesOf = b.make<ConstantOp>(cast<ElementsAttr>(
            DenseElementsAttr::get(RankedTensorType::get({rank}, f32), values)));
      } else {
        SmallVector<int64_t> sizes(eyeShape);
        sizes[d] = out;
        sizesOf = b.i64s(sizes);
      }
      Value columns = b.make<ResizeOp>(eye, scalesOf, sizesOf, Value(), resize.getModeAttr(),
                                       resize.getCoordinateTransformationModeAttr(),
                                       resize.getNearestModeAttr(), resize.getCubicCoeffAAttr(),
                                       resize.getExcludeOutsideAttr(),
                                       resize.getExtrapolationValueAttr());
      if (!columns)
        return op->emitOpError("could not build its gradient");
      // R [out, in]: the resize of basis vector i is column i.
      Value r = basis < d ? b.transposeLast(b.reshape(columns, {in, out}))
                          : b.reshape(columns, {out, in});
      // dy with d last, times R, and d back in place.
      SmallVector<int64_t> perm;
      for (int64_t i = 0; i < rank; ++i)
        if (i != d)
          perm.push_back(i);
      perm.push_back(d);
      SmallVector<int64_t> back(rank);
      for (int64_t i = 0; i < rank; ++i)
        back[perm[i]] = i;
      g = b.transpose(b.make<MatMulOp>(b.transpose(g, perm), r), back);
    }
    dx[0] = g;
    return success();
  }
};

/// gather along `axis` (embeddings): each index's slice of g is added back at
/// its row, a scatter-add over the input with `axis` moved to the front.
template <> struct Gradient<GatherOp> : GradientOpInterface::ExternalModel<Gradient<GatherOp>, GatherOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto gather = cast<GatherOp>(op);
    NNBuilder b{ob, op->getLoc()};
    Value x = gather.getInput(), indices = gather.getIndices(), g = dy[0];
    auto xType = NNBuilder::type(x), idxType = NNBuilder::type(indices);
    int64_t rank = xType.getRank(), q = idxType.getRank(), axis = gather.getAxis();
    // g is [pre..., index dims..., rest...]: index dims first, flattened.
    SmallVector<int64_t> gPerm, rowShape{idxType.getNumElements()}, xPerm{axis}, back(rank);
    for (int64_t i = 0; i < q; ++i)
      gPerm.push_back(axis + i);
    for (int64_t i = 0; i < axis; ++i) {
      gPerm.push_back(i);
      rowShape.push_back(xType.getDimSize(i));
      xPerm.push_back(i);
    }
    for (int64_t i = axis + 1; i < rank; ++i) {
      gPerm.push_back(q + i - 1);
      rowShape.push_back(xType.getDimSize(i));
      xPerm.push_back(i);
    }
    for (auto [i, p] : llvm::enumerate(xPerm))
      back[p] = i;
    auto isIdentity = [](ArrayRef<int64_t> perm) {
      return llvm::equal(perm, llvm::seq<int64_t>(0, perm.size()));
    };
    Value rows = isIdentity(gPerm) ? g : b.transpose(g, gPerm);
    rows = b.reshape(rows, rowShape);
    Value at = b.reshape(indices, {idxType.getNumElements(), 1});
    Value front = isIdentity(xPerm) ? x : b.transpose(x, xPerm);
    Value sum = b.make<ScatterNDOp>(b.zerosLike(front), at, rows, b.b.getStringAttr("add"));
    dx.assign({isIdentity(back) ? sum : b.transpose(sum, back), Value()});
    return success(dx[0] != nullptr);
  }
};

/// gather_elements (a loss picking each sample's class score): each element
/// of g is added back where it was taken from.
template <> struct Gradient<GatherElementsOp> : GradientOpInterface::ExternalModel<Gradient<GatherElementsOp>, GatherElementsOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &ob, ArrayRef<Value> dy,
                               SmallVectorImpl<Value> &dx) const {
    auto gather = cast<GatherElementsOp>(op);
    NNBuilder b{ob, op->getLoc()};
    Value x = gather.getInput();
    dx.assign({b.make<ScatterElementsOp>(b.zerosLike(x), gather.getIndices(), dy[0],
                                         b.b.getStringAttr("add"), gather.getAxisAttr()),
               Value()});
    return success(dx[0] != nullptr);
  }
};

} // namespace

void nnc::nn::attachGradientInterfaces(MLIRContext *context) {
  attach<NegOp, ExpOp, LogOp, SqrtOp, ReciprocalOp, TanhOp, SigmoidOp, SoftplusOp, AbsOp, SinOp,
         CosOp, ErfOp, ReluOp, FloorOp, CeilOp, RoundOp, SignOp, LeakyReluOp, AddOp, SubOp, MulOp,
         DivOp, PowOp, MaxOp, MinOp, WhereOp, CastOp, ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp,
         ExpandOp, TransposeOp, MatMulOp, ReduceSumOp, ReduceMeanOp, SoftmaxOp, LogSoftmaxOp,
         ConcatOp, SplitOp, SliceOp, LayerNormOp, ConvOp, ConvTransposeOp, MaxPoolOp, AvgPoolOp, PadOp, ResizeOp, GatherOp,
         GatherElementsOp>(context);
}
