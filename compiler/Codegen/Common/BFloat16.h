//===- BFloat16.h - conversions to bfloat16 written out in LLVM IR -*- C++ -*-===//
//
// x86-64's back end lowers a conversion to bfloat16 (a Cast to BFLOAT16)
// to calls of __truncsfbf2, __truncdfbf2 and kin, which Debian bookworm's
// libgcc does not have: a library holding one fails to load. nnc writes
// them out as integer operations instead, in the CPU target's code and in
// the cuda-emulated device's image of the kernels alike.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_CODEGEN_COMMON_BFLOAT16_H
#define NNC_COMPILER_CODEGEN_COMMON_BFLOAT16_H

#include "llvm/IR/IRBuilder.h"

namespace llvm {
class Module;
} // namespace llvm

namespace nnc {

/// The bfloat16 bits of f32 `x` (a scalar or a vector), rounded to nearest
/// even (PTX's cvt.rn.bf16, ONNX's Cast); a NaN stays a quiet NaN. In the
/// low half of an i32 of x's shape.
llvm::Value *bfloat16Bits(llvm::IRBuilder<> &b, llvm::Value *x);

/// Rewrites every fptrunc, sitofp and uitofp to bfloat16 in `module` with
/// bfloat16Bits, each value rounded once: f64 through f32 rounded to odd,
/// integers exactly or, past 32 significant bits, through their top 32
/// with the rest kept as a sticky bit.
void expandBFloat16Conversions(llvm::Module &module);

} // namespace nnc

#endif // NNC_COMPILER_CODEGEN_COMMON_BFLOAT16_H
