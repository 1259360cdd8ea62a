//===- OrderGlobals.cpp - constant globals in a deterministic order -------===//
//
// Target-neutral: every target bufferizes modules of several functions.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace nnc {
#define GEN_PASS_DEF_ORDERGLOBALS
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
struct OrderGlobals : nnc::impl::OrderGlobalsBase<OrderGlobals> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // Constant globals in order of first use, functions in module order.
    SmallVector<memref::GlobalOp> order;
    llvm::DenseSet<Operation *> seen;
    for (auto func : module.getOps<func::FuncOp>())
      func.walk([&](memref::GetGlobalOp get) {
        auto global = symbols.lookup<memref::GlobalOp>(get.getName());
        if (global && global.getConstant() && seen.insert(global).second)
          order.push_back(global);
      });
    Block *body = module.getBody();
    for (memref::GlobalOp global : llvm::reverse(order))
      global->moveBefore(body, body->begin());
    // New names, then every reference renamed in one walk (only get_global
    // refers to a global this early).
    DenseMap<StringAttr, FlatSymbolRefAttr> renamed;
    for (auto [i, global] : llvm::enumerate(order)) {
      auto name = StringAttr::get(&getContext(), "__constant_" + Twine(i));
      Operation *other = symbols.lookup(name);
      if (other && !seen.contains(other)) {
        global.emitError("cannot name a constant '") << name.getValue() << "': the name is taken";
        return signalPassFailure();
      }
      renamed[global.getSymNameAttr()] = FlatSymbolRefAttr::get(name);
    }
    for (memref::GlobalOp global : order)
      global.setSymName(renamed.lookup(global.getSymNameAttr()).getValue());
    module.walk([&](memref::GetGlobalOp get) {
      if (FlatSymbolRefAttr name = renamed.lookup(get.getNameAttr().getAttr()))
        get.setNameAttr(name);
    });
  }
};
} // namespace
