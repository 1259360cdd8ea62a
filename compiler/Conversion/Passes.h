//===- Passes.h - conversion passes of nnc ----------------------*- C++ -*-===//

#ifndef NNC_COMPILER_CONVERSION_PASSES_H
#define NNC_COMPILER_CONVERSION_PASSES_H

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace nnc {
#define GEN_PASS_DECL
#include "compiler/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Conversion/Passes.h.inc"
} // namespace nnc

#endif // NNC_COMPILER_CONVERSION_PASSES_H
