//===- BFloat16.cpp - conversions to bfloat16 written out in LLVM IR -----===//

#include "compiler/Codegen/Common/BFloat16.h"

#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

using namespace llvm;

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

namespace {
/// Whether every value of `type` is exact in f32.
bool exactInF32(Type *type) {
  Type *scalar = type->getScalarType();
  return scalar->isFloatTy() || scalar->isHalfTy() ||
         (scalar->isIntegerTy() && scalar->getIntegerBitWidth() <= 24);
}

/// Arithmetic on bfloat16 values, which x86-64's back end computes in f32
/// and rounds back with __truncsfbf2: in f32 here, rounded as a conversion.
/// An f32 add, subtract, multiply, divide, remainder or sqrt of bfloat16
/// operands, rounded to bfloat16, is the bfloat16 operation's result (f32
/// has more than twice bfloat16's bits); an fma may round twice.
bool isBFloat16Arithmetic(Instruction &inst) {
  if (!inst.getType()->getScalarType()->isBFloatTy())
    return false;
  if (isa<BinaryOperator>(inst))
    return true;
  auto *call = dyn_cast<IntrinsicInst>(&inst);
  if (!call)
    return false;
  switch (call->getIntrinsicID()) {
  case Intrinsic::sqrt:
  case Intrinsic::fma:
  case Intrinsic::fmuladd:
  case Intrinsic::minnum:
  case Intrinsic::maxnum:
  case Intrinsic::minimum:
  case Intrinsic::maximum:
    return true;
  default:
    return false;
  }
}
} // namespace

Error nnc::expandBFloat16Conversions(Module &module) {
  SmallVector<Instruction *> arithmetic, conversions;
  for (Function &f : module)
    for (Instruction &inst : instructions(f)) {
      if (isBFloat16Arithmetic(inst))
        arithmetic.push_back(&inst);
      else if (isa<FPTruncInst, SIToFPInst, UIToFPInst>(inst) &&
               inst.getType()->getScalarType()->isBFloatTy())
        conversions.push_back(&inst);
    }
  for (Instruction *inst : arithmetic) {
    IRBuilder<> b(inst);
    Type *f32 = inst->getType()->getWithNewType(b.getFloatTy());
    SmallVector<Value *> operands;
    for (Value *operand : inst->operands())
      if (!isa<Function>(operand))
        operands.push_back(b.CreateFPExt(operand, f32));
    Value *wide;
    if (auto *binary = dyn_cast<BinaryOperator>(inst))
      wide = b.CreateBinOp(binary->getOpcode(), operands[0], operands[1]);
    else
      wide = b.CreateIntrinsic(f32, cast<IntrinsicInst>(inst)->getIntrinsicID(), operands);
    if (auto *result = dyn_cast<Instruction>(wide))
      result->copyFastMathFlags(inst);
    auto *narrowed = cast<Instruction>(b.CreateFPTrunc(wide, inst->getType()));
    inst->replaceAllUsesWith(narrowed);
    inst->eraseFromParent();
    conversions.push_back(narrowed);
  }
  for (Instruction *conversion : conversions) {
    Value *x = conversion->getOperand(0);
    // NNToLinalg converts f64 and wide integers through an f32 that rounds
    // as they do (castScalar); this rounds from f32 alone.
    if (!exactInF32(x->getType()))
      return createStringError(inconvertibleErrorCode(),
                               "'" + conversion->getFunction()->getName() +
                                   "' converts to bfloat16 from a type not exact in f32");
    IRBuilder<> b(conversion);
    Type *f32 = x->getType()->getWithNewType(b.getFloatTy());
    if (isa<SIToFPInst>(conversion))
      x = b.CreateSIToFP(x, f32);
    else if (isa<UIToFPInst>(conversion))
      x = b.CreateUIToFP(x, f32);
    else if (!x->getType()->getScalarType()->isFloatTy())
      x = b.CreateFPExt(x, f32);
    Value *bits = b.CreateTrunc(bfloat16Bits(b, x), x->getType()->getWithNewType(b.getInt16Ty()));
    conversion->replaceAllUsesWith(b.CreateBitCast(bits, conversion->getType()));
    conversion->eraseFromParent();
  }
  return Error::success();
}
