//===- TopK.cpp - the k first elements of each slice, in order ------------===//
//
// A small k (a classifier's top 5) by repeated scans: for each slice along
// the axis, output r is the first element, in the op's order, of those that
// come after output r - 1, k scans of the slice (O(k n) compares, no
// scratch memory). A larger k (a detector's top 1000 of its candidates), or
// one known only at run time, by a heap of the k best seen (O(n log k)).
// The loops are scf loops over tensors, run on the host.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::lowering;

namespace {
/// The largest k selected by k scans of the slice.
constexpr int64_t kScansUpTo = 16;

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

} // namespace

SmallVector<Value> lowering::heapSelect(OpBuilder &b, Location loc, Value n, Value k,
                                        function_ref<Value(OpBuilder &, Location, Value)> read,
                                        function_ref<SmallVector<Value>(OpBuilder &, Location, Value)> place,
                                        Value values, Value indices, bool largest, bool isUnsigned) {
  auto c = [](OpBuilder &nb, Location nl, int64_t v) { return arith::ConstantIndexOp::create(nb, nl, v).getResult(); };
  using Pred = arith::CmpIPredicate;
  // Slot i of the heap is place(i) of the results (values, i64 positions).
  auto get = [&](OpBuilder &nb, Location nl, Value into, Value i) {
    return tensor::ExtractOp::create(nb, nl, into, place(nb, nl, i)).getResult();
  };
  auto set = [&](OpBuilder &nb, Location nl, Value v, Value into, Value i) {
    return tensor::InsertOp::create(nb, nl, v, into, place(nb, nl, i)).getResult();
  };
  // Whether the entry at i comes after the one at j (is worse).
  auto worse = [&](OpBuilder &nb, Location nl, ValueRange heap, Value i, Value j) {
    return before(nb, nl, get(nb, nl, heap[0], j), get(nb, nl, heap[1], j), get(nb, nl, heap[0], i),
                  get(nb, nl, heap[1], i), largest, isUnsigned);
  };
  auto swap = [&](OpBuilder &nb, Location nl, ValueRange heap, Value i, Value j) {
    SmallVector<Value> swapped;
    for (Value h : heap) {
      Value x = get(nb, nl, h, i), y = get(nb, nl, h, j);
      swapped.push_back(set(nb, nl, x, set(nb, nl, y, h, i), j));
    }
    return swapped;
  };
  // The slot above slot i (> 0).
  auto parent = [&](OpBuilder &nb, Location nl, Value i) -> Value {
    return arith::DivUIOp::create(nb, nl, arith::SubIOp::create(nb, nl, i, c(nb, nl, 1)), c(nb, nl, 2));
  };
  // The entry at 0 moved down while a child is worse, in a heap of `size`.
  auto siftDown = [&](OpBuilder &nb, Location nl, ValueRange heap, Value size) -> SmallVector<Value> {
    auto loop = scf::WhileOp::create(
        nb, nl, TypeRange{nb.getIndexType(), heap[0].getType(), heap[1].getType()},
        ValueRange{c(nb, nl, 0), heap[0], heap[1]},
        [&](OpBuilder &wb, Location wl, ValueRange state) {
          Value p = state[0];
          ValueRange h = state.drop_front();
          Value last = arith::MaxSIOp::create(wb, wl, arith::SubIOp::create(wb, wl, size, c(wb, wl, 1)), c(wb, wl, 0));
          Value left = arith::AddIOp::create(wb, wl, arith::MulIOp::create(wb, wl, p, c(wb, wl, 2)), c(wb, wl, 1));
          Value right = arith::AddIOp::create(wb, wl, left, c(wb, wl, 1));
          // Reads clamped into the heap: a child past its end is not taken.
          Value l = arith::MinSIOp::create(wb, wl, left, last), r = arith::MinSIOp::create(wb, wl, right, last);
          Value useRight = arith::AndIOp::create(
              wb, wl, arith::CmpIOp::create(wb, wl, Pred::slt, right, size), worse(wb, wl, h, r, l));
          Value child = arith::SelectOp::create(wb, wl, useRight, r, l);
          Value go = arith::AndIOp::create(wb, wl, arith::CmpIOp::create(wb, wl, Pred::slt, left, size),
                                           worse(wb, wl, h, child, p));
          scf::ConditionOp::create(wb, wl, go, ValueRange{child, h[0], h[1]});
        },
        [&](OpBuilder &wb, Location wl, ValueRange state) {
          // The child, whose parent it swaps with.
          Value child = state[0];
          SmallVector<Value> next{child};
          llvm::append_range(next, swap(wb, wl, state.drop_front(), parent(wb, wl, child), child));
          scf::YieldOp::create(wb, wl, next);
        });
    return {loop.getResult(1), loop.getResult(2)};
  };
  auto siftUp = [&](OpBuilder &nb, Location nl, ValueRange heap, Value at) -> SmallVector<Value> {
    auto loop = scf::WhileOp::create(
        nb, nl, TypeRange{nb.getIndexType(), heap[0].getType(), heap[1].getType()},
        ValueRange{at, heap[0], heap[1]},
        [&](OpBuilder &wb, Location wl, ValueRange state) {
          Value i = state[0];
          ValueRange h = state.drop_front();
          Value p = parent(wb, wl, arith::MaxSIOp::create(wb, wl, i, c(wb, wl, 1)));
          Value go = arith::AndIOp::create(wb, wl, arith::CmpIOp::create(wb, wl, Pred::sgt, i, c(wb, wl, 0)),
                                           worse(wb, wl, h, i, p));
          scf::ConditionOp::create(wb, wl, go, ValueRange{i, h[0], h[1]});
        },
        [&](OpBuilder &wb, Location wl, ValueRange state) {
          Value i = state[0];
          Value p = parent(wb, wl, i);
          SmallVector<Value> next{p};
          llvm::append_range(next, swap(wb, wl, state.drop_front(), i, p));
          scf::YieldOp::create(wb, wl, next);
        });
    return {loop.getResult(1), loop.getResult(2)};
  };
  // The k best, as a heap (none read for k = 0: the heap has no root).
  Value steps = arith::SelectOp::create(b, loc, arith::CmpIOp::create(b, loc, Pred::eq, k, c(b, loc, 0)),
                                        c(b, loc, 0), n);
  auto fill = scf::ForOp::create(
      b, loc, c(b, loc, 0), steps, c(b, loc, 1), ValueRange{c(b, loc, 0), values, indices},
      [&](OpBuilder &fb, Location fl, Value j, ValueRange state) {
        Value size = state[0];
        Value v = read(fb, fl, j);
        Value position = arith::IndexCastOp::create(fb, fl, fb.getI64Type(), j);
        auto growing = scf::IfOp::create(
            fb, fl, arith::CmpIOp::create(fb, fl, Pred::slt, size, k),
            [&](OpBuilder &tb, Location tl) {
              SmallVector<Value> h{set(tb, tl, v, state[1], size), set(tb, tl, position, state[2], size)};
              SmallVector<Value> next{arith::AddIOp::create(tb, tl, size, c(tb, tl, 1))};
              llvm::append_range(next, siftUp(tb, tl, h, size));
              scf::YieldOp::create(tb, tl, next);
            },
            [&](OpBuilder &eb, Location el) {
              // Full: the element replaces the worst kept if it comes
              // before it.
              Value rootValue = get(eb, el, state[1], c(eb, el, 0)), rootIndex = get(eb, el, state[2], c(eb, el, 0));
              auto replace = scf::IfOp::create(
                  eb, el, before(eb, el, v, position, rootValue, rootIndex, largest, isUnsigned),
                  [&](OpBuilder &rb, Location rl) {
                    SmallVector<Value> h{set(rb, rl, v, state[1], c(rb, rl, 0)),
                                         set(rb, rl, position, state[2], c(rb, rl, 0))};
                    scf::YieldOp::create(rb, rl, siftDown(rb, rl, h, size));
                  },
                  [&](OpBuilder &rb, Location rl) {
                    scf::YieldOp::create(rb, rl, ValueRange{state[1], state[2]});
                  });
              SmallVector<Value> next{size};
              llvm::append_range(next, replace.getResults());
              scf::YieldOp::create(eb, el, next);
            });
        scf::YieldOp::create(fb, fl, growing.getResults());
      });
  // Sorted in place: the worst (the root) swapped to the last place of the
  // heap, which shrinks by one.
  auto drain = scf::ForOp::create(
      b, loc, c(b, loc, 0), k, c(b, loc, 1), ValueRange{fill.getResult(1), fill.getResult(2)},
      [&](OpBuilder &db, Location dl, Value r, ValueRange state) {
        Value last = arith::SubIOp::create(db, dl, arith::SubIOp::create(db, dl, k, r), c(db, dl, 1));
        SmallVector<Value> h = swap(db, dl, state, c(db, dl, 0), last);
        scf::YieldOp::create(db, dl, siftDown(db, dl, h, last));
      });
  return {drain.getResult(0), drain.getResult(1)};
}

namespace {

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

    // A classifier's top 5 scans the slice k times (no scratch, k n
    // compares); a larger k, or one known only at run time, selects with a
    // heap.
    std::optional<int64_t> constantK = getConstantIntValue(k);
    bool heap = !constantK || *constantK > kScansUpTo;
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
      Type element = valuesType.getElementType();
      // A k not known to be small: a heap.
      if (heap) {
        auto read = [&](OpBuilder &rb, Location rl, Value i) {
          SmallVector<Value> where(at);
          where[axis] = i;
          return tensor::ExtractOp::create(rb, rl, input, where).getResult();
        };
        auto place = [&](OpBuilder &, Location, Value r) {
          SmallVector<Value> where(at);
          where[axis] = r;
          return where;
        };
        return heapSelect(lb, ll, n, k, read, place, outs[0], outs[1], largest, isUnsigned);
      }
      // One slice: output r is the first element after output r - 1.
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
