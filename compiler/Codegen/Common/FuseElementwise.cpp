//===- FuseElementwise.cpp - chains of elementwise ops as one op ----------===//
//
// Every target turns a chain of elementwise generics into one op, hence one
// loop nest or kernel. Only where nothing is recomputed: a producer whose
// elements a consumer reads more than once (a broadcast operand, a matmul's
// LHS, read once per output column) stays an op of its own, since fusing it
// would redo its work for every read (a layer norm inside a matmul's inner
// loop did four times a transformer block's FLOPs on CUDA).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"

namespace nnc {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {

/// Whether `producer`, fused into a consumer reading its result through
/// `consumerMap`, would read windows of one source across (their innermost
/// dim not along the innermost loop): a depthwise convolution's or a
/// pooling's taps, each a slice of the same padded input.
bool readsWindowsAcross(Operation *producer, AffineMap consumerMap) {
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic || generic.getNumDpsInits() != 1)
    return false;
  AffineMap resultMap = generic.getMatchingIndexingMap(generic.getDpsInitOperand(0));
  if (!resultMap.isPermutation())
    return false;
  AffineMap toConsumer = inversePermutation(resultMap).compose(consumerMap);
  AffineExpr innermost =
      getAffineDimExpr(consumerMap.getNumDims() - 1, producer->getContext());
  llvm::SmallDenseSet<Value> sources;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (map.getNumResults() < 2 || map.compose(toConsumer).getResults().back() == innermost)
      continue;
    auto window = input->get().getDefiningOp<tensor::ExtractSliceOp>();
    if (window && !sources.insert(window.getSource()).second)
      return true;
  }
  return false;
}

/// Whether `op` reduces a fill along a reduced loop (a sum of ones of a
/// dynamic length). Folding the fill's value into its body would leave a
/// reduction that reads nothing along that loop, which MLIR 22's vectorizer
/// computes once per vector instead of once per element: such an op is left
/// as it is.
bool reducesAFill(linalg::GenericOp op) {
  if (op.getNumReductionLoops() == 0)
    return false;
  return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    return input->get().getDefiningOp<linalg::FillOp>() &&
           llvm::any_of(op.getMatchingIndexingMap(input).getResults(), [&](AffineExpr e) {
             auto dim = dyn_cast<AffineDimExpr>(e);
             return dim && op.getIteratorTypesArray()[dim.getPosition()] == utils::IteratorType::reduction;
           });
  });
}

/// Fuses each all-parallel generic into the generic consuming it, when that
/// is its only use: chains of elementwise ops (bias, normalization,
/// activation, residual add, layout copies) become one pass over memory.
LogicalResult fuseElementwise(func::FuncOp func, bool broadcasts) {
  MLIRContext *ctx = func.getContext();
  RewritePatternSet patterns(ctx);
  linalg::populateElementwiseOpsFusionPatterns(patterns, [=](OpOperand *operand) {
    Operation *producer = operand->get().getDefiningOp();
    auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
    if (!producer || !producer->hasOneUse() || !consumer)
      return false;
    // Read once per consumer iteration: nothing is recomputed. A window op
    // stays out of a transposing copy, though: each of its taps would be
    // read across the copy's innermost loop (a depthwise convolution fused
    // into the transposed copy of its output ran 4x slower than the two
    // apart).
    AffineMap consumerMap = consumer.getMatchingIndexingMap(operand);
    if (consumerMap.isPermutation())
      return !readsWindowsAcross(producer, consumerMap);
    // A broadcast operand (per-channel constants) would be recomputed for
    // every element it is broadcast to: worth it where a separate op costs
    // more (a GPU launch), never into a reduction, whose every output would
    // redo it.
    return broadcasts && consumer.getNumReductionLoops() == 0;
  });
  FrozenRewritePatternSet frozen(std::move(patterns));
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  // Rounds until nothing fuses: a producer fused into its consumer stays
  // behind with its result unused, and a value counts as single-use only
  // once such dead producers are gone (batch norm -> max -> min is a chain
  // of two fusions).
  for (bool changed = true; changed;) {
    // Only ops where kernels start (the top of the function, a sample's ops
    // in a loop over a dynamic batch): those in other loops (cumsum's steps)
    // keep the loop-carried outputs their bufferization relies on.
    SmallVector<Operation *> ops;
    for (Block *block : nnc::kernelLevelBlocks(func))
      for (Operation &op : llvm::make_early_inc_range(*block)) {
        if (!isa<linalg::GenericOp>(op))
          continue;
        if (isOpTriviallyDead(&op))
          op.erase();
        else if (!reducesAFill(cast<linalg::GenericOp>(op)))
          ops.push_back(&op);
      }
    changed = false;
    if (failed(applyOpPatternsGreedily(ops, frozen, config, &changed)))
      return failure();
  }
  return success();
}

struct FuseElementwise : nnc::impl::FuseElementwiseBase<FuseElementwise> {
  using FuseElementwiseBase::FuseElementwiseBase;
  void runOnOperation() override {
    if (failed(fuseElementwise(getOperation(), broadcasts)))
      signalPassFailure();
  }
};

} // namespace
