//===- DataMovement.cpp - shape and data movement ops to tensor/linalg ----===//
//
// Reshapes are collapse/expand pairs, concat and split are slices, and ops
// whose source index is computed (gather, pad modes, resize, strided slices,
// tile) are linalg.generic ops over the output that read the input with
// tensor.extract at a clamped index, so no input can make them read out of
// bounds.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace nnc;
using namespace nnc::lowering;

namespace {
using utils::IteratorType;


RankedTensorType convertedType(const TypeConverter *converter, Value v) {
  return cast<RankedTensorType>(converter->convertType(v.getType()));
}

Value indexConst(OpBuilder &b, Location loc, int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

Value clampIndex(OpBuilder &b, Location loc, Value i, int64_t size) {
  Value lo = arith::MaxSIOp::create(b, loc, i, indexConst(b, loc, 0));
  return arith::MinSIOp::create(b, loc, lo, indexConst(b, loc, size - 1));
}

/// An index element as a normalized, clamped coordinate of a dim of `size`
/// (static, or an index value: a dynamic gathered dim, see gatherOrZeros).
Value indexCoordinate(OpBuilder &b, Location loc, Value indices, ArrayRef<Value> at,
                      OpFoldResult size, bool isUnsigned) {
  Value raw = tensor::ExtractOp::create(b, loc, indices, at);
  Value i = isUnsigned ? Value(arith::IndexCastUIOp::create(b, loc, b.getIndexType(), raw))
                       : Value(arith::IndexCastOp::create(b, loc, b.getIndexType(), raw));
  Value n = getValueOrCreateConstantIndexOp(b, loc, size);
  Value neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, indexConst(b, loc, 0));
  i = arith::SelectOp::create(b, loc, neg, arith::AddIOp::create(b, loc, i, n), i);
  Value lo = arith::MaxSIOp::create(b, loc, i, indexConst(b, loc, 0));
  std::optional<int64_t> constant = getConstantIntValue(size);
  Value last = constant ? indexConst(b, loc, *constant - 1)
                        : arith::SubIOp::create(b, loc, n, indexConst(b, loc, 1)).getResult();
  return arith::MinSIOp::create(b, loc, lo, last);
}

/// A gathered dim's size: static, or read at run time.
OpFoldResult gatheredSize(OpBuilder &b, Location loc, Value input, int64_t d) {
  auto type = tensorType(input);
  if (!type.isDynamicDim(d))
    return b.getIndexAttr(type.getDimSize(d));
  return dimOf(b, loc, input, d);
}

/// `gather()`, unless one of the gathered dims `sizes` is dynamic and 0 at
/// run time: then no element exists to clamp an index to, and the result
/// (empty, but for indices out of range) is zeros. A dynamic gathered dim is
/// a count of the data (boxes a detector kept) or a symbolic dim.
/// Both write into `init`, made before, so that the result is one buffer
/// whose dims the code after reads as the init's.
Value gatherOrZeros(OpBuilder &b, Location loc, RankedTensorType type, ArrayRef<OpFoldResult> sizes,
                    ValueRange dynamicSizes,
                    function_ref<Value(OpBuilder &, Location, Value)> gather) {
  Value empty;
  for (OpFoldResult size : sizes)
    if (auto v = dyn_cast<Value>(size)) {
      Value zero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v, indexConst(b, loc, 0));
      empty = empty ? arith::OrIOp::create(b, loc, empty, zero).getResult() : zero;
    }
  Value init = emptyTensor(b, loc, type, dynamicSizes);
  if (!empty)
    return gather(b, loc, init);
  auto choice = scf::IfOp::create(
      b, loc, empty,
      [&](OpBuilder &tb, Location tl) {
        Value zero = scalarConstant(tb, tl, type.getElementType(), 0);
        scf::YieldOp::create(tb, tl, linalg::FillOp::create(tb, tl, zero, init).getResult(0));
      },
      [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, gather(eb, el, init)); });
  return choice.getResult(0);
}

/// Reshape-like ops: the result type says it all.
template <typename Op> struct ReshapeLikePattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto type = convertedType(this->getTypeConverter(), op.getResult());
    b.replaceOp(op, reshapeTo(b, op.getLoc(), adaptor.getInput(), type));
    return success();
  }
};

struct TransposePattern : OpConversionPattern<nn::TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::TransposeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    // A copy reading the input at permuted indices: as a generic it is split
    // into thread chunks and vectorized like any elementwise op (weights
    // transposed at run time when training, attention heads), and still
    // folds when its input is a constant.
    auto type = convertedType(getTypeConverter(), op.getResult());
    ArrayRef<int64_t> perm = op.getPerm();
    SmallVector<AffineExpr> reads(perm.size());
    for (auto [i, p] : llvm::enumerate(perm))
      reads[p] = b.getAffineDimExpr(i);
    AffineMap map = AffineMap::get(perm.size(), 0, reads, b.getContext());
    SmallVector<Value> sizes;
    for (auto [i, p] : llvm::enumerate(perm))
      if (type.isDynamicDim(i))
        sizes.push_back(dimOf(b, op.getLoc(), adaptor.getInput(), p));
    b.replaceOp(op, buildMappedCopy(b, op.getLoc(), adaptor.getInput(), type, map, sizes));
    return success();
  }
};

/// The most inputs a concat inserts one by one.
constexpr size_t kMaxInsertChain = 32;

/// Concatenation with dims known at run time (a decoder's key-value cache:
/// the past's length and the new tokens' count): each input goes in at the
/// sum of the lengths before it; the other dims are the first input's, which
/// every other input must match (checked before the run, as a broadcast's).
Value concatDynamic(OpBuilder &b, Location loc, RankedTensorType type, int64_t axis,
                    ArrayRef<Value> inputs) {
  int64_t rank = type.getRank();
  SmallVector<Value> dims(rank);
  for (int64_t d = 0; d < rank; ++d)
    dims[d] = d == axis ? indexConst(b, loc, 0) : dimOf(b, loc, inputs.front(), d);
  for (Value in : inputs) {
    dims[axis] = arith::AddIOp::create(b, loc, dims[axis], dimOf(b, loc, in, axis));
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && in != inputs.front() &&
          (tensorType(in).isDynamicDim(d) || tensorType(inputs.front()).isDynamicDim(d)))
        checkSameSize(b, loc, dimOf(b, loc, in, d), dims[d],
                      "Concat's inputs' dim " + Twine(d) + " (not the axis)");
  }
  SmallVector<Value> resultDims = resultSizes(b, loc, type, dims);
  // A chain of inserts at dynamic offsets costs bufferization more still
  // than at static ones (16 inputs: 0.5 s, 32: 8 s, 64: minutes): past half
  // the static limit, one op, its inputs copied, as below.
  if (inputs.size() > kMaxInsertChain / 2)
    return tensor::ConcatOp::create(b, loc, type, axis, inputs);
  Value result = emptyTensor(b, loc, type, resultDims);
  Value offset = indexConst(b, loc, 0);
  for (Value in : inputs) {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes, strides(rank, b.getIndexAttr(1));
    offsets[axis] = offset;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(tensorType(in).isDynamicDim(d) ? OpFoldResult(dimOf(b, loc, in, d))
                                                     : OpFoldResult(b.getIndexAttr(tensorType(in).getDimSize(d))));
    result = tensor::InsertSliceOp::create(b, loc, in, result, offsets, sizes, strides);
    offset = arith::AddIOp::create(b, loc, offset, dimOf(b, loc, in, axis));
  }
  return result;
}

struct ConcatPattern : OpConversionPattern<nn::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::ConcatOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto type = convertedType(getTypeConverter(), op.getResult());
    int64_t axis = op.getAxis(), rank = type.getRank(), offset = 0;
    auto isDynamic = [](Value in) { return !tensorType(in).hasStaticShape(); };
    if (!type.hasStaticShape() || llvm::any_of(adaptor.getInputs(), isDynamic)) {
      b.replaceOp(op, concatDynamic(b, loc, type, axis, llvm::to_vector(adaptor.getInputs())));
      return success();
    }
    SmallVector<Value> inputs;
    for (Value in : adaptor.getInputs())
      if (tensorType(in).getNumElements() != 0)
        inputs.push_back(in);
    // Each input inserted into the result lets its producer write there in
    // place, but the chain of inserts costs bufferization's analysis about
    // the cube of its length (100 inserts: 9 s; 400: 10 minutes). A long
    // concat (an RNN's outputs over its steps) is one op, its inputs copied.
    if (inputs.size() > kMaxInsertChain) {
      b.replaceOpWithNewOp<tensor::ConcatOp>(op, type, axis, inputs);
      return success();
    }
    Value result = emptyTensor(b, loc, type);
    for (Value in : inputs) {
      auto inType = tensorType(in);
      SmallVector<int64_t> offsets(rank, 0), strides(rank, 1);
      offsets[axis] = offset;
      result = tensor::InsertSliceOp::create(b, loc, in, result, indexAttrs(b, offsets),
                                             indexAttrs(b, inType.getShape()), indexAttrs(b, strides));
      offset += inType.getDimSize(axis);
    }
    b.replaceOp(op, result);
    return success();
  }
};

struct SplitPattern : OpConversionPattern<nn::SplitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::SplitOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis(), offset = 0;
    SmallVector<Value> results;
    // The split axis is static (NNToLinalg's gate); the other dims, dynamic
    // or not, are the input's.
    for (Value r : op.getResults()) {
      auto type = convertedType(getTypeConverter(), r);
      SmallVector<int64_t> offsets(type.getRank(), 0), strides(type.getRank(), 1);
      offsets[axis] = offset;
      SmallVector<OpFoldResult> sizes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        sizes.push_back(type.isDynamicDim(d) ? OpFoldResult(dimOf(b, loc, adaptor.getInput(), d))
                                             : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
      results.push_back(tensor::ExtractSliceOp::create(b, loc, type, adaptor.getInput(),
                                                       indexAttrs(b, offsets), sizes,
                                                       indexAttrs(b, strides)));
      offset += type.getDimSize(axis);
    }
    b.replaceOp(op, results);
    return success();
  }
};

struct SlicePattern : OpConversionPattern<nn::SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::SliceOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto starts = nn::getConstantInts(op.getStarts()), axes = nn::getConstantInts(op.getAxes()),
         steps = nn::getConstantInts(op.getSteps());
    if (!starts || !axes || !steps)
      return b.notifyMatchFailure(op, "needs constant starts, axes and steps");
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inType = tensorType(input);
    auto type = convertedType(getTypeConverter(), op.getResult());
    int64_t rank = inType.getRank();
    SmallVector<int64_t> start(rank, 0), step(rank, 1);
    for (size_t i = 0; i < axes->size(); ++i) {
      int64_t axis = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
      int64_t dim = inType.getDimSize(axis), s = (*starts)[i];
      step[axis] = (*steps)[i];
      if (s < 0)
        s += dim;
      start[axis] = step[axis] > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
    }
    if (type.getNumElements() == 0) {
      b.replaceOp(op, emptyTensor(b, loc, type));
      return success();
    }
    if (llvm::all_of(step, [](int64_t s) { return s > 0; })) {
      b.replaceOp(op, tensor::ExtractSliceOp::create(b, loc, type, input, indexAttrs(b, start),
                                                     indexAttrs(b, type.getShape()), indexAttrs(b, step)));
      return success();
    }
    // Negative steps: read input[start + step * i].
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d)
      exprs.push_back(getAffineDimExpr(d, ctx) * step[d] + start[d]);
    b.replaceOp(op, buildMappedCopy(b, loc, input, type, AffineMap::get(rank, 0, exprs, ctx)));
    return success();
  }
};

struct GatherPattern : OpConversionPattern<nn::GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::GatherOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), indices = adaptor.getIndices();
    int64_t axis = op.getAxis();
    OpFoldResult dim = gatheredSize(b, loc, input, axis);
    int64_t indexRank = tensorType(indices).getRank();
    bool indexUnsigned = isUnsignedType(op.getIndices().getType());
    auto type = convertedType(getTypeConverter(), op.getResult());
    // Dynamic result dims (an embedding of a symbolic batch and sequence):
    // the input's before the axis, the indices', then the input's after it.
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dynamicSizes.push_back(d < axis ? dimOf(b, loc, input, d)
                               : d < axis + indexRank ? dimOf(b, loc, indices, d - axis)
                                                      : dimOf(b, loc, input, d - indexRank + 1));
    Value result = gatherOrZeros(b, loc, type, {dim}, dynamicSizes, [&](OpBuilder &gb, Location gl, Value init) {
      return buildGather(gb, gl, type, [&](OpBuilder &nb, Location nl, ArrayRef<Value> out) {
        SmallVector<Value> coords(out.take_front(axis));
        coords.push_back(indexCoordinate(nb, nl, indices, out.slice(axis, indexRank), dim, indexUnsigned));
        llvm::append_range(coords, out.drop_front(axis + indexRank));
        return tensor::ExtractOp::create(nb, nl, input, coords);
      }, dynamicSizes, init);
    });
    b.replaceOp(op, result);
    return success();
  }
};

struct GatherElementsPattern : OpConversionPattern<nn::GatherElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::GatherElementsOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), indices = adaptor.getIndices();
    int64_t axis = op.getAxis(), dim = tensorType(input).getDimSize(axis);
    bool indexUnsigned = isUnsignedType(op.getIndices().getType());
    auto type = convertedType(getTypeConverter(), op.getResult());
    Value result = buildGather(b, loc, type, [&](OpBuilder &nb, Location nl, ArrayRef<Value> out) {
      SmallVector<Value> coords(out);
      coords[axis] = indexCoordinate(nb, nl, indices, out, nb.getIndexAttr(dim), indexUnsigned);
      return tensor::ExtractOp::create(nb, nl, input, coords);
    });
    b.replaceOp(op, result);
    return success();
  }
};

struct GatherNDPattern : OpConversionPattern<nn::GatherNDOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::GatherNDOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), indices = adaptor.getIndices();
    auto idxType = tensorType(indices);
    int64_t batch = op.getBatchDims(), q = idxType.getRank(), k = idxType.getDimSize(q - 1);
    bool indexUnsigned = isUnsignedType(op.getIndices().getType());
    auto type = convertedType(getTypeConverter(), op.getResult());
    // Dynamic result dims: the indices' leading ones (a boolean mask's
    // NonZero), or the input's batch or trailing ones.
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dynamicSizes.push_back(d < q - 1 ? dimOf(b, loc, indices, d) : dimOf(b, loc, input, d - (q - 1) + batch + k));
    SmallVector<OpFoldResult> dims;
    for (int64_t j = 0; j < k; ++j)
      dims.push_back(gatheredSize(b, loc, input, batch + j));
    Value result = gatherOrZeros(b, loc, type, dims, dynamicSizes, [&](OpBuilder &gb, Location gl, Value init) {
      return buildGather(gb, gl, type, [&](OpBuilder &nb, Location nl, ArrayRef<Value> out) {
        // out = (batch..., index position..., trailing...)
        SmallVector<Value> coords(out.take_front(batch));
        SmallVector<Value> tuple(out.take_front(q - 1));
        tuple.push_back(Value());
        for (int64_t j = 0; j < k; ++j) {
          tuple.back() = indexConst(nb, nl, j);
          coords.push_back(indexCoordinate(nb, nl, indices, tuple, dims[j], indexUnsigned));
        }
        llvm::append_range(coords, out.drop_front(q - 1));
        return tensor::ExtractOp::create(nb, nl, input, coords);
      }, dynamicSizes, init);
    });
    b.replaceOp(op, result);
    return success();
  }
};

/// Scatters are sequential (later updates win, or combine in order): one loop
/// over the updates' elements carries the result tensor, which starts as a
/// copy of the input. `target` maps an update's coordinates to the result's.
/// `empty`: dynamic dims of the input an update's index is clamped into;
/// where one is 0 there is no element to write to, and no update is made.
Value buildScatter(OpBuilder &b, Location loc, Value input, Value updates, StringRef reduction,
                   bool isUnsigned,
                   function_ref<SmallVector<Value>(OpBuilder &, Location, ArrayRef<Value>)> target,
                   ValueRange empty = {}) {
  auto updType = tensorType(updates);
  Value init = buildElementwise(b, loc, tensorType(input), {input},
                                [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  if (updType.hasStaticShape() && updType.getNumElements() == 0)
    return init;
  // The updates' dims, and how many there are: read at run time where
  // dynamic (the regions a detector kept, scattered back into place).
  SmallVector<Value> dims;
  Value count = indexConst(b, loc, 1);
  for (int64_t d = 0; d < updType.getRank(); ++d) {
    dims.push_back(dimOf(b, loc, updates, d));
    count = arith::MulIOp::create(b, loc, count, dims.back());
  }
  if (!empty.empty()) {
    // Nothing to write into along a dim of no elements: no update runs.
    Value none = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
    for (Value dim : empty)
      none = arith::OrIOp::create(b, loc, none,
                                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, dim, indexConst(b, loc, 0)));
    count = arith::SelectOp::create(b, loc, none, indexConst(b, loc, 0), count);
  }
  auto loop = scf::ForOp::create(
      b, loc, indexConst(b, loc, 0), count, indexConst(b, loc, 1), ValueRange{init},
      [&](OpBuilder &nb, Location nl, Value flat, ValueRange iter) {
        SmallVector<Value> coords(updType.getRank());
        Value rest = flat;
        for (int64_t d = updType.getRank() - 1; d >= 0; --d) {
          Value size = dims[d];
          coords[d] = arith::RemUIOp::create(nb, nl, rest, size);
          rest = arith::DivUIOp::create(nb, nl, rest, size);
        }
        Value update = tensor::ExtractOp::create(nb, nl, updates, coords);
        SmallVector<Value> at = target(nb, nl, coords);
        Value value = update;
        if (reduction != "none") {
          Value old = tensor::ExtractOp::create(nb, nl, iter[0], at);
          bool isFloat = isa<FloatType>(update.getType());
          if (reduction == "add")
            value = isFloat ? Value(arith::AddFOp::create(nb, nl, old, update)) : Value(arith::AddIOp::create(nb, nl, old, update));
          else if (reduction == "mul")
            value = isFloat ? Value(arith::MulFOp::create(nb, nl, old, update)) : Value(arith::MulIOp::create(nb, nl, old, update));
          else if (reduction == "max")
            value = isFloat ? Value(arith::MaximumFOp::create(nb, nl, old, update))
                    : isUnsigned ? Value(arith::MaxUIOp::create(nb, nl, old, update))
                                 : Value(arith::MaxSIOp::create(nb, nl, old, update));
          else
            value = isFloat ? Value(arith::MinimumFOp::create(nb, nl, old, update))
                    : isUnsigned ? Value(arith::MinUIOp::create(nb, nl, old, update))
                                 : Value(arith::MinSIOp::create(nb, nl, old, update));
        }
        scf::YieldOp::create(nb, nl, ValueRange{tensor::InsertOp::create(nb, nl, value, iter[0], at)});
      });
  return loop.getResult(0);
}

struct ScatterElementsPattern : OpConversionPattern<nn::ScatterElementsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::ScatterElementsOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    Value input = adaptor.getInput(), indices = adaptor.getIndices(), updates = adaptor.getUpdates();
    OpFoldResult dim = gatheredSize(b, loc, input, axis);
    bool indexUnsigned = isUnsignedType(op.getIndices().getType());
    // Dynamic dims: the indices' are the updates', and within the input's.
    SmallVector<Value> empty;
    if (isa<Value>(dim))
      empty.push_back(cast<Value>(dim));
    auto type = tensorType(updates);
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d) && !tensorType(indices).isDynamicDim(d) &&
          (d == axis || !tensorType(input).isDynamicDim(d)))
        continue;
      Value size = dimOf(b, loc, updates, d);
      checkSameSize(b, loc, dimOf(b, loc, indices, d), size, "the indices' and the updates' dim " + Twine(d));
      if (d != axis)
        check(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, size, dimOf(b, loc, input, d)),
              "the updates' dim " + Twine(d) + " exceeds the input's");
    }
    Value result = buildScatter(
        b, loc, input, updates, op.getReduction(), isUnsignedType(op.getType()),
        [&](OpBuilder &nb, Location nl, ArrayRef<Value> u) {
          SmallVector<Value> at(u);
          at[axis] = indexCoordinate(nb, nl, indices, u, dim, indexUnsigned);
          return at;
        },
        empty);
    b.replaceOp(op, result);
    return success();
  }
};

struct ScatterNDPattern : OpConversionPattern<nn::ScatterNDOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::ScatterNDOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto inType = tensorType(adaptor.getInput());
    auto idxType = tensorType(adaptor.getIndices());
    int64_t q = idxType.getRank(), k = idxType.getDimSize(q - 1);
    bool indexUnsigned = isUnsignedType(op.getIndices().getType());
    Value result = buildScatter(
        b, op.getLoc(), adaptor.getInput(), adaptor.getUpdates(), op.getReduction(),
        isUnsignedType(op.getType()), [&](OpBuilder &nb, Location nl, ArrayRef<Value> u) {
          // u = (index position (q - 1 dims), trailing input dims)
          SmallVector<Value> tuple(u.take_front(q - 1)), at;
          tuple.push_back(Value());
          for (int64_t j = 0; j < k; ++j) {
            tuple.back() = indexConst(nb, nl, j);
            at.push_back(indexCoordinate(nb, nl, adaptor.getIndices(), tuple, nb.getIndexAttr(inType.getDimSize(j)), indexUnsigned));
          }
          llvm::append_range(at, u.drop_front(q - 1));
          return at;
        });
    b.replaceOp(op, result);
    return success();
  }
};

struct ExpandPattern : OpConversionPattern<nn::ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::ExpandOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto type = convertedType(getTypeConverter(), op.getResult());
    b.replaceOp(op, buildElementwise(b, op.getLoc(), type, {adaptor.getInput()},
                                     [](OpBuilder &, Location, ValueRange a) { return a[0]; }));
    return success();
  }
};

struct TilePattern : OpConversionPattern<nn::TileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::TileOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inType = tensorType(input);
    auto type = convertedType(getTypeConverter(), op.getResult());
    if (type.getNumElements() == 0) {
      b.replaceOp(op, emptyTensor(b, loc, type));
      return success();
    }
    MLIRContext *ctx = b.getContext();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < type.getRank(); ++d)
      exprs.push_back(getAffineDimExpr(d, ctx) % inType.getDimSize(d));
    b.replaceOp(op, buildMappedCopy(b, loc, input, type, AffineMap::get(type.getRank(), 0, exprs, ctx)));
    return success();
  }
};

/// All pad modes: each output element maps back to a source index (or, in
/// constant mode outside the input, to the pad value).
struct PadPattern : OpConversionPattern<nn::PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::PadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inType = tensorType(input);
    auto type = convertedType(getTypeConverter(), op.getResult());
    int64_t rank = inType.getRank();
    StringRef mode = op.getMode();
    if (type.hasStaticShape() && type.getNumElements() == 0) {
      b.replaceOp(op, emptyTensor(b, loc, type));
      return success();
    }
    bool empty = inType.hasStaticShape() && inType.getNumElements() == 0;
    if (empty && mode != "constant")
      return op.emitOpError("cannot pad an empty tensor in '") << mode << "' mode";
    // The pads as values: constants fold, run-time ones (ValueShapes.cpp)
    // size the result. A dynamic input dim is checked to be nonzero: an
    // empty input has nothing to read at a clamped index.
    SmallVector<Value> leading, inDims, dims;
    for (int64_t d = 0; d < rank; ++d) {
      leading.push_back(elementIndex(b, loc, adaptor.getPads(), d));
      Value trailing = elementIndex(b, loc, adaptor.getPads(), d + rank);
      inDims.push_back(dimOf(b, loc, input, d));
      if (inType.isDynamicDim(d))
        check(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, inDims[d], indexConst(b, loc, 0)),
              "Pad's input is empty along a dim known only at run time (not supported)");
      // Pads within +-2^60 keep the sum of three terms inside int64.
      for (Value pad : {leading[d], trailing})
        check(b, loc,
              arith::AndIOp::create(
                  b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, pad, indexConst(b, loc, 1ll << 60)),
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, pad, indexConst(b, loc, -(1ll << 60)))),
              "a pad is too large");
      Value size = arith::AddIOp::create(
          b, loc, arith::AddIOp::create(b, loc, inDims[d], leading[d]), trailing);
      check(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, size, indexConst(b, loc, 0)),
            "the pads make a dim negative");
      dims.push_back(size);
    }
    SmallVector<Value> sizes = resultSizes(b, loc, type, dims);
    Value value = extractScalar(b, loc, adaptor.getValue());
    Value result = buildGather(b, loc, type, [&](OpBuilder &nb, Location nl, ArrayRef<Value> out) {
      using Pred = arith::CmpIPredicate;
      SmallVector<Value> coords;
      Value inside = arith::ConstantIntOp::create(nb, nl, 1, 1);
      for (int64_t d = 0; d < rank; ++d) {
        // Constants (a static dim, a constant pad) stay next to their use.
        int64_t size = inType.getDimSize(d);
        bool dynamic = inType.isDynamicDim(d);
        Value n = dynamic ? inDims[d] : indexConst(nb, nl, size);
        auto lead = getConstantIntValue(leading[d]);
        Value i = arith::SubIOp::create(nb, nl, out[d], lead ? indexConst(nb, nl, *lead) : leading[d]);
        if (mode == "constant") {
          Value ge = arith::CmpIOp::create(nb, nl, Pred::sge, i, indexConst(nb, nl, 0));
          Value lt = arith::CmpIOp::create(nb, nl, Pred::slt, i, n);
          inside = arith::AndIOp::create(nb, nl, inside, arith::AndIOp::create(nb, nl, ge, lt));
        } else if (mode == "reflect" && (dynamic || size > 1)) {
          // Reflection without repeating the edge: period 2 * (size - 1)
          // (at least 1: a dim of 1 reads index 0).
          Value period = dynamic ? arith::MaxSIOp::create(
                                       nb, nl, arith::MulIOp::create(nb, nl, arith::SubIOp::create(nb, nl, n, indexConst(nb, nl, 1)),
                                                                     indexConst(nb, nl, 2)),
                                       indexConst(nb, nl, 1))
                                 : indexConst(nb, nl, 2 * (size - 1));
          Value m = arith::RemSIOp::create(nb, nl, i, period);
          Value negM = arith::CmpIOp::create(nb, nl, Pred::slt, m, indexConst(nb, nl, 0));
          m = arith::SelectOp::create(nb, nl, negM, arith::AddIOp::create(nb, nl, m, period), m);
          Value upper = arith::CmpIOp::create(nb, nl, Pred::sge, m, n);
          i = arith::SelectOp::create(nb, nl, upper, arith::SubIOp::create(nb, nl, period, m), m);
        } else if (mode == "wrap") {
          Value m = arith::RemSIOp::create(nb, nl, i, n);
          Value negM = arith::CmpIOp::create(nb, nl, Pred::slt, m, indexConst(nb, nl, 0));
          i = arith::SelectOp::create(nb, nl, negM, arith::AddIOp::create(nb, nl, m, n), m);
        }
        if (!dynamic) {
          coords.push_back(clampIndex(nb, nl, i, std::max<int64_t>(size, 1)));
          continue;
        }
        Value lo = arith::MaxSIOp::create(nb, nl, i, indexConst(nb, nl, 0));
        coords.push_back(arith::MinSIOp::create(nb, nl, lo, arith::SubIOp::create(nb, nl, n, indexConst(nb, nl, 1))));
      }
      if (empty)
        return value;
      Value element = tensor::ExtractOp::create(nb, nl, input, coords);
      return mode == "constant" ? Value(arith::SelectOp::create(nb, nl, inside, element, value)) : element;
    }, sizes);
    b.replaceOp(op, result);
    return success();
  }
};

/// Resize: per output dim, the source coordinate from the coordinate
/// transformation; nearest picks one index, linear and cubic blend 2 or 4
/// taps per resized dim.
struct ResizePattern : OpConversionPattern<nn::ResizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::ResizeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inType = tensorType(input);
    auto type = convertedType(getTypeConverter(), op.getResult());
    int64_t rank = inType.getRank();
    StringRef mode = op.getMode(), ctm = op.getCoordinateTransformationMode(),
              nearestMode = op.getNearestMode();
    double cubicA = op.getCubicCoeffA().convertToDouble();
    bool excludeOutside = op.getExcludeOutside();
    Type element = type.getElementType();
    if (mode != "nearest" && !isa<FloatType>(element))
      return op.emitOpError("'") << mode << "' resize needs a float tensor";
    // Coordinates, weights and sums in f32, or in f64 for f64 tensors (whose
    // values f32 would round).
    Type real = element.isF64() ? element : b.getF32Type();
    // Per dim, the scale and the parameters of the coordinate transformation
    // (computed in f64, then rounded to `real`): constants when the result's
    // dims are static, else computed from the scales or sizes given at run
    // time (ValueShapes.cpp).
    auto constScales = op.getScales() ? nn::getConstantFloats(op.getScales()) : std::nullopt;
    if (op.getScales() && !constScales && type.hasStaticShape())
      return b.notifyMatchFailure(op, "needs constant scales for a static result");
    // `length`: the resized length in f64, in * scale unrounded when scales
    // are given (tf_crop_and_resize's divisor, as for align_corners).
    struct Params { Value scale, ratio, shift, length; };
    SmallVector<Params> dynamicParams(rank);
    SmallVector<Value> dims;
    if (!type.hasStaticShape()) {
      Type f64 = b.getF64Type();
      auto real64 = [&](Value index) {
        return arith::SIToFPOp::create(b, loc, f64, arith::IndexCastOp::create(b, loc, b.getI64Type(), index))
            .getResult();
      };
      auto c64 = [&](double v) { return scalarConstant(b, loc, f64, v); };
      for (int64_t d = 0; d < rank; ++d) {
        int64_t in = inType.getDimSize(d);
        Value scale, size;
        if (op.getScales()) {
          Value at = arith::ConstantIndexOp::create(b, loc, d);
          Value given = tensor::ExtractOp::create(b, loc, adaptor.getScales(), ValueRange{at});
          scale = arith::ExtFOp::create(b, loc, f64, given);
          // floor(in * scale), checked to be a count: a NaN, infinite or
          // negative scale fails.
          Value count = math::FloorOp::create(b, loc, arith::MulFOp::create(b, loc, c64(in), scale));
          Value valid = arith::AndIOp::create(
              b, loc, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, scale, c64(0)),
              arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, count, c64(0x1p62)));
          check(b, loc, valid, "a scale is not positive and finite, or gives too large a dim");
          count = arith::SelectOp::create(b, loc, valid, count, c64(0));
          size = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                            arith::FPToSIOp::create(b, loc, b.getI64Type(), count));
        } else {
          size = elementIndex(b, loc, adaptor.getSizes(), d);
          check(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, size, indexConst(b, loc, 0)),
                "a size is not positive");
          scale = arith::DivFOp::create(b, loc, real64(size), c64(in));
        }
        dims.push_back(size);
        Value outSize = real64(size);
        // align_corners: (in - 1) / (out - 1), 0 for one output element,
        // with out unrounded (in * scale) when scales are given, as ONNX's
        // reference computes it.
        Value length = op.getScales() ? arith::MulFOp::create(b, loc, c64(in), scale).getResult() : outSize;
        Value many = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, size, indexConst(b, loc, 1));
        Value ratio = arith::SelectOp::create(
            b, loc, many,
            arith::DivFOp::create(b, loc, c64(in - 1), arith::SubFOp::create(b, loc, length, c64(1))), c64(0));
        // half_pixel_symmetric: 0.5 - in / 2 * (1 - out / (scale * in)).
        Value shift = c64(0.5);
        if (ctm == "half_pixel_symmetric") {
          Value adjustment = arith::DivFOp::create(b, loc, outSize, arith::MulFOp::create(b, loc, scale, c64(in)));
          shift = arith::SubFOp::create(
              b, loc, shift,
              arith::MulFOp::create(b, loc, c64(in / 2.0), arith::SubFOp::create(b, loc, c64(1), adjustment)));
        }
        auto toReal = [&](Value v) { return real == f64 ? v : arith::TruncFOp::create(b, loc, real, v).getResult(); };
        dynamicParams[d] = {toReal(scale), toReal(ratio), toReal(shift), length};
      }
    }
    SmallVector<double> scales(rank);
    if (constScales)
      scales.assign(constScales->begin(), constScales->end());
    else if (type.hasStaticShape())
      for (int64_t d = 0; d < rank; ++d)
        scales[d] = (double)type.getDimSize(d) / (double)inType.getDimSize(d);

    bool crops = ctm == "tf_crop_and_resize";
    Value result = buildGather(b, loc, type, [&](OpBuilder &nb, Location nl, ArrayRef<Value> out) {
      auto f = [&](double v) { return scalarConstant(nb, nl, real, v); };
      auto toReal = [&](Value index) -> Value {
        return arith::SIToFPOp::create(nb, nl, real, arith::IndexCastOp::create(nb, nl, nb.getI64Type(), index));
      };
      // tf_crop_and_resize: whether a coordinate fell outside the input.
      Value outside;
      // Per dim: a list of (index, weight) taps.
      SmallVector<SmallVector<std::pair<Value, Value>>> taps(rank);
      for (int64_t d = 0; d < rank; ++d) {
        int64_t in = inType.getDimSize(d), outSize = type.getDimSize(d);
        bool dynamic = type.isDynamicDim(d);
        // tf_half_pixel_for_nn shifts by half a pixel even at scale 1, and a
        // crop may move any dim.
        if (!dynamic && in == outSize && scales[d] == 1.0 && ctm != "tf_half_pixel_for_nn" && !crops) {
          taps[d].push_back({out[d], Value()});
          continue;
        }
        Value x = toReal(out[d]);
        double scale = scales[d];
        Value src;
        if (crops) {
          // ONNX's start * (in - 1) + x * (end - start) * (in - 1) / (L - 1),
          // L the resized length (unrounded in * scale when scales are given,
          // as ONNX's reference computes it), or the crop's center for one
          // output element. In f64: in f32 a crop ending at 1.0 can put the
          // last row a hair past in - 1, which would extrapolate it.
          Type f64 = nb.getF64Type();
          auto d64 = [&](double v) { return scalarConstant(nb, nl, f64, v); };
          auto roiAt = [&](int64_t i) -> Value {
            Value v = tensor::ExtractOp::create(nb, nl, adaptor.getRoi(), ValueRange{indexConst(nb, nl, i)});
            return v.getType() == f64 ? v : arith::ExtFOp::create(nb, nl, f64, v).getResult();
          };
          Value start = roiAt(d), end = roiAt(rank + d), inLast = d64(in - 1);
          double staticLength = constScales ? in * scale : (double)outSize;
          Value lengthLast = dynamic ? arith::SubFOp::create(nb, nl, dynamicParams[d].length, d64(1)).getResult()
                                     : d64(staticLength - 1);
          Value x64 = arith::SIToFPOp::create(nb, nl, f64, arith::IndexCastOp::create(nb, nl, nb.getI64Type(), out[d]));
          Value width = arith::SubFOp::create(nb, nl, end, start);
          Value along = arith::MulFOp::create(nb, nl, x64, width);
          Value stretched = arith::MulFOp::create(nb, nl, along, inLast);
          Value offset = arith::DivFOp::create(nb, nl, stretched, lengthLast);
          Value origin = arith::MulFOp::create(nb, nl, start, inLast);
          Value src64 = arith::AddFOp::create(nb, nl, origin, offset);
          Value sum = arith::AddFOp::create(nb, nl, start, end);
          Value half = arith::MulFOp::create(nb, nl, sum, d64(0.5));
          Value center = arith::MulFOp::create(nb, nl, half, inLast);
          if (dynamic) {
            Value single = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, dims[d], indexConst(nb, nl, 1));
            src64 = arith::SelectOp::create(nb, nl, single, center, src64);
          } else if (outSize == 1) {
            src64 = center;
          }
          // Outside [0, in - 1] (or NaN): the extrapolation value.
          Value inside = arith::AndIOp::create(
              nb, nl, arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGE, src64, d64(0)),
              arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLE, src64, inLast));
          Value beyond = arith::XOrIOp::create(nb, nl, inside, arith::ConstantIntOp::create(nb, nl, nb.getI1Type(), 1));
          outside = outside ? arith::OrIOp::create(nb, nl, outside, beyond).getResult() : beyond;
          // Taps then read clamped indices; their value is replaced.
          src64 = arith::SelectOp::create(nb, nl, inside, src64, d64(0));
          src = real == f64 ? src64 : arith::TruncFOp::create(nb, nl, real, src64).getResult();
        } else if (ctm == "asymmetric") {
          src = arith::DivFOp::create(nb, nl, x, dynamic ? dynamicParams[d].scale : f(scale));
        } else if (ctm == "align_corners") {
          double length = constScales ? in * scale : (double)outSize; // as above
          double ratio = outSize > 1 ? (double)(in - 1) / (length - 1) : 0.0;
          src = arith::MulFOp::create(nb, nl, x, dynamic ? dynamicParams[d].ratio : f(ratio));
        } else if (ctm == "pytorch_half_pixel" && !dynamic && outSize == 1) {
          src = f(0);
        } else if (ctm == "tf_half_pixel_for_nn") {
          Value centered = arith::AddFOp::create(nb, nl, x, f(0.5));
          src = arith::DivFOp::create(nb, nl, centered, dynamic ? dynamicParams[d].scale : f(scale));
        } else { // half_pixel, pytorch_half_pixel, half_pixel_symmetric
          double shift = 0.5;
          if (ctm == "half_pixel_symmetric" && !dynamic) {
            double adjustment = (double)outSize / (scale * in);
            double center = in / 2.0;
            shift -= center * (1 - adjustment);
          }
          // One op per statement: as nested call arguments their order would
          // be the host compiler's (gcc and clang differ).
          Value shiftValue = dynamic ? dynamicParams[d].shift : f(shift);
          Value scaleValue = dynamic ? dynamicParams[d].scale : f(scale);
          Value centered = arith::AddFOp::create(nb, nl, x, f(0.5));
          Value scaled = arith::DivFOp::create(nb, nl, centered, scaleValue);
          src = arith::SubFOp::create(nb, nl, scaled, shiftValue);
          // pytorch_half_pixel maps a single output element to 0.
          if (ctm == "pytorch_half_pixel" && dynamic) {
            Value single = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, dims[d], indexConst(nb, nl, 1));
            src = arith::SelectOp::create(nb, nl, single, f(0), src);
          }
        }
        auto toIndex = [&](Value v) -> Value {
          return arith::IndexCastOp::create(nb, nl, nb.getIndexType(), arith::FPToSIOp::create(nb, nl, nb.getI64Type(), v));
        };
        if (mode == "nearest") {
          Value r;
          if (nearestMode == "floor")
            r = math::FloorOp::create(nb, nl, src);
          else if (nearestMode == "ceil")
            r = math::CeilOp::create(nb, nl, src);
          else if (nearestMode == "round_prefer_ceil")
            r = math::FloorOp::create(nb, nl, arith::AddFOp::create(nb, nl, src, f(0.5)));
          else // round_prefer_floor: ties go down
            r = math::CeilOp::create(nb, nl, arith::SubFOp::create(nb, nl, src, f(0.5)));
          taps[d].push_back({clampIndex(nb, nl, toIndex(r), in), Value()});
          continue;
        }
        Value base = math::FloorOp::create(nb, nl, src);
        Value t = arith::SubFOp::create(nb, nl, src, base);
        Value i0 = toIndex(base);
        if (mode == "linear") {
          // Clamp the coordinate into the input for the edge taps.
          Value i1 = arith::AddIOp::create(nb, nl, i0, indexConst(nb, nl, 1));
          Value w0 = arith::SubFOp::create(nb, nl, f(1), t);
          Value below = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLT, src, f(0));
          Value above = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGE, src, f(in - 1));
          // Outside the input, both taps read the nearest edge.
          Value edge = arith::OrIOp::create(nb, nl, below, above);
          Value w0e = arith::SelectOp::create(nb, nl, edge, f(1), w0);
          Value w1e = arith::SelectOp::create(nb, nl, edge, f(0), t);
          Value last = indexConst(nb, nl, in - 1);
          Value upper = arith::SelectOp::create(nb, nl, above, last, i0);
          Value e0 = arith::SelectOp::create(nb, nl, below, indexConst(nb, nl, 0), upper);
          taps[d].push_back({clampIndex(nb, nl, e0, in), w0e});
          taps[d].push_back({clampIndex(nb, nl, i1, in), w1e});
          continue;
        }
        // Cubic (Keys) with coefficient a over taps i0-1 .. i0+2.
        auto weight = [&](Value s) -> Value { // s = |distance|
          Value s2 = arith::MulFOp::create(nb, nl, s, s), s3 = arith::MulFOp::create(nb, nl, s2, s);
          // |s| <= 1: (a+2)s^3 - (a+3)s^2 + 1; 1 < |s| < 2: a s^3 - 5a s^2 + 8a s - 4a
          // One op per statement, in a fixed order (see half_pixel above).
          Value one = f(1), nearS2 = f(cubicA + 3);
          Value nearSquare = arith::MulFOp::create(nb, nl, s2, nearS2);
          Value nearS3 = f(cubicA + 2);
          Value nearCube = arith::MulFOp::create(nb, nl, s3, nearS3);
          Value near = arith::AddFOp::create(
              nb, nl, arith::SubFOp::create(nb, nl, nearCube, nearSquare), one);
          Value farConstant = f(4 * cubicA), farS = f(8 * cubicA);
          Value farLinear = arith::MulFOp::create(nb, nl, s, farS);
          Value farTail = arith::SubFOp::create(nb, nl, farLinear, farConstant);
          Value farS2 = f(5 * cubicA);
          Value farSquare = arith::MulFOp::create(nb, nl, s2, farS2);
          Value farS3 = f(cubicA);
          Value farCube = arith::MulFOp::create(nb, nl, s3, farS3);
          Value far = arith::AddFOp::create(
              nb, nl, arith::SubFOp::create(nb, nl, farCube, farSquare), farTail);
          Value isNear = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLE, s, f(1));
          return arith::SelectOp::create(nb, nl, isNear, near, far);
        };
        SmallVector<Value> idx, ws;
        Value total = f(0);
        for (int64_t k = -1; k <= 2; ++k) {
          Value i = arith::AddIOp::create(nb, nl, i0, indexConst(nb, nl, k));
          Value dist = math::AbsFOp::create(nb, nl, arith::SubFOp::create(nb, nl, t, f(k)));
          Value w = weight(dist);
          if (excludeOutside) {
            Value ge = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, i, indexConst(nb, nl, 0));
            Value lt = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, i, indexConst(nb, nl, in));
            Value zero = f(0);
            w = arith::SelectOp::create(nb, nl, arith::AndIOp::create(nb, nl, ge, lt), w, zero);
          }
          total = arith::AddFOp::create(nb, nl, total, w);
          idx.push_back(clampIndex(nb, nl, i, in));
          ws.push_back(w);
        }
        for (size_t k = 0; k < idx.size(); ++k) {
          Value w = excludeOutside ? Value(arith::DivFOp::create(nb, nl, ws[k], total)) : ws[k];
          taps[d].push_back({idx[k], w});
        }
      }
      // Sum over the cartesian product of the taps.
      Value acc;
      SmallVector<size_t> choice(rank, 0);
      while (true) {
        SmallVector<Value> coords;
        Value w;
        for (int64_t d = 0; d < rank; ++d) {
          auto [i, wd] = taps[d][choice[d]];
          coords.push_back(i);
          if (wd)
            w = w ? Value(arith::MulFOp::create(nb, nl, w, wd)) : wd;
        }
        Value v = tensor::ExtractOp::create(nb, nl, input, coords);
        if (!w) {
          acc = v;
        } else {
          Value vf = castScalar(nb, nl, v, real, false, false);
          Value term = arith::MulFOp::create(nb, nl, vf, w);
          acc = acc ? Value(arith::AddFOp::create(nb, nl, acc, term)) : term;
        }
        int64_t d = rank - 1;
        while (d >= 0 && ++choice[d] == taps[d].size())
          choice[d--] = 0;
        if (d < 0)
          break;
      }
      Value y = acc.getType() == element ? acc : castScalar(nb, nl, acc, element, false, false);
      if (outside) {
        Value fill = castScalar(nb, nl, scalarConstant(nb, nl, nb.getF64Type(), op.getExtrapolationValue().convertToDouble()),
                                element, false, false);
        y = arith::SelectOp::create(nb, nl, outside, fill, y);
      }
      return y;
    }, type.hasStaticShape() ? SmallVector<Value>{} : resultSizes(b, loc, type, dims));
    b.replaceOp(op, result);
    return success();
  }
};

struct TriluPattern : OpConversionPattern<nn::TriluOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::TriluOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = tensorType(input);
    int64_t rank = type.getRank();
    // k is an operand of the generic (every element reads its one value)
    // rather than a scalar read before it, so a device computes the whole op.
    Value k = adaptor.getK();
    bool upper = op.getUpper();
    MLIRContext *ctx = b.getContext();
    auto identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
    auto kMap = AffineMap::get(rank, 0,
                               SmallVector<AffineExpr>(tensorType(k).getRank(), getAffineConstantExpr(0, ctx)),
                               ctx);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{type}, ValueRange{input, k}, ValueRange{emptyTensor(b, loc, type)},
        SmallVector<AffineMap>{identity, kMap, identity}, SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value i = linalg::IndexOp::create(nb, nl, rank - 2), j = linalg::IndexOp::create(nb, nl, rank - 1);
          Value diff = arith::SubIOp::create(nb, nl, j, i); // j - i
          Value kIndex = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), args[1]);
          Value keep = arith::CmpIOp::create(nb, nl, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
                                             diff, kIndex);
          Value zero = scalarConstant(nb, nl, args[0].getType(), 0);
          linalg::YieldOp::create(nb, nl, ValueRange{arith::SelectOp::create(nb, nl, keep, args[0], zero)});
        });
    b.replaceOp(op, generic.getResult(0));
    return success();
  }
};

/// Range's element count, max(ceil((limit - start) / delta), 0), for values
/// known at run time: for floats in the element type (as ONNX Runtime and
/// NumPy count, and nn.range's inference), for integers in i64; a zero
/// delta, or for floats one that is not finite, or a count past 2^62 fails a
/// check.
Value rangeLength(OpBuilder &b, Location loc, Value start, Value limit, Value delta) {
  using Pred = arith::CmpIPredicate;
  auto index = [&](Value v) { return arith::IndexCastOp::create(b, loc, b.getIndexType(), v).getResult(); };
  if (auto real = dyn_cast<FloatType>(start.getType())) {
    Value zero = scalarConstant(b, loc, real, 0);
    Value count = math::CeilOp::create(
        b, loc, arith::DivFOp::create(b, loc, arith::SubFOp::create(b, loc, limit, start), delta));
    // Ordered comparisons: NaN (from infinities) fails the check.
    Value bounded = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, count,
                                          scalarConstant(b, loc, real, 0x1p62));
    Value valid = arith::AndIOp::create(
        b, loc, bounded, arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, delta, zero));
    check(b, loc, valid, "Range's delta is 0 or not finite, or its count is too large");
    // A failed check's count is never used; keep it small and defined.
    Value safe = arith::SelectOp::create(b, loc, valid, count, zero);
    Value positive = arith::MaximumFOp::create(b, loc, safe, zero);
    return index(arith::FPToSIOp::create(b, loc, b.getI64Type(), positive));
  }
  // In i64 (a narrower type widened), with the distance and |delta| taken
  // as unsigned: limit - start and -delta cannot overflow there.
  Type i64 = b.getI64Type();
  auto wide = [&](Value v) { return castScalar(b, loc, v, i64, false, false); };
  start = wide(start), limit = wide(limit), delta = wide(delta);
  Value zero = arith::ConstantIntOp::create(b, loc, i64, 0), one = arith::ConstantIntOp::create(b, loc, i64, 1);
  check(b, loc, arith::CmpIOp::create(b, loc, Pred::ne, delta, zero), "Range's delta is 0");
  Value up = arith::CmpIOp::create(b, loc, Pred::sgt, delta, zero);
  Value ahead = arith::SelectOp::create(b, loc, up, arith::CmpIOp::create(b, loc, Pred::sgt, limit, start),
                                        arith::CmpIOp::create(b, loc, Pred::sgt, start, limit));
  Value distance = arith::SelectOp::create(b, loc, up, arith::SubIOp::create(b, loc, limit, start),
                                           arith::SubIOp::create(b, loc, start, limit));
  Value magnitude = arith::SelectOp::create(b, loc, up, delta, arith::SubIOp::create(b, loc, zero, delta));
  Value safe = arith::SelectOp::create(b, loc, arith::CmpIOp::create(b, loc, Pred::ne, magnitude, zero),
                                       magnitude, one);
  Value steps = arith::AddIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, arith::SubIOp::create(b, loc, distance, one), safe), one);
  Value count = arith::SelectOp::create(b, loc, ahead, steps, zero);
  Value limitCount = arith::ConstantIntOp::create(b, loc, i64, 1ll << 62);
  Value small = arith::CmpIOp::create(b, loc, Pred::ule, count, limitCount);
  check(b, loc, small, "Range's count is too large");
  return index(arith::SelectOp::create(b, loc, small, count, zero));
}

struct RangePattern : OpConversionPattern<nn::RangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::RangeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto type = convertedType(getTypeConverter(), op.getResult());
    Value start = extractScalar(b, loc, adaptor.getStart()), delta = extractScalar(b, loc, adaptor.getDelta());
    SmallVector<Value> sizes;
    if (!type.hasStaticShape()) {
      // The count from scalars the memory plan can evaluate before the run
      // (a limit computed from an input, ScalarElements.cpp).
      auto scalar = [&](Value original, Value converted) {
        Value v = scalarElement(b, loc, original, 0);
        return v ? v : extractScalar(b, loc, converted);
      };
      sizes.push_back(rangeLength(b, loc, scalar(op.getStart(), adaptor.getStart()),
                                  scalar(op.getLimit(), adaptor.getLimit()),
                                  scalar(op.getDelta(), adaptor.getDelta())));
    }
    Value result = buildGather(b, loc, type, [&](OpBuilder &nb, Location nl, ArrayRef<Value> out) -> Value {
      Value i = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), out[0]);
      Type element = start.getType();
      if (isa<FloatType>(element)) {
        Value fi = arith::SIToFPOp::create(nb, nl, element, i);
        return arith::AddFOp::create(nb, nl, start, arith::MulFOp::create(nb, nl, fi, delta));
      }
      Value ii = castScalar(nb, nl, i, element, false, false);
      return arith::AddIOp::create(nb, nl, start, arith::MulIOp::create(nb, nl, ii, delta));
    }, sizes);
    b.replaceOp(op, result);
    return success();
  }
};

struct ConstantOfShapePattern : OpConversionPattern<nn::ConstantOfShapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::ConstantOfShapeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto type = convertedType(getTypeConverter(), op.getResult());
    auto value = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!value)
      return b.notifyMatchFailure(op, "needs a dense value");
    Attribute element = value.getValues<Attribute>()[0];
    TypedAttr scalar;
    if (auto i = dyn_cast<IntegerAttr>(element))
      scalar = IntegerAttr::get(type.getElementType(), i.getValue());
    else
      scalar = cast<FloatAttr>(element);
    Location loc = op.getLoc();
    Value v = arith::ConstantOp::create(b, loc, scalar);
    SmallVector<Value> dims;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      dims.push_back(shapeElement(b, loc, op.getShape(), adaptor.getShape(), d));
      check(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, dims.back(), indexConst(b, loc, 0)),
            "a dim of the shape is negative");
    }
    b.replaceOp(op, filledTensor(b, loc, type, v, resultSizes(b, loc, type, dims)));
    return success();
  }
};

/// Shape and size: constants for static tensors, else from the dims.
template <typename Op> struct ShapePattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    auto type = cast<RankedTensorType>(op.getType());
    Location loc = op.getLoc();
    if (input.hasStaticShape()) {
      SmallVector<int64_t> values;
      if constexpr (std::is_same_v<Op, nn::ShapeOp>)
        values.assign(input.getShape().begin() + op.getStart(), input.getShape().begin() + op.getEnd());
      else
        values.push_back(input.getNumElements());
      b.replaceOpWithNewOp<arith::ConstantOp>(op, type, DenseElementsAttr::get(type, ArrayRef<int64_t>(values)));
      return success();
    }
    auto dim = [&](int64_t d) {
      return arith::IndexCastOp::create(b, loc, b.getI64Type(), dimOf(b, loc, adaptor.getInput(), d)).getResult();
    };
    SmallVector<Value> values;
    if constexpr (std::is_same_v<Op, nn::ShapeOp>) {
      for (int64_t d = op.getStart(); d < op.getEnd(); ++d)
        values.push_back(dim(d));
    } else {
      Value count = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 1);
      for (int64_t d = 0; d < input.getRank(); ++d)
        count = arith::MulIOp::create(b, loc, count, dim(d));
      values.push_back(count);
    }
    b.replaceOpWithNewOp<tensor::FromElementsOp>(op, type, values);
    return success();
  }
};
/// nn.random_uniform: each element hashed from its row-major index, the
/// seed and the counter (the formula in NNOps.td), in 32-bit integers.
struct RandomUniformPattern : OpConversionPattern<nn::RandomUniformOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::RandomUniformOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto type = convertedType(getTypeConverter(), op.getResult());
    Value counter = adaptor.getCounter();
    uint32_t seed = static_cast<uint32_t>(op.getSeed());
    Value result = buildGather(b, loc, type, [&](OpBuilder &nb, Location nl, ArrayRef<Value> out) {
      Type i32 = nb.getI32Type();
      auto c = [&](uint32_t v) { return arith::ConstantIntOp::create(nb, nl, i32, (int64_t)v); };
      auto mix = [&](Value x) {
        x = arith::XOrIOp::create(nb, nl, x, arith::ShRUIOp::create(nb, nl, x, c(16)));
        x = arith::MulIOp::create(nb, nl, x, c(0x7feb352du));
        x = arith::XOrIOp::create(nb, nl, x, arith::ShRUIOp::create(nb, nl, x, c(15)));
        x = arith::MulIOp::create(nb, nl, x, c(0x846ca68bu));
        return Value(arith::XOrIOp::create(nb, nl, x, arith::ShRUIOp::create(nb, nl, x, c(16))));
      };
      Value count = tensor::ExtractOp::create(nb, nl, counter, ValueRange{});
      Value key = mix(arith::XOrIOp::create(
          nb, nl, c(seed), mix(arith::MulIOp::create(nb, nl, count, c(0x9e3779b9u)))));
      // The row-major index, modulo 2^32.
      Value flat = indexConst(nb, nl, 0);
      for (int64_t d = 0; d < type.getRank(); ++d)
        flat = arith::AddIOp::create(
            nb, nl, arith::MulIOp::create(nb, nl, flat, indexConst(nb, nl, type.getDimSize(d))),
            out[d]);
      Value i = arith::IndexCastUIOp::create(nb, nl, i32, flat);
      Value bits = mix(arith::AddIOp::create(
          nb, nl, arith::MulIOp::create(nb, nl, i, c(0x85ebca6bu)), key));
      Value top = arith::ShRUIOp::create(nb, nl, bits, c(8));
      Value f = arith::UIToFPOp::create(nb, nl, type.getElementType(), top);
      return Value(arith::MulFOp::create(nb, nl, f, scalarConstant(nb, nl, type.getElementType(),
                                                                  1.0 / (1 << 24))));
    });
    b.replaceOp(op, result);
    return success();
  }
};

} // namespace

void lowering::populateDataMovementPatterns(NNTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ReshapeLikePattern<nn::ReshapeOp>, ReshapeLikePattern<nn::FlattenOp>,
               ReshapeLikePattern<nn::SqueezeOp>, ReshapeLikePattern<nn::UnsqueezeOp>,
               TransposePattern, ConcatPattern, SplitPattern, SlicePattern, GatherPattern,
               GatherElementsPattern, GatherNDPattern, ScatterElementsPattern, ScatterNDPattern,
               ExpandPattern, TilePattern, PadPattern, ResizePattern, TriluPattern, RangePattern,
               ConstantOfShapePattern, RandomUniformPattern, ShapePattern<nn::ShapeOp>,
               ShapePattern<nn::SizeOp>>(converter, patterns.getContext());
}
