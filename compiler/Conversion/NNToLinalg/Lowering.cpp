//===- Lowering.cpp - shared helpers of the nn -> linalg conversion -------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace nnc;

lowering::NNTypeConverter::NNTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](RankedTensorType type) -> Type {
    return type.clone(signlessElement(type));
  });
}

RankedTensorType lowering::tensorType(Value v) { return cast<RankedTensorType>(v.getType()); }

bool lowering::isUnsignedType(Type type) {
  return getElementTypeOrSelf(type).isUnsignedInteger();
}

Type lowering::signlessElement(Type type) {
  Type element = getElementTypeOrSelf(type);
  // A string is the address of its text (Strings.cpp).
  if (isa<nn::StringType>(element))
    return IntegerType::get(type.getContext(), 64);
  if (auto i = dyn_cast<IntegerType>(element); i && !i.isSignless())
    return IntegerType::get(type.getContext(), i.getWidth());
  return element;
}

Value lowering::emptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                            ValueRange dynamicSizes) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(), dynamicSizes);
}

Value lowering::filledTensor(OpBuilder &b, Location loc, RankedTensorType type, Value value,
                             ValueRange dynamicSizes) {
  return linalg::FillOp::create(b, loc, value, emptyTensor(b, loc, type, dynamicSizes))
      .getResult(0);
}

Value lowering::dimOf(OpBuilder &b, Location loc, Value tensor, int64_t d) {
  // Seen through a reshape that states its dims, so that equal dims are seen
  // to be the same value and their check folds away; and through a collapse,
  // as the product of its group's dims, so that the shape function computes
  // it from dims rather than keep the ops producing the collapsed tensor.
  if (auto expand = tensor.getDefiningOp<tensor::ExpandShapeOp>())
    return getValueOrCreateConstantIndexOp(b, loc, expand.getMixedOutputShape()[d]);
  if (auto collapse = tensor.getDefiningOp<tensor::CollapseShapeOp>()) {
    auto type = cast<RankedTensorType>(tensor.getType());
    if (!type.isDynamicDim(d))
      return arith::ConstantIndexOp::create(b, loc, type.getDimSize(d));
    SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
    Value product = arith::ConstantIndexOp::create(b, loc, 1);
    for (int64_t j : groups[d])
      product = arith::MulIOp::create(b, loc, product, dimOf(b, loc, collapse.getSrc(), j));
    return product;
  }
  return tensor::DimOp::create(b, loc, tensor, d);
}

Value lowering::boundByOperand(OpBuilder &b, Location loc, Operation *op, Value size, Value bound) {
  if (!op->hasAttr(kCountSized))
    return size;
  return nn::BoundedExtentOp::create(b, loc, size, bound);
}

void lowering::check(OpBuilder &b, Location loc, Value holds, const Twine &what) {
  std::string node = "a node";
  if (auto name = dyn_cast<NameLoc>(loc))
    node = "node '" + name.getName().str() + "'";
  cf::AssertOp::create(b, loc, holds, (node + ": " + what).str());
}

void lowering::checkSameSize(OpBuilder &b, Location loc, Value x, Value y, const Twine &what) {
  check(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y), what + " differ");
}

Value lowering::buildGather(OpBuilder &b, Location loc, RankedTensorType resultType,
                            function_ref<Value(OpBuilder &, Location, ArrayRef<Value>)> body,
                            ValueRange dynamicSizes, Value init) {
  int64_t rank = resultType.getRank();
  MLIRContext *ctx = b.getContext();
  if (!init)
    init = emptyTensor(b, loc, resultType, dynamicSizes);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, ValueRange{}, ValueRange{init},
      SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, ctx)},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange) {
        SmallVector<Value> index;
        for (int64_t d = 0; d < rank; ++d)
          index.push_back(linalg::IndexOp::create(nb, nl, d));
        linalg::YieldOp::create(nb, nl, body(nb, nl, index));
      });
  return generic.getResult(0);
}

Value lowering::scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(f, value));
  if (type.isIndex())
    return arith::ConstantIndexOp::create(b, loc, (int64_t)value);
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, APInt(type.getIntOrFloatBitWidth(), (uint64_t)(int64_t)value,
                                           /*isSigned=*/true, /*implicitTrunc=*/true)));
}

Value lowering::poolMax(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MaximumFOp::create(b, loc, x, y, arith::FastMathFlags::nsz);
}

Value lowering::poolMin(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MinimumFOp::create(b, loc, x, y, arith::FastMathFlags::nsz);
}

Value lowering::lowestValue(OpBuilder &b, Location loc, Type type, bool isUnsigned) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, b.getFloatAttr(f, APFloat::getInf(f.getFloatSemantics(), /*Negative=*/true)));
  unsigned width = type.getIntOrFloatBitWidth();
  APInt v = isUnsigned || width == 1 ? APInt::getMinValue(width) : APInt::getSignedMinValue(width);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
}

Value lowering::highestValue(OpBuilder &b, Location loc, Type type, bool isUnsigned) {
  if (auto f = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc, b.getFloatAttr(f, APFloat::getInf(f.getFloatSemantics(), /*Negative=*/false)));
  unsigned width = type.getIntOrFloatBitWidth();
  APInt v = isUnsigned || width == 1 ? APInt::getMaxValue(width) : APInt::getSignedMaxValue(width);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
}

AffineMap lowering::broadcastMap(MLIRContext *context, ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> outShape) {
  SmallVector<AffineExpr> exprs;
  size_t offset = outShape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1 && outShape[i + offset] != 1)
      exprs.push_back(getAffineConstantExpr(0, context));
    else
      exprs.push_back(getAffineDimExpr(i + offset, context));
  }
  return AffineMap::get(outShape.size(), 0, exprs, context);
}

Value lowering::buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                                 ValueRange inputs,
                                 function_ref<Value(OpBuilder &, Location, ValueRange)> body,
                                 Value init) {
  MLIRContext *context = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value in : inputs)
    maps.push_back(broadcastMap(context, tensorType(in).getShape(), resultType.getShape()));
  maps.push_back(AffineMap::getMultiDimIdentityMap(resultType.getRank(), context));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(), utils::IteratorType::parallel);
  // A dynamic input dim where the result's is static (broadcast against a
  // static N > 1) must be N: ONNX would broadcast a 1, which the indexing map
  // fixed at compile time cannot.
  int64_t rank = resultType.getRank();
  for (Value in : inputs) {
    auto type = tensorType(in);
    for (int64_t at = 0; at < type.getRank(); ++at) {
      int64_t d = at + rank - type.getRank();
      if (type.isDynamicDim(at) && !resultType.isDynamicDim(d))
        checkSameSize(b, loc, dimOf(b, loc, in, at),
                      arith::ConstantIndexOp::create(b, loc, resultType.getDimSize(d)),
                      "a dynamic dim and the static size " + Twine(resultType.getDimSize(d)) +
                          " it broadcasts against");
    }
  }
  if (!init) {
    // A dynamic result dim is that of the inputs dynamic there, which must
    // agree: a dynamic dim broadcasts only against static ones.
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (!resultType.isDynamicDim(d))
        continue;
      Value size;
      for (auto [i, in] : llvm::enumerate(inputs)) {
        auto type = tensorType(in);
        int64_t at = d - (rank - type.getRank());
        if (at < 0 || !type.isDynamicDim(at))
          continue;
        Value dim = dimOf(b, loc, in, at);
        if (size)
          checkSameSize(b, loc, size, dim, "dynamic dims broadcast against each other");
        else
          size = dim;
      }
      assert(size && "a dynamic result dim comes from a dynamic input dim");
      sizes.push_back(size);
    }
    init = emptyTensor(b, loc, resultType, sizes);
  }
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value result = body(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, result);
      });
  return generic.getResult(0);
}

namespace {
/// Whether `map` reads some dim backwards (a flip: -d3 + 2).
bool readsBackwards(AffineMap map) {
  bool negative = false;
  for (AffineExpr expr : map.getResults())
    expr.walk([&](AffineExpr e) {
      auto mul = dyn_cast<AffineBinaryOpExpr>(e);
      if (mul && mul.getKind() == AffineExprKind::Mul)
        if (auto c = dyn_cast<AffineConstantExpr>(mul.getRHS()); c && c.getValue() < 0)
          negative = true;
    });
  return negative;
}

/// `expr` of the index values `dims`, in arith ops (sums, products, floor
/// divisions and remainders by constants: what mapped copies use).
Value expandIndex(OpBuilder &b, Location loc, AffineExpr expr, ArrayRef<Value> dims) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return dims[dim.getPosition()];
  if (auto c = dyn_cast<AffineConstantExpr>(expr))
    return arith::ConstantIndexOp::create(b, loc, c.getValue());
  auto bin = cast<AffineBinaryOpExpr>(expr);
  Value l = expandIndex(b, loc, bin.getLHS(), dims), r = expandIndex(b, loc, bin.getRHS(), dims);
  switch (bin.getKind()) {
  case AffineExprKind::Add:
    return arith::AddIOp::create(b, loc, l, r);
  case AffineExprKind::Mul:
    return arith::MulIOp::create(b, loc, l, r);
  case AffineExprKind::FloorDiv:
    return arith::FloorDivSIOp::create(b, loc, l, r);
  default: // Mod by a positive constant of a non-negative index
    return arith::RemSIOp::create(b, loc, l, r);
  }
}
} // namespace

Value lowering::buildMappedCopy(OpBuilder &b, Location loc, Value input, RankedTensorType type,
                               AffineMap map, ValueRange dynamicSizes) {
  int64_t rank = type.getRank();
  if (readsBackwards(map)) {
    // A flip reads its input at computed indices (a gather), so the CPU
    // schedule splits it into thread chunks like any elementwise op; tiling
    // cannot bound a backwards read's slice.
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{type}, ValueRange{}, ValueRange{emptyTensor(b, loc, type, dynamicSizes)},
        SmallVector<AffineMap>{AffineMap::getMultiDimIdentityMap(rank, b.getContext())},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location nl, ValueRange) {
          SmallVector<Value> index, at;
          for (int64_t d = 0; d < rank; ++d)
            index.push_back(linalg::IndexOp::create(nb, nl, d));
          for (AffineExpr expr : map.getResults())
            at.push_back(expandIndex(nb, nl, expr, index));
          linalg::YieldOp::create(nb, nl, tensor::ExtractOp::create(nb, nl, input, at).getResult());
        });
    return generic.getResult(0);
  }
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{input}, ValueRange{emptyTensor(b, loc, type, dynamicSizes)},
      SmallVector<AffineMap>{map, AffineMap::getMultiDimIdentityMap(rank, b.getContext())},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [](OpBuilder &nb, Location nl, ValueRange args) { linalg::YieldOp::create(nb, nl, args[0]); });
  return generic.getResult(0);
}

SmallVector<OpFoldResult> lowering::indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  return getAsIndexOpFoldResult(b.getContext(), values);
}

/// Reshapes between types that differ only in static size-1 dims: the other
/// dims, dynamic ones included, keep their order.
static Value reshapeUnitDims(OpBuilder &b, Location loc, Value value, RankedTensorType type) {
  auto source = lowering::tensorType(value);
  auto kept = [](RankedTensorType t) {
    SmallVector<int64_t> dims;
    for (int64_t d : t.getShape())
      if (d != 1)
        dims.push_back(d);
    return dims;
  };
  SmallVector<int64_t> core = kept(source);
  if (core != kept(type) || core.empty())
    llvm::report_fatal_error("reshape of dynamic dims beyond adding or dropping size-1 dims");
  // Groups: each kept dim with the unit dims before it; trailing unit dims
  // join the last group.
  auto groups = [](RankedTensorType t) {
    SmallVector<ReassociationIndices> result;
    ReassociationIndices current;
    for (int64_t i = 0; i < t.getRank(); ++i) {
      current.push_back(i);
      if (t.getDimSize(i) != 1) {
        result.push_back(current);
        current.clear();
      }
    }
    result.back().append(current.begin(), current.end());
    return result;
  };
  auto coreType = RankedTensorType::get(core, source.getElementType());
  Value collapsed = value;
  if (source.getRank() != (int64_t)core.size())
    collapsed = tensor::CollapseShapeOp::create(b, loc, coreType, value, groups(source));
  if (type.getRank() == (int64_t)core.size())
    return collapsed;
  SmallVector<OpFoldResult> sizes;
  int64_t k = 0;
  for (int64_t d : type.getShape()) {
    if (d != 1)
      sizes.push_back(tensor::getMixedSize(b, loc, collapsed, k++));
    else
      sizes.push_back(b.getIndexAttr(1));
  }
  return tensor::ExpandShapeOp::create(b, loc, type, collapsed, groups(type), sizes);
}

Value lowering::reshapeTo(OpBuilder &b, Location loc, Value value, RankedTensorType type) {
  auto source = tensorType(value);
  if (source == type)
    return value;
  // One element: all dims of the other side are 1, which an empty
  // reassociation adds or drops (a view, where tensor.reshape would need a
  // shape operand and a copy on some targets).
  if (source.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, type, value, ArrayRef<ReassociationIndices>{});
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, value, ArrayRef<ReassociationIndices>{});
  if (!source.hasStaticShape() || !type.hasStaticShape())
    return reshapeUnitDims(b, loc, value, type);
  // Collapse to 1-D, then expand: always valid for static shapes.
  Value flat = value;
  if (source.getRank() > 1) {
    SmallVector<ReassociationIndices> all{llvm::to_vector(llvm::seq<int64_t>(0, source.getRank()))};
    flat = tensor::CollapseShapeOp::create(b, loc, value, all);
  }
  if (type.getRank() == 1)
    return flat;
  SmallVector<ReassociationIndices> all{llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()))};
  return tensor::ExpandShapeOp::create(b, loc, type, flat, all);
}

namespace {
/// `value`, an f64 or an integer, as an f32 that rounds to bfloat16 as
/// `value` itself does, so that a Cast to bfloat16 rounds once on every
/// target (sm_80's back end rounds f64 to f32 and then again, and x86-64's
/// calls functions its libgcc lacks): integers of up to 24 bits exactly;
/// wider ones through f64, exactly, and past 32 bits their magnitude's top
/// 32 significant bits with any lower one set kept as the last (a sticky
/// bit far below bfloat16's 8); f64 rounded to f32 to odd (toward zero,
/// the last bit set when inexact), which keeps more than two bits past
/// bfloat16's over the same exponents.
Value roundableInF32(OpBuilder &b, Location loc, Value value, bool isUnsigned) {
  Type f32 = b.getF32Type(), f64 = b.getF64Type(), i32 = b.getI32Type();
  if (auto integer = dyn_cast<IntegerType>(value.getType())) {
    unsigned width = integer.getWidth();
    auto toFloat = [&](Value v, Type type, bool unsignedValue) -> Value {
      return unsignedValue ? Value(arith::UIToFPOp::create(b, loc, type, v))
                           : Value(arith::SIToFPOp::create(b, loc, type, v));
    };
    if (width <= 24)
      return toFloat(value, f32, isUnsigned);
    if (width <= 32) {
      value = toFloat(value, f64, isUnsigned);
    } else {
      auto c = [&](int64_t v) { return lowering::scalarConstant(b, loc, integer, v); };
      Value negative = isUnsigned ? Value() : arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, value, c(0));
      // The most negative value's magnitude is itself, read unsigned.
      Value magnitude = negative ? arith::SelectOp::create(b, loc, negative, arith::SubIOp::create(b, loc, c(0), value), value) : value;
      Value leadingZeros = math::CountLeadingZerosOp::create(b, loc, magnitude);
      Value shift = arith::MaxSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, c(width - 32), leadingZeros), c(0));
      Value unit = arith::ShLIOp::create(b, loc, c(1), shift);
      Value lost = arith::AndIOp::create(b, loc, magnitude, arith::SubIOp::create(b, loc, unit, c(1)));
      Value sticky = arith::ExtUIOp::create(
          b, loc, integer, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, lost, c(0)));
      Value kept = arith::OrIOp::create(b, loc, arith::ShRUIOp::create(b, loc, magnitude, shift), sticky);
      // Both exact in f64: at most 32 bits, and a power of two.
      value = arith::MulFOp::create(b, loc, toFloat(kept, f64, true), toFloat(unit, f64, true));
      if (negative)
        value = arith::SelectOp::create(b, loc, negative, arith::NegFOp::create(b, loc, value), value);
    }
  }
  Value t = arith::TruncFOp::create(b, loc, f32, value);
  Value back = arith::ExtFOp::create(b, loc, f64, t);
  Value away = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, math::AbsFOp::create(b, loc, back),
                                     math::AbsFOp::create(b, loc, value));
  Value bits = arith::BitcastOp::create(b, loc, i32, t);
  Value one = lowering::scalarConstant(b, loc, i32, 1);
  Value truncated = arith::SelectOp::create(b, loc, away, arith::SubIOp::create(b, loc, bits, one), bits);
  Value odd = arith::BitcastOp::create(b, loc, f32, arith::OrIOp::create(b, loc, truncated, one));
  // Unordered: a NaN, like an exact value, stays as it is.
  Value exact = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UEQ, back, value);
  return arith::SelectOp::create(b, loc, exact, t, odd);
}
} // namespace

Value lowering::castScalar(OpBuilder &b, Location loc, Value value, Type to, bool fromUnsigned,
                           bool toUnsigned) {
  Type from = value.getType();
  if (from == to)
    return value;
  if (to.isBF16() && (from.isF64() || isa<IntegerType>(from)))
    return arith::TruncFOp::create(
        b, loc, to, roundableInF32(b, loc, value, fromUnsigned || from.isInteger(1)));
  auto fromFloat = dyn_cast<FloatType>(from), toFloat = dyn_cast<FloatType>(to);
  if (to.isInteger(1)) {
    if (fromFloat)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   scalarConstant(b, loc, from, 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value,
                                 scalarConstant(b, loc, from, 0));
  }
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, to, value);
    if (fromFloat.getWidth() > toFloat.getWidth())
      return arith::TruncFOp::create(b, loc, to, value);
    // f16 <-> bf16: through f32.
    Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
    return arith::TruncFOp::create(b, loc, to, wide);
  }
  if (fromFloat)
    return toUnsigned ? Value(arith::FPToUIOp::create(b, loc, to, value))
                      : Value(arith::FPToSIOp::create(b, loc, to, value));
  bool fromBool = from.isInteger(1);
  if (toFloat)
    return fromUnsigned || fromBool ? Value(arith::UIToFPOp::create(b, loc, to, value))
                                    : Value(arith::SIToFPOp::create(b, loc, to, value));
  unsigned fromWidth = from.getIntOrFloatBitWidth(), toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth > toWidth)
    return arith::TruncIOp::create(b, loc, to, value);
  if (fromWidth == toWidth)
    return value;
  return fromUnsigned || fromBool ? Value(arith::ExtUIOp::create(b, loc, to, value))
                                  : Value(arith::ExtSIOp::create(b, loc, to, value));
}

Value lowering::inF32(OpBuilder &b, Location loc, Value value, function_ref<Value(Value)> fn) {
  auto type = cast<FloatType>(value.getType());
  if (type.getWidth() >= 32)
    return fn(value);
  Value wide = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
  return arith::TruncFOp::create(b, loc, type, fn(wide));
}

Value lowering::extractScalar(OpBuilder &b, Location loc, Value tensor) {
  auto type = tensorType(tensor);
  SmallVector<Value> zeros(type.getRank(), arith::ConstantIndexOp::create(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, tensor, zeros);
}
