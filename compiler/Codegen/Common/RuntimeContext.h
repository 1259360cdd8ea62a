//===- RuntimeContext.h - how compiled code finds the runtime -----*- C++ -*-===//
//
// The entry wrapper (compiler/Target/Artifact.cpp) stores the call's
// `const nnc_abi_context_t *` in a thread-local global of the module for the
// duration of the call, and restores the previous value after it; the parallel
// loops (LowerForallToRuntime.cpp) load it there. Both sides share this name.
//
// A thread-local rather than an extra argument of the compiled functions:
// their memref signatures stay what bufferization and memory planning made
// them (the wrapper needs no knowledge of which functions parallelize), calls
// from many threads at once each see their own context, and code running in a
// loop body on a pool thread finds no context, so nested loops run serially by
// construction. The price is one thread-local access per parallel loop.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_CODEGEN_COMMON_RUNTIMECONTEXT_H
#define NNC_COMPILER_CODEGEN_COMMON_RUNTIMECONTEXT_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace nnc {

/// The symbol of the thread-local `const nnc_abi_context_t *` of a module.
inline constexpr char kRuntimeContextGlobal[] = "nnc_context";

/// The module's thread-local context slot, created on first use; null (after
/// an error on the clashing symbol) when the name is taken by something else.
mlir::LLVM::GlobalOp getOrCreateContextSlot(mlir::ModuleOp module);

/// Loads the context pointer from the slot at the builder's position.
mlir::Value loadContext(mlir::OpBuilder &b, mlir::Location loc);

} // namespace nnc

#endif // NNC_COMPILER_CODEGEN_COMMON_RUNTIMECONTEXT_H
