//===- BFloat16.cpp - conversions to bfloat16 written out in LLVM IR -----===//

#include "compiler/Codegen/Common/BFloat16.h"

#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

using namespace llvm;

namespace {

Constant *constantLike(Value *v, uint64_t value) { return ConstantInt::get(v->getType(), value); }

/// f64 `x` rounded to f32 to odd: toward zero, with the last bit set when
/// inexact. Rounding that to bfloat16's 8 bits rounds as once from f64
/// (f32 keeps more than two bits past them, over the same exponents).
Value *roundToOddF32(IRBuilder<> &b, Value *x) {
  Type *i32 = x->getType()->getWithNewType(b.getInt32Ty());
  Value *t = b.CreateFPTrunc(x, x->getType()->getWithNewType(b.getFloatTy()));
  Value *back = b.CreateFPExt(t, x->getType());
  Value *away = b.CreateFCmpOGT(b.CreateUnaryIntrinsic(Intrinsic::fabs, back),
                                b.CreateUnaryIntrinsic(Intrinsic::fabs, x));
  Value *bits = b.CreateBitCast(t, i32);
  Value *truncated = b.CreateSelect(away, b.CreateSub(bits, ConstantInt::get(i32, 1)), bits);
  Value *odd = b.CreateBitCast(b.CreateOr(truncated, ConstantInt::get(i32, 1)), t->getType());
  // Unordered: a NaN (and an exact value) is kept as it is.
  return b.CreateSelect(b.CreateFCmpUEQ(back, x), t, odd);
}

/// Integer `x` as an f64 that rounds to bfloat16 as `x` itself does: exact
/// up to 32 bits; wider, its magnitude's top 32 significant bits with any
/// lower one set ORed into the last (a sticky bit, far below bfloat16's 8).
Value *integerToF64(IRBuilder<> &b, Value *x, bool isSigned) {
  Type *f64 = x->getType()->getWithNewType(b.getDoubleTy());
  unsigned width = x->getType()->getScalarSizeInBits();
  if (width <= 32)
    return isSigned ? b.CreateSIToFP(x, f64) : b.CreateUIToFP(x, f64);
  Value *negative = isSigned ? b.CreateICmpSLT(x, constantLike(x, 0)) : nullptr;
  // The most negative value's magnitude is itself, read unsigned.
  Value *magnitude = negative ? b.CreateSelect(negative, b.CreateNeg(x), x) : x;
  Value *leadingZeros = b.CreateBinaryIntrinsic(Intrinsic::ctlz, magnitude, b.getFalse());
  Value *shift = b.CreateBinaryIntrinsic(Intrinsic::usub_sat, constantLike(x, width - 32),
                                         leadingZeros);
  Value *unit = b.CreateShl(constantLike(x, 1), shift);
  Value *lost = b.CreateAnd(magnitude, b.CreateSub(unit, constantLike(x, 1)));
  Value *kept = b.CreateOr(b.CreateLShr(magnitude, shift),
                           b.CreateZExt(b.CreateICmpNE(lost, constantLike(x, 0)), x->getType()));
  // Both exact in f64: at most 32 bits, and a power of two.
  Value *value = b.CreateFMul(b.CreateUIToFP(kept, f64), b.CreateUIToFP(unit, f64));
  return negative ? b.CreateSelect(negative, b.CreateFNeg(value), value) : value;
}

} // namespace

Value *nnc::bfloat16Bits(IRBuilder<> &b, Value *x) {
  Type *i32 = x->getType()->getWithNewType(b.getInt32Ty());
  auto c = [&](uint32_t v) { return ConstantInt::get(i32, v); };
  Value *bits = b.CreateBitCast(x, i32);
  Value *odd = b.CreateAnd(b.CreateLShr(bits, c(16)), c(1));
  Value *rounded = b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(odd, c(0x7fff))), c(16));
  Value *nan = b.CreateICmpUGT(b.CreateAnd(bits, c(0x7fffffff)), c(0x7f800000));
  Value *quiet = b.CreateOr(b.CreateLShr(bits, c(16)), c(0x40));
  return b.CreateSelect(nan, quiet, rounded);
}

void nnc::expandBFloat16Conversions(Module &module) {
  SmallVector<Instruction *> conversions;
  for (Function &f : module)
    for (Instruction &inst : instructions(f))
      if (isa<FPTruncInst, SIToFPInst, UIToFPInst>(inst) &&
          inst.getType()->getScalarType()->isBFloatTy())
        conversions.push_back(&inst);
  for (Instruction *conversion : conversions) {
    IRBuilder<> b(conversion);
    Value *x = conversion->getOperand(0);
    auto like = [&](Type *scalar) { return x->getType()->getWithNewType(scalar); };
    if (x->getType()->isIntOrIntVectorTy())
      x = integerToF64(b, x, isa<SIToFPInst>(conversion));
    if (x->getType()->getScalarType()->isDoubleTy())
      x = roundToOddF32(b, x);
    else if (!x->getType()->getScalarType()->isFloatTy())
      x = b.CreateFPExt(x, like(b.getFloatTy())); // f16: exact in f32
    Value *bits = b.CreateTrunc(bfloat16Bits(b, x), like(b.getInt16Ty()));
    conversion->replaceAllUsesWith(b.CreateBitCast(bits, conversion->getType()));
    conversion->eraseFromParent();
  }
}
