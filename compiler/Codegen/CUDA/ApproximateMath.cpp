//===- ApproximateMath.cpp - math ops in kernels without libdevice --------===//

#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace nnc {
#define GEN_PASS_DEF_CUDAAPPROXIMATEMATH
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
/// Ops with a PTX instruction of their own (or an exact LLVM lowering) are
/// left to the NVVM lowering.
bool hasInstruction(StringRef name) {
  return llvm::is_contained({"sqrt", "absf", "absi", "ceil", "floor", "copysign", "fma",
                             "roundeven", "trunc", "ctlz", "cttz", "ctpop", "isnan",
                             "isinf", "isfinite"},
                            name);
}

struct ApproximateMath : nnc::impl::CUDAApproximateMathBase<ApproximateMath> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Expansions first (tanh to exp, powf to exp and log, ...), then
    // polynomials for what remains; f16 math is computed in f32.
    math::populateExpansionPatterns(patterns);
    populateMathF32ExpansionPatterns(patterns, [](StringRef name) { return !hasInstruction(name); });
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) { return !hasInstruction(name); });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
