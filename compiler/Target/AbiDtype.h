//===- AbiDtype.h - an element type's runtime code --------------*- C++ -*-===//
//
// The nnc_dtype_t (abi.h) of an nn-level element type: what the module's
// descriptor declares (Artifact.cpp), and what compiled code tells the
// runtime's string functions a value is (NNToLinalg/Strings.cpp). Header
// only, so the lowering needs no link to the artifact writer.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_TARGET_ABIDTYPE_H
#define NNC_COMPILER_TARGET_ABIDTYPE_H

#include "dialects/NN/IR/NNOps.h"
#include "runtime/include/nnc/abi.h"

namespace nnc {

/// The nnc_dtype_t of an element type (`isUnsigned` for a signless type
/// that was uiN), or 0.
inline int32_t abiDtype(mlir::Type element, bool isUnsigned) {
  if (mlir::isa<nn::StringType>(element)) return NNC_DTYPE_STRING;
  if (element.isF32()) return NNC_DTYPE_F32;
  if (element.isF64()) return NNC_DTYPE_F64;
  if (element.isF16()) return NNC_DTYPE_F16;
  if (element.isBF16()) return NNC_DTYPE_BF16;
  if (element.isInteger(1)) return NNC_DTYPE_BOOL;
  if (auto i = mlir::dyn_cast<mlir::IntegerType>(element)) {
    bool u = isUnsigned || i.isUnsigned();
    switch (i.getWidth()) {
    case 8: return u ? NNC_DTYPE_U8 : NNC_DTYPE_I8;
    case 16: return u ? NNC_DTYPE_U16 : NNC_DTYPE_I16;
    case 32: return u ? NNC_DTYPE_U32 : NNC_DTYPE_I32;
    case 64: return u ? NNC_DTYPE_U64 : NNC_DTYPE_I64;
    }
  }
  return 0;
}

} // namespace nnc

#endif // NNC_COMPILER_TARGET_ABIDTYPE_H
