//===- CountedSizes.h - sizes computed from counts only the run knows -*- C++ -*-===//
//
// A count of the data (NonZero's, NonMaxSuppression's: an nn.bounded_extent)
// may be read as a value and computed with: a detector takes the top
// min(K, count) of its candidates, concatenates what each class kept. Before
// the run only the count's bound is known, so the shape function and the
// memory plan compute every size from the bounds in place of the counts.
// That bounds the size only where the size grows with each count (a sum, a
// min, a product); a size that can shrink as a count grows (K - count, a
// comparison) would be planned too small, and is refused. A check on counts
// cannot run before the run either, and is kept only where it holds for
// every count (a TopK's k = min(K, count) is at most the count).
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_CODEGEN_COMMON_COUNTEDSIZES_H
#define NNC_COMPILER_CODEGEN_COMMON_COUNTEDSIZES_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

namespace nnc {

/// Whether `op`'s result never decreases when its operand `i` grows, the
/// others fixed (sizes are never negative).
bool growsWithOperand(mlir::Operation *op, unsigned i);

/// The first op on a path from a count to `size` through which the size may
/// shrink as the count grows, or null when `size` grows with every count it
/// is computed from (or depends on none).
mlir::Operation *shrinksWithCount(mlir::Value size);

/// The error for a size (`what`) computed from a count through
/// `shrinking`.
mlir::LogicalResult shrinkingError(mlir::Operation *shrinking, llvm::StringRef what);

/// Whether `holds` (a check's i1) is true for every value of the sizes it is
/// computed from: a conjunction of a <= b, a >= b and a == b that min, max,
/// and non-negative sizes prove.
bool holdsForEveryCount(mlir::Value holds);

/// The value a select of sizes is for every count (its condition decided,
/// or its two values one: an Expand's dim), else `v` itself.
mlir::Value selectedForEveryCount(mlir::Value v);

} // namespace nnc

#endif // NNC_COMPILER_CODEGEN_COMMON_COUNTEDSIZES_H
