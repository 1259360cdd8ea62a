//===- ReadOnlyInputs.cpp - inputs are never written by compiled code -----===//
//
// Target-neutral: every target bufferizes public functions whose arguments
// are the caller's buffers.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

namespace nnc {
#define GEN_PASS_DEF_READONLYINPUTS
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
struct ReadOnlyInputs : nnc::impl::ReadOnlyInputsBase<ReadOnlyInputs> {
  void runOnOperation() override {
    auto readOnly = BoolAttr::get(&getContext(), false);
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
        if (isa<TensorType>(type))
          func.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName, readOnly);
    }
  }
};
} // namespace
