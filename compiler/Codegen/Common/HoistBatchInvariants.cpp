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

/// A sample's result computed in place, in its slot of the loop's result:
/// the empty tensor its ops' destinations start from (through DPS inits)
/// becomes that slot, seen through the reshape between the two (a sample's
/// ops often end in an expand_shape, which empty-tensor elimination does not
/// look through). Without it the sample is computed apart and copied.
void computeInPlace(scf::ForOp loop) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (auto [i, yielded] : llvm::enumerate(yield.getOperands())) {
    auto insert = yielded.getDefiningOp<tensor::InsertSliceOp>();
    if (!insert || insert.getDest() != loop.getRegionIterArgs()[i] || !insert->hasOneUse())
      continue;
    Value source = insert.getSource();
    auto expand = source.getDefiningOp<tensor::ExpandShapeOp>();
    Value produced = expand ? expand.getSrc() : source;
    // Follow destinations back to the empty tensor they start from.
    Value init = produced;
    while (auto dps = init.getDefiningOp<DestinationStyleOpInterface>()) {
      if (!init.hasOneUse() && init != produced)
        break;
      init = dps.getDpsInitOperand(cast<OpResult>(init).getResultNumber())->get();
    }
    auto empty = init.getDefiningOp<tensor::EmptyOp>();
    if (!empty || !empty->hasOneUse() || !empty.getType().hasStaticShape() ||
        empty->getBlock() != loop.getBody() || init == produced)
      continue;
    // The slot's offsets must be there at the empty tensor's place.
    bool available = llvm::all_of(insert.getOffsets(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return !def || def->getBlock() != loop.getBody() || def->isBeforeInBlock(empty);
    });
    if (!available)
      continue;
    OpBuilder b(empty);
    Location loc = empty.getLoc();
    auto sliceType = cast<RankedTensorType>(source.getType());
    if (!sliceType.hasStaticShape())
      continue;
    Value slot = tensor::ExtractSliceOp::create(b, loc, sliceType, loop.getRegionIterArgs()[i],
                                                insert.getMixedOffsets(), insert.getMixedSizes(),
                                                insert.getMixedStrides());
    if (expand)
      slot = tensor::CollapseShapeOp::create(b, loc, empty.getType(), slot,
                                             expand.getReassociationIndices());
    if (slot.getType() != empty.getType())
      continue;
    empty.replaceAllUsesWith(slot);
    empty.erase();
  }
}

struct HoistBatchInvariants : nnc::impl::HoistBatchInvariantsBase<HoistBatchInvariants> {
  void runOnOperation() override {
    getOperation().walk([](scf::ForOp loop) {
      if (!loop->hasAttr(nnc::kBatchLoopAttr))
        return;
      computeInPlace(loop);
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
