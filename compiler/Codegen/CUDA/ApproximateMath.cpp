//===- ApproximateMath.cpp - math ops in kernels without libdevice --------===//
//
// MLIR's NVVM lowering turns most math ops, even those PTX has an instruction
// for (sqrt, floor), into calls of libdevice, which only the CUDA toolkit
// ships. Here every math op in a kernel becomes either NVVM intrinsics with
// IEEE rounding (sqrt.rn, cvt.rmi, ...) or arithmetic (polynomial
// approximations accurate to a few ulp in f32), so no call survives.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/ExactMath.h"
#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace nnc {
#define GEN_PASS_DEF_CUDAAPPROXIMATEMATH
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
/// `math.<op>` on f32/f64 scalars as the NVVM intrinsic `llvm.nvvm.<name>.f`
/// (or `.d`), which PTX executes as one correctly rounded instruction.
template <typename MathOp>
struct ToNVVMIntrinsic : OpRewritePattern<MathOp> {
  ToNVVMIntrinsic(MLIRContext *ctx, StringRef name)
      : OpRewritePattern<MathOp>(ctx, /*benefit=*/2), name(name) {}

  LogicalResult matchAndRewrite(MathOp op, PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isF32() && !type.isF64())
      return rewriter.notifyMatchFailure(op, "not an f32 or f64 scalar");
    std::string intrinsic = ("llvm.nvvm." + name + (type.isF32() ? ".f" : ".d")).str();
    rewriter.replaceOpWithNewOp<LLVM::CallIntrinsicOp>(
        op, type, rewriter.getStringAttr(intrinsic), op->getOperands());
    return success();
  }
  StringRef name;
};

/// `math.<op>` as the LLVM intrinsic op that NVPTX selects an instruction
/// for (fma.rn), rather than the libdevice call the NVVM lowering would
/// make. (Not all are legal there: fabs and copysign are not.)
template <typename MathOp, typename LLVMOp>
struct ToLLVMOp : OpRewritePattern<MathOp> {
  ToLLVMOp(MLIRContext *ctx) : OpRewritePattern<MathOp>(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(MathOp op, PatternRewriter &rewriter) const override {
    if (!isa<FloatType>(op.getType()))
      return rewriter.notifyMatchFailure(op, "not a float scalar");
    rewriter.replaceOpWithNewOp<LLVMOp>(op, op.getType(), op->getOperands());
    return success();
  }
};

/// rsqrt as 1 / sqrt: PTX's rsqrt is approximate, and results are exact f32
/// by default.
struct ExpandRsqrt : OpRewritePattern<math::RsqrtOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::RsqrtOp op, PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value one = arith::ConstantOp::create(rewriter, loc, rewriter.getFloatAttr(op.getType(), 1.0));
    Value root = math::SqrtOp::create(rewriter, loc, op.getOperand());
    rewriter.replaceOpWithNewOp<arith::DivFOp>(op, one, root);
    return success();
  }
};

/// Ops left to the NVVM lowering or turned into intrinsics above.
bool hasInstruction(StringRef name) {
  return llvm::is_contained({"sqrt", "absf", "absi", "ceil", "floor", "copysign", "fma",
                             "roundeven", "trunc", "ctlz", "cttz", "ctpop", "isnan",
                             "isinf", "isfinite", "rsqrt"},
                            name);
}

/// MLIR's polynomial log clamps its argument to the smallest normal float, so
/// log(1e-40) would be log(1.18e-38) = -87.3 instead of -92.1. A denormal
/// f32 argument is scaled by 2^24 into the normal range first and 24 ln 2
/// taken off the result.
void scaleDenormalLogs(Operation *root) {
  SmallVector<math::LogOp> logs;
  root->walk([&](math::LogOp op) {
    if (op.getType().isF32())
      logs.push_back(op);
  });
  for (math::LogOp op : logs) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto f32 = [&](double v) { return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)); };
    Value x = op.getOperand();
    Value denormal = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                           f32(std::ldexp(1.0, -126)));
    Value scaled = arith::SelectOp::create(
        b, loc, denormal, arith::MulFOp::create(b, loc, x, f32(std::ldexp(1.0, 24))), x);
    op.getOperandMutable().assign(scaled);
    b.setInsertionPointAfter(op);
    Value shifted = arith::SubFOp::create(b, loc, op.getResult(), f32(24 * std::log(2.0)));
    Value result = arith::SelectOp::create(b, loc, denormal, shifted, op.getResult());
    op.getResult().replaceAllUsesExcept(result, llvm::SmallPtrSet<Operation *, 2>{
                                                    shifted.getDefiningOp(), result.getDefiningOp()});
  }
}

struct ApproximateMath : nnc::impl::CUDAApproximateMathBase<ApproximateMath> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    scaleDenormalLogs(getOperation());
    RewritePatternSet patterns(ctx);
    // Expansions in terms of other math ops (tan via sin and cos, round via
    // trunc; powf and the hyperbolic functions in ExactMath), then
    // polynomials for what remains; f16 math is computed in f32.
    math::populateExpansionPatterns(patterns, {"tan", "acosh", "atanh", "fpowi", "round", "exp2",
                                               "ceil"});
    populateMathF32ExpansionPatterns(patterns, [](StringRef name) { return !hasInstruction(name); });
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) { return !hasInstruction(name); });
    patterns.add<ExpandRsqrt>(ctx);
    patterns.add<ToLLVMOp<math::FmaOp, LLVM::FMAOp>>(ctx);
    nnc::cuda::populateExactMathPatterns(patterns);
    patterns.add<ToNVVMIntrinsic<math::SqrtOp>>(ctx, "sqrt.rn");
    patterns.add<ToNVVMIntrinsic<math::FloorOp>>(ctx, "floor");
    patterns.add<ToNVVMIntrinsic<math::CeilOp>>(ctx, "ceil");
    patterns.add<ToNVVMIntrinsic<math::TruncOp>>(ctx, "trunc");
    // cvt.rni: to nearest, ties to even.
    patterns.add<ToNVVMIntrinsic<math::RoundEvenOp>>(ctx, "round");
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Anything still a math op would become a libdevice call: say which.
    WalkResult unsupported = getOperation().walk([](Operation *op) {
      if (op->getDialect() && op->getDialect()->getNamespace() == "math" &&
          !llvm::is_contained({"absi", "isnan", "isinf", "isfinite"},
                              op->getName().stripDialect())) {
        op->emitOpError("has no CUDA lowering without libdevice (type ")
            << op->getResultTypes() << ")";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
