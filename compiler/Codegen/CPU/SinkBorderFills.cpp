//===- SinkBorderFills.cpp - pad borders filled by the interior's chunks --===//
//
// A pad becomes fills of its border strips and a write of its interior
// (TileAndVectorize.cpp's decomposePad); the interior's writer is usually a
// thread-chunked loop over channels, the fills plain serial loops before it.
// The border columns share cache lines with the interior rows beside them, so
// on two cores the serial fills first pull every such line to the calling
// core, then the chunks pull half of them back: on machines whose cores are
// far apart (bench/README.md) that costs more than the fills themselves. Each
// chunk fills the border strips of its own channels instead.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace nnc {
#define GEN_PASS_DEF_SINKBORDERFILLS
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
/// The buffer `value` views, through subviews and reshapes.
Value rootOf(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// A subview of `root` itself with static offsets and sizes and no rank
/// reduction.
memref::SubViewOp staticSubviewOf(Value value, Value root) {
  auto subview = value.getDefiningOp<memref::SubViewOp>();
  if (!subview || subview.getSource() != root ||
      subview.getType().getRank() != subview.getSourceType().getRank() ||
      ShapedType::isDynamicShape(subview.getStaticOffsets()) ||
      ShapedType::isDynamicShape(subview.getStaticSizes()))
    return {};
  return subview;
}

/// Whether `op` only writes through `use` (a view of the filled buffer).
bool onlyWrites(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto write = dyn_cast<vector::TransferWriteOp>(user))
    return use.get() == write.getBase();
  if (auto store = dyn_cast<memref::StoreOp>(user))
    return use.get() == store.getMemRef();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user))
    return linalgOp.isDpsInit(&use) && !linalgOp.payloadUsesValueFromOperand(&use);
  return false;
}

/// The chunk dim of `loop` in the buffer `root`: the loop writes, through a
/// subview of a subview of `root` covering all of that dim, a slab starting
/// at its induction variable and one step wide. Nothing in the loop reads
/// `root`. Returns -1 otherwise.
int64_t chunkDim(scf::ForallOp loop, Value root) {
  if (loop.getRank() != 1 || loop.getNumResults() != 0 || loop.getMapping())
    return -1;
  std::optional<int64_t> lb = getConstantIntValue(loop.getMixedLowerBound()[0]),
                         ub = getConstantIntValue(loop.getMixedUpperBound()[0]),
                         step = getConstantIntValue(loop.getMixedStep()[0]);
  if (!lb || !ub || !step || *lb != 0 || *ub % *step != 0)
    return -1;
  Value iv = loop.getInductionVar(0);
  int64_t dim = -1;
  bool readsRoot = false;
  loop.getBody()->walk([&](Operation *op) {
    for (OpOperand &use : op->getOpOperands()) {
      if (!isa<MemRefType>(use.get().getType()) || rootOf(use.get()) != root)
        continue;
      if (auto subview = dyn_cast<memref::SubViewOp>(op)) {
        // The slab: a subview of the interior (itself a static subview of
        // root spanning the dim) at the induction variable.
        memref::SubViewOp interior = staticSubviewOf(subview.getSource(), root);
        if (interior && dim < 0)
          for (auto [d, offset] : llvm::enumerate(subview.getMixedOffsets()))
            if (llvm::dyn_cast_if_present<Value>(offset) == iv &&
                subview.getStaticSizes()[d] == *step &&
                interior.getStaticOffsets()[d] == 0 && interior.getStaticSizes()[d] == *ub)
              dim = d;
        continue;
      }
      if (!isa<ViewLikeOpInterface>(op) && !onlyWrites(use))
        readsRoot = true;
    }
  });
  return readsRoot ? -1 : dim;
}

/// Moves the marked border fills right before `loop` into its body, each
/// chunk filling the part of every strip in its slab of the chunk dim.
void sinkInto(MutableArrayRef<linalg::FillOp> fills, scf::ForallOp loop) {
  Value root = rootOf(fills.front().getOutputs()[0]);
  int64_t dim = chunkDim(loop, root);
  if (dim < 0)
    return;
  int64_t step = *getConstantIntValue(loop.getMixedStep()[0]);
  int64_t extent = *getConstantIntValue(loop.getMixedUpperBound()[0]);
  // In program order, ahead of the loop's own body.
  OpBuilder b = OpBuilder::atBlockBegin(loop.getBody());
  for (linalg::FillOp fill : fills) {
    memref::SubViewOp strip = staticSubviewOf(fill.getOutputs()[0], root);
    if (!strip || strip.getStaticOffsets()[dim] != 0 || strip.getStaticSizes()[dim] != extent)
      continue;
    int64_t rank = strip.getType().getRank();
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), strides(rank, b.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(b.getContext(), strip.getType().getShape());
    offsets[dim] = loop.getInductionVar(0);
    sizes[dim] = b.getIndexAttr(step);
    Value part = memref::SubViewOp::create(b, fill.getLoc(), strip.getResult(), offsets, sizes,
                                           strides);
    auto sunk = linalg::FillOp::create(b, fill.getLoc(), fill.getInputs(), ValueRange{part});
    sunk->setAttr(nnc::kPadBorderAttr, b.getUnitAttr());
    fill.erase();
  }
}

struct SinkBorderFillsPass : nnc::impl::SinkBorderFillsBase<SinkBorderFillsPass> {
  void runOnOperation() override {
    // Where kernels start: the function's top level, and each sample's in a
    // loop over a dynamic batch.
    for (Block *body : nnc::kernelLevelBlocks(getOperation())) {
      SmallVector<linalg::FillOp> fills;
      for (Operation &op : llvm::make_early_inc_range(*body)) {
        if (auto fill = dyn_cast<linalg::FillOp>(op);
            fill && fill->hasAttr(nnc::kPadBorderAttr) && fill.hasPureBufferSemantics()) {
          // One group per padded buffer.
          if (!fills.empty() &&
              rootOf(fill.getOutputs()[0]) != rootOf(fills.front().getOutputs()[0]))
            fills.clear();
          fills.push_back(fill);
          continue;
        }
        if (auto loop = dyn_cast<scf::ForallOp>(op); loop && !fills.empty())
          sinkInto(fills, loop);
        // Views and constants between the fills and the loop keep the group.
        if (!isa<ViewLikeOpInterface>(op) && !op.hasTrait<OpTrait::ConstantLike>())
          fills.clear();
      }
    }
    // Every border fill, sunk or not, becomes loops that LLVM keeps as
    // loops. Left to its full unroller, ConvNeXt's 7x7 depthwise borders (per
    // chunk 16 channels of 62 rows, 3 columns on each side) became 2,016
    // memsets in one block, over a second of code generation each.
    MLIRContext *ctx = &getContext();
    auto unroll = LLVM::LoopUnrollAttr::get(ctx, BoolAttr::get(ctx, true), {}, {}, {}, {}, {}, {});
    auto keep = LLVM::LoopAnnotationAttr::get(ctx, {}, {}, {}, unroll, {}, {}, {}, {}, {}, {}, {},
                                              {}, {}, {}, {});
    SmallVector<linalg::FillOp> borders;
    getOperation().walk([&](linalg::FillOp fill) {
      if (fill->hasAttr(nnc::kPadBorderAttr))
        borders.push_back(fill);
    });
    IRRewriter rewriter(ctx);
    for (linalg::FillOp fill : borders) {
      rewriter.setInsertionPoint(fill);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToLoops(rewriter, cast<linalg::LinalgOp>(fill.getOperation()));
      if (failed(loops)) {
        fill->removeAttr(nnc::kPadBorderAttr);
        continue;
      }
      for (Operation *loop : *loops)
        loop->setAttr(nnc::kLoopAnnotationAttr, keep);
      rewriter.eraseOp(fill);
    }
  }
};
} // namespace
