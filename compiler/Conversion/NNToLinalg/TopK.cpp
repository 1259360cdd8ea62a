//===- TopK.cpp - the k first elements of each slice, in order ------------===//
//
// Selection by repeated scans: for each slice along the axis, output r is the
// first element, in the op's order, of those that come after output r - 1.
// That is k scans of the slice (O(k n) compares, no scratch memory), which
// suits the small k of classifiers' and detectors' top-k; a k near n costs
// O(n^2). The loops are scf.for over tensors, run on the host.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::lowering;

namespace {
/// Whether (a, i) comes before (b, j) in the op's order: the larger value
/// first (the smaller unless `largest`), NaN counting as the largest, equal
/// values by index.
Value before(OpBuilder &b, Location loc, Value a, Value i, Value c, Value j, bool largest,
             bool isUnsigned) {
  auto greater = [&](Value x, Value y) -> Value {
    if (!isa<FloatType>(x.getType()))
      return arith::CmpIOp::create(b, loc, isUnsigned ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt,
                                   x, y);
    Value nanX = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
    Value numberY = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ORD, y, y);
    Value ordered = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
    return arith::OrIOp::create(b, loc, arith::AndIOp::create(b, loc, nanX, numberY), ordered);
  };
  Value first = largest ? greater(a, c) : greater(c, a);
  // Neither comes first: equal (two NaNs are equal here).
  Value tie = arith::AndIOp::create(
      b, loc, arith::XOrIOp::create(b, loc, greater(a, c), arith::ConstantIntOp::create(b, loc, 1, 1)),
      arith::XOrIOp::create(b, loc, greater(c, a), arith::ConstantIntOp::create(b, loc, 1, 1)));
  Value earlier = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, j);
  return arith::OrIOp::create(b, loc, first, arith::AndIOp::create(b, loc, tie, earlier));
}

struct TopKPattern : OpConversionPattern<nn::TopKOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::TopKOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto valuesType = cast<RankedTensorType>(getTypeConverter()->convertType(op.getValues().getType()));
    auto indicesType = cast<RankedTensorType>(op.getIndices().getType());
    int64_t rank = valuesType.getRank(), axis = op.getAxis();
    bool largest = op.getLargest(), isUnsigned = isUnsignedType(op.getInput().getType());
    auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };

    Value n = dimOf(b, loc, input, axis);
    Value k = shapeElement(b, loc, op.getK(), adaptor.getK(), 0);
    check(b, loc,
          arith::AndIOp::create(b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, k, index(0)),
                                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, k, n)),
          "k is negative or larger than the axis");
    SmallVector<Value> dims, bounds;
    // k = min(K, count) of a count's candidates (a detector's top-K per
    // class): at most the axis, which bounds it.
    if (valuesType.isDynamicDim(axis))
      k = boundByOperand(b, loc, op, k, n);
    for (int64_t d = 0; d < rank; ++d) {
      bounds.push_back(d == axis ? k : dimOf(b, loc, input, d));
      dims.push_back(bounds.back());
    }
    SmallVector<Value> sizes = resultSizes(b, loc, valuesType, dims);
    Value values = emptyTensor(b, loc, valuesType, sizes);
    Value indices = emptyTensor(b, loc, indicesType, sizes);

    // Loops over every dim but the axis, then over the outputs of a slice.
    SmallVector<Value> at(rank);
    std::function<SmallVector<Value>(OpBuilder &, Location, int64_t, ValueRange)> loops;
    loops = [&](OpBuilder &lb, Location ll, int64_t d, ValueRange outs) -> SmallVector<Value> {
      if (d == axis)
        return loops(lb, ll, d + 1, outs);
      if (d < rank) {
        auto loop = scf::ForOp::create(
            lb, ll, arith::ConstantIndexOp::create(lb, ll, 0), bounds[d],
            arith::ConstantIndexOp::create(lb, ll, 1), outs,
            [&](OpBuilder &nb, Location nl, Value i, ValueRange iter) {
              at[d] = i;
              scf::YieldOp::create(nb, nl, loops(nb, nl, d + 1, iter));
            });
        return loop.getResults();
      }
      // One slice: output r is the first element after output r - 1.
      Type element = valuesType.getElementType();
      Value zero = scalarConstant(lb, ll, element, 0);
      Value none = arith::ConstantIndexOp::create(lb, ll, -1);
      SmallVector<Value> inits{zero, none, outs[0], outs[1]};
      auto outputs = scf::ForOp::create(
          lb, ll, arith::ConstantIndexOp::create(lb, ll, 0), k, arith::ConstantIndexOp::create(lb, ll, 1),
          inits, [&](OpBuilder &rb, Location rl, Value r, ValueRange previous) {
            Value previousValue = previous[0], previousIndex = previous[1];
            auto scan = scf::ForOp::create(
                rb, rl, arith::ConstantIndexOp::create(rb, rl, 0), n,
                arith::ConstantIndexOp::create(rb, rl, 1), ValueRange{zero, none},
                [&](OpBuilder &sb, Location sl, Value i, ValueRange best) {
                  SmallVector<Value> where(at);
                  where[axis] = i;
                  Value v = tensor::ExtractOp::create(sb, sl, input, where);
                  Value first = arith::CmpIOp::create(sb, sl, arith::CmpIPredicate::eq, previousIndex, none);
                  Value after = arith::OrIOp::create(
                      sb, sl, first, before(sb, sl, previousValue, previousIndex, v, i, largest, isUnsigned));
                  Value empty = arith::CmpIOp::create(sb, sl, arith::CmpIPredicate::eq, best[1], none);
                  Value better = arith::OrIOp::create(
                      sb, sl, empty, before(sb, sl, v, i, best[0], best[1], largest, isUnsigned));
                  Value take = arith::AndIOp::create(sb, sl, after, better);
                  scf::YieldOp::create(sb, sl,
                                       ValueRange{arith::SelectOp::create(sb, sl, take, v, best[0]),
                                                  arith::SelectOp::create(sb, sl, take, i, best[1])});
                });
            Value value = scan.getResult(0), position = scan.getResult(1);
            SmallVector<Value> where(at);
            where[axis] = r;
            Value i64 = arith::IndexCastOp::create(rb, rl, rb.getI64Type(), position);
            Value newValues = tensor::InsertOp::create(rb, rl, value, previous[2], where);
            Value newIndices = tensor::InsertOp::create(rb, rl, i64, previous[3], where);
            scf::YieldOp::create(rb, rl, ValueRange{value, position, newValues, newIndices});
          });
      return {outputs.getResult(2), outputs.getResult(3)};
    };
    SmallVector<Value> results = loops(b, loc, 0, ValueRange{values, indices});
    b.replaceOp(op, results);
    return success();
  }
};
} // namespace

void lowering::populateTopKPatterns(NNTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<TopKPattern>(converter, patterns.getContext());
}
