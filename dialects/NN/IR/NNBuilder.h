//===- NNBuilder.h - building nn ops with inferred types ---------*- C++ -*-===//
//
// The builder behind gradients (NNGradients.cpp) and nn-autodiff: nn ops
// created from operands and attributes alone, their result types inferred.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_DIALECTS_NN_IR_NNBUILDER_H
#define NNC_DIALECTS_NN_IR_NNBUILDER_H

#include "dialects/NN/IR/NNOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

namespace nnc::nn {

/// Builds nn ops with inferred result types at one location, with helpers
/// for the constants and shape glue that gradients and training steps need.
/// Inference failing means the caller built inconsistent IR: make() returns
/// null, which callers report at their op.
struct NNBuilder {
  mlir::OpBuilder &b;
  mlir::Location loc;

  template <typename Op, typename... Args> mlir::Value make(Args &&...args) {
    mlir::OperationState state(loc, Op::getOperationName());
    Op::build(b, state, mlir::TypeRange(), std::forward<Args>(args)...);
    llvm::SmallVector<mlir::Type> types;
    mlir::MLIRContext *context = b.getContext();
    if (mlir::failed(Op::inferReturnTypes(context, loc, state.operands,
                                    state.attributes.getDictionary(context),
                                    state.getRawProperties(), state.regions, types)))
      return nullptr;
    state.addTypes(types);
    return b.create(state)->getResult(0);
  }

  static mlir::RankedTensorType type(mlir::Value v) { return llvm::cast<mlir::RankedTensorType>(v.getType()); }

  /// A `type` tensor filled with `value` (float or integer elements).
  mlir::Value splat(mlir::RankedTensorType type, double value) {
    mlir::Type element = type.getElementType();
    mlir::Attribute attr = llvm::isa<mlir::FloatType>(element)
                         ? mlir::DenseElementsAttr::get(type, mlir::FloatAttr::get(element, value).getValue())
                         : mlir::DenseElementsAttr::get(type, llvm::APInt(element.getIntOrFloatBitWidth(),
                                                              (uint64_t)(int64_t)value, true));
    return make<ConstantOp>(llvm::cast<mlir::ElementsAttr>(attr));
  }
  /// A 0-D tensor of `like`'s element type.
  mlir::Value scalar(mlir::Value like, double value) {
    return splat(mlir::RankedTensorType::get({}, type(like).getElementType()), value);
  }
  mlir::Value i64s(llvm::ArrayRef<int64_t> values) {
    auto t = mlir::RankedTensorType::get({(int64_t)values.size()}, b.getI64Type());
    return make<ConstantOp>(llvm::cast<mlir::ElementsAttr>(mlir::DenseElementsAttr::get(t, values)));
  }
  mlir::Value zerosLike(mlir::Value like) { return splat(type(like), 0.0); }

  mlir::Value add(mlir::Value x, mlir::Value y) { return make<AddOp>(x, y); }
  mlir::Value sub(mlir::Value x, mlir::Value y) { return make<SubOp>(x, y); }
  mlir::Value mul(mlir::Value x, mlir::Value y) { return make<MulOp>(x, y); }
  mlir::Value div(mlir::Value x, mlir::Value y) { return make<DivOp>(x, y); }
  mlir::Value neg(mlir::Value x) { return make<NegOp>(x); }
  mlir::Value mulScalar(mlir::Value x, double c) { return mul(x, scalar(x, c)); }

  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape) {
    if (type(x).getShape() == shape)
      return x;
    return make<ReshapeOp>(x, i64s(shape), b.getBoolAttr(false));
  }
  mlir::Value reduceSum(mlir::Value x, llvm::ArrayRef<int64_t> axes, bool keepDims) {
    if (axes.empty())
      return x;
    return make<ReduceSumOp>(x, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(keepDims));
  }
  mlir::Value expand(mlir::Value x, llvm::ArrayRef<int64_t> shape) {
    if (type(x).getShape() == shape)
      return x;
    return make<ExpandOp>(x, i64s(shape));
  }
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm) {
    return make<TransposeOp>(x, b.getDenseI64ArrayAttr(perm));
  }
  /// Swaps the last two dims.
  mlir::Value transposeLast(mlir::Value x) {
    llvm::SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, type(x).getRank()));
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return transpose(x, perm);
  }
  mlir::Value where(mlir::Value condition, mlir::Value x, mlir::Value y) { return make<WhereOp>(condition, x, y); }
  /// Sums (`ReduceSumOp`) or averages (`ReduceMeanOp`) over every dim, to 0-D.
  template <typename Reduce> mlir::Value reduceAll(mlir::Value x) {
    int64_t rank = type(x).getRank();
    if (rank == 0)
      return x;
    llvm::SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    return make<Reduce>(x, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false));
  }

  /// The gradient `g` of a broadcast result summed back to `target`'s shape:
  /// over the leading dims `target` lacks and the dims where it has size 1.
  mlir::Value unbroadcast(mlir::Value g, mlir::Type target) {
    if (!g)
      return g;
    auto targetType = llvm::cast<mlir::RankedTensorType>(target);
    llvm::ArrayRef<int64_t> from = type(g).getShape(), want = targetType.getShape();
    if (from == want)
      return g;
    int64_t lead = (int64_t)from.size() - (int64_t)want.size();
    llvm::SmallVector<int64_t> axes;
    for (int64_t i = 0; i < (int64_t)from.size(); ++i)
      if (i < lead || (want[i - lead] == 1 && from[i] != 1))
        axes.push_back(i);
    return reshape(reduceSum(g, axes, /*keepDims=*/true), want);
  }
};

} // namespace nnc::nn

#endif // NNC_DIALECTS_NN_IR_NNBUILDER_H
