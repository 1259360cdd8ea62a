//===- Passes.h - nn-level passes -------------------------------*- C++ -*-===//

#ifndef NNC_COMPILER_TRANSFORMS_PASSES_H
#define NNC_COMPILER_TRANSFORMS_PASSES_H

#include "dialects/NN/IR/NNOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace nnc::nn {
#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"

/// Re-infers every op's result types in program order, keeping the more
/// static of the old and the inferred; true if any changed.
bool refineResultTypes(mlir::func::FuncOp func);
} // namespace nnc::nn

#endif // NNC_COMPILER_TRANSFORMS_PASSES_H
