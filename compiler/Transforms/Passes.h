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
} // namespace nnc::nn

#endif // NNC_COMPILER_TRANSFORMS_PASSES_H
