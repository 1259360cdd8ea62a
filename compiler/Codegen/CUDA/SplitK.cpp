//===- SplitK.cpp - contractions of few output tiles split across blocks --===//
//
// A batch-1 convolution late in a CNN has few outputs and long reductions
// (196 positions by 256 channels, 2304 terms each): the tiled matmul covers
// it with 16 blocks of 64 x 64 outputs and leaves most of the GPU's 132 SMs
// idle. Here such a contraction becomes two ops:
//
//   partial[s, ...] = neutral, combined with the terms of the s-th of S
//                     slices of one reduction dim   (S x the tiled blocks)
//   out[...]        = out, combined with partial[0..S-1, ...] in order
//
// The split index is a parallel dim that both operands read, so the tiled
// schedule takes it as a batch dim. Results are deterministic: no atomics,
// only the grouping of the terms differs from the serial loop.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Passes.h"
#include "compiler/Codegen/CUDA/Schedules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace nnc {
#define GEN_PASS_DEF_CUDASPLITK
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {

/// Terms each partial sums at least: fewer would make the partials' traffic
/// and the combining pass cost more than the parallelism gains.
constexpr int64_t kMinTerms = 128;
constexpr int64_t kMaxSplit = 32;

/// The result of `map` that is loop dim `d` alone, where no other result
/// reads `d` (the operand's dim to reshape into [S, range / S]).
std::optional<unsigned> pureResult(AffineMap map, unsigned d) {
  std::optional<unsigned> found;
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (!expr.isFunctionOfDim(d))
      continue;
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (found || !dim)
      return std::nullopt;
    found = i;
  }
  return found;
}

/// The split (S > 1) and the reduction dim it divides, if one pays.
struct Split {
  int64_t parts = 1;
  unsigned dim = 0;
};

Split chooseSplit(linalg::GenericOp op, const nnc::cuda::ContractionRoles &roles) {
  using namespace nnc::cuda;
  // Already enough large tiles: nothing to gain.
  if (tiledMatmulBlocks(roles, {64, 64}) >= kGpuSMs || roles.sizeM < 32 || roles.sizeN < 32)
    return {};
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // The outermost reduction dim that both operands read and S divides.
  // Each operand has one dim that d alone indexes, of d's range, to split.
  auto splittable = [&](unsigned d) {
    for (OpOperand *in : op.getDpsInputOperands()) {
      std::optional<unsigned> at = pureResult(op.getMatchingIndexingMap(in), d);
      if (!at || cast<ShapedType>(in->get().getType()).getDimSize(*at) != ranges[d])
        return false;
    }
    return true;
  };
  auto dimFor = [&](int64_t parts) -> std::optional<unsigned> {
    if (roles.sizeK / parts < kMinTerms)
      return std::nullopt;
    for (unsigned d : roles.k)
      if (ranges[d] % parts == 0 && splittable(d))
        return d;
    return std::nullopt;
  };
  auto blocksWith = [&](int64_t tile, int64_t parts) {
    return tiledMatmulBlocks(roles, {tile, tile}) * parts;
  };
  // Prefer 64 x 64 tiles (twice the reuse of 32 x 32); with 32 x 32 tiles,
  // a quarter of the work per block, aim for two blocks per SM.
  for (auto [tile, target] : {std::pair<int64_t, int64_t>{64, kGpuSMs}, {32, 2 * kGpuSMs}})
    for (int64_t parts = 2; parts <= kMaxSplit; parts *= 2)
      if (std::optional<unsigned> d = dimFor(parts); d && blocksWith(tile, parts) >= target)
        return {parts, *d};
  // Not enough either way: as many parts as the reduction allows, if the
  // partial products are then tiled (else the split only adds a pass).
  Split best;
  for (int64_t parts = 2; parts <= kMaxSplit; parts *= 2)
    if (std::optional<unsigned> d = dimFor(parts))
      best = {parts, *d};
  ContractionRoles partial = roles;
  partial.batchSize *= best.parts;
  partial.sizeK /= best.parts;
  return tiledMatmulTile(partial) ? best : Split{};
}

/// `op` as the partial contraction and the combining op; returns the
/// combining op's result, which replaces `op`'s.
Value split(RewriterBase &rewriter, linalg::GenericOp op, Operation *combiner, Split choice) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  unsigned numDims = op.getNumLoops();
  int64_t slice = op.getStaticLoopRanges()[choice.dim] / choice.parts;
  // A new last dim s. Each operand's dim read by the split dim d is
  // reshaped into [S, slice], read at (s, d), so d spans one slice.
  AffineExpr s = getAffineDimExpr(numDims, ctx);
  SmallVector<AffineMap> maps;
  SmallVector<Value> inputs;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    unsigned at = *pureResult(map, choice.dim);
    auto type = cast<RankedTensorType>(in->get().getType());
    SmallVector<int64_t> shape;
    SmallVector<ReassociationIndices> groups;
    SmallVector<AffineExpr> results;
    for (unsigned i = 0; i < type.getRank(); ++i) {
      ReassociationIndices group{int64_t(shape.size())};
      if (i == at) {
        shape.push_back(choice.parts);
        results.push_back(s);
        group.push_back(shape.size());
      }
      shape.push_back(i == at ? slice : type.getDimSize(i));
      results.push_back(map.getResult(i));
      groups.push_back(group);
    }
    inputs.push_back(tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get(shape, type.getElementType()), in->get(), groups));
    maps.push_back(AffineMap::get(numDims + 1, 0, results, ctx));
  }
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<AffineExpr> partialResults{s};
  llvm::append_range(partialResults, outMap.getResults());
  maps.push_back(AffineMap::get(numDims + 1, 0, partialResults, ctx));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.push_back(utils::IteratorType::parallel);

  // The partials start from the combiner's neutral element.
  Value init = op.getDpsInitOperand(0)->get();
  auto initType = cast<RankedTensorType>(init.getType());
  SmallVector<int64_t> partialShape{choice.parts};
  llvm::append_range(partialShape, initType.getShape());
  Type element = initType.getElementType();
  Value neutral =
      arith::ConstantOp::create(rewriter, loc, nnc::cuda::neutralElement(combiner));
  Value empty = tensor::EmptyOp::create(rewriter, loc, partialShape, element);
  Value filled = linalg::FillOp::create(rewriter, loc, neutral, empty).getResult(0);
  auto partial = linalg::GenericOp::create(
      rewriter, loc, TypeRange{filled.getType()}, inputs, ValueRange{filled}, maps,
      iterators, [](OpBuilder &, Location, ValueRange) {});
  rewriter.cloneRegionBefore(op.getRegion(), partial.getRegion(), partial.getRegion().end());
  partial.getRegion().front().erase(); // the empty block the builder made
  for (NamedAttribute attr : op->getDiscardableAttrs())
    partial->setAttr(attr.getName(), attr.getValue());

  // out = combiner(...combiner(combiner(out, partial[0]), partial[1])...),
  // an elementwise op (the partials read through S maps), so that
  // nnc-fuse-elementwise can give it the bias, activation or residual that
  // follows. An output filled with a constant (a matmul's zeros) is that
  // constant, not a read.
  unsigned rank = initType.getRank();
  SmallVector<AffineMap> combineMaps;
  for (int64_t part = 0; part < choice.parts; ++part) {
    SmallVector<AffineExpr> at{getAffineConstantExpr(part, ctx)};
    for (unsigned i = 0; i < rank; ++i)
      at.push_back(getAffineDimExpr(i, ctx));
    combineMaps.push_back(AffineMap::get(rank, 0, at, ctx));
  }
  combineMaps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  SmallVector<utils::IteratorType> combineIterators(rank, utils::IteratorType::parallel);
  Value out = init;
  Value constantOut;
  if (auto fill = out.getDefiningOp<linalg::FillOp>())
    if (matchPattern(fill.value(), m_Constant())) {
      constantOut = fill.value();
      out = tensor::EmptyOp::create(rewriter, loc, initType.getShape(), element);
    }
  SmallVector<Value> partials(choice.parts, partial.getResult(0));
  auto combine = linalg::GenericOp::create(
      rewriter, loc, TypeRange{initType}, partials, ValueRange{out}, combineMaps,
      combineIterators, [&](OpBuilder &b, Location l, ValueRange args) {
        Value acc = constantOut ? b.clone(*constantOut.getDefiningOp())->getResult(0)
                                : args.back();
        BlockArgument previous = op.getRegion().front().getArguments().back();
        for (int64_t part = 0; part < choice.parts; ++part) {
          Operation *c = b.clone(*combiner);
          for (OpOperand &operand : c->getOpOperands())
            operand.set(operand.get() == previous ? acc : args[part]);
          acc = c->getResult(0);
        }
        linalg::YieldOp::create(b, l, acc);
      });
  return combine.getResult(0);
}

struct SplitK : nnc::impl::CUDASplitKBase<SplitK> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && op.getNumReductionLoops() > 0 &&
          op.getNumDpsInputs() == 2 && op.getNumDpsInits() == 1)
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp candidate : candidates) {
      rewriter.setInsertionPoint(candidate);
      auto generic = dyn_cast<linalg::GenericOp>(candidate.getOperation());
      // A named contraction is judged by its generic form, and keeps its
      // name (in nnc --report) unless it is split.
      linalg::LinalgOp copy;
      if (!generic) {
        copy = cast<linalg::LinalgOp>(rewriter.clone(*candidate));
        FailureOr<linalg::GenericOp> generalized = linalg::generalizeNamedOp(rewriter, copy);
        if (failed(generalized)) {
          rewriter.eraseOp(copy);
          continue;
        }
        generic = *generalized;
      }
      std::optional<nnc::cuda::ContractionRoles> roles = nnc::cuda::classifyContraction(generic);
      Operation *combiner = roles ? nnc::cuda::matchCombiner(generic) : nullptr;
      Split choice = combiner ? chooseSplit(generic, *roles) : Split{};
      if (choice.parts < 2) {
        if (copy)
          rewriter.eraseOp(generic);
        continue;
      }
      rewriter.setInsertionPoint(candidate);
      Value result = split(rewriter, generic, combiner, choice);
      rewriter.replaceOp(candidate, result);
      if (copy)
        rewriter.eraseOp(generic);
    }
  }
};

} // namespace
