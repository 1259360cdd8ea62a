//===- RefineShapes.cpp - shape refinement with folding -------------------===//
//
// Result types start as static as the importer could make them; folding the
// shape arithmetic exporters emit makes more of them known. This pass iterates
// both to a fixed point.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nnc::nn {
#define GEN_PASS_DEF_NNREFINESHAPES
#include "compiler/Transforms/Passes.h.inc"
} // namespace nnc::nn

using namespace mlir;
using namespace nnc::nn;

bool nnc::nn::refineResultTypes(func::FuncOp func) {
  bool changed = false;
  func.walk([&](InferTypeOpInterface op) {
    SmallVector<Type> inferred;
    if (failed(op.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                   op->getAttrDictionary(), op->getPropertiesStorage(),
                                   op->getRegions(), inferred)) ||
        inferred.size() != op->getNumResults())
      return; // the verifier reports it
    for (auto [result, type] : llvm::zip(op->getResults(), inferred)) {
      Type refined = refineType(result.getType(), type);
      if (refined && refined != result.getType()) {
        result.setType(refined);
        changed = true;
      }
    }
  });
  return changed;
}

namespace {
struct RefineShapesPass : nnc::nn::impl::NNRefineShapesBase<RefineShapesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      if (op.getDialectNamespace() == NNDialect::getDialectNamespace())
        op.getCanonicalizationPatterns(patterns, context);
    FrozenRewritePatternSet frozen(std::move(patterns));

    // Each round can only make types more static, so this terminates; the cap
    // guards against a folder that keeps rewriting.
    for (int round = 0; round < 32; ++round) {
      bool refined = refineResultTypes(func);
      bool folded = false;
      if (failed(applyPatternsGreedily(func, frozen, GreedyRewriteConfig(), &folded))) {
        func.emitError("shape refinement did not converge");
        return signalPassFailure();
      }
      if (!refined && !folded)
        break;
    }

    // The function returns what its body computes.
    Operation *ret = func.getBody().back().getTerminator();
    func.setType(FunctionType::get(context, func.getArgumentTypes(), ret->getOperandTypes()));
  }
};
} // namespace
