//===- Reductions.cpp - reductions, softmax, normalization, cumsum --------===//
//
// Reductions are linalg.generic ops with reduction iterators, kept with
// size-1 dims where a later elementwise op broadcasts them back (softmax,
// normalizations). Log-sum-exp and softmax subtract the maximum first so
// large inputs do not overflow.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::lowering;

namespace {
using utils::IteratorType;

bool isFloatValue(Value v) { return isa<FloatType>(v.getType()); }

Value add(OpBuilder &b, Location l, Value x, Value y) {
  return isFloatValue(x) ? Value(arith::AddFOp::create(b, l, x, y)) : Value(arith::AddIOp::create(b, l, x, y));
}
Value sub(OpBuilder &b, Location l, Value x, Value y) {
  return isFloatValue(x) ? Value(arith::SubFOp::create(b, l, x, y)) : Value(arith::SubIOp::create(b, l, x, y));
}
Value mul(OpBuilder &b, Location l, Value x, Value y) {
  return isFloatValue(x) ? Value(arith::MulFOp::create(b, l, x, y)) : Value(arith::MulIOp::create(b, l, x, y));
}

/// Reduces `input` over `axes` into `init`'s element type; the result keeps the
/// reduced dims as size 1. `combine(acc, x)` gives the new accumulator.
Value reduceKeepDims(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> axes, Value init,
                     function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  MLIRContext *ctx = b.getContext();
  auto type = tensorType(input);
  int64_t rank = type.getRank();
  SmallVector<int64_t> reducedShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<IteratorType> iterators;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    iterators.push_back(reduced ? IteratorType::reduction : IteratorType::parallel);
    if (!reduced) {
      reducedShape.push_back(type.getDimSize(d));
      outExprs.push_back(getAffineDimExpr(d, ctx));
    }
  }
  auto outType = RankedTensorType::get(reducedShape, init.getType());
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < rank; ++d)
    if (type.isDynamicDim(d) && !llvm::is_contained(axes, d))
      sizes.push_back(dimOf(b, loc, input, d));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{outType}, ValueRange{input}, ValueRange{filledTensor(b, loc, outType, init, sizes)},
      SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx),
                             AffineMap::get(rank, 0, outExprs, ctx)},
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, combine(nb, nl, args[1], args[0]));
      });
  SmallVector<int64_t> keptShape(type.getShape());
  for (int64_t a : axes)
    keptShape[a] = 1;
  return reshapeTo(b, loc, generic.getResult(0), RankedTensorType::get(keptShape, init.getType()));
}

/// The number of elements `axes` of `x` span, as a scalar of `element` type:
/// a constant, or computed from the dims known only at run time; at least 1
/// where `atLeastOne` (an integer mean's divisor).
Value countOver(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes, Type element,
                bool atLeastOne = false) {
  auto type = tensorType(x);
  int64_t fixed = 1;
  Value dynamic;
  for (int64_t a : axes) {
    if (!type.isDynamicDim(a)) {
      fixed *= type.getDimSize(a);
      continue;
    }
    Value d = dimOf(b, loc, x, a);
    dynamic = dynamic ? Value(arith::MulIOp::create(b, loc, dynamic, d)) : d;
  }
  if (!dynamic)
    return scalarConstant(b, loc, element, atLeastOne ? std::max<int64_t>(fixed, 1) : fixed);
  Value n = arith::MulIOp::create(b, loc, dynamic, arith::ConstantIndexOp::create(b, loc, fixed));
  if (atLeastOne)
    n = arith::MaxUIOp::create(b, loc, n, arith::ConstantIndexOp::create(b, loc, 1));
  return castScalar(b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), n), element,
                    /*fromUnsigned=*/false, /*toUnsigned=*/false);
}

/// Elementwise map of one tensor.
Value map1(OpBuilder &b, Location loc, Value x, function_ref<Value(OpBuilder &, Location, Value)> f) {
  return buildElementwise(b, loc, tensorType(x), {x},
                          [&](OpBuilder &nb, Location nl, ValueRange a) { return f(nb, nl, a[0]); });
}

/// Elementwise binary op broadcasting `y` (same rank, size-1 dims) into `x`.
Value map2(OpBuilder &b, Location loc, Value x, Value y,
           function_ref<Value(OpBuilder &, Location, Value, Value)> f) {
  return buildElementwise(b, loc, tensorType(x), {x, y},
                          [&](OpBuilder &nb, Location nl, ValueRange a) { return f(nb, nl, a[0], a[1]); });
}

//===----------------------------------------------------------------------===//
// Reduce*
//===----------------------------------------------------------------------===//

enum class Kind { Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp };

template <typename Op, Kind kind> struct ReducePattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = tensorType(x);
    auto resultType = cast<RankedTensorType>(this->getTypeConverter()->convertType(op.getType()));
    Type element = type.getElementType();
    bool isFloat = isa<FloatType>(element), isUnsigned = isUnsignedType(op.getInput().getType());
    ArrayRef<int64_t> axes = op.getAxes();
    if (!isFloat && (kind == Kind::L2 || kind == Kind::LogSum || kind == Kind::LogSumExp)) {
      // Square roots and logarithms of integers: computed in f64, truncated back.
      Value wide = buildElementwise(b, loc, tensorType(x).clone(b.getF64Type()), {x},
                                    [&](OpBuilder &nb, Location nl, ValueRange v) {
                                      return castScalar(nb, nl, v[0], nb.getF64Type(), isUnsigned, false);
                                    });
      Value r;
      Value zero = scalarConstant(b, loc, b.getF64Type(), 0);
      auto sum = [&](Value v, auto f) {
        return reduceKeepDims(b, loc, v, axes, zero, [&](OpBuilder &nb, Location nl, Value acc, Value e) {
          return arith::AddFOp::create(nb, nl, acc, f(nb, nl, e));
        });
      };
      if (kind == Kind::L2)
        r = map1(b, loc, sum(wide, [](OpBuilder &nb, Location nl, Value e) { return arith::MulFOp::create(nb, nl, e, e); }),
                 [](OpBuilder &nb, Location nl, Value s) { return math::SqrtOp::create(nb, nl, s); });
      else if (kind == Kind::LogSum)
        r = map1(b, loc, sum(wide, [](OpBuilder &, Location, Value e) { return e; }),
                 [](OpBuilder &nb, Location nl, Value s) { return math::LogOp::create(nb, nl, s); });
      else
        r = map1(b, loc, sum(wide, [](OpBuilder &nb, Location nl, Value e) { return math::ExpOp::create(nb, nl, e); }),
                 [](OpBuilder &nb, Location nl, Value s) { return math::LogOp::create(nb, nl, s); });
      Value narrow = buildElementwise(b, loc, tensorType(r).clone(element), {r},
                                      [&](OpBuilder &nb, Location nl, ValueRange a) {
                                        return castScalar(nb, nl, a[0], element, false, isUnsigned);
                                      });
      b.replaceOp(op, reshapeTo(b, loc, narrow, resultType));
      return success();
    }
    auto sumOf = [&](Value v) {
      return reduceKeepDims(b, loc, v, axes, scalarConstant(b, loc, element, 0),
                            [](OpBuilder &nb, Location nl, Value acc, Value e) { return add(nb, nl, acc, e); });
    };
    Value r;
    switch (kind) {
    case Kind::Sum: r = sumOf(x); break;
    case Kind::Mean: {
      // An integer mean over no elements is 0 (0 / 1), not a division by
      // zero; a float one is NaN, as NumPy's.
      Value n = countOver(b, loc, x, axes, element, /*atLeastOne=*/!isFloat);
      r = map1(b, loc, sumOf(x), [&](OpBuilder &nb, Location nl, Value s) -> Value {
        if (isFloat) return arith::DivFOp::create(nb, nl, s, n);
        if (isUnsigned) return arith::DivUIOp::create(nb, nl, s, n);
        return arith::DivSIOp::create(nb, nl, s, n);
      });
      break;
    }
    case Kind::Max:
    case Kind::Min: {
      bool isMax = kind == Kind::Max;
      Value init = isMax ? lowestValue(b, loc, element, isUnsigned) : highestValue(b, loc, element, isUnsigned);
      r = reduceKeepDims(b, loc, x, axes, init, [&](OpBuilder &nb, Location nl, Value acc, Value e) -> Value {
        if (isFloat)
          return isMax ? poolMax(nb, nl, acc, e) : poolMin(nb, nl, acc, e);
        if (isUnsigned)
          return isMax ? Value(arith::MaxUIOp::create(nb, nl, acc, e)) : Value(arith::MinUIOp::create(nb, nl, acc, e));
        return isMax ? Value(arith::MaxSIOp::create(nb, nl, acc, e)) : Value(arith::MinSIOp::create(nb, nl, acc, e));
      });
      break;
    }
    case Kind::Prod:
      r = reduceKeepDims(b, loc, x, axes, scalarConstant(b, loc, element, 1),
                         [](OpBuilder &nb, Location nl, Value acc, Value e) { return mul(nb, nl, acc, e); });
      break;
    case Kind::L1:
      r = reduceKeepDims(b, loc, x, axes, scalarConstant(b, loc, element, 0),
                         [&](OpBuilder &nb, Location nl, Value acc, Value e) -> Value {
                           Value a = isFloat ? Value(math::AbsFOp::create(nb, nl, e))
                                     : isUnsigned ? e : Value(math::AbsIOp::create(nb, nl, e));
                           return add(nb, nl, acc, a);
                         });
      break;
    case Kind::L2:
    case Kind::SumSquare: {
      r = reduceKeepDims(b, loc, x, axes, scalarConstant(b, loc, element, 0),
                         [](OpBuilder &nb, Location nl, Value acc, Value e) {
                           return add(nb, nl, acc, mul(nb, nl, e, e));
                         });
      if (kind == Kind::L2)
        r = map1(b, loc, r, [](OpBuilder &nb, Location nl, Value s) {
          return inF32(nb, nl, s, [&](Value v) { return math::SqrtOp::create(nb, nl, v); });
        });
      break;
    }
    case Kind::LogSum:
      r = map1(b, loc, sumOf(x), [](OpBuilder &nb, Location nl, Value s) {
        return inF32(nb, nl, s, [&](Value v) { return math::LogOp::create(nb, nl, v); });
      });
      break;
    case Kind::LogSumExp: {
      Value m = reduceKeepDims(b, loc, x, axes, lowestValue(b, loc, element, false),
                               [](OpBuilder &nb, Location nl, Value acc, Value e) {
                                 return poolMax(nb, nl, acc, e);
                               });
      // An all -inf slice would give (-inf) - (-inf) = NaN: shift by 0 there.
      Value shift = map1(b, loc, m, [](OpBuilder &nb, Location nl, Value v) -> Value {
        Value finite = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::ONE, math::AbsFOp::create(nb, nl, v),
                                             scalarConstant(nb, nl, v.getType(), INFINITY));
        return arith::SelectOp::create(nb, nl, finite, v, scalarConstant(nb, nl, v.getType(), 0));
      });
      Value e = map2(b, loc, x, shift, [](OpBuilder &nb, Location nl, Value v, Value s) {
        return inF32(nb, nl, arith::SubFOp::create(nb, nl, v, s), [&](Value t) { return math::ExpOp::create(nb, nl, t); });
      });
      Value s = sumOf(e);
      r = buildElementwise(b, loc, tensorType(s), {s, shift}, [](OpBuilder &nb, Location nl, ValueRange a) {
        Value log = inF32(nb, nl, a[0], [&](Value v) { return math::LogOp::create(nb, nl, v); });
        return arith::AddFOp::create(nb, nl, log, a[1]);
      });
      break;
    }
    }
    b.replaceOp(op, reshapeTo(b, loc, r, resultType));
    return success();
  }
};

template <typename Op, bool isMax> struct ArgPattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Value x = adaptor.getInput();
    auto type = tensorType(x);
    auto resultType = cast<RankedTensorType>(this->getTypeConverter()->convertType(op.getType()));
    Type element = type.getElementType();
    bool isFloat = isa<FloatType>(element), isUnsigned = isUnsignedType(op.getInput().getType());
    bool last = op.getSelectLastIndex();
    int64_t axis = op.getAxis(), rank = type.getRank();
    SmallVector<int64_t> shape;
    SmallVector<AffineExpr> outExprs;
    SmallVector<IteratorType> iterators;
    for (int64_t d = 0; d < rank; ++d) {
      iterators.push_back(d == axis ? IteratorType::reduction : IteratorType::parallel);
      if (d != axis) {
        shape.push_back(type.getDimSize(d));
        outExprs.push_back(getAffineDimExpr(d, ctx));
      }
    }
    auto valueType = RankedTensorType::get(shape, element);
    auto indexType = RankedTensorType::get(shape, b.getI64Type());
    Value init = isMax ? lowestValue(b, loc, element, isUnsigned) : highestValue(b, loc, element, isUnsigned);
    AffineMap outMap = AffineMap::get(rank, 0, outExprs, ctx);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{valueType, indexType}, ValueRange{x},
        ValueRange{filledTensor(b, loc, valueType, init),
                   filledTensor(b, loc, indexType, scalarConstant(b, loc, b.getI64Type(), 0))},
        SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx), outMap, outMap},
        iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value v = args[0], best = args[1], bestIndex = args[2];
          Value index = arith::IndexCastOp::create(nb, nl, nb.getI64Type(),
                                                   linalg::IndexOp::create(nb, nl, axis));
          Value better;
          if (isFloat) {
            auto p = isMax ? (last ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT)
                           : (last ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OLT);
            better = arith::CmpFOp::create(nb, nl, p, v, best);
            // A NaN is the extreme, as in numpy and PyTorch (and as nn.reduce_max
            // propagates it): the first NaN wins, or the last with
            // select_last_index. Ordered comparisons never replace a NaN best.
            Value isNan = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNO, v, v);
            if (!last) {
              Value bestIsNan =
                  arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNO, best, best);
              Value notBestNan = arith::XOrIOp::create(
                  nb, nl, bestIsNan, arith::ConstantIntOp::create(nb, nl, 1, 1));
              isNan = arith::AndIOp::create(nb, nl, isNan, notBestNan);
            }
            better = arith::OrIOp::create(nb, nl, better, isNan);
          } else {
            using P = arith::CmpIPredicate;
            P p = isMax ? (last ? (isUnsigned ? P::uge : P::sge) : (isUnsigned ? P::ugt : P::sgt))
                        : (last ? (isUnsigned ? P::ule : P::sle) : (isUnsigned ? P::ult : P::slt));
            better = arith::CmpIOp::create(nb, nl, p, v, best);
          }
          // The first element always wins, so an all-lowest slice reports index 0.
          Value first = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, index,
                                              scalarConstant(nb, nl, nb.getI64Type(), 0));
          better = arith::OrIOp::create(nb, nl, better, first);
          linalg::YieldOp::create(nb, nl, ValueRange{arith::SelectOp::create(nb, nl, better, v, best),
                                                     arith::SelectOp::create(nb, nl, better, index, bestIndex)});
        });
    b.replaceOp(op, reshapeTo(b, loc, generic.getResult(1), resultType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Softmax and normalizations
//===----------------------------------------------------------------------===//

template <typename Op, bool isLog> struct SoftmaxPattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    Type element = tensorType(x).getElementType();
    int64_t axis = op.getAxis();
    Value m = reduceKeepDims(b, loc, x, {axis}, lowestValue(b, loc, element, false),
                             [](OpBuilder &nb, Location nl, Value acc, Value e) {
                               return poolMax(nb, nl, acc, e);
                             });
    Value shifted = map2(b, loc, x, m, [](OpBuilder &nb, Location nl, Value v, Value mx) {
      return arith::SubFOp::create(nb, nl, v, mx);
    });
    Value e = map1(b, loc, shifted, [](OpBuilder &nb, Location nl, Value v) {
      return inF32(nb, nl, v, [&](Value t) { return math::ExpOp::create(nb, nl, t); });
    });
    Value s = reduceKeepDims(b, loc, e, {axis}, scalarConstant(b, loc, element, 0),
                             [](OpBuilder &nb, Location nl, Value acc, Value v) {
                               return arith::AddFOp::create(nb, nl, acc, v);
                             });
    Value y;
    if (isLog)
      y = map2(b, loc, shifted, s, [](OpBuilder &nb, Location nl, Value v, Value sum) {
        Value log = inF32(nb, nl, sum, [&](Value t) { return math::LogOp::create(nb, nl, t); });
        return arith::SubFOp::create(nb, nl, v, log);
      });
    else
      y = map2(b, loc, e, s, [](OpBuilder &nb, Location nl, Value v, Value sum) {
        return arith::DivFOp::create(nb, nl, v, sum);
      });
    b.replaceOp(op, y);
    return success();
  }
};

/// (x - mean) / sqrt(var + eps) over `axes`, with mean and var kept as size-1 dims.
Value normalize(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes, double epsilon) {
  auto type = tensorType(x);
  Type element = type.getElementType();
  Value n = countOver(b, loc, x, axes, element);
  auto sum = [&](Value v) {
    return reduceKeepDims(b, loc, v, axes, scalarConstant(b, loc, element, 0),
                          [](OpBuilder &nb, Location nl, Value acc, Value e) {
                            return arith::AddFOp::create(nb, nl, acc, e);
                          });
  };
  Value mean = map1(b, loc, sum(x), [&](OpBuilder &nb, Location nl, Value s) {
    return arith::DivFOp::create(nb, nl, s, n);
  });
  Value centered = map2(b, loc, x, mean, [](OpBuilder &nb, Location nl, Value v, Value m) {
    return arith::SubFOp::create(nb, nl, v, m);
  });
  Value squares = map1(b, loc, centered, [](OpBuilder &nb, Location nl, Value v) {
    return arith::MulFOp::create(nb, nl, v, v);
  });
  Value invStd = map1(b, loc, sum(squares), [&](OpBuilder &nb, Location nl, Value s) {
    Value var = arith::DivFOp::create(nb, nl, s, n);
    Value shifted = arith::AddFOp::create(nb, nl, var, scalarConstant(nb, nl, element, epsilon));
    return inF32(nb, nl, shifted, [&](Value t) { return math::RsqrtOp::create(nb, nl, t); });
  });
  return map2(b, loc, centered, invStd, [](OpBuilder &nb, Location nl, Value v, Value s) {
    return arith::MulFOp::create(nb, nl, v, s);
  });
}

/// A per-channel parameter [C] viewed as [C, 1, ..., 1] for a rank-`rank` input.
Value channelView(OpBuilder &b, Location loc, Value param, int64_t rank) {
  auto type = tensorType(param);
  SmallVector<int64_t> shape{type.getDimSize(0)};
  shape.append(rank - 2, 1);
  return reshapeTo(b, loc, param, RankedTensorType::get(shape, type.getElementType()));
}

struct LayerNormPattern : OpConversionPattern<nn::LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::LayerNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(op.getAxis(), tensorType(x).getRank()));
    Value y = normalize(b, loc, x, axes, op.getEpsilon().convertToDouble());
    SmallVector<Value> operands{y, adaptor.getScale()};
    if (adaptor.getBias())
      operands.push_back(adaptor.getBias());
    y = buildElementwise(b, loc, tensorType(y), operands, [](OpBuilder &nb, Location nl, ValueRange a) {
      Value r = arith::MulFOp::create(nb, nl, a[0], a[1]);
      return a.size() > 2 ? Value(arith::AddFOp::create(nb, nl, r, a[2])) : r;
    });
    b.replaceOp(op, y);
    return success();
  }
};

struct InstanceNormPattern : OpConversionPattern<nn::InstanceNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::InstanceNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    int64_t rank = tensorType(x).getRank();
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, rank));
    Value y = normalize(b, loc, x, axes, op.getEpsilon().convertToDouble());
    y = buildElementwise(b, loc, tensorType(y),
                         {y, channelView(b, loc, adaptor.getScale(), rank),
                          channelView(b, loc, adaptor.getBias(), rank)},
                         [](OpBuilder &nb, Location nl, ValueRange a) {
                           return arith::AddFOp::create(nb, nl, arith::MulFOp::create(nb, nl, a[0], a[1]), a[2]);
                         });
    b.replaceOp(op, y);
    return success();
  }
};

struct BatchNormPattern : OpConversionPattern<nn::BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::BatchNormOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    int64_t rank = tensorType(x).getRank();
    double epsilon = op.getEpsilon().convertToDouble();
    // Per channel: y = x * a + c with a = scale / sqrt(var + eps), c = bias - mean * a.
    auto paramType = tensorType(adaptor.getScale());
    Value a = buildElementwise(b, loc, paramType, {adaptor.getScale(), adaptor.getVariance()},
                               [&](OpBuilder &nb, Location nl, ValueRange v) {
                                 Value shifted = arith::AddFOp::create(nb, nl, v[1], scalarConstant(nb, nl, v[1].getType(), epsilon));
                                 Value inv = inF32(nb, nl, shifted, [&](Value t) { return math::RsqrtOp::create(nb, nl, t); });
                                 return arith::MulFOp::create(nb, nl, v[0], inv);
                               });
    Value c = buildElementwise(b, loc, paramType, {adaptor.getBias(), adaptor.getMean(), a},
                               [](OpBuilder &nb, Location nl, ValueRange v) {
                                 return arith::SubFOp::create(nb, nl, v[0], arith::MulFOp::create(nb, nl, v[1], v[2]));
                               });
    Value y = buildElementwise(b, loc, tensorType(x), {x, channelView(b, loc, a, rank), channelView(b, loc, c, rank)},
                               [](OpBuilder &nb, Location nl, ValueRange v) {
                                 return arith::AddFOp::create(nb, nl, arith::MulFOp::create(nb, nl, v[0], v[1]), v[2]);
                               });
    b.replaceOp(op, y);
    return success();
  }
};

/// Running sum along one axis: a loop over the axis carrying the partial sum.
struct CumSumPattern : OpConversionPattern<nn::CumSumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::CumSumOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = tensorType(x);
    int64_t axis = op.getAxis(), rank = type.getRank(), n = type.getDimSize(axis);
    bool exclusive = op.getExclusive(), reverse = op.getReverse();
    SmallVector<int64_t> sliceShape(type.getShape());
    sliceShape[axis] = 1;
    auto sliceType = RankedTensorType::get(sliceShape, type.getElementType());
    Value zero = scalarConstant(b, loc, type.getElementType(), 0);
    Value lb = arith::ConstantIndexOp::create(b, loc, 0), ub = arith::ConstantIndexOp::create(b, loc, n),
          step = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ForOp::create(
        b, loc, lb, ub, step, ValueRange{filledTensor(b, loc, type, zero), filledTensor(b, loc, sliceType, zero)},
        [&](OpBuilder &nb, Location nl, Value i, ValueRange iter) {
          Value pos = reverse ? Value(arith::SubIOp::create(
                                    nb, nl, arith::ConstantIndexOp::create(nb, nl, n - 1), i))
                              : i;
          SmallVector<OpFoldResult> offsets(rank, nb.getIndexAttr(0)), sizes, strides(rank, nb.getIndexAttr(1));
          for (int64_t s : sliceShape)
            sizes.push_back(nb.getIndexAttr(s));
          offsets[axis] = pos;
          Value slice = tensor::ExtractSliceOp::create(nb, nl, sliceType, x, offsets, sizes, strides);
          Value acc = iter[1], out = iter[0];
          // An exclusive sum stores the accumulator before adding to it.
          if (exclusive)
            out = tensor::InsertSliceOp::create(nb, nl, acc, out, offsets, sizes, strides);
          // The sum is written into the loop-carried accumulator so the loop
          // bufferizes to one buffer updated in place.
          Value next = buildElementwise(nb, nl, sliceType, {acc, slice}, [](OpBuilder &bb, Location bl, ValueRange a) {
            return add(bb, bl, a[0], a[1]);
          }, acc);
          Value written = exclusive ? out : Value(tensor::InsertSliceOp::create(nb, nl, next, out, offsets, sizes, strides));
          scf::YieldOp::create(nb, nl, ValueRange{written, next});
        });
    b.replaceOp(op, loop.getResult(0));
    return success();
  }
};
} // namespace

void lowering::populateReductionPatterns(NNTypeConverter &converter, RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ReducePattern<nn::ReduceSumOp, Kind::Sum>, ReducePattern<nn::ReduceMeanOp, Kind::Mean>,
               ReducePattern<nn::ReduceMaxOp, Kind::Max>, ReducePattern<nn::ReduceMinOp, Kind::Min>,
               ReducePattern<nn::ReduceProdOp, Kind::Prod>, ReducePattern<nn::ReduceL1Op, Kind::L1>,
               ReducePattern<nn::ReduceL2Op, Kind::L2>,
               ReducePattern<nn::ReduceSumSquareOp, Kind::SumSquare>,
               ReducePattern<nn::ReduceLogSumOp, Kind::LogSum>,
               ReducePattern<nn::ReduceLogSumExpOp, Kind::LogSumExp>,
               ArgPattern<nn::ArgMaxOp, true>, ArgPattern<nn::ArgMinOp, false>,
               SoftmaxPattern<nn::SoftmaxOp, false>, SoftmaxPattern<nn::LogSoftmaxOp, true>,
               LayerNormPattern, InstanceNormPattern, BatchNormPattern, CumSumPattern>(converter, ctx);
}
