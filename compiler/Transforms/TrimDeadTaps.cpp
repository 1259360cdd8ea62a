//===- TrimDeadTaps.cpp - filter taps that only ever read padding ---------===//
//
// A convolution over a small input can have filter taps that read the
// padding for every output: ResNet-18 at 32x32 input convolves 1x1 maps in
// its last stage with 3x3 filters padded by one, whose eight outer taps
// multiply zeros. Those layers hold most of the weights and are bound by
// reading them, so their eight dead taps cost eight ninths of the time. A
// constant filter loses its dead leading and trailing taps per spatial dim
// at compile time, and the pads shrink by as much.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "compiler/Transforms/FloatConstants.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nnc::nn {
#define GEN_PASS_DEF_NNTRIMDEADTAPS
#include "compiler/Transforms/Passes.h.inc"
} // namespace nnc::nn

using namespace mlir;
using namespace nnc::nn;

namespace {
struct TrimConvTaps : OpRewritePattern<ConvOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvOp conv, PatternRewriter &rewriter) const override {
    auto inType = dyn_cast<RankedTensorType>(conv.getInput().getType());
    auto wType = dyn_cast<RankedTensorType>(conv.getFilter().getType());
    auto outType = dyn_cast<RankedTensorType>(conv.getType());
    if (!inType || !wType || !outType || !wType.hasStaticShape() || wType.getRank() < 3)
      return rewriter.notifyMatchFailure(conv, "the filter's shape is not static");
    int64_t spatial = wType.getRank() - 2;
    // The batch may be dynamic; the spatial dims decide which taps are read.
    for (int64_t i = 2; i < wType.getRank(); ++i)
      if (inType.isDynamicDim(i) || outType.isDynamicDim(i))
        return rewriter.notifyMatchFailure(conv, "spatial dims are not static");
    ArrayRef<int64_t> strides = conv.getStrides(), dilations = conv.getDilations(),
                      pads = conv.getPads();
    SmallVector<int64_t> first(spatial), sizes(wType.getShape()), newPads(pads);
    bool trimmed = false;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = inType.getDimSize(2 + i), out = outType.getDimSize(2 + i),
              taps = wType.getDimSize(2 + i), s = strides[i], d = dilations[i], lo = pads[i];
      // Tap t reads input rows o*s + t*d - lo for the outputs o: live when
      // one of them is inside the input, that is when the first output
      // reading a row at or past 0 exists and reads one before `in`.
      auto live = [&](int64_t t) {
        int64_t before = lo - t * d;
        int64_t o = before > 0 ? llvm::divideCeil(before, s) : 0;
        return o < out && o * s + t * d - lo < in;
      };
      int64_t begin = 0, end = taps;
      while (begin < end && !live(begin))
        ++begin;
      while (end > begin && !live(end - 1))
        --end;
      if (begin == end)
        return rewriter.notifyMatchFailure(conv, "every tap reads padding");
      if (begin == 0 && end == taps)
        continue;
      int64_t kept = end - begin, newLo = lo - begin * d;
      int64_t newHi = (out - 1) * s + (kept - 1) * d + 1 - in - newLo;
      if (newLo < 0 || newHi < 0)
        return rewriter.notifyMatchFailure(conv, "trimming would crop the input");
      trimmed = true;
      first[i] = begin;
      sizes[2 + i] = kept;
      newPads[i] = newLo;
      newPads[spatial + i] = newHi;
    }
    if (!trimmed)
      return rewriter.notifyMatchFailure(conv, "every tap reads the input");
    std::optional<std::vector<float>> filter =
        constantFloats(conv.getFilter(), wType.getNumElements());
    if (!filter)
      return rewriter.notifyMatchFailure(conv, "the filter is not an f32 constant");
    // The kept taps, row-major: each new element's offset in the old filter.
    auto newType = RankedTensorType::get(sizes, wType.getElementType());
    std::vector<float> values(newType.getNumElements());
    SmallVector<int64_t> index(sizes.size(), 0);
    for (float &v : values) {
      int64_t offset = 0;
      for (size_t d = 0; d < sizes.size(); ++d)
        offset = offset * wType.getDimSize(d) + index[d] + (d >= 2 ? first[d - 2] : 0);
      v = (*filter)[offset];
      for (int64_t d = sizes.size() - 1; d >= 0 && ++index[d] == sizes[d]; --d)
        index[d] = 0;
    }
    Value w = floatConstant(rewriter, conv.getLoc(), newType, values, "nnc_trimmed_filter");
    rewriter.replaceOpWithNewOp<ConvOp>(conv, conv.getType(), conv.getInput(), w, conv.getBias(),
                                        conv.getStridesAttr(), conv.getDilationsAttr(),
                                        rewriter.getDenseI64ArrayAttr(newPads),
                                        conv.getGroupAttr());
    return success();
  }
};

struct NNTrimDeadTaps : nnc::nn::impl::NNTrimDeadTapsBase<NNTrimDeadTaps> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<TrimConvTaps>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
