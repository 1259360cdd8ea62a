//===- ConstantsAsBytes.cpp - constant globals as flat byte arrays --------===//
//
// Target-neutral: the host module of every target holds the weights.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace nnc {
#define GEN_PASS_DEF_CONSTANTSASBYTES
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
/// The number of scalars in `type` (nested arrays and vectors of one
/// integer or float type), or nullopt for any other type.
std::optional<int64_t> scalarsIn(Type type, Type element) {
  if (auto array = dyn_cast<LLVM::LLVMArrayType>(type)) {
    std::optional<int64_t> inner = scalarsIn(array.getElementType(), element);
    return inner ? std::optional<int64_t>(*inner * array.getNumElements()) : std::nullopt;
  }
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.getElementType() == element ? std::optional<int64_t>(vector.getNumElements())
                                              : std::nullopt;
  return type == element ? std::optional<int64_t>(1) : std::nullopt;
}

struct ConstantsAsBytes : nnc::impl::ConstantsAsBytesBase<ConstantsAsBytes> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    Type byte = IntegerType::get(ctx, 8);
    for (auto global : getOperation().getOps<LLVM::GlobalOp>()) {
      auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(global.getValueOrNull());
      // Without an explicit alignment, the global's type gives it one,
      // which bytes would not keep.
      if (!global.getConstant() || !resource || !global.getAlignment())
        continue;
      ShapedType shape = resource.getType();
      Type element = shape.getElementType();
      AsmResourceBlob *blob = resource.getRawHandle().getBlob();
      if (!blob || !element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
        continue;
      int64_t bytes = shape.getNumElements() * (element.getIntOrFloatBitWidth() / 8);
      std::optional<int64_t> scalars = scalarsIn(global.getGlobalType(), element);
      if (!scalars || *scalars != shape.getNumElements() ||
          static_cast<int64_t>(blob->getData().size()) != bytes)
        continue;
      // The same blob, seen as bytes. Every access is a GEP with its own
      // element type from the global's address, which does not depend on
      // the global's type.
      global.setGlobalTypeAttr(TypeAttr::get(LLVM::LLVMArrayType::get(byte, bytes)));
      global.setValueAttr(DenseResourceElementsAttr::get(RankedTensorType::get({bytes}, byte),
                                                         resource.getRawHandle()));
    }
  }
};
} // namespace
