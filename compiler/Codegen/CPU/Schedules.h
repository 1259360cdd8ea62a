//===- Schedules.h - what the CPU schedules share -----------------------===//
//
// The marks TileAndVectorize's steps leave for one another, its tiling
// helper, and the schedules that live in files of their own.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_CODEGEN_CPU_SCHEDULES_H
#define NNC_COMPILER_CODEGEN_CPU_SCHEDULES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"

namespace nnc::cpu {

// Markers between the steps of the pass: loops to peel, ops to vectorize.
inline constexpr llvm::StringLiteral kPeel = "nnc.peel", kVectorize = "nnc.vectorize",
                                     kPackedB = "nnc.packed_b",
                                     kPanelGroup = "nnc.panel_group",
                                     kWindowRow = "nnc.window_row",
                                     kRegisterK = "nnc.register_k",
                                     kVectorizeIfPossible = "nnc.vectorize_if_possible",
                                     // The vector shape of a marked op whose
                                     // dynamic extents it bounds: vectorized
                                     // with masks.
                                     kVectorSizes = "nnc.vector_sizes";

using LoopType = mlir::scf::SCFTilingOptions::LoopType;

/// Tiles `op` by `sizes` (0 = untiled) with loops in `order` (empty: loop
/// order), as scf.for loops or one scf.forall; `op` is replaced.
mlir::FailureOr<mlir::scf::SCFTilingResult> tile(mlir::RewriterBase &rewriter,
                                                 mlir::linalg::LinalgOp op,
                                                 llvm::ArrayRef<int64_t> sizes,
                                                 llvm::ArrayRef<int64_t> order,
                                                 LoopType loops = LoopType::ForOp);

/// Whether every operand of `op` has elements of whole bytes: booleans are
/// bytes in memory but bits in vectors, so a vector load of i1 would read
/// packed bits.
bool onBytes(mlir::linalg::GenericOp op);

/// Schedules a static f32 reduction with its accumulators in vector
/// registers (Reductions.cpp); false, `op` untouched, for one it does not
/// cover.
bool scheduleReduction(mlir::RewriterBase &rewriter, mlir::linalg::GenericOp op, int64_t lanes);

/// Whether `op` reduces a dynamic innermost loop, along every input's
/// contiguous end, with a combiner scheduleDynamicRowReduction handles.
bool isDynamicRowReduction(mlir::linalg::GenericOp op);

/// Schedules one row of such a reduction (its parallel loops of extent 1) as
/// vector accumulators across steps of four vectors, reduced once, and a
/// masked step for the rest (Reductions.cpp).
void scheduleDynamicRowReduction(mlir::RewriterBase &rewriter, mlir::linalg::GenericOp row,
                                 int64_t lanes);

/// The parallel loop a reduction's result and every input that reads it
/// run along contiguously (the vector of the column schedule), if any.
std::optional<unsigned> reductionColumn(mlir::linalg::GenericOp op);

} // namespace nnc::cpu

#endif // NNC_COMPILER_CODEGEN_CPU_SCHEDULES_H
