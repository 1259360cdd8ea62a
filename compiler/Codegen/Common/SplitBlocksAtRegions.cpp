//===- SplitBlocksAtRegions.cpp - a block per nest before SCF to CF -------===//
//
// convert-scf-to-cf splits the block of each scf op it lowers, which moves
// every op after it: quadratic in a long function body. Splitting at each op
// with regions first, from the last one back, moves each op once.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"

namespace nnc {
#define GEN_PASS_DEF_SPLITBLOCKSATREGIONS
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
struct SplitBlocksAtRegions : nnc::impl::SplitBlocksAtRegionsBase<SplitBlocksAtRegions> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Block *> blocks;
    for (Block &block : func.getBody())
      blocks.push_back(&block);
    for (Block *block : blocks) {
      SmallVector<Operation *> nests;
      for (Operation &op : *block)
        if (op.getNumRegions() && &op != &block->front())
          nests.push_back(&op);
      // One nest gains nothing: the conversion's own split moves as much.
      if (nests.size() < 2)
        continue;
      for (Operation *nest : llvm::reverse(nests)) {
        Block *before = nest->getBlock();
        Block *after = before->splitBlock(nest);
        OpBuilder b = OpBuilder::atBlockEnd(before);
        cf::BranchOp::create(b, nest->getLoc(), after);
      }
    }
  }
};
} // namespace
