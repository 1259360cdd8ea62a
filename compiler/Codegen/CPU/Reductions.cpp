//===- Reductions.cpp - reductions with their accumulators in vectors ----===//
//
// A reduction left as loops is a chain of dependent scalar operations: LLVM
// may not reorder float additions, so one add per four cycles, 2 GFLOP/s
// here. Two schedules keep accumulators in vector registers instead.
//
// Along columns: where the input's contiguous dim is the result's (a global
// average pool of a [H, W, C] matmul result, a sum over a leading axis), the
// reduction loops go inside a vector of results, which stays in registers
// across them: one vector operation per step, in the original order.
//
// Along rows: where the reduction runs along the input's contiguous end
// (global average pooling over H and W of NCHW, softmax's and layer norm's
// sums over a row), each row accumulates W = up to four vectors of lanes side
// by side across its steps, reduces them to one value once, and takes the
// last R mod W elements as scalars:
//
//   acc[W] = neutral;  for ro: acc = combine(acc, f(x[ro*W : ro*W + W]))
//   out = combine(out, reduce(acc));  for r in tail: out = combine(out, f(x[r]))
//
// That changes the summation order (lane-wise partial sums, a tree at the
// end), as any vectorized reduction does.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/Schedules.h"
#include "compiler/Codegen/Common/SaturatingMath.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace nnc::cpu;

namespace {
// The most vectors a row accumulates side by side: four independent adds
// cover an add's latency.
constexpr int64_t kAccumulators = 4;

/// The op of `op`'s body that combines the output element with the rest
/// (the reduction's combiner), if the output element is used by nothing else.
Operation *combinerOf(linalg::GenericOp op) {
  Block *body = op.getBlock();
  BlockArgument out = body->getArguments().back();
  Operation *combiner = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!combiner || combiner->getNumOperands() != 2 || combiner->getNumResults() != 1 ||
      !out.hasOneUse() || out.getUses().begin()->getOwner() != combiner ||
      combiner->getOperand(0) == combiner->getOperand(1))
    return nullptr;
  return combiner;
}

/// Whether `op` is an f32 reduction into one result whose body folds each
/// element into the result with one combiner and reads no loop index (which
/// a change of loops would change).
bool isReduction(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumResults() != 1 || op.getNumReductionLoops() == 0 || !onBytes(op) ||
      !getElementTypeOrSelf(op.getResult(0).getType()).isF32() ||
      !op.getBlock()->getOps<linalg::IndexOp>().empty())
    return false;
  Operation *combiner = combinerOf(op);
  return combiner && combiner->getParentOp() == op;
}

/// Whether reduction `op` reduces over trailing loops into a result indexed
/// by the leading ones in order, with a combiner that has a neutral element.
bool isRowReduction(linalg::GenericOp op) {
  int64_t loops = op.getNumLoops(), parallel = loops - op.getNumReductionLoops();
  for (auto [i, kind] : llvm::enumerate(op.getIteratorTypesArray()))
    if ((kind == utils::IteratorType::parallel) != ((int64_t)i < parallel))
      return false;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outMap != AffineMap::getMultiDimIdentityMap(loops, op.getContext()).getMajorSubMap(parallel))
    return false;
  return arith::getNeutralElement(combinerOf(op)).has_value();
}

/// Whether each input reads the (single) reduction loop `r` along its last
/// dim, or not at all.
bool readsAlongRows(linalg::GenericOp op, unsigned r) {
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation())
      return false;
    if (!map.isFunctionOfDim(r))
      return true;
    return map.getResults().back() == getAffineDimExpr(r, op.getContext());
  });
}

/// Whether dims `inner` of `value` (the dims of a group to collapse, but its
/// first) stay whole through every slice it is read through: collapsing a
/// slice that is not (a shifted convolution's 16 of 18 columns) needs a
/// copy, allocated in the thread chunk. Reshapes end the walk; before one,
/// any slice must be whole past its first dim of more than one element.
bool collapsible(Value value, ArrayRef<int64_t> inner) {
  bool anyReshape = false;
  while (Operation *def = value.getDefiningOp()) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
      ArrayRef<int64_t> sizes = slice.getStaticSizes();
      ArrayRef<int64_t> source = slice.getSourceType().getShape();
      if (sizes.size() != source.size() || !slice.hasUnitStride())
        return false;
      SmallVector<int64_t> whole(inner);
      if (anyReshape) {
        // The slice must be one contiguous block.
        whole.clear();
        auto first = llvm::find_if(sizes, [](int64_t s) { return s != 1; });
        for (int64_t d = first - sizes.begin() + 1; d < (int64_t)sizes.size(); ++d)
          whole.push_back(d);
      }
      for (int64_t d : whole)
        if (ShapedType::isDynamic(sizes[d]) || sizes[d] != source[d])
          return false;
      value = slice.getSource();
    } else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def)) {
      anyReshape = true;
      value = def->getOperand(0);
    } else {
      return true;
    }
  }
  return true;
}

/// `value` [..., n] sliced to [..., offset : offset + size] along its last dim.
Value sliceLast(RewriterBase &rewriter, Location loc, Value value, OpFoldResult offset,
                OpFoldResult size) {
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
      sizes = tensor::getMixedSizes(rewriter, loc, value), strides(rank, rewriter.getIndexAttr(1));
  offsets.back() = offset;
  sizes.back() = size;
  return tensor::ExtractSliceOp::create(rewriter, loc, value, offsets, sizes, strides);
}

/// Splits the one-row reduction `row` (parallel loops of extent 1, then the
/// reduction loop of extent R: static and at least lanes, or dynamic) into
/// the vector accumulation, its final reduction and the tail, and marks them
/// for vectorization. A dynamic R takes W = four vectors, and its tail (R mod
/// W elements, known at run time) masked steps of one vector.
void splitRow(RewriterBase &rewriter, linalg::GenericOp row, int64_t lanes) {
  MLIRContext *ctx = row.getContext();
  Location loc = row.getLoc();
  int64_t parallel = row.getNumLoops() - 1;
  unsigned r = parallel;
  int64_t extent = row.getStaticLoopRanges().back();
  bool dynamic = ShapedType::isDynamic(extent);
  int64_t width = lanes * (dynamic ? kAccumulators : std::min(kAccumulators, extent / lanes));
  Operation *combiner = combinerOf(row);
  rewriter.setInsertionPoint(row);
  AffineExpr e = getAffineDimExpr(0, ctx);
  OpFoldResult size =
      cast<linalg::LinalgOp>(row.getOperation()).createLoopRanges(rewriter, loc)[r].size;
  OpFoldResult steps = affine::makeComposedFoldedAffineApply(rewriter, loc, e.floorDiv(width), size);
  OpFoldResult main =
      affine::makeComposedFoldedAffineApply(rewriter, loc, e.floorDiv(width) * width, size);
  OpFoldResult tail =
      affine::makeComposedFoldedAffineApply(rewriter, loc, e - e.floorDiv(width) * width, size);
  bool hasTail = !isConstantIntValue(tail, 0);

  // The accumulation: loops (parallel..., ro, lane), the lane innermost and
  // parallel, each input's row viewed as [steps, width].
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : row.getDpsInputOperands()) {
    AffineMap map = row.getMatchingIndexingMap(input);
    Value value = input->get();
    SmallVector<AffineExpr> results;
    for (AffineExpr e : map.getResults())
      results.push_back(e);
    if (map.isFunctionOfDim(r)) {
      if (hasTail)
        value = sliceLast(rewriter, loc, value, rewriter.getIndexAttr(0), main);
      auto type = cast<RankedTensorType>(value.getType());
      SmallVector<int64_t> shape(type.getShape());
      std::optional<int64_t> staticSteps = getConstantIntValue(steps);
      shape.back() = staticSteps ? *staticSteps : ShapedType::kDynamic;
      shape.push_back(width);
      SmallVector<OpFoldResult> outputShape = tensor::getMixedSizes(rewriter, loc, value);
      outputShape.back() = steps;
      outputShape.push_back(rewriter.getIndexAttr(width));
      SmallVector<ReassociationIndices> groups;
      for (int64_t d = 0; d + 1 < type.getRank(); ++d)
        groups.push_back({d});
      groups.push_back({type.getRank() - 1, type.getRank()});
      value = tensor::ExpandShapeOp::create(rewriter, loc, type.clone(shape), value, groups,
                                            outputShape);
      results.push_back(getAffineDimExpr(r + 1, ctx));
    }
    inputs.push_back(value);
    maps.push_back(AffineMap::get(parallel + 2, 0, results, ctx));
  }
  SmallVector<int64_t> accShape(parallel, 1);
  accShape.push_back(width);
  auto accType = RankedTensorType::get(accShape, rewriter.getF32Type());
  Value neutral = arith::ConstantOp::create(rewriter, loc, *arith::getNeutralElement(combiner));
  Value empty = tensor::EmptyOp::create(rewriter, loc, accShape, rewriter.getF32Type());
  auto fill = linalg::FillOp::create(rewriter, loc, neutral, empty);
  SmallVector<AffineExpr> accResults;
  for (int64_t d = 0; d < parallel; ++d)
    accResults.push_back(getAffineDimExpr(d, ctx));
  accResults.push_back(getAffineDimExpr(r + 1, ctx));
  maps.push_back(AffineMap::get(parallel + 2, 0, accResults, ctx));
  SmallVector<utils::IteratorType> iterators(parallel, utils::IteratorType::parallel);
  iterators.append({utils::IteratorType::reduction, utils::IteratorType::parallel});
  auto accumulate = linalg::GenericOp::create(rewriter, loc, TypeRange{accType}, inputs,
                                              ValueRange{fill.getResult(0)}, maps, iterators);
  rewriter.cloneRegionBefore(row.getRegion(), accumulate.getRegion(), accumulate.getRegion().end());

  // The accumulators' reduction into the row's output, with the combiner alone.
  SmallVector<utils::IteratorType> rowIterators(parallel, utils::IteratorType::parallel);
  rowIterators.push_back(utils::IteratorType::reduction);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(parallel + 1, ctx);
  Value out = row.getDpsInitOperand(0)->get();
  auto reduce = linalg::GenericOp::create(
      rewriter, loc, TypeRange{out.getType()}, ValueRange{accumulate.getResult(0)}, ValueRange{out},
      ArrayRef<AffineMap>{identity, identity.getMajorSubMap(parallel)}, rowIterators,
      [&](OpBuilder &b, Location, ValueRange args) {
        BlockArgument rowOut = row.getBlock()->getArguments().back();
        IRMapping mapping;
        mapping.map(combiner->getOperand(0), combiner->getOperand(0) == rowOut ? args[1] : args[0]);
        mapping.map(combiner->getOperand(1), combiner->getOperand(1) == rowOut ? args[1] : args[0]);
        Operation *combined = b.clone(*combiner, mapping);
        linalg::YieldOp::create(b, loc, combined->getResult(0));
      });
  Value result = reduce.getResult(0);

  // The tail: the row's own op over its last elements; a dynamic one in
  // steps of one vector, each masked to what is left. (One masked step of
  // `width` cost a row of 7, a 7-token softmax's, four vectors' loads and
  // reductions: 30 ns a row.)
  Operation *rest = nullptr;
  if (hasTail) {
    IRMapping mapping;
    for (OpOperand *input : row.getDpsInputOperands())
      if (row.getMatchingIndexingMap(input).isFunctionOfDim(r))
        mapping.map(input->get(), sliceLast(rewriter, loc, input->get(), main, tail));
    mapping.map(out, result);
    rest = rewriter.clone(*row, mapping);
    result = rest->getResult(0);
  }
  rewriter.replaceOp(row, result);
  if (rest && dynamic) {
    auto step = cast<linalg::LinalgOp>(rest);
    SmallVector<int64_t> vectorSizes(parallel, 1);
    vectorSizes.push_back(width);
    SmallVector<int64_t> sizes(parallel + 1, 0);
    sizes[parallel] = lanes;
    if (FailureOr<scf::SCFTilingResult> tiled = tile(rewriter, step, sizes, {}); succeeded(tiled)) {
      step = cast<linalg::LinalgOp>(tiled->tiledOps.front());
      vectorSizes.back() = lanes;
    }
    step->setAttr(kVectorSizes, rewriter.getDenseI64ArrayAttr(vectorSizes));
    step->setAttr(kVectorizeIfPossible, rewriter.getUnitAttr());
  }

  fill->setAttr(kVectorizeIfPossible, rewriter.getUnitAttr());
  reduce->setAttr(kVectorizeIfPossible, rewriter.getUnitAttr());
  // One step of `width` at a time, the accumulators kept in registers across
  // the steps (the k-loop hoisting of the register tiles).
  linalg::LinalgOp step = accumulate;
  if (!isConstantIntValue(steps, 1)) {
    SmallVector<int64_t> sizes(parallel + 2, 0);
    sizes[parallel] = 1;
    FailureOr<scf::SCFTilingResult> tiled = tile(rewriter, accumulate, sizes, {});
    if (failed(tiled))
      return;
    tiled->loops.front()->setAttr(kRegisterK, rewriter.getUnitAttr());
    step = cast<linalg::LinalgOp>(tiled->tiledOps.front());
  }
  step->setAttr(kVectorizeIfPossible, rewriter.getUnitAttr());
}
/// The column schedule (file comment).
bool scheduleColumns(RewriterBase &rewriter, linalg::GenericOp op, int64_t lanes) {
  std::optional<unsigned> columnLoop = reductionColumn(op);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (!columnLoop || ranges[*columnLoop] < lanes)
    return false;
  unsigned column = *columnLoop;
  // Loops: the other parallel ones, a vector of up to four registers along
  // the column, then (a second tiling, so that their accumulator is the
  // column tile itself, which hoisting keeps in registers) the reduction
  // loops one step at a time.
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  int64_t width = std::min(ranges[column], kAccumulators * lanes) / lanes * lanes;
  SmallVector<int64_t> outer(ranges.size(), 0), inner(ranges.size(), 0), order;
  for (auto [d, kind] : llvm::enumerate(iterators)) {
    if (ranges[d] == 1)
      continue;
    if (kind == utils::IteratorType::reduction)
      inner[d] = 1;
    else
      outer[d] = d == column ? width : 1;
  }
  for (auto [d, kind] : llvm::enumerate(iterators))
    if (kind == utils::IteratorType::parallel && d != column)
      order.push_back(d);
  order.push_back(column);
  for (auto [d, kind] : llvm::enumerate(iterators))
    if (kind == utils::IteratorType::reduction)
      order.push_back(d);
  FailureOr<scf::SCFTilingResult> columns = tile(rewriter, op, outer, order);
  if (failed(columns))
    return false;
  if (ranges[column] % width != 0)
    columns->loops.back()->setAttr(kPeel, rewriter.getUnitAttr());
  auto tiled = cast<linalg::LinalgOp>(columns->tiledOps.front());
  if (llvm::any_of(inner, [](int64_t s) { return s != 0; })) {
    FailureOr<scf::SCFTilingResult> steps = tile(rewriter, tiled, inner, order);
    // `op` is gone already: its column tiles stay, unvectorized.
    if (failed(steps))
      return true;
    for (Operation *loop : steps->loops)
      loop->setAttr(kRegisterK, rewriter.getUnitAttr());
    tiled = cast<linalg::LinalgOp>(steps->tiledOps.front());
  }
  tiled->setAttr(kVectorizeIfPossible, rewriter.getUnitAttr());
  return true;
}
} // namespace

std::optional<unsigned> nnc::cpu::reductionColumn(linalg::GenericOp op) {
  if (op.getNumReductionLoops() == 0 || op.getNumDpsInits() != 1)
    return std::nullopt;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outMap.getNumResults() == 0 || !outMap.isProjectedPermutation())
    return std::nullopt;
  unsigned column = cast<AffineDimExpr>(outMap.getResults().back()).getPosition();
  bool contiguous = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation())
      return std::nullopt;
    if (!map.isFunctionOfDim(column))
      continue;
    if (map.getResults().back() != getAffineDimExpr(column, op.getContext()))
      return std::nullopt;
    contiguous = true;
  }
  return contiguous ? std::optional<unsigned>(column) : std::nullopt;
}

bool nnc::cpu::scheduleReduction(RewriterBase &rewriter, linalg::GenericOp op, int64_t lanes) {
  if (op.hasDynamicShape() || !isReduction(op))
    return false;
  if (scheduleColumns(rewriter, op, lanes))
    return true;
  if (!isRowReduction(op))
    return false;
  int64_t loops = op.getNumLoops(), reductions = op.getNumReductionLoops();
  int64_t parallel = loops - reductions;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t extent = 1;
  for (int64_t r : ArrayRef(ranges).drop_front(parallel))
    extent = nnc::saturatingMul(extent, r);
  if (extent < lanes)
    return false;
  // Several reduction loops (H and W of a pooling) become one row where every
  // input keeps them adjacent and in order.
  if (reductions > 1) {
    ReassociationIndices group = llvm::to_vector(llvm::seq<int64_t>(parallel, loops));
    if (!linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), {group}))
      return false;
    if (!readsAlongRows(op, loops - 1))
      return false;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      SmallVector<int64_t> inner;
      for (int64_t d = parallel + 1; d < loops; ++d)
        if (std::optional<unsigned> at = map.getResultPosition(getAffineDimExpr(d, op.getContext())))
          inner.push_back(*at);
      if (!collapsible(input->get(), inner))
        return false;
    }
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::CollapseResult> collapsed =
        linalg::collapseOpIterationDims(op, {group}, rewriter);
    if (failed(collapsed))
      return false;
    rewriter.replaceOp(op, collapsed->results);
    // `op` is gone: true from here on, whatever follows.
    op = cast<linalg::GenericOp>(collapsed->collapsedOp.getOperation());
  } else if (!readsAlongRows(op, loops - 1)) {
    return false;
  }
  ranges = op.getStaticLoopRanges();
  // One row at a time: each keeps its accumulators in registers.
  SmallVector<int64_t> sizes;
  for (int64_t d = 0; d < parallel; ++d)
    sizes.push_back(ranges[d] > 1 ? 1 : 0);
  sizes.push_back(0);
  linalg::GenericOp row = op;
  if (llvm::any_of(sizes, [](int64_t s) { return s != 0; })) {
    FailureOr<scf::SCFTilingResult> tiled = tile(rewriter, op, sizes, {});
    if (failed(tiled))
      return true;
    row = cast<linalg::GenericOp>(tiled->tiledOps.front());
  }
  splitRow(rewriter, row, lanes);
  return true;
}

bool nnc::cpu::isDynamicRowReduction(linalg::GenericOp op) {
  int64_t loops = op.getNumLoops();
  return op.getNumReductionLoops() == 1 && isReduction(op) && isRowReduction(op) &&
         readsAlongRows(op, loops - 1) &&
         ShapedType::isDynamic(op.getStaticLoopRanges().back());
}

void nnc::cpu::scheduleDynamicRowReduction(RewriterBase &rewriter, linalg::GenericOp row,
                                           int64_t lanes) {
  splitRow(rewriter, row, lanes);
}
