//===- Passes.h - codegen passes of nnc -------------------------*- C++ -*-===//

#ifndef NNC_COMPILER_CODEGEN_PASSES_H
#define NNC_COMPILER_CODEGEN_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace nnc {
#define GEN_PASS_DECL
#include "compiler/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Codegen/Passes.h.inc"

/// Marks a loop over a dynamic batch (the nn to linalg conversion's
/// DynamicBatch.cpp), or over a dynamic row count's chunks of a product and
/// the switch and branches for the rest (Contraction.cpp): their regions hold
/// static ops, which the schedules treat like the ops at the top of a
/// function.
inline constexpr char kBatchLoopAttr[] = "nnc.batch_loop";

/// The rows of the register tiles of a product of a part of a dynamic row
/// count (Contraction.cpp: 4, 2 or 1 rows, or none), which the CPU schedule
/// takes instead of its own, so that no tile is masked along its rows.
inline constexpr char kRowTileAttr[] = "nnc.row_tile";

/// Whether `op` is a loop whose body the schedules and the memory plan treat
/// like a function's: a batch loop, or an scf.while. Only a Loop that
/// computes its condition makes one on the CPU target (ControlFlowOps.cpp),
/// and canonicalization rebuilds a while loop without its attributes.
inline bool isBatchLoop(mlir::Operation *op) {
  return op->hasAttr(kBatchLoopAttr) || mlir::isa<mlir::scf::WhileOp>(op);
}

/// Whether `op` is at the top of its function, or of a region of a batch
/// loop there: where a kernel starts.
inline bool isKernelLevel(mlir::Operation *op) {
  for (mlir::Operation *parent = op->getParentOp(); !mlir::isa<mlir::func::FuncOp>(parent);
       parent = parent->getParentOp())
    if (!isBatchLoop(parent))
      return false;
  return true;
}

/// The blocks where kernels start: `func`'s body and the regions of the
/// batch loops in it (isKernelLevel), outer ones first; none for a
/// declaration (the runtime's string functions).
inline llvm::SmallVector<mlir::Block *> kernelLevelBlocks(mlir::func::FuncOp func) {
  if (func.isExternal())
    return {};
  llvm::SmallVector<mlir::Block *> blocks{&func.getBody().front()};
  for (size_t i = 0; i < blocks.size(); ++i)
    for (mlir::Operation &op : *blocks[i])
      if (isBatchLoop(&op))
        for (mlir::Region &region : op.getRegions())
          for (mlir::Block &block : region)
            blocks.push_back(&block);
  return blocks;
}

/// Marks the fills of a pad's border (nnc-cpu-tile-vectorize makes them,
/// nnc-cpu-sink-border-fills moves them into the loop writing the interior).
inline constexpr char kPadBorderAttr[] = "nnc.pad_border";

/// An scf.for's LLVM loop metadata (a #llvm.loop_annotation): SCF-to-CF
/// moves it to the loop's latch branch, nnc-loop-annotations into that
/// branch's metadata.
inline constexpr char kLoopAnnotationAttr[] = "llvm.loop_annotation";

/// The LLVM function nnc-profile-kernels defines and calls as each kernel
/// starts. Its calls are host code on every target, and kernels stay on
/// their side of them.
inline constexpr char kProfileMarkFunction[] = "nnc_profile_mark";
} // namespace nnc

#endif // NNC_COMPILER_CODEGEN_PASSES_H
