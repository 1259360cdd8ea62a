//===- OutlineBatchLoops.cpp - a dynamic batch's sample as a function ------===//
//
// A loop over a dynamic batch holds a whole chain of a sample's ops (often
// the whole model, DynamicBatch.cpp). Left as one loop, LLVM's loop strength
// reduction and the value tracking it asks scan that body for each of its
// uses of the loop's index: MobileNetV2's took 208 s to compile. The body
// becomes a function of the index, called from the loop, so that LLVM sees
// one call in the loop and straight-line code in the function, as in code
// pinned to batch 1.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/Outline.h"
#include "compiler/Codegen/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace nnc {
#define GEN_PASS_DEF_OUTLINEBATCHLOOPS
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
struct OutlineBatchLoops : nnc::impl::OutlineBatchLoopsBase<OutlineBatchLoops> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<scf::ForOp> loops;
    module.walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
      if (!loop->hasAttr(nnc::kBatchLoopAttr))
        return WalkResult::advance();
      loops.push_back(loop);
      return WalkResult::skip();
    });
    SymbolTable symbols(module);
    MLIRContext *ctx = &getContext();
    for (scf::ForOp loop : loops) {
      // Buffers: the body writes its sample's results in place.
      if (loop.getNumResults() != 0) {
        loop.emitOpError("expected a bufferized batch loop without results");
        return signalPassFailure();
      }
      auto func = loop->getParentOfType<func::FuncOp>();
      Location loc = loop.getLoc();
      // What the body uses from outside, but constants, which it re-creates.
      SetVector<Value> used;
      getUsedValuesDefinedAbove(loop.getRegion(), used);
      SmallVector<Value> arguments;
      SmallVector<Operation *> constants;
      for (Value v : used) {
        Operation *def = v.getDefiningOp();
        if (def && def->getNumOperands() == 0 && def->hasTrait<OpTrait::ConstantLike>())
          constants.push_back(def);
        else
          arguments.push_back(v);
      }
      arguments.push_back(loop.getInductionVar());
      // Inlined back, the body would be the loop's again.
      func::FuncOp body = nnc::createOutlinedFunction(
          func, "sample", FunctionType::get(ctx, ValueRange(arguments).getTypes(), {}), loc, symbols);
      Block *entry = &body.front();
      OpBuilder b = OpBuilder::atBlockBegin(entry);
      IRMapping map;
      for (Operation *def : constants)
        b.clone(*def, map);
      for (auto [v, arg] : llvm::zip(arguments, entry->getArguments()))
        map.map(v, arg);
      for (Operation &op : loop.getBody()->without_terminator())
        b.clone(op, map);
      func::ReturnOp::create(b, loc);
      // The loop keeps only the call.
      SmallVector<Operation *> moved;
      for (Operation &op : loop.getBody()->without_terminator())
        moved.push_back(&op);
      for (Operation *op : llvm::reverse(moved))
        op->erase();
      b.setInsertionPointToStart(loop.getBody());
      func::CallOp::create(b, loc, body, arguments);
    }
  }
};
} // namespace
