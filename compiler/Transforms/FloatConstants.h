//===- FloatConstants.h - f32 nn.constants read and made --------*- C++ -*-===//
//
// The nn-level passes that rewrite weights at compile time (batch norms
// folded into filters, dead filter taps dropped) read f32 constants and make
// new ones.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_TRANSFORMS_FLOATCONSTANTS_H
#define NNC_COMPILER_TRANSFORMS_FLOATCONSTANTS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>
#include <vector>

namespace nnc::nn {
/// The values of an f32 nn.constant with `count` elements, if `value` is one.
std::optional<std::vector<float>> constantFloats(mlir::Value value, int64_t count);

/// An nn.constant of `values`: a dense resource named after `name` (as the
/// importer makes weights), or inline for small ones (a bias), where the IR
/// shows their values.
mlir::Value floatConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                          llvm::ArrayRef<float> values, llvm::StringRef name);
} // namespace nnc::nn

#endif // NNC_COMPILER_TRANSFORMS_FLOATCONSTANTS_H
