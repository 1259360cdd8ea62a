//===- FoldBatchNorm.cpp - batch norms into the convolutions before them --===//
//
// An inference batch norm after a convolution with constant weights is a
// per-output-channel scale and shift, which the convolution can do itself:
//
//   W'[o, ...] = W[o, ...] * g[o],  b'[o] = (b[o] - mean[o]) * g[o] + beta[o],
//   g[o] = scale[o] / sqrt(var[o] + epsilon).
//
// Without this, every run recomputes g from the constants and spends an extra
// pass over the convolution's result (or an extra multiply-add in whatever
// copy it fuses with); with it, the shift rides in the convolution's bias,
// which the CPU lowering makes the matmul's initial value. The factors are
// computed in double and rounded once, as float weights are.
//
// A batch norm with constant statistics after anything else (DenseNet's, after
// each concatenation) becomes x * g + (beta - mean * g) with g and the shift
// folded into per-channel constants, so no run recomputes them.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "compiler/Transforms/FloatConstants.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace nnc::nn {
#define GEN_PASS_DEF_NNFOLDBATCHNORM
#include "compiler/Transforms/Passes.h.inc"
} // namespace nnc::nn

using namespace mlir;
using namespace nnc::nn;

namespace {
/// An inference batch norm per channel: y = x * factor + shift, with
/// factor = scale / sqrt(var + epsilon) and shift = bias - mean * factor, in
/// double; none if its statistics are not f32 constants of `channels`.
struct Normalization {
  std::vector<double> factor, shift;
};
std::optional<Normalization> normalizationOf(BatchNormOp norm, int64_t channels) {
  std::optional<std::vector<float>> scale = constantFloats(norm.getScale(), channels),
                                    bias = constantFloats(norm.getBias(), channels),
                                    mean = constantFloats(norm.getMean(), channels),
                                    variance = constantFloats(norm.getVariance(), channels);
  if (!scale || !bias || !mean || !variance)
    return std::nullopt;
  double epsilon = norm.getEpsilon().convertToDouble();
  Normalization n{std::vector<double>(channels), std::vector<double>(channels)};
  for (int64_t o = 0; o < channels; ++o) {
    n.factor[o] = double((*scale)[o]) / std::sqrt(double((*variance)[o]) + epsilon);
    n.shift[o] = double((*bias)[o]) - double((*mean)[o]) * n.factor[o];
  }
  return n;
}

struct FoldIntoConv : OpRewritePattern<BatchNormOp> {
  FoldIntoConv(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/2) {}

  LogicalResult matchAndRewrite(BatchNormOp norm, PatternRewriter &rewriter) const override {
    auto conv = norm.getInput().getDefiningOp<ConvOp>();
    if (!conv || !conv->hasOneUse())
      return rewriter.notifyMatchFailure(norm, "input is not a convolution used only here");
    auto filterType = dyn_cast<RankedTensorType>(conv.getFilter().getType());
    if (!filterType || !filterType.hasStaticShape() || filterType.getRank() < 1)
      return rewriter.notifyMatchFailure(norm, "filter shape is not static");
    int64_t channels = filterType.getDimSize(0);
    // The taps per channel are counted by dividing by the channel count.
    if (channels == 0)
      return rewriter.notifyMatchFailure(norm, "the convolution has no output channels");
    std::optional<std::vector<float>> filter =
        constantFloats(conv.getFilter(), filterType.getNumElements());
    std::optional<Normalization> normalization = normalizationOf(norm, channels);
    std::optional<std::vector<float>> bias =
        conv.getBias() ? constantFloats(conv.getBias(), channels)
                       : std::optional<std::vector<float>>(std::vector<float>(channels, 0.0f));
    if (!filter || !normalization || !bias)
      return rewriter.notifyMatchFailure(norm, "weights or statistics are not f32 constants");

    int64_t perChannel = filterType.getNumElements() / channels;
    std::vector<float> newFilter(filter->size()), newBias(channels);
    for (int64_t o = 0; o < channels; ++o) {
      double g = normalization->factor[o];
      for (int64_t i = 0; i < perChannel; ++i)
        newFilter[o * perChannel + i] = float(double((*filter)[o * perChannel + i]) * g);
      newBias[o] = float(double((*bias)[o]) * g + normalization->shift[o]);
    }
    Location loc = conv.getLoc();
    rewriter.setInsertionPoint(conv);
    Value w = floatConstant(rewriter, loc, filterType, newFilter, "nnc_folded_batch_norm");
    Value b = floatConstant(rewriter, loc,
                            RankedTensorType::get({channels}, filterType.getElementType()),
                            newBias, "nnc_folded_batch_norm");
    auto folded = ConvOp::create(rewriter, loc, norm.getType(), conv.getInput(), w, b,
                                 conv.getStridesAttr(), conv.getDilationsAttr(),
                                 conv.getPadsAttr(), conv.getGroupAttr());
    rewriter.replaceOp(norm, folded.getResult());
    rewriter.eraseOp(conv);
    return success();
  }
};

struct ScaleAndShift : OpRewritePattern<BatchNormOp> {
  /// Below FoldIntoConv: a norm that can vanish into its convolution does.
  ScaleAndShift(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/1) {}

  LogicalResult matchAndRewrite(BatchNormOp norm, PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(norm.getType());
    // The folded constants take the statistics' f32 values: an f16 or f64
    // input (ONNX lets its type differ from theirs) keeps its batch norm.
    if (!type || !type.getElementType().isF32())
      return rewriter.notifyMatchFailure(norm, "not an f32 batch norm");
    if (type.getRank() < 2 || type.isDynamicDim(1))
      return rewriter.notifyMatchFailure(norm, "the channel dim is not static");
    int64_t channels = type.getDimSize(1);
    if (channels == 0)
      return rewriter.notifyMatchFailure(norm, "no channels to scale");
    std::optional<Normalization> normalization = normalizationOf(norm, channels);
    if (!normalization)
      return rewriter.notifyMatchFailure(norm, "statistics are not f32 constants");
    std::vector<float> g(normalization->factor.begin(), normalization->factor.end()),
        c(normalization->shift.begin(), normalization->shift.end());
    // [C, 1, ...]: broadcast along the dims after the channel's.
    SmallVector<int64_t> shape(type.getRank() - 1, 1);
    shape[0] = channels;
    auto paramType = RankedTensorType::get(shape, type.getElementType());
    Location loc = norm.getLoc();
    Value x = norm.getInput();
    Value scaled = MulOp::create(rewriter, loc, type, x,
                                 floatConstant(rewriter, loc, paramType, g, "nnc_batch_norm_scale"));
    rewriter.replaceOpWithNewOp<AddOp>(
        norm, type, scaled, floatConstant(rewriter, loc, paramType, c, "nnc_batch_norm_shift"));
    return success();
  }
};

struct FoldBatchNormPass : nnc::nn::impl::NNFoldBatchNormBase<FoldBatchNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldIntoConv, ScaleAndShift>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
