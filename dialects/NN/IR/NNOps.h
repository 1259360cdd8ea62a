//===- NNOps.h - the nn dialect's ops ---------------------------*- C++ -*-===//
//
// Declares the nn dialect and its ops, plus the shape helpers that the
// ODS-generated inference code and nn passes share.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_DIALECTS_NN_IR_NNOPS_H
#define NNC_DIALECTS_NN_IR_NNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

namespace nnc::nn {

/// Result types are compatible when each pair has the same element type and
/// rank and no two static dims differ: a refined (more static) result type is
/// as valid as the inferred one.
bool areCompatibleResultTypes(mlir::TypeRange inferred, mlir::TypeRange actual);

/// NumPy broadcasting of all `operands`' shapes, with result element type `elementType`.
llvm::LogicalResult inferBroadcast(std::optional<mlir::Location> loc, llvm::StringRef opName,
                                   mlir::ValueRange operands, mlir::Type elementType,
                                   llvm::SmallVectorImpl<mlir::Type> &types);

llvm::LogicalResult inferPool(std::optional<mlir::Location> loc, llvm::StringRef opName,
                              mlir::Type input, llvm::ArrayRef<int64_t> kernel,
                              llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> dilations,
                              llvm::ArrayRef<int64_t> pads, bool ceilMode,
                              llvm::SmallVectorImpl<mlir::Type> &types);

llvm::LogicalResult inferReduce(std::optional<mlir::Location> loc, llvm::StringRef opName,
                                mlir::Type input, llvm::ArrayRef<int64_t> axes, bool keepDims,
                                llvm::SmallVectorImpl<mlir::Type> &types);

/// Checks that `axis` names a dim of the ranked tensor type `input`.
llvm::LogicalResult checkAxis(std::optional<mlir::Location> loc, llvm::StringRef opName,
                              mlir::Type input, int64_t axis);

/// Element `i` of a small integer tensor that holds a shape, as far as its
/// producers show: a constant, or dim `dim` of tensor `of` (exporters build
/// shapes as Shape -> Gather -> Unsqueeze -> Concat, and Cast), or element
/// `dim` of the result of `computed`, an integer Add, Sub, Mul or Div of such
/// elements (a batch times the heads) that the caller evaluates from its
/// operands' elements (element 0 of a one-element operand).
struct ShapeElement {
  std::optional<int64_t> constant;
  mlir::Value of;
  int64_t dim = -1;
  mlir::Operation *computed = nullptr;
};
std::optional<ShapeElement> traceShapeElement(mlir::Value shape, int64_t i);

/// The values of `value` when it is produced by a constant integer tensor.
std::optional<llvm::SmallVector<int64_t>> getConstantInts(mlir::Value value);

/// The values of `value` when it is produced by a constant float tensor.
std::optional<llvm::SmallVector<double>> getConstantFloats(mlir::Value value);

/// Folds a binary elementwise op whose operands are small integer constants,
/// or small float constants where the result is exact (+ - * /, min, max,
/// comparisons).
mlir::OpFoldResult foldBinary(mlir::Operation *op, llvm::ArrayRef<mlir::Attribute> operands);
/// Folds a unary elementwise op (neg, abs, sign, relu, not) of a small
/// integer constant, or one that is exact in floats (neg, abs, floor, ceil,
/// round) of a small float constant.
mlir::OpFoldResult foldUnary(mlir::Operation *op, mlir::Attribute operand);
/// Folds a reduction over `axes` of a small constant: of integers a sum,
/// product, maximum or minimum; of floats the maximum or minimum.
mlir::OpFoldResult foldReduce(mlir::Operation *op, mlir::Attribute operand,
                              llvm::ArrayRef<int64_t> axes);

/// The most static type compatible with both, or null when they conflict.
mlir::Type refineType(mlir::Type current, mlir::Type inferred);

/// Checks that each of the inferred `types` can be a tensor: no negative dim,
/// and its bytes countable in int64. Every nn op's type inference ends with
/// it, so a model cannot build an op whose shape arithmetic went wrong.
llvm::LogicalResult checkInferredShapes(std::optional<mlir::Location> loc, llvm::StringRef opName,
                                        llvm::ArrayRef<mlir::Type> types);

/// The same check on the operand and result types of `op`.
llvm::LogicalResult verifyTensorShapes(mlir::Operation *op);

/// Verifies that every operand and result of an nn op is a tensor that can
/// exist (see verifyTensorShapes): later stages compute sizes and offsets
/// from these shapes in int64 without checking.
template <typename ConcreteType>
class ValidShapes : public mlir::OpTrait::TraitBase<ConcreteType, ValidShapes> {
public:
  static llvm::LogicalResult verifyTrait(mlir::Operation *op) { return verifyTensorShapes(op); }
};

/// Attaches GradientOpInterface (NNGradients.cpp) to the differentiable ops.
void attachGradientInterfaces(mlir::MLIRContext *context);

} // namespace nnc::nn

#include "dialects/NN/IR/NNGradient.h.inc"
#include "dialects/NN/IR/NNDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/NN/IR/NNTypes.h.inc"

#define GET_OP_CLASSES
#include "dialects/NN/IR/NNOps.h.inc"

namespace nnc::nn {
/// The divisor of each output position of `op` along spatial dim `dim`: the
/// window's taps that count (inside the input, or the padded input with
/// count_include_pad). A window's divisor is their product over the dims.
llvm::SmallVector<int64_t> avgPoolDivisors(AvgPoolOp op, int64_t dim);
} // namespace nnc::nn

#endif // NNC_DIALECTS_NN_IR_NNOPS_H
