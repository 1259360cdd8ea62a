//===- BFloat16.h - conversions to bfloat16 written out in LLVM IR -*- C++ -*-===//
//
// x86-64's back end lowers a conversion to bfloat16 (a Cast to BFLOAT16,
// or bfloat16 arithmetic, which it computes in f32) to calls of
// __truncsfbf2 and kin, which Debian bookworm's libgcc does not have: a
// library holding one fails to load. nnc writes them out as integer
// operations instead, after LLVM's optimizations (which narrow f32
// arithmetic on bfloat16 values back to bfloat16), in the CPU target's
// code and the cuda-emulated device's image of the kernels alike.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_CODEGEN_COMMON_BFLOAT16_H
#define NNC_COMPILER_CODEGEN_COMMON_BFLOAT16_H

#include "llvm/IR/IRBuilder.h"
#include "llvm/Support/Error.h"

namespace llvm {
class Module;
} // namespace llvm

namespace nnc {

/// The bfloat16 bits of f32 `x` (a scalar or a vector), rounded to nearest
/// even (PTX's cvt.rn.bf16, ONNX's Cast); a NaN stays a quiet NaN. In the
/// low half of an i32 of x's shape.
llvm::Value *bfloat16Bits(llvm::IRBuilder<> &b, llvm::Value *x);

/// Rewrites every conversion to bfloat16 in `module` (fptrunc, sitofp,
/// uitofp from a type exact in f32: NNToLinalg's castScalar converts f64
/// and wider integers through such an f32) with bfloat16Bits, and every
/// bfloat16 add, subtract, multiply, divide, remainder, sqrt, fma, min and
/// max into the f32 operation and such a conversion. An error names the
/// function converting from any other type.
llvm::Error expandBFloat16Conversions(llvm::Module &module);

} // namespace nnc

#endif // NNC_COMPILER_CODEGEN_COMMON_BFLOAT16_H
