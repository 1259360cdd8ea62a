//===- Elementwise.cpp - nn elementwise ops to linalg.generic -------------===//
//
// Every elementwise op becomes one parallel linalg.generic whose body is the
// op's scalar function; broadcasting is in the indexing maps. Fusion of these
// generics into kernels happens later, in the fuse stage.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::lowering;

namespace {
/// The scalar body of an elementwise op: operands are the (converted) input
/// elements; `op` is the original nn op (for attributes and signedness).
using ScalarFn = std::function<Value(OpBuilder &, Location, Operation *, ValueRange)>;

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

/// Lowers any elementwise nn op with a scalar body.
class ElementwisePattern : public ConversionPattern {
public:
  ElementwisePattern(StringRef opName, ScalarFn fn, TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, opName, /*benefit=*/1, ctx), fn(std::move(fn)) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                                ConversionPatternRewriter &rewriter) const override {
    auto resultType = cast<RankedTensorType>(getTypeConverter()->convertType(op->getResult(0).getType()));
    Value result = buildElementwise(rewriter, op->getLoc(), resultType, operands,
                                    [&](OpBuilder &b, Location loc, ValueRange args) {
                                      return fn(b, loc, op, args);
                                    });
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  ScalarFn fn;
};

float floatAttr(Operation *op, StringRef name) {
  return cast<FloatAttr>(op->getAttr(name)).getValueAsDouble();
}

bool operandUnsigned(Operation *op) { return isUnsignedType(op->getOperand(0).getType()); }

Value cst(OpBuilder &b, Location loc, Value like, double v) {
  return scalarConstant(b, loc, like.getType(), v);
}

/// sigmoid(x) = 1 / (1 + exp(-x))
Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Value one = cst(b, loc, x, 1);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, e));
}

/// Scalar functions of the unary ops.
SmallVector<std::pair<StringRef, ScalarFn>> unaryFunctions() {
  auto floatFn = [](std::function<Value(OpBuilder &, Location, Operation *, Value)> f) -> ScalarFn {
    return [f](OpBuilder &b, Location loc, Operation *op, ValueRange a) {
      return inF32(b, loc, a[0], [&](Value x) { return f(b, loc, op, x); });
    };
  };
  return {
      {"nn.sqrt", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::SqrtOp::create(b, l, x); })},
      {"nn.exp", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::ExpOp::create(b, l, x); })},
      {"nn.log", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::LogOp::create(b, l, x); })},
      {"nn.erf", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::ErfOp::create(b, l, x); })},
      {"nn.tanh", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::TanhOp::create(b, l, x); })},
      {"nn.sin", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::SinOp::create(b, l, x); })},
      {"nn.cos", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::CosOp::create(b, l, x); })},
      {"nn.floor", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::FloorOp::create(b, l, x); })},
      {"nn.ceil", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::CeilOp::create(b, l, x); })},
      {"nn.round", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::RoundEvenOp::create(b, l, x); })},
      {"nn.tan", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::TanOp::create(b, l, x); })},
      {"nn.asin", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::AsinOp::create(b, l, x); })},
      {"nn.acos", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::AcosOp::create(b, l, x); })},
      {"nn.atan", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::AtanOp::create(b, l, x); })},
      {"nn.sinh", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::SinhOp::create(b, l, x); })},
      {"nn.cosh", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::CoshOp::create(b, l, x); })},
      {"nn.asinh", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::AsinhOp::create(b, l, x); })},
      {"nn.acosh", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::AcoshOp::create(b, l, x); })},
      {"nn.atanh", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return math::AtanhOp::create(b, l, x); })},
      {"nn.softsign", floatFn([](OpBuilder &b, Location l, Operation *, Value x) {
         Value denom = arith::AddFOp::create(b, l, cst(b, l, x, 1), math::AbsFOp::create(b, l, x));
         return arith::DivFOp::create(b, l, x, denom);
       })},
      {"nn.sigmoid", floatFn([](OpBuilder &b, Location l, Operation *, Value x) { return sigmoid(b, l, x); })},
      {"nn.reciprocal", floatFn([](OpBuilder &b, Location l, Operation *, Value x) {
         return arith::DivFOp::create(b, l, cst(b, l, x, 1), x);
       })},
      // softplus(x) = max(x, 0) + log1p(exp(-|x|)): no overflow for large x.
      {"nn.softplus", floatFn([](OpBuilder &b, Location l, Operation *, Value x) {
         Value pos = arith::MaximumFOp::create(b, l, x, cst(b, l, x, 0));
         Value negAbs = arith::NegFOp::create(b, l, math::AbsFOp::create(b, l, x));
         return arith::AddFOp::create(b, l, pos, math::Log1pOp::create(b, l, math::ExpOp::create(b, l, negAbs)));
       })},
      // hard_swish(x) = x * clamp(x / 6 + 1/2, 0, 1)
      {"nn.hard_swish", floatFn([](OpBuilder &b, Location l, Operation *, Value x) {
         Value t = arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, x, cst(b, l, x, 1.0 / 6)),
                                         cst(b, l, x, 0.5));
         t = arith::MinimumFOp::create(b, l, arith::MaximumFOp::create(b, l, t, cst(b, l, x, 0)), cst(b, l, x, 1));
         return arith::MulFOp::create(b, l, x, t);
       })},
      {"nn.leaky_relu", floatFn([](OpBuilder &b, Location l, Operation *op, Value x) {
         Value scaled = arith::MulFOp::create(b, l, x, cst(b, l, x, floatAttr(op, "alpha")));
         Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, cst(b, l, x, 0));
         return arith::SelectOp::create(b, l, neg, scaled, x);
       })},
      {"nn.elu", floatFn([](OpBuilder &b, Location l, Operation *op, Value x) {
         Value em1 = math::ExpM1Op::create(b, l, x);
         Value scaled = arith::MulFOp::create(b, l, em1, cst(b, l, x, floatAttr(op, "alpha")));
         Value neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, cst(b, l, x, 0));
         return arith::SelectOp::create(b, l, neg, scaled, x);
       })},
      {"nn.selu", floatFn([](OpBuilder &b, Location l, Operation *op, Value x) {
         Value em1 = math::ExpM1Op::create(b, l, x);
         Value scaled = arith::MulFOp::create(b, l, em1, cst(b, l, x, floatAttr(op, "alpha")));
         Value nonPos = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLE, x, cst(b, l, x, 0));
         Value y = arith::SelectOp::create(b, l, nonPos, scaled, x);
         return arith::MulFOp::create(b, l, y, cst(b, l, x, floatAttr(op, "gamma")));
       })},
      {"nn.hard_sigmoid", floatFn([](OpBuilder &b, Location l, Operation *op, Value x) {
         Value t = arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, x, cst(b, l, x, floatAttr(op, "alpha"))),
                                         cst(b, l, x, floatAttr(op, "beta")));
         return arith::MinimumFOp::create(b, l, arith::MaximumFOp::create(b, l, t, cst(b, l, x, 0)), cst(b, l, x, 1));
       })},
      // Numeric unary ops: float or integer.
      {"nn.neg", [](OpBuilder &b, Location l, Operation *, ValueRange a) -> Value {
         if (isFloat(a[0])) return arith::NegFOp::create(b, l, a[0]);
         return arith::SubIOp::create(b, l, cst(b, l, a[0], 0), a[0]);
       }},
      {"nn.abs", [](OpBuilder &b, Location l, Operation *op, ValueRange a) -> Value {
         if (isFloat(a[0])) return math::AbsFOp::create(b, l, a[0]);
         if (operandUnsigned(op)) return a[0];
         return math::AbsIOp::create(b, l, a[0]);
       }},
      {"nn.relu", [](OpBuilder &b, Location l, Operation *op, ValueRange a) -> Value {
         if (isFloat(a[0])) return arith::MaximumFOp::create(b, l, a[0], cst(b, l, a[0], 0));
         if (operandUnsigned(op)) return a[0];
         return arith::MaxSIOp::create(b, l, a[0], cst(b, l, a[0], 0));
       }},
      {"nn.sign", [](OpBuilder &b, Location l, Operation *op, ValueRange a) -> Value {
         Value x = a[0], zero = cst(b, l, x, 0), one = cst(b, l, x, 1), minus = cst(b, l, x, -1);
         Value pos, neg;
         if (isFloat(x)) {
           pos = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, zero);
           neg = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, zero);
         } else {
           pos = arith::CmpIOp::create(b, l, operandUnsigned(op) ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt, x, zero);
           neg = arith::CmpIOp::create(b, l, operandUnsigned(op) ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt, x, zero);
         }
         return arith::SelectOp::create(b, l, pos, one, arith::SelectOp::create(b, l, neg, minus, zero));
       }},
      {"nn.not", [](OpBuilder &b, Location l, Operation *, ValueRange a) -> Value {
         return arith::XOrIOp::create(b, l, a[0], cst(b, l, a[0], 1));
       }},
  };
}

/// A shift by the bit width or more is poison in LLVM; ONNX's reference gives 0.
Value shiftOrZero(OpBuilder &b, Location l, Value amount, Value shifted) {
  unsigned width = amount.getType().getIntOrFloatBitWidth();
  Value tooFar = arith::CmpIOp::create(b, l, arith::CmpIPredicate::uge, amount, cst(b, l, amount, width));
  return arith::SelectOp::create(b, l, tooFar, cst(b, l, amount, 0), shifted);
}

/// A signed divisor that cannot trap: 0 and -1 (the minimum over -1
/// overflows) become 1. Callers fix up the quotient of -1; a remainder by 1 is
/// already the remainder by -1, 0.
Value signedDivisor(OpBuilder &b, Location l, Value y) {
  Value isZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, y, cst(b, l, y, 0));
  Value isMinusOne = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, y, cst(b, l, y, -1));
  Value either = arith::OrIOp::create(b, l, isZero, isMinusOne);
  return arith::SelectOp::create(b, l, either, cst(b, l, y, 1), y);
}

} // namespace

Value lowering::integerDivide(OpBuilder &b, Location l, Value x, Value y, bool isUnsigned) {
  // Integer division by zero is undefined in ONNX; never trap on it.
  Value zero = cst(b, l, y, 0);
  Value isZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, y, zero);
  if (isUnsigned) {
    Value safe = arith::SelectOp::create(b, l, isZero, cst(b, l, y, 1), y);
    return arith::SelectOp::create(b, l, isZero, zero, arith::DivUIOp::create(b, l, x, safe));
  }
  // Nor on the minimum over -1, which overflows: x / -1 is -x, wrapping.
  Value isMinusOne = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, y, cst(b, l, y, -1));
  Value q = arith::DivSIOp::create(b, l, x, signedDivisor(b, l, y));
  q = arith::SelectOp::create(b, l, isMinusOne, arith::SubIOp::create(b, l, zero, x), q);
  return arith::SelectOp::create(b, l, isZero, zero, q);
}

namespace {
/// Python-style integer modulo: the result takes the divisor's sign.
Value floorMod(OpBuilder &b, Location l, Value x, Value y) {
  Value r = arith::RemSIOp::create(b, l, x, y);
  Value zero = cst(b, l, x, 0);
  Value rNonZero = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ne, r, zero);
  Value rNeg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, r, zero);
  Value yNeg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, y, zero);
  Value signsDiffer = arith::XOrIOp::create(b, l, rNeg, yNeg);
  Value fix = arith::AndIOp::create(b, l, rNonZero, signsDiffer);
  return arith::SelectOp::create(b, l, fix, arith::AddIOp::create(b, l, r, y), r);
}

/// Scalar functions of the binary ops.
SmallVector<std::pair<StringRef, ScalarFn>> binaryFunctions() {
  using P = arith::CmpIPredicate;
  using F = arith::CmpFPredicate;
  auto compare = [](F f, P s, P u) -> ScalarFn {
    return [=](OpBuilder &b, Location l, Operation *op, ValueRange a) -> Value {
      if (isFloat(a[0])) return arith::CmpFOp::create(b, l, f, a[0], a[1]);
      return arith::CmpIOp::create(b, l, operandUnsigned(op) ? u : s, a[0], a[1]);
    };
  };
  return {
      {"nn.add", [](OpBuilder &b, Location l, Operation *, ValueRange a) -> Value {
         if (isFloat(a[0])) return arith::AddFOp::create(b, l, a[0], a[1]);
         return arith::AddIOp::create(b, l, a[0], a[1]);
       }},
      {"nn.sub", [](OpBuilder &b, Location l, Operation *, ValueRange a) -> Value {
         if (isFloat(a[0])) return arith::SubFOp::create(b, l, a[0], a[1]);
         return arith::SubIOp::create(b, l, a[0], a[1]);
       }},
      {"nn.mul", [](OpBuilder &b, Location l, Operation *, ValueRange a) -> Value {
         if (isFloat(a[0])) return arith::MulFOp::create(b, l, a[0], a[1]);
         return arith::MulIOp::create(b, l, a[0], a[1]);
       }},
      {"nn.div", [](OpBuilder &b, Location l, Operation *op, ValueRange a) -> Value {
         if (isFloat(a[0])) return arith::DivFOp::create(b, l, a[0], a[1]);
         return integerDivide(b, l, a[0], a[1], operandUnsigned(op));
       }},
      {"nn.max", [](OpBuilder &b, Location l, Operation *op, ValueRange a) -> Value {
         if (isFloat(a[0])) return arith::MaximumFOp::create(b, l, a[0], a[1]);
         if (operandUnsigned(op)) return arith::MaxUIOp::create(b, l, a[0], a[1]);
         return arith::MaxSIOp::create(b, l, a[0], a[1]);
       }},
      {"nn.min", [](OpBuilder &b, Location l, Operation *op, ValueRange a) -> Value {
         if (isFloat(a[0])) return arith::MinimumFOp::create(b, l, a[0], a[1]);
         if (operandUnsigned(op)) return arith::MinUIOp::create(b, l, a[0], a[1]);
         return arith::MinSIOp::create(b, l, a[0], a[1]);
       }},
      {"nn.pow", [](OpBuilder &b, Location l, Operation *, ValueRange a) -> Value {
         if (isFloat(a[0]))
           return inF32(b, l, a[0], [&](Value x) {
             Value y = a[1].getType() == x.getType() ? a[1] : Value(arith::ExtFOp::create(b, l, x.getType(), a[1]));
             return math::PowFOp::create(b, l, x, y);
           });
         return math::IPowIOp::create(b, l, a[0], a[1]);
       }},
      {"nn.mod", [](OpBuilder &b, Location l, Operation *op, ValueRange a) -> Value {
         bool fmod = cast<BoolAttr>(op->getAttr("fmod")).getValue();
         if (isFloat(a[0])) return arith::RemFOp::create(b, l, a[0], a[1]);
         // Like division, a zero divisor gives 0 instead of trapping.
         Value zero = cst(b, l, a[1], 0);
         Value isZero = arith::CmpIOp::create(b, l, P::eq, a[1], zero);
         Value r;
         if (operandUnsigned(op))
           r = arith::RemUIOp::create(b, l, a[0], arith::SelectOp::create(b, l, isZero, cst(b, l, a[1], 1), a[1]));
         else if (fmod) r = arith::RemSIOp::create(b, l, a[0], signedDivisor(b, l, a[1]));
         else r = floorMod(b, l, a[0], signedDivisor(b, l, a[1]));
         return arith::SelectOp::create(b, l, isZero, zero, r);
       }},
      {"nn.shift_left", [](OpBuilder &b, Location l, Operation *, ValueRange a) -> Value {
         return shiftOrZero(b, l, a[1], arith::ShLIOp::create(b, l, a[0], a[1]));
       }},
      {"nn.shift_right", [](OpBuilder &b, Location l, Operation *, ValueRange a) -> Value {
         return shiftOrZero(b, l, a[1], arith::ShRUIOp::create(b, l, a[0], a[1]));
       }},
      {"nn.and", [](OpBuilder &b, Location l, Operation *, ValueRange a) -> Value { return arith::AndIOp::create(b, l, a[0], a[1]); }},
      {"nn.or", [](OpBuilder &b, Location l, Operation *, ValueRange a) -> Value { return arith::OrIOp::create(b, l, a[0], a[1]); }},
      {"nn.xor", [](OpBuilder &b, Location l, Operation *, ValueRange a) -> Value { return arith::XOrIOp::create(b, l, a[0], a[1]); }},
      {"nn.equal", compare(F::OEQ, P::eq, P::eq)},
      {"nn.less", compare(F::OLT, P::slt, P::ult)},
      {"nn.less_equal", compare(F::OLE, P::sle, P::ule)},
      {"nn.greater", compare(F::OGT, P::sgt, P::ugt)},
      {"nn.greater_equal", compare(F::OGE, P::sge, P::uge)},
      {"nn.where", [](OpBuilder &b, Location l, Operation *, ValueRange a) -> Value {
         return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
       }},
      {"nn.cast", [](OpBuilder &b, Location l, Operation *op, ValueRange a) -> Value {
         Type to = cast<nn::CastOp>(op).getTo();
         Type signlessTo = signlessElement(to);
         return castScalar(b, l, a[0], signlessTo, operandUnsigned(op), to.isUnsignedInteger());
       }},
  };
}

/// Splat constants larger than this are filled at run time instead of
/// stored: a ConstantOfShape of 10^8 floats would otherwise put 400 MB into
/// the library (and into the compiler's memory, and take seconds to emit).
constexpr int64_t kMaxStoredSplatBytes = 64 * 1024;

/// nn.constant becomes arith.constant, with unsigned element types made
/// signless; a large splat becomes a linalg.fill.
struct ConstantPattern : OpConversionPattern<nn::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::ConstantOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    ElementsAttr value = op.getValue();
    TypedAttr converted;
    if (value.getType() == type)
      converted = value;
    else if (auto dense = dyn_cast<DenseElementsAttr>(value))
      converted = dense.bitcast(type.getElementType());
    else if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
      converted = DenseResourceElementsAttr::get(type, resource.getRawHandle());
    else
      return rewriter.notifyMatchFailure(op, "unsupported constant attribute");
    auto dense = dyn_cast<DenseElementsAttr>(converted);
    int64_t bits = type.getElementTypeBitWidth();
    if (dense && dense.isSplat() && type.hasStaticShape() &&
        type.getNumElements() > kMaxStoredSplatBytes * 8 / std::max<int64_t>(bits, 1)) {
      Location loc = op.getLoc();
      Value scalar = arith::ConstantOp::create(rewriter, loc, dense.getSplatValue<TypedAttr>());
      Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
      rewriter.replaceOpWithNewOp<linalg::FillOp>(op, scalar, empty);
      return success();
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type, converted);
    return success();
  }
};
} // namespace

bool lowering::isElementwise(Operation *op) {
  static const llvm::StringSet<> names = [] {
    llvm::StringSet<> set;
    for (auto &entry : unaryFunctions())
      set.insert(entry.first);
    for (auto &entry : binaryFunctions())
      set.insert(entry.first);
    return set;
  }();
  return names.contains(op->getName().getStringRef());
}

void lowering::populateElementwisePatterns(NNTypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  for (auto &[name, fn] : unaryFunctions())
    patterns.add<ElementwisePattern>(name, fn, converter, context);
  for (auto &[name, fn] : binaryFunctions())
    patterns.add<ElementwisePattern>(name, fn, converter, context);
  patterns.add<ConstantPattern>(converter, context);
}
