//===- FloatConstants.cpp - f32 nn.constants read and made ----------------===//

#include "compiler/Transforms/FloatConstants.h"

#include "dialects/NN/IR/NNOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

std::optional<std::vector<float>> nnc::nn::constantFloats(Value value, int64_t count) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(constant.getValue().getType());
  if (!type || !type.getElementType().isF32() || type.getNumElements() != count)
    return std::nullopt;
  std::vector<float> values(count);
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
    llvm::copy(dense.getValues<float>(), values.begin());
    return values;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue())) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != count * sizeof(float))
      return std::nullopt;
    std::memcpy(values.data(), blob->getData().data(), count * sizeof(float));
    return values;
  }
  return std::nullopt;
}

Value nnc::nn::floatConstant(OpBuilder &b, Location loc, RankedTensorType type,
                             ArrayRef<float> values, StringRef name) {
  ElementsAttr attr;
  if (values.size() <= 256)
    attr = DenseElementsAttr::get(type, values);
  else
    attr = DenseResourceElementsAttr::get(type, name,
                                          HeapAsmResourceBlob::allocateAndCopyInferAlign(values));
  return ConstantOp::create(b, loc, type, attr);
}
