//===- HoistBatchInvariants.cpp - a batch loop's shared ops, computed once ===//

#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace nnc {
#define GEN_PASS_DEF_HOISTBATCHINVARIANTS
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
/// Whether some use of `op`'s results is a destination (DPS init) operand.
bool initializesDestination(Operation *op) {
  for (Value result : op->getResults())
    for (OpOperand &use : result.getUses())
      if (auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
          dps && dps.isDpsInit(&use))
        return true;
  return false;
}

struct HoistBatchInvariants : nnc::impl::HoistBatchInvariantsBase<HoistBatchInvariants> {
  void runOnOperation() override {
    getOperation().walk([](scf::ForOp loop) {
      if (!loop->hasAttr("nnc.batch_loop"))
        return;
      // In order, so that an op's hoisted producers are already outside.
      for (Operation &op : llvm::make_early_inc_range(loop.getBody()->without_terminator())) {
        // Values the op's regions capture count like its operands.
        bool invariant = true;
        op.walk([&](Operation *nested) {
          for (Value v : nested->getOperands())
            if (!op.isAncestor(v.getParentBlock()->getParentOp()) && !loop.isDefinedOutsideOfLoop(v))
              invariant = false;
        });
        // An empty tensor holds nothing to share: it moves with the ops that
        // fill it, wherever they end up.
        if (invariant && isPure(&op) && (isa<tensor::EmptyOp>(op) || !initializesDestination(&op)))
          op.moveBefore(loop);
      }
    });
  }
};
} // namespace
