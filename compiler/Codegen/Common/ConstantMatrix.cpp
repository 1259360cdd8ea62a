//===- ConstantMatrix.cpp - 2-D constants seen through views --------------===//

#include "compiler/Codegen/Common/ConstantMatrix.h"
#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"

#include <cstring>

namespace nnc {
#define GEN_PASS_DEF_FOLDCONSTANTTRANSPOSES
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {

/// The f32 constant a 2-D `matrix` is, seen through reshapes and one 2-D
/// transpose (as Gemm's transB and convolution filters produce), or null.
arith::ConstantOp constantSource(Value matrix, bool &transposed) {
  auto type = dyn_cast<RankedTensorType>(matrix.getType());
  transposed = false;
  if (!type || type.getRank() != 2 || !type.hasStaticShape())
    return nullptr;
  Value source = matrix;
  if (auto transpose = source.getDefiningOp<linalg::TransposeOp>()) {
    if (transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
      return nullptr;
    transposed = true;
    source = transpose.getInput();
  } else if (auto generic = source.getDefiningOp<linalg::GenericOp>()) {
    // A transposing copy: one input read at (d1, d0), the body yields it.
    MLIRContext *ctx = generic.getContext();
    AffineMap swap =
        AffineMap::get(2, 0, {getAffineDimExpr(1, ctx), getAffineDimExpr(0, ctx)}, ctx);
    Block &body = generic.getRegion().front();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    if (generic.getNumDpsInputs() != 1 || generic.getNumLoops() != 2 ||
        generic.getIndexingMapsArray()[0] != swap ||
        !generic.getIndexingMapsArray()[1].isIdentity() || body.getOperations().size() != 1 ||
        yield.getOperand(0) != body.getArgument(0))
      return nullptr;
    transposed = true;
    source = generic.getDpsInputs()[0];
  }
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(source.getDefiningOp()))
    source = source.getDefiningOp()->getOperand(0);
  auto constant = source.getDefiningOp<arith::ConstantOp>();
  if (!constant || !getElementTypeOrSelf(source.getType()).isF32())
    return nullptr;
  return constant;
}

} // namespace

std::optional<std::vector<float>> nnc::constantMatrix(Value matrix) {
  bool transposed;
  arith::ConstantOp constant = constantSource(matrix, transposed);
  if (!constant)
    return std::nullopt;
  auto type = cast<RankedTensorType>(matrix.getType());
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  std::vector<float> data(rows * cols);
  auto fill = [&](auto at) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        data[r * cols + c] = transposed ? at(c * rows + r) : at(r * cols + c);
  };
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
    if (dense.isSplat()) {
      float v = dense.getSplatValue<float>();
      fill([&](int64_t) { return v; });
    } else {
      auto values = llvm::to_vector(dense.getValues<float>());
      fill([&](int64_t i) { return values[i]; });
    }
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue())) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != data.size() * sizeof(float))
      return std::nullopt;
    const char *bytes = blob->getData().data();
    fill([&](int64_t i) {
      float v;
      std::memcpy(&v, bytes + i * sizeof(float), sizeof(float));
      return v;
    });
  } else {
    return std::nullopt;
  }
  return data;
}

bool nnc::isConstantMatrix(Value matrix) {
  bool transposed;
  return bool(constantSource(matrix, transposed));
}

namespace {

/// Transposed constant matrices (Gemm's transB, convolution filters seen as
/// [K, M]) become constants themselves instead of a copy on every run.
void foldConstantTransposes(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<Operation *> transposes;
  func.walk([&](Operation *op) {
    if (isa<linalg::TransposeOp, linalg::GenericOp>(op) && op->getNumResults() == 1 &&
        op->getParentOp() == func)
      transposes.push_back(op);
  });
  for (Operation *op : transposes) {
    Value result = op->getResult(0);
    if (!result.getDefiningOp<linalg::TransposeOp>() &&
        !(isa<linalg::GenericOp>(op) && cast<linalg::GenericOp>(op).getNumDpsInputs() == 1))
      continue;
    std::optional<std::vector<float>> values = nnc::constantMatrix(result);
    if (!values)
      continue;
    auto type = cast<RankedTensorType>(result.getType());
    rewriter.setInsertionPoint(op);
    auto attr = DenseResourceElementsAttr::get(
        type, "nnc_transposed",
        HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(*values)));
    rewriter.replaceOp(op, arith::ConstantOp::create(rewriter, op->getLoc(), attr));
  }
}


struct FoldConstantTransposes : nnc::impl::FoldConstantTransposesBase<FoldConstantTransposes> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    foldConstantTransposes(rewriter, getOperation());
  }
};

} // namespace
