//===- ConstantMatrix.h - 2-D constants seen through views -------*- C++ -*-===//
//
// A matmul's weight reaches codegen as a constant behind reshapes and often a
// transpose (Gemm's transB, a convolution's filter seen as [K, M]). The CPU
// schedule packs such a matrix into panels at compile time, and
// nnc-fold-constant-transposes, on every target, turns the transpose itself
// into a constant instead of a copy on every run.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_CODEGEN_COMMON_CONSTANTMATRIX_H
#define NNC_COMPILER_CODEGEN_COMMON_CONSTANTMATRIX_H

#include "mlir/IR/Value.h"

#include <optional>
#include <vector>

namespace nnc {

/// Whether `matrix` (2-D, static, f32) is a constant seen through reshapes
/// and at most one 2-D transpose.
bool isConstantMatrix(mlir::Value matrix);

/// The values of such a `matrix` [K, N], row-major, or nothing.
std::optional<std::vector<float>> constantMatrix(mlir::Value matrix);

} // namespace nnc

#endif // NNC_COMPILER_CODEGEN_COMMON_CONSTANTMATRIX_H
