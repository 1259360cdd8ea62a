//===- ExactMath.cpp - math without libdevice that must stay exact ---------===//
//
// The kernels' math ops that MLIR has no libdevice-free lowering for and
// that a polynomial of f32 precision would get wrong: |x| and copysign (by
// bits), the float remainder (ONNX Mod with fmod=1: exact, as C's fmod), f64
// exp and log (MLIR's polynomials are f32 only),
// powers (MLIR's expansion gives NaN for a negative base), sinh, cosh, asinh
// and atanh (the expansions cancel near 0, overflow early or cancel for
// negative x), integer powers and bit counts.
// Used by nnc-cuda-approximate-math.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/ExactMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <functional>
#include <vector>

using namespace mlir;

namespace {
/// Scalar IR building at one location, for the expansions below.
struct Scalars {
  OpBuilder &b;
  Location loc;
  Type type; // the float type computed in

  IntegerType bits() const { return b.getIntegerType(type.getIntOrFloatBitWidth()); }
  int mantissaBits() const { return type.isF64() ? 52 : 23; }
  int bias() const { return type.isF64() ? 1023 : 127; }

  Value f(double v) { return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v)); }
  Value i(int64_t v) { return arith::ConstantOp::create(b, loc, b.getIntegerAttr(bits(), v)); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fma(Value x, Value y, Value z) { return math::FmaOp::create(b, loc, x, y, z); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value icmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value c, Value x, Value y) { return arith::SelectOp::create(b, loc, c, x, y); }
  Value toBits(Value x) { return arith::BitcastOp::create(b, loc, bits(), x); }
  Value fromBits(Value x) { return arith::BitcastOp::create(b, loc, type, x); }
  Value isNaN(Value x) { return cmp(arith::CmpFPredicate::UNO, x, x); }

  /// 2^k for an integer k (of the float's width) in the normal range.
  Value exp2i(Value k) {
    Value biased = arith::AddIOp::create(b, loc, k, i(bias()));
    return fromBits(arith::ShLIOp::create(b, loc, biased, i(mantissaBits())));
  }
  /// x * 2^k, exact while the result is in range, for |k| up to three times
  /// the largest exponent (fmod's scaling spans the denormals too).
  Value scale(Value x, Value k) {
    Value three = i(3), two = i(2);
    Value k1 = arith::DivSIOp::create(b, loc, k, three);
    Value rest = arith::SubIOp::create(b, loc, k, k1);
    Value k2 = arith::DivSIOp::create(b, loc, rest, two);
    Value k3 = arith::SubIOp::create(b, loc, rest, k2);
    return mul(mul(mul(x, exp2i(k1)), exp2i(k2)), exp2i(k3));
  }
  /// floor(log2(x)) of a positive finite x, denormals included.
  Value ilogb(Value x) {
    Value word = toBits(x);
    Value exponent = arith::ShRUIOp::create(b, loc, word, i(mantissaBits()));
    Value normal = arith::SubIOp::create(b, loc, exponent, i(bias()));
    // A denormal's value is its integer word times 2^(1 - bias - mantissa
    // bits); its top bit is at width - 1 - ctlz.
    Value zeros = math::CountLeadingZerosOp::create(b, loc, word);
    int64_t width = type.getIntOrFloatBitWidth();
    Value denormal = arith::SubIOp::create(b, loc, i(width - bias() - mantissaBits()), zeros);
    return select(icmp(arith::CmpIPredicate::eq, exponent, i(0)), denormal, normal);
  }
};

/// Replaces a binary float op (of at most 64 bits) by what `compute` builds
/// from its operands extended to `wide` (when narrower), rounded back once.
LogicalResult replaceWidened(PatternRewriter &rewriter, Operation *op, Type wide,
                             function_ref<Value(Scalars &, Value, Value)> compute) {
  auto type = cast<FloatType>(op->getResult(0).getType());
  Location loc = op->getLoc();
  Value x = op->getOperand(0), y = op->getOperand(1);
  if (wide != type) {
    x = arith::ExtFOp::create(rewriter, loc, wide, x);
    y = arith::ExtFOp::create(rewriter, loc, wide, y);
  }
  Scalars m{rewriter, loc, wide};
  Value result = compute(m, x, y);
  if (wide != type)
    result = arith::TruncFOp::create(rewriter, loc, type, result);
  rewriter.replaceOp(op, result);
  return success();
}

/// Bit counts as the LLVM intrinsics (PTX clz, popc, ...), which nothing
/// else in the kernels' lowering provides; a zero input is defined (the
/// width).
template <typename MathOp, typename LLVMOp>
struct ToCountIntrinsic : OpRewritePattern<MathOp> {
  using OpRewritePattern<MathOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(MathOp op, PatternRewriter &rewriter) const override {
    if (!isa<IntegerType>(op.getType()))
      return rewriter.notifyMatchFailure(op, "not an integer scalar");
    if constexpr (std::is_same_v<LLVMOp, LLVM::CtPopOp>)
      rewriter.replaceOpWithNewOp<LLVMOp>(op, op.getType(), op.getOperand());
    else
      rewriter.replaceOpWithNewOp<LLVMOp>(op, op.getType(), op.getOperand(),
                                          /*is_zero_poison=*/false);
    return success();
  }
};

/// |x| and copysign(x, y) by bits: the NVVM lowering takes both to
/// libdevice (and rejects the LLVM copysign intrinsic). x with its sign bit
/// cleared, then y's sign bit where there is a y.
template <typename MathOp> struct ExpandSignBit : OpRewritePattern<MathOp> {
  using OpRewritePattern<MathOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(MathOp op, PatternRewriter &rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "not a float scalar");
    Location loc = op.getLoc();
    unsigned width = type.getWidth();
    auto bits = rewriter.getIntegerType(width);
    auto constant = [&](const APInt &v) {
      return arith::ConstantOp::create(rewriter, loc, rewriter.getIntegerAttr(bits, v));
    };
    auto asBits = [&](Value v) { return arith::BitcastOp::create(rewriter, loc, bits, v); };
    Value result = arith::AndIOp::create(rewriter, loc, asBits(op->getOperand(0)),
                                         constant(APInt::getSignedMaxValue(width)));
    if (op->getNumOperands() == 2) {
      Value sign = arith::AndIOp::create(rewriter, loc, asBits(op->getOperand(1)),
                                         constant(APInt::getSignMask(width)));
      result = arith::OrIOp::create(rewriter, loc, result, sign);
    }
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, type, result);
    return success();
  }
};

/// The float remainder x - trunc(x / y) * y, exactly (C's fmod): |x| is
/// reduced by the largest y * 2^k not above it until it is below |y|. Each
/// subtraction is exact (the subtrahend is between half and all of the
/// value), so the result is too; each step at least halves the value, so
/// the loop runs at most as often as the exponents differ. f16 and bf16 are
/// computed in f32, where their remainder is exact too.
struct ExpandRemF : OpRewritePattern<arith::RemFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::RemFOp op, PatternRewriter &rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type || type.getWidth() > 64)
      return rewriter.notifyMatchFailure(op, "not a float scalar of at most 64 bits");
    Type wide = type.getWidth() < 32 ? rewriter.getF32Type() : type;
    return replaceWidened(rewriter, op, wide, [&](Scalars &m, Value x, Value y) {
      Location loc = m.loc;
      using P = arith::CmpFPredicate;
      Value a = math::AbsFOp::create(rewriter, loc, x), d = math::AbsFOp::create(rewriter, loc, y);
      // NaN for a NaN operand, an infinite x or a zero y; x itself when
      // |x| < |y| (y infinite included). Otherwise both are finite, d > 0.
      Value invalid = arith::OrIOp::create(
          rewriter, loc,
          arith::OrIOp::create(rewriter, loc, m.isNaN(x), m.isNaN(y)),
          arith::OrIOp::create(rewriter, loc, m.cmp(P::OEQ, a, m.f(INFINITY)),
                               m.cmp(P::OEQ, d, m.f(0))));
      // An invalid case starts below d (even d = 0), so the loop does not run.
      Value start = m.select(invalid, m.f(-1), a);
      auto loop = scf::WhileOp::create(
          rewriter, loc, TypeRange{wide}, ValueRange{start},
          [&](OpBuilder &b, Location l, ValueRange args) {
            Scalars in{b, l, wide};
            scf::ConditionOp::create(b, l, in.cmp(P::OGE, args[0], d), args);
          },
          [&](OpBuilder &b, Location l, ValueRange args) {
            Scalars in{b, l, wide};
            Value r = args[0];
            Value k = arith::SubIOp::create(b, l, in.ilogb(r), in.ilogb(d));
            Value t = in.scale(d, k);
            // d * 2^k has r's exponent but may exceed r; then half of it.
            t = in.select(in.cmp(P::OGT, t, r), in.mul(t, in.f(0.5)), t);
            scf::YieldOp::create(b, l, ValueRange{in.sub(r, t)});
          });
      Value remainder = math::CopySignOp::create(rewriter, loc, loop.getResult(0), x);
      return m.select(invalid, m.f(NAN), remainder);
    });
  }
};

/// exp(x) in f64: x = n ln2 + r with |r| <= ln2 / 2 (ln 2 in two parts, so
/// n ln2 is exact), e^r by its Taylor series to r^13 (error below 1e-17),
/// times 2^n in two factors so that results through the denormals round once.
struct ExpandExpF64 : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ExpOp op, PatternRewriter &rewriter) const override {
    if (!op.getType().isF64())
      return rewriter.notifyMatchFailure(op, "not an f64 scalar");
    Location loc = op.getLoc();
    Scalars m{rewriter, loc, op.getType()};
    using P = arith::CmpFPredicate;
    Value x = op.getOperand();
    // Beyond these, the result is inf or 0 whatever the clamp; a NaN is
    // computed as 0 and put back at the end.
    Value c = m.select(m.cmp(P::OGT, x, m.f(710.0)), m.f(710.0), x);
    c = m.select(m.cmp(P::OLT, c, m.f(-746.0)), m.f(-746.0), c);
    c = m.select(m.isNaN(x), m.f(0), c);
    Value n = math::RoundEvenOp::create(rewriter, loc, m.mul(c, m.f(1.4426950408889634)));
    const double ln2Hi = 6.93147180369123816490e-01, ln2Lo = 1.90821492927058770002e-10;
    Value r = m.fma(n, m.f(-ln2Hi), c);
    r = m.fma(n, m.f(-ln2Lo), r);
    double factorial = 1;
    for (int k = 2; k <= 13; ++k)
      factorial *= k;
    Value p = m.f(1 / factorial);
    for (int k = 12; k >= 0; --k) {
      factorial /= k + 1;
      p = m.fma(p, r, m.f(1 / factorial));
    }
    Value ni = arith::FPToSIOp::create(rewriter, loc, m.bits(), n);
    Value n1 = arith::DivSIOp::create(rewriter, loc, ni, m.i(2));
    Value n2 = arith::SubIOp::create(rewriter, loc, ni, n1);
    Value result = m.mul(m.mul(p, m.exp2i(n1)), m.exp2i(n2));
    rewriter.replaceOp(op, m.select(m.isNaN(x), x, result));
    return success();
  }
};

/// log(x) in f64: x = m 2^e with m in [sqrt(1/2), sqrt(2)) (denormals scaled
/// by 2^54 first); log m = 2 atanh(f) with f = (m - 1) / (m + 1), |f| < 0.172,
/// by its series to f^23 (error below 1e-18); e ln 2 in two parts.
struct ExpandLogF64 : OpRewritePattern<math::LogOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::LogOp op, PatternRewriter &rewriter) const override {
    if (!op.getType().isF64())
      return rewriter.notifyMatchFailure(op, "not an f64 scalar");
    Location loc = op.getLoc();
    Scalars m{rewriter, loc, op.getType()};
    using P = arith::CmpFPredicate;
    using I = arith::CmpIPredicate;
    Value x = op.getOperand();
    Value tiny = m.cmp(P::OLT, x, m.f(std::ldexp(1.0, -1022)));
    Value scaled = m.select(tiny, m.mul(x, m.f(std::ldexp(1.0, 54))), x);
    Value word = m.toBits(scaled);
    Value fraction = arith::AndIOp::create(rewriter, loc, word, m.i((int64_t(1) << 52) - 1));
    // Fractions above sqrt(2)'s take the exponent of [1/2, 1) instead.
    Value high = m.icmp(I::ugt, fraction, m.i(0x6A09E667F3BCDll));
    Value mantissaExponent = m.select(high, m.i(1022), m.i(1023));
    Value mant = m.fromBits(arith::OrIOp::create(
        rewriter, loc, fraction, arith::ShLIOp::create(rewriter, loc, mantissaExponent, m.i(52))));
    Value exponent = arith::SubIOp::create(
        rewriter, loc, arith::ShRUIOp::create(rewriter, loc, word, m.i(52)), mantissaExponent);
    exponent = arith::SubIOp::create(rewriter, loc, exponent, m.select(tiny, m.i(54), m.i(0)));
    Value e = arith::SIToFPOp::create(rewriter, loc, m.type, exponent);
    Value f = arith::DivFOp::create(rewriter, loc, m.sub(mant, m.f(1)), m.add(mant, m.f(1)));
    Value s = m.mul(f, f);
    Value series = m.f(1.0 / 23);
    for (int k = 21; k >= 1; k -= 2)
      series = m.fma(series, s, m.f(1.0 / k));
    const double ln2Hi = 6.93147180369123816490e-01, ln2Lo = 1.90821492927058770002e-10;
    Value logm = m.mul(m.mul(f, m.f(2)), series);
    Value result = m.fma(e, m.f(ln2Hi), m.fma(e, m.f(ln2Lo), logm));
    // log 0 = -inf, log of a negative (or NaN) = NaN, log inf = inf.
    result = m.select(m.cmp(P::OEQ, x, m.f(0)), m.f(-INFINITY), result);
    result = m.select(m.cmp(P::OEQ, x, m.f(INFINITY)), x, result);
    result = m.select(m.cmp(P::ULT, x, m.f(0)), m.f(NAN), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// x^y as C's pow: exp(y log |x|) in f64 (the f64 exp and log above; f16
/// and f32 round once at the end, f64 keeps about 13 digits for results far
/// from 1), negative for a negative x and an odd integer y, NaN for a
/// negative finite x and a finite non-integer y, and 1 for y = 0, x = 1 and
/// |x| = 1 with an infinite y. Zeros and infinities come out of exp and log
/// (exp(+-inf) is inf or 0). MLIR's expansion takes the log of x itself: NaN
/// for every negative x.
struct ExpandPowF : OpRewritePattern<math::PowFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::PowFOp op, PatternRewriter &rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type || type.getWidth() > 64)
      return rewriter.notifyMatchFailure(op, "not a float scalar of at most 64 bits");
    return replaceWidened(rewriter, op, rewriter.getF64Type(), [&](Scalars &m, Value x, Value y) {
      Location loc = m.loc;
      using P = arith::CmpFPredicate;
      auto both = [&](Value a, Value b) { return arith::AndIOp::create(rewriter, loc, a, b); };
      auto either = [&](Value a, Value b) { return arith::OrIOp::create(rewriter, loc, a, b); };
      Value ax = math::AbsFOp::create(rewriter, loc, x);
      Value ay = math::AbsFOp::create(rewriter, loc, y);
      Value magnitude =
          math::ExpOp::create(rewriter, loc, m.mul(y, math::LogOp::create(rewriter, loc, ax)));
      Value yFinite = m.cmp(P::OLT, ay, m.f(INFINITY));
      Value yInteger = both(yFinite, m.cmp(P::OEQ, math::TruncOp::create(rewriter, loc, y), y));
      Value half = m.mul(y, m.f(0.5));
      Value yOdd = both(yInteger, m.cmp(P::ONE, math::TruncOp::create(rewriter, loc, half), half));
      // The sign bit: -0 and -inf count as negative.
      Value xNegative = m.icmp(arith::CmpIPredicate::slt, m.toBits(x), m.i(0));
      Value negated = arith::NegFOp::create(rewriter, loc, magnitude);
      Value result = m.select(both(xNegative, yOdd), negated, magnitude);
      Value negativeFinite = both(m.cmp(P::OLT, x, m.f(0)), m.cmp(P::OGT, x, m.f(-INFINITY)));
      Value yFraction = both(yFinite, m.cmp(P::ONE, math::TruncOp::create(rewriter, loc, y), y));
      Value noValue = both(negativeFinite, yFraction);
      result = m.select(noValue, m.f(NAN), result);
      Value one = either(either(m.cmp(P::OEQ, y, m.f(0)), m.cmp(P::OEQ, x, m.f(1))),
                         both(m.cmp(P::OEQ, ax, m.f(1)), m.cmp(P::OEQ, ay, m.f(INFINITY))));
      return m.select(one, m.f(1), result);
    });
  }
};

/// How sinh, asinh or atanh is computed away from 0.
using AwayFromZero = std::function<Value(PatternRewriter &, Scalars &, Operation *, Value)>;

/// sinh, asinh and atanh near 0 by their odd Taylor series: the expansions
/// (exp(x) - exp(-x)) / 2, log(x + sqrt(x^2 + 1)) and log((1 + x) / (1 - x)) / 2
/// cancel there (sinh(1e-8) came out 0). From `limit` on, `away` computes
/// it.
template <typename MathOp> struct SeriesNearZero : OpRewritePattern<MathOp> {
  SeriesNearZero(MLIRContext *ctx, double limit, std::vector<double> coefficients,
                 AwayFromZero away)
      : OpRewritePattern<MathOp>(ctx, /*benefit=*/3), limit(limit),
        coefficients(std::move(coefficients)), away(std::move(away)) {}
  static constexpr char kMarked[] = "nnc.series_done";

  LogicalResult matchAndRewrite(MathOp op, PatternRewriter &rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type || op->hasAttr(kMarked))
      return rewriter.notifyMatchFailure(op, "not a float scalar, or done");
    Location loc = op.getLoc();
    Scalars m{rewriter, loc, type};
    Value x = op.getOperand();
    // x (c0 + c1 x^2 + c2 x^4 + ...), in Horner form.
    Value square = m.mul(x, x);
    Value sum = m.f(coefficients.back());
    for (size_t k = coefficients.size() - 1; k-- > 0;)
      sum = m.fma(sum, square, m.f(coefficients[k]));
    Value series = m.mul(x, sum);
    Value far = away(rewriter, m, op, x);
    Value magnitude = math::AbsFOp::create(rewriter, loc, x);
    Value small = m.cmp(arith::CmpFPredicate::OLT, magnitude, m.f(limit));
    rewriter.replaceOp(op, m.select(small, series, far));
    return success();
  }
  double limit;
  std::vector<double> coefficients;
  AwayFromZero away;
};

/// e^|x| / 2 without overflowing before the result does: e^(|x|/2) squared,
/// halved first.
Value halfExpOfMagnitude(PatternRewriter &rewriter, Scalars &m, Value x) {
  Value half = math::ExpOp::create(rewriter, m.loc,
                                   m.mul(math::AbsFOp::create(rewriter, m.loc, x), m.f(0.5)));
  return m.mul(m.mul(half, m.f(0.5)), half);
}

/// sinh (away from 0) or cosh: (e^|x| -+ e^-|x|) / 2, and e^|x| / 2 where
/// e^-|x| no longer counts (|x| > 20), so that results up to the largest
/// float stay finite; sinh takes x's sign.
Value hyperbolic(PatternRewriter &rewriter, Scalars &m, Value x, bool isSinh) {
  Location loc = m.loc;
  Value magnitude = math::AbsFOp::create(rewriter, loc, x);
  Value up = math::ExpOp::create(rewriter, loc, magnitude);
  Value down = math::ExpOp::create(rewriter, loc, arith::NegFOp::create(rewriter, loc, magnitude));
  Value near = m.mul(isSinh ? m.sub(up, down) : m.add(up, down), m.f(0.5));
  Value large = m.cmp(arith::CmpFPredicate::OGT, magnitude, m.f(20));
  Value result = m.select(large, halfExpOfMagnitude(rewriter, m, x), near);
  return isSinh ? math::CopySignOp::create(rewriter, loc, result, x).getResult() : result;
}

/// cosh(x), as above.
struct ExpandCosh : OpRewritePattern<math::CoshOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::CoshOp op, PatternRewriter &rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "not a float scalar");
    Scalars m{rewriter, op.getLoc(), type};
    rewriter.replaceOp(op, hyperbolic(rewriter, m, op.getOperand(), /*isSinh=*/false));
    return success();
  }
};

/// asinh away from 0: log(|x| + sqrt(x^2 + 1)) with x's sign (the textbook
/// x + sqrt(x^2 + 1) cancels for negative x), and log|x| + ln 2 where the 1
/// no longer counts (|x| > 2^27), before x^2 overflows.
Value asinhAway(PatternRewriter &rewriter, Scalars &m, Operation *, Value x) {
  Location loc = m.loc;
  Value magnitude = math::AbsFOp::create(rewriter, loc, x);
  Value root = math::SqrtOp::create(rewriter, loc, m.fma(magnitude, magnitude, m.f(1)));
  Value near = math::LogOp::create(rewriter, loc, m.add(magnitude, root));
  Value far = m.add(math::LogOp::create(rewriter, loc, magnitude), m.f(std::log(2.0)));
  Value large = m.cmp(arith::CmpFPredicate::OGT, magnitude, m.f(std::ldexp(1.0, 27)));
  return math::CopySignOp::create(rewriter, loc, m.select(large, far, near), x);
}

/// Coefficients of x^(2k+1) for k = 0..n-1.
std::vector<double> sinhSeries(int n) {
  std::vector<double> c;
  double factorial = 1;
  for (int k = 0; k < n; ++k) {
    c.push_back(1 / factorial);
    factorial *= (2 * k + 2) * (2 * k + 3);
  }
  return c;
}
std::vector<double> asinhSeries(int n) {
  // (-1)^k (2k)! / (4^k (k!)^2 (2k + 1))
  std::vector<double> c;
  double central = 1; // (2k)! / (4^k (k!)^2)
  for (int k = 0; k < n; ++k) {
    c.push_back((k % 2 ? -central : central) / (2 * k + 1));
    central *= double(2 * k + 1) / double(2 * k + 2);
  }
  return c;
}
std::vector<double> atanhSeries(int n) {
  std::vector<double> c;
  for (int k = 0; k < n; ++k)
    c.push_back(1.0 / (2 * k + 1));
  return c;
}

/// b^p for integers by squaring, one step per bit of p. A negative p gives
/// what the CPU's lowering (MLIR's math-to-funcs) gives: 1 for b = 1, +-1
/// for b = -1, 0 otherwise, except for b = 0, where that lowering divides by
/// zero (undefined; ONNX and numpy give no value either) and this gives 0.
struct ExpandIPowI : OpRewritePattern<math::IPowIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::IPowIOp op, PatternRewriter &rewriter) const override {
    auto type = dyn_cast<IntegerType>(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "not an integer scalar");
    Location loc = op.getLoc();
    auto c = [&](int64_t v) {
      return arith::ConstantOp::create(rewriter, loc, rewriter.getIntegerAttr(type, v));
    };
    using I = arith::CmpIPredicate;
    Value base = op.getLhs(), power = op.getRhs();
    Value zero = c(0), one = c(1);
    Value lower = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value upper = arith::ConstantIndexOp::create(rewriter, loc, type.getWidth());
    Value step = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(
        rewriter, loc, lower, upper, step, ValueRange{one, base, power},
        [&](OpBuilder &b, Location l, Value, ValueRange args) {
          Value acc = args[0], square = args[1], rest = args[2];
          Value bit = arith::AndIOp::create(b, l, rest, one);
          Value taken = arith::CmpIOp::create(b, l, I::ne, bit, zero);
          Value product = arith::MulIOp::create(b, l, acc, square);
          Value nextAcc = arith::SelectOp::create(b, l, taken, product, acc);
          Value nextSquare = arith::MulIOp::create(b, l, square, square);
          Value nextRest = arith::ShRUIOp::create(b, l, rest, one);
          scf::YieldOp::create(b, l, ValueRange{nextAcc, nextSquare, nextRest});
        });
    Value negative = arith::CmpIOp::create(rewriter, loc, I::slt, power, zero);
    Value odd = arith::CmpIOp::create(rewriter, loc, I::ne,
                                      arith::AndIOp::create(rewriter, loc, power, one), zero);
    Value minusOne = c(-1);
    Value ofMinusOne = arith::SelectOp::create(rewriter, loc, odd, minusOne, one);
    Value inverse = arith::SelectOp::create(
        rewriter, loc, arith::CmpIOp::create(rewriter, loc, I::eq, base, one), one,
        arith::SelectOp::create(rewriter, loc,
                                arith::CmpIOp::create(rewriter, loc, I::eq, base, minusOne),
                                ofMinusOne, zero));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, negative, inverse, loop.getResult(0));
    return success();
  }
};
} // namespace

void nnc::cuda::populateExactMathPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  // Below these limits the series' next term is under 1e-17 of the sum.
  patterns.add<SeriesNearZero<math::SinhOp>>(
      ctx, 0.5, sinhSeries(9), [](PatternRewriter &rewriter, Scalars &m, Operation *, Value x) {
        return hyperbolic(rewriter, m, x, /*isSinh=*/true);
      });
  patterns.add<SeriesNearZero<math::AsinhOp>>(ctx, 0.125, asinhSeries(10), asinhAway);
  // atanh away from 0 is MLIR's expansion, of the op kept and marked.
  patterns.add<SeriesNearZero<math::AtanhOp>>(
      ctx, 0.125, atanhSeries(10),
      [](PatternRewriter &rewriter, Scalars &, Operation *op, Value) -> Value {
        Operation *kept = rewriter.clone(*op);
        kept->setAttr(SeriesNearZero<math::AtanhOp>::kMarked, rewriter.getUnitAttr());
        return kept->getResult(0);
      });
  patterns.add<ExpandCosh>(ctx, /*benefit=*/3);
  // Above MLIR's expansions (benefit 1), which would take exp and log of f64
  // to libdevice-only forms.
  patterns.add<ExpandSignBit<math::AbsFOp>, ExpandSignBit<math::CopySignOp>, ExpandRemF, ExpandExpF64, ExpandLogF64, ExpandPowF, ExpandIPowI,
               ToCountIntrinsic<math::CountLeadingZerosOp, LLVM::CountLeadingZerosOp>,
               ToCountIntrinsic<math::CountTrailingZerosOp, LLVM::CountTrailingZerosOp>,
               ToCountIntrinsic<math::CtPopOp, LLVM::CtPopOp>>(patterns.getContext(),
                                                               /*benefit=*/3);
}
