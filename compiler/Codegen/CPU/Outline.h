//===- Outline.h - functions split out of a CPU function --------*- C++ -*-===//

#ifndef NNC_COMPILER_CODEGEN_CPU_OUTLINE_H
#define NNC_COMPILER_CODEGEN_CPU_OUTLINE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace nnc {

/// A new private function `<func>_<kind><N>` of `type` (at `loc`) right after `func`
/// (N the first number free in `symbols`, which gets it), with an entry
/// block and LLVM's noinline: an outlined body inlined back would undo what
/// outlining it was for.
inline mlir::func::FuncOp createOutlinedFunction(mlir::func::FuncOp func, llvm::StringRef kind,
                                                 mlir::FunctionType type, mlir::Location loc,
                                                 mlir::SymbolTable &symbols) {
  std::string name;
  for (unsigned n = 0;; ++n) {
    name = (func.getName() + "_" + kind + llvm::Twine(n)).str();
    if (!symbols.lookup(name))
      break;
  }
  mlir::MLIRContext *ctx = func.getContext();
  mlir::OpBuilder b(func);
  b.setInsertionPointAfter(func);
  auto body = mlir::func::FuncOp::create(b, loc, name, type);
  body.setPrivate();
  symbols.insert(body);
  body->setAttr("passthrough",
                mlir::ArrayAttr::get(ctx, {mlir::StringAttr::get(ctx, "noinline")}));
  body.addEntryBlock();
  return body;
}

} // namespace nnc

#endif // NNC_COMPILER_CODEGEN_CPU_OUTLINE_H
