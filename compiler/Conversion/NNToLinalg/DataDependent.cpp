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

/// The indices of linear position `at` in dims `shape` (static sizes or
/// index values).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value at, ArrayRef<OpFoldResult> shape) {
  SmallVector<Value> index(shape.size());
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    Value size = getValueOrCreateConstantIndexOp(b, loc, shape[d]);
    index[d] = arith::RemUIOp::create(b, loc, at, size);
    at = arith::DivUIOp::create(b, loc, at, size);
  }
  return index;
}

SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value at, ArrayRef<int64_t> shape) {
  return delinearize(b, loc, at, getAsIndexOpFoldResult(b.getContext(), shape));
}

/// How many of `count` positions `selected(i)` picks, as a bounded extent
/// (of `count`).
Value countSelected(OpBuilder &b, Location loc, OpFoldResult count,
                    function_ref<Value(OpBuilder &, Location, Value)> selected) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0), one = arith::ConstantIndexOp::create(b, loc, 1);
  Value n = getValueOrCreateConstantIndexOp(b, loc, count);
  auto loop = scf::ForOp::create(
      b, loc, zero, n, one, ValueRange{zero},
      [&](OpBuilder &nb, Location nl, Value i, ValueRange acc) {
        Value add = arith::SelectOp::create(nb, nl, selected(nb, nl, i),
                                            arith::ConstantIndexOp::create(nb, nl, 1),
                                            arith::ConstantIndexOp::create(nb, nl, 0));
        scf::YieldOp::create(nb, nl, ValueRange{arith::AddIOp::create(nb, nl, acc[0], add)});
      });
  return nn::BoundedExtentOp::create(b, loc, loop.getResult(0), n);
}

/// `init` with, for each of `count` positions that `selected` picks, `write`
/// applied at the next free place (0, 1, ...).
Value fillSelected(OpBuilder &b, Location loc, OpFoldResult count, Value init,
                   function_ref<Value(OpBuilder &, Location, Value)> selected,
                   function_ref<Value(OpBuilder &, Location, Value, Value, Value)> write) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0), one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, zero, getValueOrCreateConstantIndexOp(b, loc, count), one, ValueRange{zero, init},
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
    // The input's dims, and its element count, which bounds the result's:
    // read at run time where dynamic (scores a detector kept at one stage,
    // thresholded again at the next).
    int64_t rank = tensorType(input).getRank();
    SmallVector<OpFoldResult> shape;
    OpFoldResult count = b.getIndexAttr(1);
    for (int64_t d = 0; d < rank; ++d) {
      shape.push_back(tensorType(input).isDynamicDim(d) ? OpFoldResult(dimOf(b, loc, input, d))
                                                        : b.getIndexAttr(tensorType(input).getDimSize(d)));
      count = tensorType(input).isDynamicDim(d) || !isa<Attribute>(count)
                  ? OpFoldResult(arith::MulIOp::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, count),
                                                       getValueOrCreateConstantIndexOp(b, loc, shape[d])))
                  : b.getIndexAttr(*getConstantIntValue(count) * tensorType(input).getDimSize(d));
    }
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
    Value n = countSelected(b, loc, b.getIndexAttr(count), selected);
    auto type = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    // Slice i of the input goes to slice `place` of the result.
    SmallVector<int64_t> sliceShape(inputType.getShape());
    sliceShape[axis] = 1;
    auto sliceType = RankedTensorType::get(sliceShape, type.getElementType());
    Value result = fillSelected(
        b, loc, b.getIndexAttr(count), emptyTensor(b, loc, type, {n}), selected,
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
/// NonMaxSuppression as the greedy selection it specifies: per batch and
/// class, the boxes in order of score (sorted once), each kept when it
/// overlaps no box kept before (rows already written): O(N log N) to sort,
/// then one IoU per box and box kept before it. The rows go into a scratch
/// of the bound's size, of which the result is the first `count`.
struct NonMaxSuppressionPattern : OpConversionPattern<nn::NonMaxSuppressionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::NonMaxSuppressionOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value boxes = adaptor.getBoxes(), scores = adaptor.getScores();
    ArrayRef<int64_t> scoreShape = tensorType(scores).getShape();
    int64_t batches = scoreShape[0], classes = scoreShape[1];
    // The box count may be dynamic: boxes a detector's earlier stages kept,
    // themselves a count of the data (its bound then bounds this one).
    Value count = dimOf(b, loc, scores, 2);
    if (ShapedType::isDynamic(scoreShape[2]) || tensorType(boxes).isDynamicDim(1))
      checkSameSize(b, loc, dimOf(b, loc, boxes, 1), count, "the boxes' and the scores' box counts");
    bool centered = op.getCenterPointBox();
    Type real = tensorType(scores).getElementType();
    auto c = [&](OpBuilder &nb, Location nl, int64_t v) {
      return arith::ConstantIndexOp::create(nb, nl, v).getResult();
    };
    Value maxOutput = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                 extractScalar(b, loc, adaptor.getMaxOutput()));
    Value iouLimit = extractScalar(b, loc, adaptor.getIouThreshold());
    Value scoreLimit = extractScalar(b, loc, adaptor.getScoreThreshold());
    auto i1 = [&](OpBuilder &nb, Location nl, bool v) {
      return arith::ConstantIntOp::create(nb, nl, nb.getI1Type(), v).getResult();
    };

    // A box's extent along one axis as (min, max).
    auto extent = [&](OpBuilder &nb, Location nl, Value batch, Value box, int64_t axis) {
      auto coord = [&](int64_t k) {
        return tensor::ExtractOp::create(nb, nl, boxes, ValueRange{batch, box, c(nb, nl, k)}).getResult();
      };
      if (centered) {
        // x, y centre, width, height: axis 0 is x here, 1 is y.
        Value centre = coord(axis), half = arith::MulFOp::create(
                                            nb, nl, coord(axis + 2),
                                            arith::ConstantOp::create(nb, nl, nb.getFloatAttr(real, 0.5)));
        return std::make_pair(Value(arith::SubFOp::create(nb, nl, centre, half)),
                              Value(arith::AddFOp::create(nb, nl, centre, half)));
      }
      // y1, x1, y2, x2, either corner first: axis 0 is y here, 1 is x.
      Value p = coord(axis), q = coord(axis + 2);
      return std::make_pair(Value(arith::MinimumFOp::create(nb, nl, p, q)),
                            Value(arith::MaximumFOp::create(nb, nl, p, q)));
    };
    // A box's extents along both axes and its area.
    struct Box {
      Value lo[2], hi[2], area;
    };
    auto boxOf = [&](OpBuilder &nb, Location nl, Value batch, Value i) {
      Box box;
      box.area = arith::ConstantOp::create(nb, nl, nb.getFloatAttr(real, 1));
      for (int64_t axis = 0; axis < 2; ++axis) {
        std::tie(box.lo[axis], box.hi[axis]) = extent(nb, nl, batch, i, axis);
        box.area = arith::MulFOp::create(nb, nl, box.area, arith::SubFOp::create(nb, nl, box.hi[axis], box.lo[axis]));
      }
      return box;
    };
    // Whether two boxes overlap by more than the threshold.
    auto overlaps = [&](OpBuilder &nb, Location nl, const Box &i, const Box &j) {
      Value zero = arith::ConstantOp::create(nb, nl, nb.getFloatAttr(real, 0));
      Value inter = arith::ConstantOp::create(nb, nl, nb.getFloatAttr(real, 1));
      for (int64_t axis = 0; axis < 2; ++axis) {
        Value side = arith::SubFOp::create(nb, nl, arith::MinimumFOp::create(nb, nl, i.hi[axis], j.hi[axis]),
                                           arith::MaximumFOp::create(nb, nl, i.lo[axis], j.lo[axis]));
        inter = arith::MulFOp::create(nb, nl, inter, arith::MaximumFOp::create(nb, nl, side, zero));
      }
      Value unionArea = arith::SubFOp::create(nb, nl, arith::AddFOp::create(nb, nl, i.area, j.area), inter);
      auto positive = [&](Value v) {
        return arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT, v, zero).getResult();
      };
      Value valid = arith::AndIOp::create(
          nb, nl, arith::AndIOp::create(nb, nl, positive(inter), positive(i.area)),
          arith::AndIOp::create(nb, nl, positive(j.area), positive(unionArea)));
      Value iou = arith::DivFOp::create(nb, nl, inter, unionArea);
      return arith::AndIOp::create(
                 nb, nl, valid, arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT, iou, iouLimit))
          .getResult();
    };

    Value bound = arith::MulIOp::create(b, loc, c(b, loc, batches * classes), count);
    auto scratchType = RankedTensorType::get({ShapedType::kDynamic, 3}, b.getI64Type());
    Value scratch = emptyTensor(b, loc, scratchType, {bound});
    // Each class's boxes in order of score (the lower index first among
    // equal scores; NaN first, as TopK orders it), sorted once with a heap:
    // a detector's tens of thousands of candidates, which a scan for the
    // best remaining box per selection took seconds over. Made before the
    // loop and carried through it.
    auto orderType = [&](Type t) { return RankedTensorType::get({ShapedType::kDynamic}, t); };
    SmallVector<Value> order{emptyTensor(b, loc, orderType(real), {count}),
                             emptyTensor(b, loc, orderType(b.getI64Type()), {count})};
    // The kept boxes' extents and areas, row by row as the scratch's: the
    // compares with every box kept before stream them instead of gathering
    // and normalizing each kept box's corners again.
    Value keptBoxes = emptyTensor(b, loc, RankedTensorType::get({ShapedType::kDynamic, 5}, real), {bound});
    Value zero = c(b, loc, 0), one = c(b, loc, 1);
    SmallVector<Value> inits{zero, scratch};
    llvm::append_range(inits, order);
    inits.push_back(keptBoxes);
    // Over (batch, class) pairs: the rows written so far.
    auto pairs = scf::ForOp::create(
        b, loc, zero, c(b, loc, batches * classes), one, inits,
        [&](OpBuilder &pb, Location pl, Value pair, ValueRange outer) {
          Value batch = arith::DivUIOp::create(pb, pl, pair, c(pb, pl, classes));
          Value cls = arith::RemUIOp::create(pb, pl, pair, c(pb, pl, classes));
          Value classStart = outer[0];
          auto score = [&](OpBuilder &nb, Location nl, Value box) {
            return tensor::ExtractOp::create(nb, nl, scores, ValueRange{batch, cls, box}).getResult();
          };
          auto place = [](OpBuilder &, Location, Value r) { return SmallVector<Value>{r}; };
          SmallVector<Value> sorted = heapSelect(pb, pl, count, count, score, place, outer[2], outer[3],
                                                 /*largest=*/true, /*isUnsigned=*/false);
          auto keptBox = [&](OpBuilder &nb, Location nl, Value kept, Value k) {
            auto field = [&](int64_t f) {
              return tensor::ExtractOp::create(nb, nl, kept, ValueRange{k, c(nb, nl, f)}).getResult();
            };
            return Box{{field(0), field(1)}, {field(2), field(3)}, field(4)};
          };
          Value sortedScores = sorted[0], sortedBoxes = sorted[1];
          // In that order, each box above the score threshold is kept unless
          // one kept before overlaps it, until max_output are kept.
          auto walk = scf::ForOp::create(
              pb, pl, c(pb, pl, 0), count, c(pb, pl, 1), ValueRange{outer[0], outer[1], outer[4]},
              [&](OpBuilder &rb, Location rl, Value r, ValueRange state) {
                Value rows = state[0], rowsNow = state[1], keptNow = state[2];
                Value s = tensor::ExtractOp::create(rb, rl, sortedScores, ValueRange{r});
                Value pick = arith::IndexCastOp::create(
                    rb, rl, rb.getIndexType(), tensor::ExtractOp::create(rb, rl, sortedBoxes, ValueRange{r}));
                Value kept = arith::SubIOp::create(rb, rl, rows, classStart);
                // A NaN threshold (none given) keeps every box.
                Value passes = arith::OrIOp::create(
                    rb, rl, arith::CmpFOp::create(rb, rl, arith::CmpFPredicate::OGT, s, scoreLimit),
                    arith::CmpFOp::create(rb, rl, arith::CmpFPredicate::UNO, scoreLimit, scoreLimit));
                Value consider = arith::AndIOp::create(
                    rb, rl, passes, arith::CmpIOp::create(rb, rl, Pred::slt, kept, maxOutput));
                auto step = scf::IfOp::create(
                    rb, rl, consider,
                    [&](OpBuilder &tb, Location tl) {
                      // Suppressed by a box this class kept before? (All
                      // of them compared: a loop without an exit, which LLVM
                      // vectorizes, ran 4x faster than one that stops at
                      // the first overlap.)
                      Box candidate = boxOf(tb, tl, batch, pick);
                      auto against = scf::ForOp::create(
                          tb, tl, classStart, rows, c(tb, tl, 1), ValueRange{i1(tb, tl, false)},
                          [&](OpBuilder &kb, Location kl, Value k, ValueRange hit) {
                            Value overlap = overlaps(kb, kl, candidate, keptBox(kb, kl, keptNow, k));
                            scf::YieldOp::create(kb, kl, ValueRange{arith::OrIOp::create(kb, kl, hit[0], overlap)});
                          });
                      auto keep = scf::IfOp::create(
                          tb, tl, arith::XOrIOp::create(tb, tl, against.getResult(0), i1(tb, tl, true)),
                          [&](OpBuilder &wb, Location wl) {
                            Value written = rowsNow;
                            Value fields[] = {batch, cls, pick};
                            for (int64_t f = 0; f < 3; ++f)
                              written = tensor::InsertOp::create(
                                  wb, wl, arith::IndexCastOp::create(wb, wl, wb.getI64Type(), fields[f]), written,
                                  ValueRange{rows, c(wb, wl, f)});
                            Value extents = keptNow;
                            Value box[] = {candidate.lo[0], candidate.lo[1], candidate.hi[0], candidate.hi[1],
                                           candidate.area};
                            for (int64_t f = 0; f < 5; ++f)
                              extents = tensor::InsertOp::create(wb, wl, box[f], extents, ValueRange{rows, c(wb, wl, f)});
                            scf::YieldOp::create(
                                wb, wl, ValueRange{arith::AddIOp::create(wb, wl, rows, c(wb, wl, 1)), written, extents});
                          },
                          [&](OpBuilder &eb, Location el) {
                            scf::YieldOp::create(eb, el, ValueRange{rows, rowsNow, keptNow});
                          });
                      scf::YieldOp::create(tb, tl, keep.getResults());
                    },
                    [&](OpBuilder &eb, Location el) {
                      scf::YieldOp::create(eb, el, ValueRange{rows, rowsNow, keptNow});
                    });
                scf::YieldOp::create(rb, rl, step.getResults());
              });
          SmallVector<Value> next{walk.getResult(0), walk.getResult(1)};
          llvm::append_range(next, sorted);
          next.push_back(walk.getResult(2));
          scf::YieldOp::create(pb, pl, next);
        });
    Value n = nn::BoundedExtentOp::create(b, loc, pairs.getResult(0), bound);
    SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0)), sizes{n, b.getIndexAttr(3)},
        strides(2, b.getIndexAttr(1));
    auto type = RankedTensorType::get({ShapedType::kDynamic, 3}, b.getI64Type());
    b.replaceOp(op, tensor::ExtractSliceOp::create(b, loc, type, pairs.getResult(1), offsets, sizes, strides));
    return success();
  }
};
/// Unique by comparing slices: for each slice its first equal one, the
/// distinct ones ranked (by how many distinct ones are smaller, or come
/// before), then each output written at the ranks. O(N^2) slice compares,
/// which suits the short axes Unique sees.
struct UniquePattern : OpConversionPattern<nn::UniqueOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::UniqueOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = tensorType(input);
    ArrayRef<int64_t> shape = inputType.getShape();
    int64_t axis = op.getAxis(), count = shape[axis];
    // The slice's own shape: the input's without the axis.
    SmallVector<int64_t> sliceShape(shape);
    sliceShape.erase(sliceShape.begin() + axis);
    int64_t sliceSize = 1;
    for (int64_t d : sliceShape)
      sliceSize *= d;
    // (Booleans order false before true: unsigned.)
    bool isUnsigned = isUnsignedType(op.getInput().getType()) || inputType.getElementType().isInteger(1);
    auto c = [](OpBuilder &nb, Location nl, int64_t v) {
      return arith::ConstantIndexOp::create(nb, nl, v).getResult();
    };
    auto i1 = [](OpBuilder &nb, Location nl, bool v) {
      return arith::ConstantIntOp::create(nb, nl, nb.getI1Type(), v).getResult();
    };
    auto element = [&](OpBuilder &nb, Location nl, Value slice, Value e) {
      SmallVector<Value> index = delinearize(nb, nl, e, sliceShape);
      index.insert(index.begin() + axis, slice);
      return tensor::ExtractOp::create(nb, nl, input, index).getResult();
    };
    // (slice i < slice j, slice i == slice j), lexicographically.
    auto compare = [&](OpBuilder &nb, Location nl, Value i, Value j) {
      auto loop = scf::ForOp::create(
          nb, nl, c(nb, nl, 0), c(nb, nl, sliceSize), c(nb, nl, 1),
          ValueRange{i1(nb, nl, false), i1(nb, nl, false)},
          [&](OpBuilder &lb, Location ll, Value e, ValueRange state) {
            Value x = element(lb, ll, i, e), y = element(lb, ll, j, e);
            Value differ, less;
            if (isa<FloatType>(x.getType())) {
              // NaNs are equal to each other and sort last, as NumPy's unique has them.
              Value nanX = arith::CmpFOp::create(lb, ll, arith::CmpFPredicate::UNO, x, x);
              Value nanY = arith::CmpFOp::create(lb, ll, arith::CmpFPredicate::UNO, y, y);
              differ = arith::AndIOp::create(
                  lb, ll, arith::CmpFOp::create(lb, ll, arith::CmpFPredicate::UNE, x, y),
                  arith::XOrIOp::create(lb, ll, arith::AndIOp::create(lb, ll, nanX, nanY), i1(lb, ll, true)));
              less = arith::OrIOp::create(
                  lb, ll, arith::CmpFOp::create(lb, ll, arith::CmpFPredicate::OLT, x, y),
                  arith::AndIOp::create(lb, ll, arith::XOrIOp::create(lb, ll, nanX, i1(lb, ll, true)), nanY));
            } else {
              differ = arith::CmpIOp::create(lb, ll, Pred::ne, x, y);
              less = arith::CmpIOp::create(lb, ll, isUnsigned ? Pred::ult : Pred::slt, x, y);
            }
            Value open = arith::XOrIOp::create(lb, ll, state[0], i1(lb, ll, true));
            Value decides = arith::AndIOp::create(lb, ll, open, differ);
            scf::YieldOp::create(lb, ll,
                                 ValueRange{arith::OrIOp::create(lb, ll, state[0], decides),
                                            arith::SelectOp::create(lb, ll, decides, less, state[1])});
          });
      Value equal = arith::XOrIOp::create(nb, nl, loop.getResult(0), i1(nb, nl, true));
      return std::make_pair(loop.getResult(1), equal);
    };
    // A loop over [0, count) of `body(k, carried)`, carrying `init`.
    auto over = [&](OpBuilder &nb, Location nl, ValueRange init,
                    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, ValueRange)> body) {
      return scf::ForOp::create(nb, nl, c(nb, nl, 0), c(nb, nl, count), c(nb, nl, 1), init,
                                [&](OpBuilder &lb, Location ll, Value k, ValueRange carried) {
                                  scf::YieldOp::create(lb, ll, body(lb, ll, k, carried));
                                })
          .getResults();
    };
    // (Positions are kept as i64: the memory plan places int and float buffers.)
    auto indexType = RankedTensorType::get({count}, b.getI64Type());
    auto at = [](OpBuilder &nb, Location nl, Value t, Value k) {
      return arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                        tensor::ExtractOp::create(nb, nl, t, ValueRange{k}))
          .getResult();
    };
    auto asI64 = [](OpBuilder &nb, Location nl, Value v) {
      return arith::IndexCastOp::create(nb, nl, nb.getI64Type(), v).getResult();
    };
    // first[i]: the first slice equal to slice i.
    Value first = over(b, loc, ValueRange{emptyTensor(b, loc, indexType)},
                       [&](OpBuilder &nb, Location nl, Value i, ValueRange carried) {
                         Value found = over(nb, nl, ValueRange{i},
                                            [&](OpBuilder &jb, Location jl, Value j, ValueRange best) {
                                              Value earlier = arith::CmpIOp::create(jb, jl, Pred::ult, j, best[0]);
                                              Value equal = compare(jb, jl, j, i).second;
                                              Value take = arith::AndIOp::create(jb, jl, earlier, equal);
                                              return SmallVector<Value>{
                                                  arith::SelectOp::create(jb, jl, take, j, best[0])};
                                            })[0];
                         return SmallVector<Value>{
                             tensor::InsertOp::create(nb, nl, asI64(nb, nl, found), carried[0], ValueRange{i})};
                       })[0];
    auto isFirst = [&](OpBuilder &nb, Location nl, Value i) {
      return arith::CmpIOp::create(nb, nl, Pred::eq, at(nb, nl, first, i), i).getResult();
    };
    // rank[i] of a first slice: the distinct slices before it in the output.
    Value rank = over(b, loc, ValueRange{emptyTensor(b, loc, indexType)},
                      [&](OpBuilder &nb, Location nl, Value i, ValueRange carried) {
                        Value r = over(nb, nl, ValueRange{c(nb, nl, 0)},
                                       [&](OpBuilder &jb, Location jl, Value j, ValueRange sum) {
                                         Value before = op.getSorted()
                                                            ? compare(jb, jl, j, i).first
                                                            : arith::CmpIOp::create(jb, jl, Pred::ult, j, i).getResult();
                                         Value counted = arith::AndIOp::create(jb, jl, isFirst(jb, jl, j), before);
                                         return SmallVector<Value>{arith::AddIOp::create(
                                             jb, jl, sum[0],
                                             arith::SelectOp::create(jb, jl, counted, c(jb, jl, 1), c(jb, jl, 0)))};
                                       })[0];
                        return SmallVector<Value>{
                            tensor::InsertOp::create(nb, nl, asI64(nb, nl, r), carried[0], ValueRange{i})};
                      })[0];
    Value distinct = nn::BoundedExtentOp::create(
        b, loc,
        over(b, loc, ValueRange{c(b, loc, 0)},
             [&](OpBuilder &nb, Location nl, Value i, ValueRange sum) {
               return SmallVector<Value>{arith::AddIOp::create(
                   nb, nl, sum[0],
                   arith::SelectOp::create(nb, nl, isFirst(nb, nl, i), c(nb, nl, 1), c(nb, nl, 0)))};
             })[0],
        c(b, loc, count));

    auto valuesType = cast<RankedTensorType>(getTypeConverter()->convertType(op.getValues().getType()));
    auto listType = RankedTensorType::get({ShapedType::kDynamic}, b.getI64Type());
    auto i64 = [](OpBuilder &nb, Location nl, Value v) {
      return arith::IndexCastOp::create(nb, nl, nb.getI64Type(), v).getResult();
    };
    SmallVector<int64_t> oneSlice(shape);
    oneSlice[axis] = 1;
    auto sliceType = RankedTensorType::get(oneSlice, valuesType.getElementType());
    // values, indices and counts at each first slice's rank.
    SmallVector<Value> written = over(
        b, loc,
        ValueRange{emptyTensor(b, loc, valuesType, {distinct}), emptyTensor(b, loc, listType, {distinct}),
                   emptyTensor(b, loc, listType, {distinct})},
        [&](OpBuilder &nb, Location nl, Value i, ValueRange outs) {
          auto write = scf::IfOp::create(
              nb, nl, isFirst(nb, nl, i),
              [&](OpBuilder &tb, Location tl) {
                Value r = at(tb, tl, rank, i);
                SmallVector<OpFoldResult> from(oneSlice.size(), tb.getIndexAttr(0)), to = from, sizes,
                    strides(oneSlice.size(), tb.getIndexAttr(1));
                for (int64_t d : oneSlice)
                  sizes.push_back(tb.getIndexAttr(d));
                from[axis] = i;
                to[axis] = r;
                Value slice = tensor::ExtractSliceOp::create(tb, tl, sliceType, input, from, sizes, strides);
                Value values = tensor::InsertSliceOp::create(tb, tl, slice, outs[0], to, sizes, strides);
                Value indices = tensor::InsertOp::create(tb, tl, i64(tb, tl, i), outs[1], ValueRange{r});
                Value occurrences = over(tb, tl, ValueRange{c(tb, tl, 0)},
                                         [&](OpBuilder &jb, Location jl, Value j, ValueRange sum) {
                                           Value same = arith::CmpIOp::create(jb, jl, Pred::eq, at(jb, jl, first, j), i);
                                           return SmallVector<Value>{arith::AddIOp::create(
                                               jb, jl, sum[0],
                                               arith::SelectOp::create(jb, jl, same, c(jb, jl, 1), c(jb, jl, 0)))};
                                         })[0];
                Value counts =
                    tensor::InsertOp::create(tb, tl, i64(tb, tl, occurrences), outs[2], ValueRange{r});
                scf::YieldOp::create(tb, tl, ValueRange{values, indices, counts});
              },
              [&](OpBuilder &eb, Location el) { scf::YieldOp::create(eb, el, outs); });
          return SmallVector<Value>(write.getResults());
        });
    // inverse[j]: the rank of slice j's first equal.
    auto inverseType = RankedTensorType::get({count}, b.getI64Type());
    Value inverse = over(b, loc, ValueRange{emptyTensor(b, loc, inverseType)},
                         [&](OpBuilder &nb, Location nl, Value j, ValueRange carried) {
                           Value r = at(nb, nl, rank, at(nb, nl, first, j));
                           return SmallVector<Value>{
                               tensor::InsertOp::create(nb, nl, i64(nb, nl, r), carried[0], ValueRange{j})};
                         })[0];
    b.replaceOp(op, ValueRange{written[0], written[1], inverse, written[2]});
    return success();
  }
};
} // namespace

void lowering::populateDataDependentPatterns(NNTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<NonZeroPattern, CompressPattern, NonMaxSuppressionPattern, UniquePattern>(
      converter, patterns.getContext());
}
