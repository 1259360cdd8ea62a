//===- LoopAnnotations.cpp - loop annotations as LLVM loop metadata -------===//
//
// Target-neutral: any target's host code may carry loop annotations.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace nnc {
#define GEN_PASS_DEF_LOOPANNOTATIONS
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
struct LoopAnnotations : nnc::impl::LoopAnnotationsBase<LoopAnnotations> {
  void runOnOperation() override {
    auto move = [](auto branch) {
      auto annotation = branch->template getAttrOfType<LLVM::LoopAnnotationAttr>(
          nnc::kLoopAnnotationAttr);
      if (!annotation)
        return;
      branch->removeAttr(nnc::kLoopAnnotationAttr);
      branch.setLoopAnnotationAttr(annotation);
    };
    getOperation().walk([&](Operation *op) {
      if (auto br = dyn_cast<LLVM::BrOp>(op))
        move(br);
      else if (auto condBr = dyn_cast<LLVM::CondBrOp>(op))
        move(condBr);
    });
  }
};
} // namespace
