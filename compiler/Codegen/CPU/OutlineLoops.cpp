//===- OutlineLoops.cpp - loops over dynamic sizes as functions -----------===//
//
// LLVM's loop strength reduction, and the value tracking it asks, scan a
// function's code around each use of a loop's index: a function of many
// loops with run-time trip counts takes time superlinear in its size. Code
// pinned to static sizes has few such loops (LLVM unrolls or folds them);
// dynamic sizes give one per op. Two cases:
// - A loop over a dynamic batch holds a whole chain of a sample's ops (often
//   the whole model, DynamicBatch.cpp): MobileNetV2's took 208 s to compile.
//   Its body becomes a function of the index, called from the loop, so that
//   LLVM sees one call in the loop and straight-line code in the function,
//   as in code pinned to batch 1.
// - Each other outermost loop nest becomes a function of its own, called
//   once: one over a dynamic sequence length (a transformer encoder's took
//   15 s in loop strength reduction), and static ones too, as LLVM's loop
//   passes make scalar evolution forget what it knew of a loop's users
//   across the whole function (SSDlite's post-processing, 1,400 nests in one
//   function: 18 s). Static code loses nothing measurable by the calls.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/Outline.h"
#include "compiler/Codegen/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace nnc {
#define GEN_PASS_DEF_OUTLINELOOPS
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
/// The values `regions` and `operands` use from outside, split into the
/// constants an outlined function re-creates and the values it takes.
void usedFromOutside(MutableArrayRef<Region> regions, ValueRange operands,
                     SmallVectorImpl<Value> &arguments, SmallVectorImpl<Operation *> &constants) {
  SetVector<Value> used(operands.begin(), operands.end());
  getUsedValuesDefinedAbove(regions, used);
  for (Value v : used) {
    Operation *def = v.getDefiningOp();
    if (def && def->getNumOperands() == 0 && def->hasTrait<OpTrait::ConstantLike>())
      constants.push_back(def);
    else
      arguments.push_back(v);
  }
}

/// A new function `<func>_<kind><N>` of `arguments` returning `results`
/// (Outline.h), whose entry re-creates `constants`; `map` takes both to their
/// counterparts in it, and the returned builder is at its entry's end.
OpBuilder startFunction(func::FuncOp func, StringRef kind, ArrayRef<Value> arguments,
                        ArrayRef<Operation *> constants, TypeRange results, Location loc,
                        SymbolTable &symbols, IRMapping &map, func::FuncOp &body) {
  body = nnc::createOutlinedFunction(
      func, kind,
      FunctionType::get(func.getContext(), ValueRange(arguments).getTypes(), results), loc,
      symbols);
  OpBuilder b = OpBuilder::atBlockBegin(&body.front());
  for (Operation *def : constants)
    b.clone(*def, map);
  for (auto [v, arg] : llvm::zip(arguments, body.getArguments()))
    map.map(v, arg);
  return b;
}

/// Whether `op` is or holds a loop.
bool holdsLoop(Operation *op) {
  return op->walk([](Operation *inner) {
             return isa<scf::ForOp, scf::WhileOp>(inner) ? WalkResult::interrupt()
                                                         : WalkResult::advance();
           })
      .wasInterrupted();
}

struct OutlineLoops : nnc::impl::OutlineLoopsBase<OutlineLoops> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<Operation *> batchLoops;
    module.walk<WalkOrder::PreOrder>([&](Operation *loop) {
      if (!isa<scf::ForOp, scf::WhileOp>(loop) || !nnc::isBatchLoop(loop))
        return WalkResult::advance();
      batchLoops.push_back(loop);
      return WalkResult::skip();
    });
    for (Operation *loop : batchLoops)
      if (failed(outlineBody(loop, symbols)))
        return signalPassFailure();
    // Then the loop nests of every function, sample bodies included.
    SmallVector<Operation *> nests;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      for (Operation &op : func.getBody().front())
        if (op.getNumRegions() && !nnc::isBatchLoop(&op) && holdsLoop(&op))
          nests.push_back(&op);
    }
    for (Operation *nest : nests)
      outlineNest(nest, symbols);
  }

  /// A batch loop's body as `@<func>_sample<N>(<the values it uses>...,
  /// index)`; the loop keeps only the call. A while loop's body returns what
  /// it computes for the next iteration (its condition, the next index).
  LogicalResult outlineBody(Operation *loop, SymbolTable &symbols) {
    auto forOp = dyn_cast<scf::ForOp>(loop);
    // Buffers: the body writes its sample's results in place.
    if (forOp && forOp.getNumResults() != 0)
      return loop->emitOpError("expected a bufferized batch loop without results");
    Region &region = forOp ? forOp.getRegion() : cast<scf::WhileOp>(loop).getAfter();
    Block *block = &region.front();
    auto yield = cast<scf::YieldOp>(block->getTerminator());
    SmallVector<Value> computed; // what the yield takes from the body's ops
    for (Value v : yield.getOperands())
      if (v.getDefiningOp() && block->findAncestorOpInBlock(*v.getDefiningOp()) &&
          !llvm::is_contained(computed, v))
        computed.push_back(v);
    auto func = loop->getParentOfType<func::FuncOp>();
    Location loc = loop->getLoc();
    SmallVector<Value> arguments;
    SmallVector<Operation *> constants;
    usedFromOutside(region, {}, arguments, constants);
    arguments.append(block->getArguments().begin(), block->getArguments().end());
    IRMapping map;
    func::FuncOp body;
    OpBuilder b = startFunction(func, "sample", arguments, constants,
                                ValueRange(computed).getTypes(), loc, symbols, map, body);
    for (Operation &op : block->without_terminator())
      b.clone(op, map);
    SmallVector<Value> returned;
    for (Value v : computed)
      returned.push_back(map.lookup(v));
    func::ReturnOp::create(b, loc, returned);
    b.setInsertionPointToStart(block);
    auto call = func::CallOp::create(b, loc, body, arguments);
    for (auto [v, result] : llvm::zip(computed, call.getResults()))
      v.replaceUsesWithIf(result, [&](OpOperand &use) { return use.getOwner() == yield; });
    SmallVector<Operation *> moved;
    for (Operation &op : llvm::make_range(std::next(call->getIterator()), yield->getIterator()))
      moved.push_back(&op);
    for (Operation *op : llvm::reverse(moved))
      op->erase();
    return success();
  }

  /// `nest` as `@<func>_loop<N>(<the values it uses>...)`, returning its
  /// results; it is replaced by the call.
  void outlineNest(Operation *nest, SymbolTable &symbols) {
    auto func = nest->getParentOfType<func::FuncOp>();
    Location loc = nest->getLoc();
    SmallVector<Value> arguments;
    SmallVector<Operation *> constants;
    usedFromOutside(nest->getRegions(), nest->getOperands(), arguments, constants);
    IRMapping map;
    func::FuncOp body;
    OpBuilder b = startFunction(func, "loop", arguments, constants, nest->getResultTypes(), loc,
                                symbols, map, body);
    Operation *clone = b.clone(*nest, map);
    func::ReturnOp::create(b, loc, clone->getResults());
    b.setInsertionPoint(nest);
    auto call = func::CallOp::create(b, loc, body, arguments);
    nest->replaceAllUsesWith(call.getResults());
    nest->erase();
  }
};
} // namespace
