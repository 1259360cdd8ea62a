//===- ExpandDynamicViews.cpp - expansions with several dynamic dims ------===//
//
// A reshape of [B, T, C] activations with both B and T dynamic expands a
// dim into several dynamic ones ([B*T, C] -> [B, T, C]). Its
// memref.expand_shape states the sizes (output_shape), but MLIR 22's
// expand-strided-metadata computes a group's sizes from the static shape and
// crashes when a group has more than one dynamic dim. Such an expansion is a
// reinterpret cast of its source's base: each group's innermost dim keeps the
// source dim's stride, and each outer one strides over the dims inside it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nnc {
#define GEN_PASS_DEF_EXPANDDYNAMICVIEWS
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
struct ExpandAsReinterpretCast : OpRewritePattern<memref::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::ExpandShapeOp op, PatternRewriter &b) const override {
    MemRefType type = op.getResultType();
    SmallVector<ReassociationIndices> groups = op.getReassociationIndices();
    if (llvm::none_of(groups, [&](const ReassociationIndices &group) {
          return llvm::count_if(group, [&](int64_t d) { return type.isDynamicDim(d); }) > 1;
        }))
      return failure();
    Location loc = op.getLoc();
    auto source = memref::ExtractStridedMetadataOp::create(b, loc, op.getSrc());
    SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
    SmallVector<OpFoldResult> strides(type.getRank());
    for (auto [s, group] : llvm::enumerate(groups)) {
      Value stride = source.getStrides()[s];
      for (int64_t d : llvm::reverse(group)) {
        strides[d] = OpFoldResult(stride);
        stride = arith::MulIOp::create(b, loc, stride,
                                       getValueOrCreateConstantIndexOp(b, loc, sizes[d]));
      }
    }
    // Where the result's layout states a stride or the offset (an identity
    // layout states all), the cast must give it as that constant.
    auto [layoutStrides, layoutOffset] = type.getStridesAndOffset();
    for (auto [stride, known] : llvm::zip(strides, layoutStrides))
      if (!ShapedType::isDynamic(known))
        stride = b.getIndexAttr(known);
    OpFoldResult offset = ShapedType::isDynamic(layoutOffset) ? OpFoldResult(source.getOffset())
                                                              : b.getIndexAttr(layoutOffset);
    b.replaceOpWithNewOp<memref::ReinterpretCastOp>(op, type, source.getBaseBuffer(), offset, sizes,
                                                    strides);
    return success();
  }
};

struct ExpandDynamicViewsPass : nnc::impl::ExpandDynamicViewsBase<ExpandDynamicViewsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandAsReinterpretCast>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
