//===- DataDependent.cpp - results whose size the data gives --------------===//
//
// NonZero and Compress keep the elements (slices) that their data selects, so
// how many there are is known only once the data is read. Their count is an
// nn.bounded_extent of what the static input bounds: the shape function and
// the memory plan size buffers for the bound before the run, the run fills
// the first `count` and reports the dims it computed (abi.h,
// data_dependent_outputs). Both are two passes over the input: count, then
// write in order. The loops are scf.for over tensors, run on the host.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::lowering;

namespace {
using Pred = arith::CmpIPredicate;

/// Whether `x` (a scalar of any element type) is nonzero, as ONNX reads a
/// condition or NonZero's elements.
Value isNonZero(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  if (isa<FloatType>(type))
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                 arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0)));
  return arith::CmpIOp::create(b, loc, Pred::ne, x,
                               arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, 0)));
}

/// The indices of linear position `at` in `shape`.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value at, ArrayRef<int64_t> shape) {
  SmallVector<Value> index(shape.size());
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    Value size = arith::ConstantIndexOp::create(b, loc, shape[d]);
    index[d] = arith::RemUIOp::create(b, loc, at, size);
    at = arith::DivUIOp::create(b, loc, at, size);
  }
  return index;
}

/// How many of `count` positions `selected(i)` picks, as a bounded extent.
Value countSelected(OpBuilder &b, Location loc, int64_t count,
                    function_ref<Value(OpBuilder &, Location, Value)> selected) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0), one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, zero, arith::ConstantIndexOp::create(b, loc, count), one, ValueRange{zero},
      [&](OpBuilder &nb, Location nl, Value i, ValueRange acc) {
        Value add = arith::SelectOp::create(nb, nl, selected(nb, nl, i),
                                            arith::ConstantIndexOp::create(nb, nl, 1),
                                            arith::ConstantIndexOp::create(nb, nl, 0));
        scf::YieldOp::create(nb, nl, ValueRange{arith::AddIOp::create(nb, nl, acc[0], add)});
      });
  return nn::BoundedExtentOp::create(b, loc, loop.getResult(0),
                                     arith::ConstantIndexOp::create(b, loc, count));
}

/// `init` with, for each of `count` positions that `selected` picks, `write`
/// applied at the next free place (0, 1, ...).
Value fillSelected(OpBuilder &b, Location loc, int64_t count, Value init,
                   function_ref<Value(OpBuilder &, Location, Value)> selected,
                   function_ref<Value(OpBuilder &, Location, Value, Value, Value)> write) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0), one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, zero, arith::ConstantIndexOp::create(b, loc, count), one, ValueRange{zero, init},
      [&](OpBuilder &nb, Location nl, Value i, ValueRange acc) {
        Value next = acc[0], result = acc[1];
        auto pick = scf::IfOp::create(
            nb, nl, selected(nb, nl, i),
            [&](OpBuilder &tb, Location tl) {
              Value written = write(tb, tl, i, next, result);
              Value after = arith::AddIOp::create(tb, tl, next, arith::ConstantIndexOp::create(tb, tl, 1));
              scf::YieldOp::create(tb, tl, ValueRange{after, written});
            },
            [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, ValueRange{next, result}); });
        scf::YieldOp::create(nb, nl, pick.getResults());
      });
  return loop.getResult(1);
}

struct NonZeroPattern : OpConversionPattern<nn::NonZeroOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::NonZeroOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    ArrayRef<int64_t> shape = tensorType(input).getShape();
    int64_t rank = shape.size(), count = tensorType(input).getNumElements();
    auto selected = [&](OpBuilder &nb, Location nl, Value i) {
      return isNonZero(nb, nl, tensor::ExtractOp::create(nb, nl, input, delinearize(nb, nl, i, shape)));
    };
    Value n = countSelected(b, loc, count, selected);
    auto type = cast<RankedTensorType>(op.getType());
    Value result = fillSelected(
        b, loc, count, emptyTensor(b, loc, type, {n}), selected,
        [&](OpBuilder &nb, Location nl, Value i, Value column, Value result) {
          SmallVector<Value> index = delinearize(nb, nl, i, shape);
          for (int64_t d = 0; d < rank; ++d) {
            Value value = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), index[d]);
            result = tensor::InsertOp::create(nb, nl, value, result,
                                              ValueRange{arith::ConstantIndexOp::create(nb, nl, d), column});
          }
          return result;
        });
    b.replaceOp(op, result);
    return success();
  }
};

struct CompressPattern : OpConversionPattern<nn::CompressOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::CompressOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), condition = adaptor.getCondition();
    auto inputType = tensorType(input);
    int64_t rank = inputType.getRank(), axis = op.getAxis();
    int64_t count = tensorType(condition).getDimSize(0);
    auto selected = [&](OpBuilder &nb, Location nl, Value i) {
      return isNonZero(nb, nl, tensor::ExtractOp::create(nb, nl, condition, ValueRange{i}));
    };
    Value n = countSelected(b, loc, count, selected);
    auto type = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    // Slice i of the input goes to slice `place` of the result.
    SmallVector<int64_t> sliceShape(inputType.getShape());
    sliceShape[axis] = 1;
    auto sliceType = RankedTensorType::get(sliceShape, type.getElementType());
    Value result = fillSelected(
        b, loc, count, emptyTensor(b, loc, type, {n}), selected,
        [&](OpBuilder &nb, Location nl, Value i, Value place, Value result) {
          SmallVector<OpFoldResult> from(rank, nb.getIndexAttr(0)), to(rank, nb.getIndexAttr(0)),
              sizes, strides(rank, nb.getIndexAttr(1));
          for (int64_t s : sliceShape)
            sizes.push_back(nb.getIndexAttr(s));
          from[axis] = i;
          to[axis] = place;
          Value slice = tensor::ExtractSliceOp::create(nb, nl, sliceType, input, from, sizes, strides);
          return tensor::InsertSliceOp::create(nb, nl, slice, result, to, sizes, strides).getResult();
        });
    b.replaceOp(op, result);
    return success();
  }
};
} // namespace

void lowering::populateDataDependentPatterns(NNTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<NonZeroPattern, CompressPattern>(converter, patterns.getContext());
}
