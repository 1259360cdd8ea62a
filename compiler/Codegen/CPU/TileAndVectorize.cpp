//===- TileAndVectorize.cpp - CPU schedules for linalg on tensors ---------===//
//
// Contractions (matmul, batched matmul, convolutions lowered to matmul or to
// shifted windows) get two levels of tiles: cache tiles, then a register
// tile two vectors wide stepped four k at a time, whose accumulator stays in
// vector registers across the k loop. Edge tiles are peeled off, so every
// tile has a static shape and takes the same unmasked kernel. The register
// tile's rows follow the target's register count (RegisterShapes).
// Elementwise ops and copies are vectorized along rows; reductions keep
// their accumulators in vectors (Reductions.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Common/ConstantMatrix.h"
#include "compiler/Codegen/CPU/Schedules.h"
#include "compiler/Codegen/Common/SaturatingMath.h"
#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#include <numeric>

namespace nnc {
#define GEN_PASS_DEF_TILEANDVECTORIZE
#define GEN_PASS_DEF_VECTORIZECOPIES
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;
using namespace nnc::cpu;

namespace {
// The k steps each step of a register tile's loop takes.
constexpr int64_t kRegK = 4;
// Thread chunks: at least this many multiply-adds to go parallel at all, and
// up to this many chunks (a few per thread balances static partitioning).
constexpr int64_t kMinParallelWork = 1 << 20, kChunks = 8;

/// What the schedules take from the target's vector unit.
struct RegisterShapes {
  /// f32 lanes of one vector register: elementwise ops and copies go this
  /// many elements at a time.
  int64_t lanes;
  /// Register tile: m rows x n columns of the accumulator, the columns along
  /// the vector. B's packed panels are n columns wide.
  int64_t m, n;

  /// Each k step of a tile broadcasts one A value per row and loads two
  /// vectors of B: rows x 2 accumulators, the two B vectors and a broadcast
  /// must fit in the registers. With 32 (AVX-512) that is 8 rows of 32
  /// floats (NOTES-CPU-CODEGEN.md), with 16 (AVX2) 4 rows of 16: measured on
  /// Zen 3, 6x16 ran 1024^3 no faster and MobileNetV2 (channel counts not
  /// multiples of 6) 20% slower; AVX-512's 8x32 spills there (3x slower).
  static RegisterShapes of(int64_t vectorBits, int64_t registers) {
    int64_t lanes = lanesOf(vectorBits);
    int64_t rows = llvm::bit_floor(uint64_t(std::max<int64_t>((registers - 3) / 2, 1)));
    return {lanes, rows, 2 * lanes};
  }
  static int64_t lanesOf(int64_t vectorBits) { return std::max<int64_t>(vectorBits / 32, 4); }
};

// Cache tiles: the best of those measured here for 1024^3 and ResNet-18's
// convolutions, a short m tile and the whole k of most layers.
constexpr int64_t kCacheM = 32, kCacheN = 128, kCacheK = 1024;
// The k cache tile of a matmul that reads A across or B unpacked (below):
// each k step of a register tile then reads its own cache line of that
// operand, a strided stream the prefetchers serve worse than packed panels
// or A's rows, so one pass over k must stay in L1 for the next register
// tile: 128 steps of A's line and B's are 16 KiB. On Zen 3 a 1x1 convolution
// of 320 to 1280 channels over 7x7 (A read across) went from 57 to 85
// GFLOP/s, SqueezeNet's classifier of 512 to 1000 over 13x13 (B unpacked)
// from 60 to 70.
constexpr int64_t kCacheKStrided = 128;

/// Whether the contraction reads A (its input indexed by m and k) across:
/// k is not A's contiguous dim, so each k step's rows lie in another cache
/// line (a 1x1 convolution's input [K, P], its positions the rows of A).
bool readsAAcross(linalg::LinalgOp op, unsigned m, unsigned k) {
  AffineExpr kExpr = getAffineDimExpr(k, op.getContext());
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map.getNumResults() != 0 && map.isFunctionOfDim(m) && map.isFunctionOfDim(k))
      return map.getResults().back() != kExpr;
  }
  return false;
}

/// The m, n, k loops of a plain f32 contraction with static bounds (with
/// dynamic ones when `dynamic`), or failure for anything the schedules do not
/// cover (those stay scalar).
FailureOr<linalg::ContractionDimensions> matmulDims(linalg::LinalgOp op, bool dynamic = false) {
  if (!linalg::isaContractionOpInterface(op) || op.hasDynamicShape() != dynamic ||
      op.getNumDpsInits() != 1 || !op.hasPureTensorSemantics())
    return failure();
  if (!getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
    return failure();
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  if (failed(dims))
    return failure();
  AffineMap outMap = op.getIndexingMapMatchingResult(op->getResult(0));
  // A shared A (the filter of a 1x1 convolution over several images, loops
  // (image, m, p, k), or of a grouped one, (image, group, m, p, k)): MLIR
  // counts the image loop as a second n dim, since A does not read it. Any
  // n dim other than C's innermost is such a batch loop: each of its steps
  // is a plain matmul with the same A. (Left to the scalar fallback,
  // MobileNetV2's narrowing 1x1 convolutions at batch 8 ran at 2% of peak.)
  if (dims->n.size() > 1) {
    AffineExpr innermost = outMap.getResults().back();
    SmallVector<unsigned, 2> kept;
    for (unsigned d : dims->n)
      (innermost == getAffineDimExpr(d, op.getContext()) ? kept : dims->batch).push_back(d);
    dims->n.assign(kept.begin(), kept.end());
    llvm::sort(dims->batch);
  }
  if (dims->m.size() != 1 || dims->n.size() != 1 || dims->k.size() != 1)
    return failure();
  // The vector dimension must be the innermost (contiguous) dim of B and C.
  if (outMap.getResults().back() != getAffineDimExpr(dims->n[0], op.getContext()))
    return failure();
  return dims;
}

/// The loops of a convolution over a flattened, padded input
/// (Contraction.cpp's buildShiftedConv): (n, m, q, c, i, j) with filter
/// (m, c, i, j), input (n, c, q + i*a + j*b) and output (n, m, q). Its
/// register tiles (one c, i and j each) are matmul tiles.
FailureOr<linalg::ContractionDimensions> shiftedConvDims(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || op.hasDynamicShape() || !op.hasPureTensorSemantics() ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 || op.getNumLoops() != 6 ||
      op.getNumReductionLoops() != 3 ||
      !getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
    return failure();
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  AffineMap window = maps[1];
  auto sum = dyn_cast<AffineBinaryOpExpr>(window.getNumResults() == 3 ? window.getResult(2)
                                                                       : AffineExpr());
  if (maps[0] != AffineMap::get(6, 0, {d(1), d(3), d(4), d(5)}, ctx) ||
      maps[2] != AffineMap::get(6, 0, {d(0), d(1), d(2)}, ctx) || !sum ||
      sum.getKind() != AffineExprKind::Add || window.getResult(0) != d(0) ||
      window.getResult(1) != d(3) ||
      !isa<arith::MulFOp>(generic.getBody()->front()))
    return failure();
  linalg::ContractionDimensions dims;
  dims.batch = {0};
  dims.m = {1};
  dims.n = {2};
  dims.k = {3, 4, 5};
  return dims;
}

/// The largest divisor of `value` that is at most `limit` (1 if none is larger).
int64_t largestDivisorUpTo(int64_t value, int64_t limit) {
  for (int64_t d = std::min(value, limit); d > 1; --d)
    if (value % d == 0)
      return d;
  return 1;
}

/// How many times 2 divides `v`: chunk counts with more factors of two stay
/// balanced on more of 2, 4 and 8 threads.
int64_t factorsOfTwo(int64_t v) { return llvm::countr_zero(static_cast<uint64_t>(v)); }

/// Thread chunks of a contraction: (parts of n, parts of m), dividing
/// `tilesN` and `tilesM` register tiles, at most `limit` chunks in all. The
/// runtime's thread count is known only at run time: chunk counts with more
/// factors of two stay balanced on more of 2, 4 and 8 threads (7 chunks on
/// 2 threads leave one idle an eighth of the time), then more chunks, then
/// more parts along the preferred dim.
std::pair<int64_t, int64_t> chooseChunks(int64_t tilesN, int64_t tilesM, int64_t limit,
                                         bool preferN) {
  std::pair<int64_t, int64_t> best{1, 1};
  auto key = [&](int64_t pn, int64_t pm) {
    return std::make_tuple(factorsOfTwo(pn * pm), pn * pm, preferN ? pn : pm);
  };
  for (int64_t pn = 1; pn <= std::min(tilesN, limit); ++pn)
    for (int64_t pm = 1; pn * pm <= limit && pm <= tilesM; ++pm)
      if (tilesN % pn == 0 && tilesM % pm == 0 && key(pn, pm) > key(best.first, best.second))
        best = {pn, pm};
  return best;
}

/// Whether chunks should split n rather than m: splitting n has every
/// thread read all of A, splitting m all of B. The smaller one is better
/// read twice: data another core wrote (or also reads) comes over slowly.
bool preferSplitN(linalg::LinalgOp op, const linalg::ContractionDimensions &dims) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t reduction = 1;
  for (unsigned d : dims.k)
    reduction = nnc::saturatingMul(reduction, ranges[d]);
  // A (weights, a filter's taps included) is m x reduction; B (an input,
  // whose shifted windows overlap) about n x the k loop alone.
  return nnc::saturatingMul(ranges[dims.m[0]], reduction) <=
         nnc::saturatingMul(ranges[dims.n[0]], ranges[dims.k[0]]);
}

/// Rows of A below which packing a B computed at run time costs more than it
/// saves: the pack is a pass over all of B, and fewer rows read it fewer
/// times. MobileNetV2's narrowing 1x1 convolutions (16 and 24 rows) ran 3%
/// faster unpacked at 1 and 2 threads.
constexpr int64_t kPackMinM = 32;

/// Whether `k` rows of the [K, N] matrix `b`, read a cache line each, do not
/// fit in L2 together for the sets their stride reaches: an L2 of 8 or more
/// ways of 64 KiB (every x86 core nnc was measured on) holds 8 lines of rows
/// 64 KiB apart. MobileNetV2 at 512x512 ran its unpacked 1x1 projections of
/// 128x128 maps (rows 64 KiB apart) at 16 GFLOP/s, every row of the B panel
/// from L3; 56x56 maps (rows 12.25 KiB apart: 256 sets) stay unpacked. Only
/// for more rows of A than one register tile: with one, B is read once
/// anyway, and packing it (1x144x16384) made the product 1.3-1.6x slower.
bool rowsCollideInL2(Value b, int64_t k) {
  constexpr int64_t kWayBytes = 64 * 1024, kWays = 8, kLineBytes = 64;
  auto type = cast<RankedTensorType>(b.getType());
  int64_t stride = type.getDimSize(1) * type.getElementTypeBitWidth() / 8;
  int64_t sets = std::min(kWayBytes / kLineBytes, kWayBytes / std::gcd(stride, kWayBytes));
  return sets * kWays < k;
}

FailureOr<linalg::GenericOp> splitIntoChunks(RewriterBase &rewriter, linalg::GenericOp op,
                                             int64_t lanes);
void scheduleElementwise(RewriterBase &rewriter, linalg::GenericOp op, int64_t lanes);

/// B [K, N] copied to panels [N/w, K, w], w the register tile's columns: the
/// columns a register tile reads at each k step become contiguous (one
/// 128-byte line on AVX-512) instead of rows N*4 bytes apart (which defeat
/// the prefetcher and collide in L1 sets).
Value packPanels(RewriterBase &b, Location loc, Value matrix, const RegisterShapes &reg) {
  auto type = cast<RankedTensorType>(matrix.getType());
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  Type element = type.getElementType();
  // [K, N] viewed as [K, N/w, w]; the panels are its transpose to
  // [N/w, K, w], copied one vector at a time.
  Value rows = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({k, n / reg.n, reg.n}, element), matrix,
      SmallVector<ReassociationIndices>{{0}, {1, 2}});
  MLIRContext *ctx = b.getContext();
  AffineExpr panel = getAffineDimExpr(0, ctx), row = getAffineDimExpr(1, ctx),
             lane = getAffineDimExpr(2, ctx);
  SmallVector<AffineMap> maps{AffineMap::get(3, 0, {row, panel, lane}, ctx),
                              AffineMap::getMultiDimIdentityMap(3, ctx)};
  auto packedType = RankedTensorType::get({n / reg.n, k, reg.n}, element);
  Value init = tensor::EmptyOp::create(b, loc, packedType.getShape(), element);
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  auto pack = linalg::GenericOp::create(b, loc, TypeRange{packedType}, ValueRange{rows},
                                        ValueRange{init}, maps, iterators,
                                        [](OpBuilder &nb, Location nl, ValueRange args) {
                                          linalg::YieldOp::create(nb, nl, args[0]);
                                        });
  Value packed = pack.getResult(0);
  // Large packs are split into thread chunks like any elementwise op.
  FailureOr<linalg::GenericOp> chunk = splitIntoChunks(b, pack, reg.lanes);
  if (succeeded(chunk) && *chunk != pack) {
    packed = chunk->getOperation()->getParentOfType<scf::ForallOp>().getResult(0);
    pack = *chunk;
  }
  FailureOr<scf::SCFTilingResult> tiled = tile(b, pack, {1, 1, reg.lanes}, {0, 1, 2});
  if (succeeded(tiled)) {
    if (packed == pack.getResult(0))
      packed = tiled->replacements.front();
    auto tileOp = cast<linalg::LinalgOp>(tiled->tiledOps.front());
    b.setInsertionPoint(tileOp);
    if (FailureOr<linalg::VectorizationResult> v = linalg::vectorize(b, tileOp); succeeded(v))
      b.replaceOp(tileOp, v->replacements);
  }
  b.setInsertionPointAfterValue(packed);
  return packed;
}

/// Panels of a constant B, laid out at compile time (flat [panels * K, w]),
/// in groups of `group` columns (N for one group; the thread chunks' columns
/// otherwise): each group's panels start at its first column.
Value constantPanels(OpBuilder &b, Location loc, RankedTensorType type, ArrayRef<float> matrix,
                     int64_t group, const RegisterShapes &reg) {
  int64_t k = type.getDimSize(0), n = type.getDimSize(1), w = reg.n;
  // A group's last panel is padded with zeros when w does not divide the
  // group; edge tiles read only their own lanes of it.
  int64_t perGroup = llvm::divideCeil(group, w), numPanels = n / group * perGroup;
  std::vector<float> packed(numPanels * k * w, 0.0f);
  for (int64_t panel = 0; panel < numPanels; ++panel) {
    int64_t first = panel / perGroup * group + panel % perGroup * w;
    int64_t width = std::min(w, panel / perGroup * group + group - first);
    for (int64_t row = 0; row < k; ++row)
      for (int64_t lane = 0; lane < width; ++lane)
        packed[(panel * k + row) * w + lane] = matrix[row * n + first + lane];
  }
  auto flatType = RankedTensorType::get({numPanels * k, w}, type.getElementType());
  auto attr = DenseResourceElementsAttr::get(
      flatType, "nnc_panels",
      HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(packed)));
  return arith::ConstantOp::create(b, loc, attr);
}

/// Panels [N/w, K, w] seen as [N/w * K, w], so tiles read them with plain
/// 2-D slices.
Value flatPanels(OpBuilder &b, Location loc, Value packed) {
  auto type = cast<RankedTensorType>(packed.getType());
  auto flatType = RankedTensorType::get({type.getDimSize(0) * type.getDimSize(1),
                                         type.getDimSize(2)},
                                        type.getElementType());
  return tensor::CollapseShapeOp::create(b, loc, flatType, packed,
                                         SmallVector<ReassociationIndices>{{0, 1}, {2}});
}

/// Points a full register tile's B operand (a k x w slice, through the
/// slices tiling nested, of some B) at B's panels, in groups of `group`
/// columns (0: one group).
void readPackedB(RewriterBase &rewriter, OpOperand &operand,
                 function_ref<Value(Value, int64_t)> panelsOf, int64_t group,
                 const RegisterShapes &reg) {
  auto slice = operand.get().getDefiningOp<tensor::ExtractSliceOp>();
  // Tiles start at multiples of w columns into their group (register, cache
  // and thread tiles all do), so a tile's lanes are the first of its panel.
  if (!slice || slice.getResultType().getRank() != 2 ||
      slice.getResultType().getDimSize(1) > reg.n)
    return;
  Operation *op = operand.getOwner();
  Location loc = slice.getLoc();
  rewriter.setInsertionPoint(op);
  AffineExpr d0 = rewriter.getAffineDimExpr(0), d1 = rewriter.getAffineDimExpr(1);
  SmallVector<OpFoldResult> offsets{rewriter.getIndexAttr(0), rewriter.getIndexAttr(0)};
  Value source = operand.get();
  while (auto inner = source.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (!inner.hasUnitStride() || inner.getSourceType().getRank() != 2)
      return;
    for (int i = 0; i < 2; ++i)
      offsets[i] = affine::makeComposedFoldedAffineApply(
          rewriter, loc, d0 + d1, {offsets[i], inner.getMixedOffsets()[i]});
    source = inner.getSource();
  }
  auto sourceType = cast<RankedTensorType>(source.getType());
  if (!sourceType.hasStaticShape())
    return;
  AffineExpr panel = d0.floorDiv(reg.n);
  if (group)
    panel = d0.floorDiv(group) * llvm::divideCeil(group, reg.n) + (d0 % group).floorDiv(reg.n);
  else
    group = sourceType.getDimSize(1);
  Value panels = panelsOf(source, group);
  if (!panels)
    return;
  rewriter.setInsertionPoint(op);
  OpFoldResult row = affine::makeComposedFoldedAffineApply(
      rewriter, loc, panel * sourceType.getDimSize(0) + d1, {offsets[1], offsets[0]});
  SmallVector<OpFoldResult> newOffsets{row, rewriter.getIndexAttr(0)};
  SmallVector<OpFoldResult> strides(2, rewriter.getIndexAttr(1));
  Value fromPanel = tensor::ExtractSliceOp::create(rewriter, loc, slice.getResultType(), panels,
                                                   newOffsets, slice.getMixedSizes(), strides);
  rewriter.modifyOpInPlace(op, [&] { operand.set(fromPanel); });
}


/// A contraction tiled with the op that initializes its accumulator (zeros,
/// or a broadcast bias) fused into each tile: the tiled op, its loops (outer
/// first) and the initializations fused into the tile.
struct FusedTiling {
  linalg::LinalgOp op;
  SmallVector<Operation *> loops;
  SmallVector<Operation *> inits;
};

/// Tiles `op` by `sizes` (0 = untiled) with loops in `order` (empty: loop
/// order), fusing the op that initializes its accumulator into each tile.
/// Callers tile no reduction loop: the initialization runs once per tile.
/// Register tiles mark it for vectorization.
FailureOr<FusedTiling> tileFusingInit(RewriterBase &rewriter, linalg::LinalgOp op,
                                      ArrayRef<int64_t> sizes, ArrayRef<int64_t> order,
                                      LoopType loops, bool registerTile = false) {
  scf::SCFTilingOptions tiling;
  tiling.setTileSizes(getAsIndexOpFoldResult(op.getContext(), sizes));
  tiling.setInterchange(order);
  tiling.setLoopType(loops);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tiling);
  options.setFusionControlFn(
      [](tensor::ExtractSliceOp, OpResult producer,
         bool isDestination) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        auto init = dyn_cast<linalg::LinalgOp>(producer.getOwner());
        if (!isDestination || !init || init.getNumReductionLoops() != 0 ||
            !(isa<linalg::FillOp>(init) || init.getNumDpsInputs() <= 1))
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTileAndFuseResult> fused = scf::tileConsumerAndFuseProducersUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(fused))
    return op->emitError("nnc: could not tile a matmul with its initialization");
  for (OpResult result : op->getResults())
    rewriter.replaceAllUsesWith(result, fused->replacements.lookup(result));
  FusedTiling result{cast<linalg::LinalgOp>(fused->tiledAndFusedOps.front()), {}, {}};
  for (LoopLikeOpInterface loop : fused->loops)
    result.loops.push_back(loop.getOperation());
  for (Operation *other : fused->tiledAndFusedOps)
    if (other != result.op.getOperation())
      result.inits.push_back(other);
  // The fused initialization: vectorized with the tile, its stores and the
  // tile's first read of the accumulator then fold away (the accumulator
  // starts in registers, a zero or bias vector).
  if (registerTile)
    for (Operation *init : result.inits)
      init->setAttr(kVectorizeIfPossible, rewriter.getUnitAttr());
  rewriter.eraseOp(op);
  return result;
}

LogicalResult scheduleMatmul(RewriterBase &rewriter, linalg::LinalgOp op,
                             const linalg::ContractionDimensions &dims,
                             const RegisterShapes &shapes) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned m = dims.m[0], n = dims.n[0], k = dims.k[0];
  // Pack a plain [K, N] B when it is a constant (packed at compile time) or
  // enough rows of A reuse it: remember which operand it is; the full
  // register tiles read panels once they are known.
  std::optional<int64_t> packOperand;
  // Columns per group of B's panels (below), 0 for one group.
  int64_t panelGroup = 0;
  SmallVector<Operation *> chunkInits;
  if (dims.batch.empty()) {
    MLIRContext *ctx = op.getContext();
    AffineMap kn = AffineMap::get(ranges.size(), 0,
                                  {getAffineDimExpr(k, ctx), getAffineDimExpr(n, ctx)}, ctx);
    for (OpOperand *input : op.getDpsInputOperands())
      if (op.getMatchingIndexingMap(input) == kn &&
          (nnc::isConstantMatrix(input->get()) ||
           (ranges[n] % shapes.n == 0 &&
            (ranges[m] >= kPackMinM ||
             (ranges[m] > shapes.m && rowsCollideInL2(input->get(), ranges[k]))))))
        packOperand = input->getOperandNumber();
  }
  // Rows of the register tile: one fewer when that divides m and the full
  // count does not (49 or 196 pixels of a 7x7 or 14x14 image with channels
  // on the vector): a ragged last tile of one row runs at a quarter of the
  // speed, its two accumulators a latency-bound chain.
  int64_t rowsM = shapes.m;
  if (ranges[m] > shapes.m && ranges[m] % shapes.m != 0 && ranges[m] % (shapes.m - 1) == 0)
    rowsM = shapes.m - 1;
  // Thread chunks: split m and n at register-tile multiples that divide them
  // exactly (every chunk keeps static shapes), batches one by one. The
  // runtime hands the chunks of the scf.forall to its threads.
  int64_t work = 1, chunks = 1;
  for (int64_t r : ranges)
    work = nnc::saturatingMul(work, r);
  // A product of one row streams its weights, each read once: two cores
  // stream them twice as fast, so it goes parallel with less work (a batch-1
  // MLP's 784x512 and 512x512 layers: 23 us on one thread, 11 on two).
  int64_t minWork = ranges[m] == 1 ? kMinParallelWork / 4 : kMinParallelWork;
  if (work >= minWork) {
    SmallVector<int64_t> split(ranges.size(), 0);
    for (unsigned b : dims.batch) {
      split[b] = 1;
      chunks = nnc::saturatingMul(chunks, ranges[b]);
    }
    bool preferN = preferSplitN(op, dims);
    if (chunks < kChunks) {
      auto [partsN, partsM] = chooseChunks(ranges[n] % shapes.n ? 1 : ranges[n] / shapes.n,
                                           ranges[m] % rowsM ? 1 : ranges[m] / rowsM,
                                           kChunks / chunks, preferN);
      if (partsN > 1)
        split[n] = ranges[n] / partsN;
      if (partsM > 1)
        split[m] = ranges[m] / partsM;
      chunks *= partsN * partsM;
    }
    // Otherwise (a classifier: one row, 1000 columns) chunks of n at
    // multiples of 8, each with its own ragged edge: a matrix-vector product
    // streams its weights from memory, and two cores stream them faster.
    // Such chunks start inside B's panels: a constant B is laid out in
    // panels per chunk, each chunk's last one padded, so every tile streams
    // contiguous weights (RegNetY's 440x440 layers over 7x7 in chunks of 88
    // columns: 255 us unpacked, 224 packed, at one thread on Zen 3; a
    // classifier's 1024x1000 with its weights out of cache, as in a model:
    // 426 us unpacked, whose rows of 4000 bytes each chunk reads 800 of,
    // 172 packed, on Zen 4). Chunks under four panels wide would pad B by
    // more than an eighth. B computed at run time stays unpacked.
    if (chunks == 1 && ranges[n] % 8 == 0) {
      int64_t parts = largestDivisorUpTo(ranges[n] / 8, kChunks);
      if (parts > 1) {
        split[n] = ranges[n] / parts;
        bool grouped = packOperand && split[n] >= 4 * shapes.n &&
                       nnc::isConstantMatrix(op->getOperand(*packOperand));
        if (grouped)
          panelGroup = split[n];
        else
          packOperand.reset();
      }
      chunks *= parts;
    }
    if (chunks > 1) {
      // The chunk fills its own tile in parallel, and a zero tensor shared by
      // several ops (CSE merges them) is not copied for each.
      // The preferred dim outermost: the runtime gives each thread a
      // contiguous share of the chunks first, so two threads split that dim.
      SmallVector<int64_t> chunkOrder(dims.batch.begin(), dims.batch.end());
      chunkOrder.append(preferN ? SmallVector<int64_t>{n, m} : SmallVector<int64_t>{m, n});
      FailureOr<FusedTiling> chunk =
          tileFusingInit(rewriter, op, split, chunkOrder, LoopType::ForallOp);
      if (failed(chunk))
        return failure();
      op = chunk->op;
      chunkInits = chunk->inits;
      ranges = op.getStaticLoopRanges();
      if (ShapedType::isDynamicShape(ranges))
        return op->emitError("nnc: thread chunks of a matmul must have static shapes");
    }
  }
  auto cacheSize = [&](unsigned d, int64_t size) { return ranges[d] > size ? size : 0; };
  SmallVector<int64_t> cache(ranges.size(), 0), reg(ranges.size(), 0), order;
  for (unsigned b : dims.batch) {
    cache[b] = 1;
    reg[b] = 1;
    order.push_back(b);
  }
  cache[m] = cacheSize(m, kCacheM / rowsM * rowsM);
  cache[n] = cacheSize(n, kCacheN);
  // The k cache tile counts multiply-adds per output: a convolution's
  // channel tile shrinks by its number of taps.
  int64_t taps = 1;
  for (unsigned d : dims.k)
    if (d != k)
      taps = nnc::saturatingMul(taps, ranges[d]);
  cache[k] = cacheSize(k, std::max<int64_t>(1, kCacheK / taps));
  // As few tiles as 128 steps allow, of about equal size in multiples of the
  // register k step: 144 steps are two tiles of 72, not 128 and 16 (a long
  // k still ends in a shorter tile: 2049 = 16 x 124 + 65).
  if (taps == 1 && ranges[m] > rowsM && (readsAAcross(op, m, k) || !packOperand)) {
    int64_t tiles = llvm::divideCeil(ranges[k], kCacheKStrided);
    cache[k] = cacheSize(k, llvm::alignTo(llvm::divideCeil(ranges[k], tiles), kRegK));
  }
  SmallVector<int64_t> cacheOrder(order);
  cacheOrder.push_back(n);
  cacheOrder.append(dims.k.begin(), dims.k.end());
  cacheOrder.push_back(m);
  // Tiles `target` along the dims of `order` whose size is nonzero; the loops
  // made, paired with their dims.
  SmallVector<std::pair<int64_t, Operation *>> loops;
  auto tileLevel = [&](linalg::LinalgOp target, ArrayRef<int64_t> sizes, ArrayRef<int64_t> order,
                       bool fuseInit, bool registerTile) -> FailureOr<linalg::LinalgOp> {
    SmallVector<int64_t> tiledDims;
    for (int64_t d : order)
      if (sizes[d] != 0)
        tiledDims.push_back(d);
    if (tiledDims.empty())
      return target;
    linalg::LinalgOp tiled;
    SmallVector<Operation *> made;
    if (fuseInit) {
      FailureOr<FusedTiling> fused =
          tileFusingInit(rewriter, target, sizes, order, LoopType::ForOp, registerTile);
      if (failed(fused))
        return failure();
      tiled = fused->op;
      made = fused->loops;
    } else {
      FailureOr<scf::SCFTilingResult> plain = tile(rewriter, target, sizes, order);
      if (failed(plain))
        return target->emitError("nnc: could not tile a matmul");
      tiled = cast<linalg::LinalgOp>(plain->tiledOps.front());
      for (LoopLikeOpInterface loop : plain->loops)
        made.push_back(loop.getOperation());
    }
    for (auto [d, loop] : llvm::zip_equal(tiledDims, made))
      loops.emplace_back(d, loop);
    return tiled;
  };
  // The accumulator's initialization (zeros, a bias) moves into each
  // register tile when no cache tile splits the reduction: the tile then
  // starts from a vector in registers instead of a pass over memory that
  // stores the initial values and a read that loads them back.
  bool fuseInit = llvm::all_of(dims.k, [&](unsigned d) { return cache[d] == 0; });
  // Otherwise the chunk initializes its accumulator in one pass, vectorized
  // like any elementwise op: left to LLVM, a bias broadcast over a chunk of
  // 32 channels and 1088 pixels was unrolled into 4,352 stores, whose
  // scheduling took seconds of ResNet-18's compile at 512x512.
  if (!fuseInit)
    for (Operation *init : chunkInits)
      if (auto generic = dyn_cast<linalg::GenericOp>(init))
        scheduleElementwise(rewriter, generic, shapes.lanes);
  FailureOr<linalg::LinalgOp> cached =
      tileLevel(op, cache, cacheOrder, fuseInit, /*registerTile=*/false);
  if (failed(cached))
    return failure();
  size_t cacheLoops = loops.size();
  // Register tile: a short m keeps all its rows (a batch-1 matmul is a row).
  int64_t regM = std::min(ranges[m], rowsM), regN = std::min(ranges[n], shapes.n);
  reg[m] = regM;
  reg[n] = regN;
  // The other reduction loops (a convolution's taps) step one at a time.
  for (unsigned d : dims.k)
    reg[d] = 1;
  reg[k] = std::min(ranges[k], kRegK);
  // Tiled in two steps, the parallel loops (with the initialization) around
  // the reduction loops.
  SmallVector<int64_t> regOrder(order), parallel(reg), reduction(ranges.size(), 0);
  regOrder.append({n, m});
  regOrder.append(dims.k.begin(), dims.k.end());
  for (unsigned d : dims.k) {
    reduction[d] = reg[d];
    parallel[d] = 0;
  }
  FailureOr<linalg::LinalgOp> outer =
      tileLevel(*cached, parallel, regOrder, fuseInit, /*registerTile=*/true);
  if (failed(outer))
    return failure();
  FailureOr<linalg::LinalgOp> registers =
      tileLevel(*outer, reduction, regOrder, /*fuseInit=*/false, /*registerTile=*/true);
  if (failed(registers))
    return failure();
  // Edge tiles are peeled off the n and m loops of both levels, so every
  // register tile has a static shape: full ones vectorize without masks and
  // keep their accumulators in registers. Inside a peeled edge cache tile
  // the register loops have other bounds: those whose cache tile is not a
  // multiple of the register tile are peeled too.
  for (auto [i, entry] : llvm::enumerate(loops)) {
    auto [d, loop] = entry;
    if (i < cacheLoops) {
      if (ranges[d] % cache[d] != 0)
        loop->setAttr(kPeel, rewriter.getUnitAttr());
      continue;
    }
    int64_t extent = cache[d] ? cache[d] : ranges[d];
    if (extent % reg[d] != 0 || ranges[d] % reg[d] != 0)
      loop->setAttr(kPeel, rewriter.getUnitAttr());
    // The accumulator stays in registers across the k loops (a convolution's
    // taps included). Unrolling the tap loops was measured: no faster in
    // ResNet-18 or UNet, and three times the compile time.
    if (llvm::is_contained(dims.k, d))
      loop->setAttr(kRegisterK, rewriter.getUnitAttr());
  }
  (*registers)->setAttr(kVectorize, rewriter.getUnitAttr());
  if (packOperand)
    (*registers)->setAttr(kPackedB, rewriter.getI64IntegerAttr(*packOperand));
  if (panelGroup)
    (*registers)->setAttr(kPanelGroup, rewriter.getI64IntegerAttr(panelGroup));
  return success();
}

/// A contraction with dynamic bounds (attention's products over a dynamic
/// sequence length): each batch a thread chunk, then the static schedule's
/// register tiles in loops with dynamic bounds. The m and n loops' edges are
/// peeled off: full tiles vectorize and keep their accumulators in
/// registers across the k loop; the edges stay scalar.
LogicalResult scheduleDynamicMatmul(RewriterBase &rewriter, linalg::LinalgOp op,
                                    const linalg::ContractionDimensions &dims,
                                    const RegisterShapes &shapes) {
  unsigned m = dims.m[0], n = dims.n[0], k = dims.k[0];
  int64_t loops = op.getNumLoops();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // A part of a dynamic row count in tiles of its rows (nnc.row_tile):
  // none masked along the rows, where a tile of shapes.m rows masked to
  // fewer took a branch per row at each k step.
  auto rowTile = op->getAttrOfType<IntegerAttr>(nnc::kRowTileAttr);
  int64_t rows = rowTile ? std::min<int64_t>(rowTile.getInt(), shapes.m) : shapes.m;
  SmallVector<int64_t> batchOrder(dims.batch.begin(), dims.batch.end());
  if (!dims.batch.empty()) {
    SmallVector<int64_t> split(loops, 0);
    for (unsigned b : dims.batch)
      split[b] = 1;
    FailureOr<FusedTiling> chunk = tileFusingInit(rewriter, op, split, batchOrder, LoopType::ForallOp);
    if (failed(chunk))
      return failure();
    op = chunk->op;
  }
  SmallVector<int64_t> parallel(loops, 0), reduction(loops, 0);
  parallel[m] = rows;
  parallel[n] = shapes.n;
  reduction[k] = 1;
  SmallVector<int64_t> order(batchOrder);
  order.append({n, m, k});
  FailureOr<FusedTiling> outer =
      tileFusingInit(rewriter, op, parallel, order, LoopType::ForOp, /*registerTile=*/true);
  if (failed(outer))
    return failure();
  FailureOr<scf::SCFTilingResult> inner = tile(rewriter, outer->op, reduction, order);
  if (failed(inner))
    return op->emitError("nnc: could not tile a matmul");
  for (Operation *loop : outer->loops)
    loop->setAttr(kPeel, rewriter.getUnitAttr());
  inner->loops.front()->setAttr(kRegisterK, rewriter.getUnitAttr());
  Operation *tileOp = inner->tiledOps.front();
  tileOp->setAttr(kVectorizeIfPossible, rewriter.getUnitAttr());
  // The edges' tiles (copies of this one, peeled) take masks, where the
  // masks depend on the run only: lanes past a static extent (an 8-wide
  // edge of a 16-lane tile) would be masked off by constants, which LLVM
  // turns into plain loads of the masked-off half, past the end of the
  // buffer on the last row. Such an edge stays scalar.
  auto maskable = [&](unsigned d, int64_t tile) {
    return ShapedType::isDynamic(ranges[d]) || ranges[d] % tile == 0;
  };
  if (maskable(m, rows) && maskable(n, shapes.n)) {
    SmallVector<int64_t> vectorSizes(loops, 1);
    vectorSizes[m] = rows;
    vectorSizes[n] = shapes.n;
    tileOp->setAttr(kVectorSizes, rewriter.getDenseI64ArrayAttr(vectorSizes));
  }
  return success();
}

/// A register tile of a shifted-window convolution (one image, a few
/// channels, one tap) as the matmul tile it is: filter [M, K] times input
/// window [K, N], all three read through rank-reducing slices.
void convTileAsMatmul(RewriterBase &rewriter, linalg::GenericOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t m = ranges[1], n = ranges[2], k = ranges[3];
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  // A slice of the operand (or all of it, when the tile spans its dims).
  auto reduced = [&](Value value, ArrayRef<int64_t> shape) -> Value {
    auto valueType = cast<RankedTensorType>(value.getType());
    auto type = RankedTensorType::get(shape, valueType.getElementType());
    if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>())
      return tensor::ExtractSliceOp::create(rewriter, loc, type, slice.getSource(),
                                            slice.getMixedOffsets(), slice.getMixedSizes(),
                                            slice.getMixedStrides());
    // An input that is a whole tensor: a reshape.
    std::optional<SmallVector<ReassociationIndices>> groups =
        getReassociationIndicesForCollapse(valueType.getShape(), shape);
    return tensor::CollapseShapeOp::create(rewriter, loc, type, value, *groups);
  };
  Value a = reduced(op.getDpsInputs()[0], {m, k}), b = reduced(op.getDpsInputs()[1], {k, n});
  // An accumulator that is a whole tensor (the loop's own, when the tile's
  // initialization is fused into it) is read and written back as a
  // rank-reducing slice: the register k loops then keep it in registers.
  Value init = op.getDpsInits()[0];
  auto initType = cast<RankedTensorType>(init.getType());
  bool whole = !init.getDefiningOp<tensor::ExtractSliceOp>();
  SmallVector<OpFoldResult> zeros(3, rewriter.getIndexAttr(0)), ones(3, rewriter.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes =
      getAsIndexOpFoldResult(rewriter.getContext(), initType.getShape());
  Value c = whole ? tensor::ExtractSliceOp::create(
                        rewriter, loc, RankedTensorType::get({m, n}, initType.getElementType()),
                        init, zeros, sizes, ones)
                  : reduced(init, {m, n});
  auto matmul = linalg::MatmulOp::create(rewriter, loc, ValueRange{a, b}, ValueRange{c});
  matmul->setAttr(kVectorize, rewriter.getUnitAttr());
  if (whole) {
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(op, matmul.getResult(0), init, zeros, sizes,
                                                       ones);
    return;
  }
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, op.getResultTypes()[0],
                                                      matmul.getResult(0),
                                                      SmallVector<ReassociationIndices>{{0, 1}, {2}});
}

/// Peels every marked loop under `root`, outer ones first, then those in each
/// one's body and in its peeled copy (clones of inner marked loops are peeled
/// in turn). Each walk covers one marked loop's subtree, so the cost grows
/// with the IR's size times the nesting of marked loops, not with the number
/// of loops times the function's size.
void peelMarkedLoops(RewriterBase &rewriter, Operation *root) {
  SmallVector<scf::ForOp> outermost;
  root->walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
    if (!loop->hasAttr(kPeel))
      return WalkResult::advance();
    outermost.push_back(loop);
    return WalkResult::skip();
  });
  for (scf::ForOp loop : outermost) {
    loop->removeAttr(kPeel);
    scf::ForOp partial;
    bool peeled = succeeded(scf::peelForLoopAndSimplifyBounds(rewriter, loop, partial));
    peelMarkedLoops(rewriter, loop);
    if (peeled && partial)
      peelMarkedLoops(rewriter, partial);
  }
}

/// The loop the first input read across is contiguous along: an input that
/// depends on the innermost loop but whose contiguous dim is another loop (the
/// copy of a [P, M] matmul result to NCHW). scheduleElementwise transposes
/// square tiles of it in registers.
std::optional<unsigned> readAcrossLoop(linalg::GenericOp op) {
  unsigned inner = op.getNumLoops() - 1;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map.getNumResults() == 0 || !map.isFunctionOfDim(inner))
      continue;
    auto across = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (across && across.getPosition() != inner)
      return across.getPosition();
  }
  return std::nullopt;
}

/// Thread chunk sizes, up to kChunks chunks: exact divisors only, so chunks
/// keep static shapes. minChunk[d] is the least extent a chunk keeps along
/// loop d (0: a loop not to split); chunks of the innermost loop (of two or
/// more) stay whole vectors of `lanes` unless minChunk says otherwise. Like
/// a matmul's (chooseChunks), the count with the most factors of two wins,
/// then the most chunks, then the fewest loops split (a window op's chunks
/// re-read their windows' borders), then the most parts of the outermost
/// loops: a channels-last [1, 14, 14, C] depthwise convolution, split 7 ways
/// by its rows, left one of two threads idle a seventh of the time; now it
/// splits its channels 8 ways. Empty when fewer than two chunks result.
SmallVector<int64_t> chunkSizes(ArrayRef<int64_t> ranges, ArrayRef<int64_t> minChunk,
                                int64_t lanes) {
  size_t rank = ranges.size();
  SmallVector<SmallVector<int64_t>> options(rank, SmallVector<int64_t>{1});
  for (size_t d = 0; d < rank; ++d) {
    if (minChunk[d] == 0)
      continue;
    for (int64_t p = 2; p <= std::min(kChunks, ranges[d]); ++p)
      if (ranges[d] % p == 0 && ranges[d] / p >= minChunk[d] &&
          (d + 1 < rank || rank == 1 || minChunk[d] > 1 || (ranges[d] / p) % lanes == 0))
        options[d].push_back(p);
  }
  auto keyOf = [](ArrayRef<int64_t> split, int64_t count) {
    int64_t loopsSplit = llvm::count_if(split, [](int64_t p) { return p > 1; });
    return std::make_tuple(factorsOfTwo(count), count, -loopsSplit);
  };
  SmallVector<int64_t> parts(rank, 1), best(rank, 1);
  int64_t bestChunks = 1;
  auto search = [&](auto &self, size_t d, int64_t chunks) -> void {
    if (d == rank) {
      auto key = keyOf(parts, chunks), bestKey = keyOf(best, bestChunks);
      if (key > bestKey || (key == bestKey && best < parts)) {
        best = parts;
        bestChunks = chunks;
      }
      return;
    }
    for (int64_t p : options[d]) {
      if (chunks * p > kChunks)
        break;
      parts[d] = p;
      self(self, d + 1, chunks * p);
    }
    parts[d] = 1;
  };
  search(search, 0, 1);
  if (bestChunks < 2)
    return {};
  SmallVector<int64_t> split(rank, 0);
  for (size_t d = 0; d < rank; ++d)
    if (best[d] > 1)
      split[d] = ranges[d] / best[d];
  return split;
}

/// Splits a large generic into chunks along its outer parallel loops; the
/// chunks become an scf.forall that the runtime spreads over its threads.
FailureOr<linalg::GenericOp> splitIntoChunks(RewriterBase &rewriter, linalg::GenericOp op,
                                             int64_t lanes) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() || op.getNumDpsInits() != 1)
    return op;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // Work in operations: a fused depthwise convolution does a few dozen per
  // element, a copy one.
  int64_t work = op.getBlock()->getOperations().size();
  for (int64_t r : ranges)
    work = nnc::saturatingMul(work, r);
  // Low: run serially, a small op reads on one core what both cores just
  // wrote (a 14x14x256 transposed copy in ResNet-18: 18 us on one thread,
  // 69 us serial between two-thread kernels where the cores are far apart).
  if (work < kMinParallelWork / 32)
    return op;
  // The loop an input is read across keeps a vector's worth per chunk:
  // narrower chunks would lose the register transposes to gathers.
  SmallVector<int64_t> minChunk(ranges.size(), 1);
  if (std::optional<unsigned> across = readAcrossLoop(op))
    minChunk[*across] = lanes;
  // So does a column reduction's column, its vector.
  if (std::optional<unsigned> column = reductionColumn(op))
    minChunk[*column] = lanes;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (size_t d = 0; d < ranges.size(); ++d)
    if (iterators[d] != utils::IteratorType::parallel)
      minChunk[d] = 0;
  SmallVector<int64_t> split = chunkSizes(ranges, minChunk, lanes);
  if (split.empty())
    return op;
  FailureOr<scf::SCFTilingResult> tiled = tile(rewriter, op, split, {}, LoopType::ForallOp);
  if (failed(tiled))
    return op->emitError("nnc: cannot split this op into thread chunks");
  return cast<linalg::GenericOp>(tiled->tiledOps.front());
}

/// The rows of a window op (a depthwise convolution or pooling summing taps
/// of one input: buildDepthwiseConv, buildTapPool) that its windows span, for
/// windows of adjacent rows: the span of the row offsets of its full-rank
/// inputs that are unit-stride slices of one source, where at most one row
/// inside it may be missing (the center tap's window of a padded input can
/// fold to the unpadded input itself). 0 for other ops, and for dilated
/// windows, whose adjacent output rows share no input rows.
int64_t windowHeight(linalg::LinalgOp op) {
  int64_t rank = op.getNumLoops();
  if (rank < 2)
    return 0;
  llvm::SmallDenseMap<Value, llvm::SmallDenseSet<int64_t>> rowsOf;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value v = input->get();
    // Per-channel weights and biases are not windows.
    if (cast<ShapedType>(v.getType()).getRank() != rank)
      continue;
    int64_t row = 0;
    bool sliced = false;
    while (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
      if (slice.getSourceType().getRank() != rank || slice.getResultType().getRank() != rank ||
          !slice.hasUnitStride() || ShapedType::isDynamic(slice.getStaticOffsets()[rank - 2]))
        return 0;
      row += slice.getStaticOffsets()[rank - 2];
      v = slice.getSource();
      sliced = true;
    }
    if (sliced)
      rowsOf[v].insert(row);
  }
  int64_t height = 0;
  for (auto &[root, rows] : rowsOf) {
    auto [low, high] = std::minmax_element(rows.begin(), rows.end());
    int64_t span = *high - *low + 1;
    if (span - int64_t(rows.size()) <= 1)
      height = std::max(height, span);
  }
  return height;
}

/// Output columns per tile of a channels-last window op.
constexpr int64_t kChannelsLastColumns = 4;

/// Whether `op` is a window op computed channels-last (buildDepthwiseConv's
/// [N, H, W, C] form): windows of one source shifted along the column loop,
/// times per-channel operands read along the innermost loop.
bool channelsLastWindow(linalg::LinalgOp op) {
  int64_t loops = op.getNumLoops();
  if (loops < 3)
    return false;
  AffineExpr channel = getAffineDimExpr(loops - 1, op.getContext());
  bool perChannel = false, shifted = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map.getNumResults() == 1 && map.getResult(0) == channel)
      perChannel = true;
    if (!map.isIdentity())
      continue;
    // Through the thread chunk's slice to the window's.
    Value v = input->get();
    while (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
      if (slice.getSourceType().getRank() != loops)
        break;
      int64_t column = slice.getStaticOffsets()[loops - 2];
      if (!ShapedType::isDynamic(column) && column != 0 &&
          slice.getStaticOffsets()[loops - 1] == 0)
        shifted = true;
      v = slice.getSource();
    }
  }
  return perChannel && shifted;
}

/// Tiles `op` to one row segment of `lanes` elements of its innermost loop
/// (static shapes), marks the edge loop for peeling and the tile for
/// vectorization where possible. A window op at least 5 rows high takes two
/// output rows per tile (an odd last row peeled): their windows share all but
/// one input row, which the tile then loads once (5x5 depthwise convolutions
/// 8-25% faster; at 3x3 the saving did not pay for the extra registers). A
/// channels-last one takes 4 output columns per tile: each tap's weights are
/// loaded once for the 4, and the windows of adjacent columns share loads.
void splitRowIntoVectors(RewriterBase &rewriter, linalg::LinalgOp op, int64_t lanes) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> sizes(ranges.size(), 1);
  sizes.back() = std::min(ranges.back(), lanes);
  int64_t rows = ranges.size() - 2;
  if (ranges.size() >= 2 && ranges[rows] >= 2) {
    if (channelsLastWindow(op))
      sizes[rows] = std::min<int64_t>(ranges[rows], kChannelsLastColumns);
    else if (windowHeight(op) >= 5)
      sizes[rows] = 2;
  }
  SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, ranges.size()));
  FailureOr<scf::SCFTilingResult> tiled = tile(rewriter, op, sizes, order);
  if (failed(tiled))
    return;
  if (ranges.back() % sizes.back() != 0)
    tiled->loops.back()->setAttr(kPeel, rewriter.getUnitAttr());
  // An odd last row is its own tile.
  if (sizes.size() >= 2 && ranges[rows] % sizes[rows] != 0)
    tiled->loops[rows]->setAttr(kPeel, rewriter.getUnitAttr());
  tiled->tiledOps.front()->setAttr(kVectorizeIfPossible, rewriter.getUnitAttr());
}


/// `op`'s indexing maps with every loop of a single step (static range 1)
/// replaced by 0: exact, since such a loop's index is always 0.
SmallVector<AffineMap> mapsWithoutSingleSteps(linalg::LinalgOp op,
                                              ArrayRef<int64_t> ranges) {
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineExpr> replacements;
  for (auto [d, range] : llvm::enumerate(ranges))
    replacements.push_back(range == 1 ? getAffineConstantExpr(0, ctx) : getAffineDimExpr(d, ctx));
  SmallVector<AffineMap> maps;
  for (AffineMap map : op.getIndexingMapsArray())
    maps.push_back(map.replaceDimsAndSymbols(replacements, {}, map.getNumDims(), 0));
  return maps;
}

/// Whether every input of the copy-like `op` reads a contiguous row along
/// its innermost loop once all other loops are single steps.
bool contiguousOnceRowsAreSteps(linalg::GenericOp op) {
  // Only maps keep it from vectorizing: an input read at a sum of loops,
  // and no element extracted in the body.
  bool sums = llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    return !op.getMatchingIndexingMap(input).isProjectedPermutation(/*allowZeroInResults=*/true);
  });
  bool extracts = false;
  op.getBody()->walk([&](tensor::ExtractOp) { extracts = true; });
  if (!sums || extracts)
    return false;
  // The tile's ranges: single steps but the innermost loop (any range above
  // one keeps it in the maps).
  SmallVector<int64_t> ranges(op.getNumLoops(), 1);
  ranges.back() = 2;
  SmallVector<AffineMap> maps = mapsWithoutSingleSteps(op, ranges);
  AffineExpr inner = getAffineDimExpr(ranges.size() - 1, op.getContext());
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = maps[input->getOperandNumber()];
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true) ||
        (map.isFunctionOfDim(ranges.size() - 1) && map.getResults().back() != inner))
      return false;
  }
  return op.getIndexingMapsArray().back().isIdentity();
}

/// Whether `op` is elementwise (all loops parallel, the result written in
/// loop order) on operands of whole bytes.
bool elementwiseOnBytes(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 || op.getNumLoops() == 0 ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return false;
  return onBytes(op);
}

/// Whether `op` reduces along its innermost loop only, into a result
/// written in the order of the other loops (softmax's maximum and sum).
bool rowReduction(linalg::GenericOp op) {
  int64_t loops = op.getNumLoops();
  return op.hasPureTensorSemantics() && op.getNumDpsInits() == 1 && loops > 0 &&
         op.getNumReductionLoops() == 1 &&
         op.getIteratorTypesArray().back() == utils::IteratorType::reduction &&
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)) ==
             AffineMap::getMultiDimIdentityMap(loops, op.getContext()).dropResult(loops - 1) &&
         onBytes(op);
}

/// An op with dynamic parallel loops as scf.for loops over them around the op
/// on one index of each: static, when its other loops are. An elementwise
/// op's innermost dynamic loop (a row of attention's scores over a dynamic
/// sequence) steps a vector register of `lanes` instead, its edge peeled off:
/// the full steps vectorize, the edge takes one masked step. A reduction
/// along that loop (softmax's over a dynamic axis) goes one row at a time,
/// each kept in vector accumulators (scheduleDynamicRowReduction; null
/// returned: nothing is left to schedule). Failure (the op stays as it is)
/// for another dynamic reduction.
///
/// Around those loops, the dynamic parallel loops other than such a row are
/// split into thread chunks (an scf.forall), as many as the op's work is
/// worth at run time: up to kChunks, the outer loops taking as many as they
/// have iterations (a batch of 1 leaves them to the sequence); one, run
/// inline by the thread pool, for the few rows of a short sequence.
FailureOr<linalg::GenericOp> loopOverDynamicDims(RewriterBase &rewriter, linalg::GenericOp op,
                                                 int64_t lanes) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> sizes(ranges.size(), 0);
  bool rows = ShapedType::isDynamic(ranges.back()) && (elementwiseOnBytes(op) || rowReduction(op));
  bool accumulated = rows && isDynamicRowReduction(op);
  SmallVector<unsigned> chunked;
  for (auto [i, range] : llvm::enumerate(ranges)) {
    bool row = rows && i + 1 == ranges.size();
    // The accumulators hold one row: its static parallel loops go a step at
    // a time too.
    if (accumulated && !row && range != 1)
      sizes[i] = 1;
    if (!ShapedType::isDynamic(range))
      continue;
    if (op.getIteratorTypesArray()[i] != utils::IteratorType::parallel && !row)
      return failure();
    if (!row)
      chunked.push_back(i);
    sizes[i] = 1;
  }
  if (accumulated)
    sizes.back() = 0;
  else if (rows)
    sizes.back() = lanes;
  // An input read across a static loop (attention's keys transposed to
  // [.., 64, past], past dynamic): square tiles of lanes over it and the row,
  // transposed in registers as scheduleElementwise's static ones, the other
  // static loops a step at a time (a whole 64-long column per vector row
  // ran 6x slower: 36 us against 5.8 in a decoder step).
  if (rows && !accumulated)
    if (std::optional<unsigned> across = readAcrossLoop(op);
        across && !ShapedType::isDynamic(ranges[*across]) && ranges[*across] >= lanes &&
        ranges[*across] % lanes == 0)
      for (unsigned d = 0; d + 1 < ranges.size(); ++d)
        if (!ShapedType::isDynamic(ranges[d]))
          sizes[d] = d == *across ? lanes : 1;
  if (!chunked.empty() && op.hasPureTensorSemantics() && op.getNumDpsInits() == 1) {
    // Work as splitIntoChunks counts it: operations per element times the
    // elements, here known at run time.
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    auto constant = [&](int64_t v) { return arith::ConstantIndexOp::create(rewriter, loc, v); };
    Value work = constant(op.getBlock()->getOperations().size());
    SmallVector<Range, 4> loopRanges =
        cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(rewriter, loc);
    for (const Range &range : loopRanges)
      work = arith::MulIOp::create(rewriter, loc, work,
                                   getValueOrCreateConstantIndexOp(rewriter, loc, range.size));
    Value wanted = arith::MinUIOp::create(
        rewriter, loc, arith::DivUIOp::create(rewriter, loc, work, constant(kMinParallelWork / 32)),
        constant(kChunks));
    SmallVector<OpFoldResult> numThreads(ranges.size(), rewriter.getIndexAttr(0));
    for (unsigned d : chunked) {
      // This loop's chunks: what is still wanted, at most its iterations,
      // at least one; the loops inside take the rest.
      Value extent = getValueOrCreateConstantIndexOp(rewriter, loc, loopRanges[d].size);
      Value count = arith::MaxUIOp::create(
          rewriter, loc, arith::MinUIOp::create(rewriter, loc, wanted, extent), constant(1));
      numThreads[d] = count;
      wanted = arith::CeilDivUIOp::create(rewriter, loc, wanted, count);
    }
    scf::SCFTilingOptions options;
    options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
    options.setNumThreads(numThreads);
    FailureOr<scf::SCFTilingResult> split =
        scf::tileUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(split))
      return failure();
    rewriter.replaceOp(op, split->replacements);
    auto chunk = dyn_cast<linalg::GenericOp>(split->tiledOps.front());
    if (!chunk)
      return failure();
    op = chunk;
  }
  linalg::GenericOp inner = op;
  if (llvm::any_of(sizes, [](int64_t s) { return s != 0; })) {
    FailureOr<scf::SCFTilingResult> tiled = tile(rewriter, op, sizes, {});
    if (failed(tiled))
      return failure();
    inner = dyn_cast<linalg::GenericOp>(tiled->tiledOps.front());
    if (!inner)
      return failure();
    if (rows && !accumulated)
      tiled->loops.back()->setAttr(kPeel, rewriter.getUnitAttr());
  }
  if (accumulated) {
    scheduleDynamicRowReduction(rewriter, inner, lanes);
    return linalg::GenericOp();
  }
  if (rows) {
    // The peeled edge (a copy of this op) is vectorized with masks.
    SmallVector<int64_t> vectorSizes(sizes);
    for (auto [size, range] : llvm::zip(vectorSizes, ranges))
      if (size == 0)
        size = range;
    inner->setAttr(kVectorizeIfPossible, rewriter.getUnitAttr());
    inner->setAttr(kVectorSizes, rewriter.getDenseI64ArrayAttr(vectorSizes));
  }
  return inner;
}

/// Elementwise ops (all loops parallel, each operand read along a projected
/// permutation, the result written in loop order) are vectorized along rows:
/// one vector instruction per vector register of elements, whatever LLVM's
/// alias analysis concludes.
void scheduleElementwise(RewriterBase &rewriter, linalg::GenericOp op, int64_t lanes) {
  if (op.hasDynamicShape() || !elementwiseOnBytes(op))
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t inner = ranges.size() - 1;
  if (failed(linalg::vectorizeOpPrecondition(op))) {
    // Inputs read at sums of loops (a convolution's patch matrix: row oh + i,
    // column ow + j): rows of one vector, each a contiguous window once the
    // other loops are single steps (vectorizeMarked drops them from the
    // maps). Left scalar, RegNetY's patch copies ran at 12 GB/s.
    if (ranges[inner] < 4 || !contiguousOnceRowsAreSteps(op))
      return;
    SmallVector<int64_t> sizes(ranges.size(), 1);
    sizes[inner] = std::min(ranges[inner], lanes);
    SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, ranges.size()));
    FailureOr<scf::SCFTilingResult> tiled = tile(rewriter, op, sizes, order);
    if (failed(tiled))
      return;
    if (ranges[inner] % sizes[inner] != 0)
      tiled->loops.back()->setAttr(kPeel, rewriter.getUnitAttr());
    tiled->tiledOps.front()->setAttr(kVectorizeIfPossible, rewriter.getUnitAttr());
    tiled->tiledOps.front()->setAttr(kWindowRow, rewriter.getUnitAttr());
    return;
  }
  // An input read across: square tiles of `lanes` over that loop and the
  // innermost one, which vectorize into register transposes instead of
  // strided scalar reads.
  if (std::optional<unsigned> across = readAcrossLoop(op); across && ranges[*across] >= lanes) {
    SmallVector<int64_t> sizes(ranges.size(), 1);
    sizes[*across] = lanes;
    sizes[inner] = std::min(ranges[inner], lanes);
    SmallVector<int64_t> order = llvm::to_vector(llvm::seq<int64_t>(0, ranges.size()));
    FailureOr<scf::SCFTilingResult> tiled = tile(rewriter, op, sizes, order);
    if (failed(tiled))
      return;
    for (int64_t d : {int64_t(*across), inner})
      if (ranges[d] % sizes[d] != 0)
        tiled->loops[d]->setAttr(kPeel, rewriter.getUnitAttr());
    tiled->tiledOps.front()->setAttr(kVectorizeIfPossible, rewriter.getUnitAttr());
    return;
  }
  // Rows as short as 7 (MobileNetV2's last layers) still beat scalar code.
  if (ranges.back() >= 4)
    splitRowIntoVectors(rewriter, op, lanes);
}

/// ValueBoundsConstraintSet::areEqual within a budget of IR. It takes the
/// whole backward slices of both values into one constraint set before it
/// compares them (three times: equal, less, greater): in a long function
/// (SSDlite's post-processing, 157,000 ops) that took 14 s of Presburger
/// arithmetic. A tiled slice's size and the tensor it spans are related
/// within the loop nest that tiled them, a few values away.
class BoundedEquality : public ValueBoundsConstraintSet {
public:
  /// Whether dim `dim` of `shaped` equals the index `size` can be shown from
  /// the first kBudget values their backward slices reach.
  static bool proves(Value shaped, int64_t dim, Value size) {
    // As ValueBoundsConstraintSet::compare does: each side a column of its
    // own, both backward slices traversed, then the relation checked once.
    int64_t visited = 0;
    BoundedEquality set(shaped.getContext(),
                        [&](Value, std::optional<int64_t>, ValueBoundsConstraintSet &) {
                          return ++visited > kBudget;
                        });
    AffineMap identity = AffineMap::getMultiDimIdentityMap(1, shaped.getContext());
    int64_t lhs = set.populateConstraints(identity, {{shaped, dim}});
    int64_t rhs = set.populateConstraints(identity, {{size, std::nullopt}});
    return set.comparePos(lhs, EQ, rhs);
  }

private:
  /// The tiled loops' bounds need fewer than 16 in the models tried.
  static constexpr int64_t kBudget = 128;
  using ValueBoundsConstraintSet::ValueBoundsConstraintSet;
};

/// Whether `slice` (offsets 0, strides 1) spans all of `whole`, dynamic
/// sizes included: the value-bounds analysis proves a dynamic size equal to
/// the dim, through loop-carried tensors too.
bool spansWhole(OffsetSizeAndStrideOpInterface slice, Value whole) {
  auto type = cast<RankedTensorType>(whole.getType());
  if (slice.getMixedSizes().size() != (size_t)type.getRank())
    return false;
  for (auto [d, offset, size, stride] :
       llvm::enumerate(slice.getMixedOffsets(), slice.getMixedSizes(), slice.getMixedStrides())) {
    if (!isConstantIntValue(offset, 0) || !isConstantIntValue(stride, 1))
      return false;
    if (std::optional<int64_t> constant = getConstantIntValue(size)) {
      if (*constant != type.getDimSize(d))
        return false;
      continue;
    }
    if (!type.isDynamicDim(d))
      return false;
    if (!BoundedEquality::proves(whole, d, cast<Value>(size)))
      return false;
  }
  return true;
}

/// Replaces each slice of `SliceOp` that spans a whole tensor of dynamic
/// size (the extracted one, or the one inserted into) by the slice's source.
template <typename SliceOp> void foldWhole(func::FuncOp func) {
  SmallVector<SliceOp> whole;
  func.walk([&](SliceOp slice) {
    Value tensor;
    if constexpr (std::is_same_v<SliceOp, tensor::ExtractSliceOp>)
      tensor = slice.getSource();
    else
      tensor = slice.getDest();
    if (slice.getResult().getType() == slice.getSource().getType() &&
        !cast<RankedTensorType>(tensor.getType()).hasStaticShape() && spansWhole(slice, tensor))
      whole.push_back(slice);
  });
  for (SliceOp slice : whole) {
    slice.getResult().replaceAllUsesWith(slice.getSource());
    slice.erase();
  }
}

/// Slices of whole tensors of dynamic size (a peeled edge tile's
/// accumulator, sliced by the k loop's tiling) as the tensors themselves,
/// which canonicalization folds only for static sizes: the register k loop's
/// hoisting then keeps the edge's accumulators in registers as well.
/// Extractions first: the analysis proves a loop-carried tensor's size from
/// what the loop yields, which is an insertion into the tensor itself until
/// that insertion folds.
void foldWholeSlices(func::FuncOp func) {
  foldWhole<tensor::ExtractSliceOp>(func);
  foldWhole<tensor::InsertSliceOp>(func);
}

/// A dim of a tensor a loop carries, whose iterations only write vectors
/// into it, as the dim of its initial value (upstream's loop
/// canonicalization does not follow vector writes): a masked edge tile's
/// masks then leave its register k loop.
struct DimOfCarriedTensor : OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::DimOp dim, PatternRewriter &rewriter) const override {
    auto arg = dyn_cast<BlockArgument>(dim.getSource());
    auto loop = arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()) : scf::ForOp();
    if (!loop || arg == loop.getInductionVar())
      return failure();
    Value value = loop.getTiedLoopYieldedValue(arg)->get();
    while (value != arg) {
      auto write = value.getDefiningOp<vector::TransferWriteOp>();
      if (!write)
        return failure();
      value = write.getBase();
    }
    rewriter.replaceOpWithNewOp<tensor::DimOp>(dim, loop.getTiedLoopInit(arg)->get(),
                                               dim.getIndex());
    return success();
  }
};

LogicalResult canonicalize(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  RewritePatternSet patterns(ctx);
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
  // Tile sizes min(extent - iv, tile) are constant when the tile divides.
  scf::populateSCFForLoopCanonicalizationPatterns(patterns);
  return applyPatternsGreedily(func, std::move(patterns));
}

/// A masked float reduction (a dynamic row's masked last step) as an
/// unmasked one of the vector with its masked-off lanes set to the
/// combiner's neutral element. Upstream lowers it to LLVM's predicated
/// reductions with the wrong neutral elements (the smallest denormal for a
/// maximum, so max(-3, nothing) was -1e-45) and maxnum's NaN semantics for
/// maximumf.
struct UnmaskFloatReduction : OpRewritePattern<vector::MaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::MaskOp mask, PatternRewriter &rewriter) const override {
    auto reduction = dyn_cast_or_null<vector::ReductionOp>(mask.getMaskableOp());
    if (!reduction || mask.hasPassthru())
      return failure();
    auto type = dyn_cast<FloatType>(reduction.getType());
    if (!type)
      return failure();
    const llvm::fltSemantics &semantics = type.getFloatSemantics();
    APFloat neutral = APFloat::getZero(semantics, /*Negative=*/true);
    switch (reduction.getKind()) {
    case vector::CombiningKind::ADD:
      break;
    case vector::CombiningKind::MUL:
      neutral = APFloat::getOne(semantics);
      break;
    case vector::CombiningKind::MINIMUMF:
      neutral = APFloat::getInf(semantics);
      break;
    case vector::CombiningKind::MAXIMUMF:
      neutral = APFloat::getInf(semantics, /*Negative=*/true);
      break;
    case vector::CombiningKind::MINNUMF:
    case vector::CombiningKind::MAXNUMF:
      neutral = APFloat::getQNaN(semantics);
      break;
    default:
      return failure();
    }
    Location loc = mask.getLoc();
    Value vector = reduction.getVector();
    auto vectorType = cast<VectorType>(vector.getType());
    Value fill = arith::ConstantOp::create(rewriter, loc, vectorType,
                                           DenseElementsAttr::get(vectorType, neutral));
    Value kept = arith::SelectOp::create(rewriter, loc, mask.getMask(), vector, fill);
    rewriter.replaceOpWithNewOp<vector::ReductionOp>(mask, reduction.getKind(), kept,
                                                     reduction.getAcc(), reduction.getFastmath());
    return success();
  }
};

/// A masked contraction whose reduction dims are unmasked (an edge tile of a
/// dynamic matmul, one k step) as the unmasked contraction and a select of
/// its result by the mask's parallel dims: masked-off lanes keep the
/// accumulator's values, as under the mask. The outer-product lowering of
/// the masked form transposes the i1 mask for every k step, which LLVM
/// expands into about a thousand mask-register moves (four 7x7x32 products
/// took 2.2 us against 0.24 pinned); the select becomes masked FMAs.
struct UnmaskContraction : OpRewritePattern<vector::MaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::MaskOp mask, PatternRewriter &rewriter) const override {
    auto contract = dyn_cast_or_null<vector::ContractionOp>(mask.getMaskableOp());
    auto create = mask.getMask().getDefiningOp<vector::CreateMaskOp>();
    if (!contract || !create || mask.hasPassthru())
      return failure();
    auto resultType = dyn_cast<VectorType>(contract.getResultType());
    if (!resultType)
      return failure();
    VectorType maskType = create.getVectorType();
    for (auto [d, iterator] : llvm::enumerate(contract.getIteratorTypesArray())) {
      std::optional<int64_t> bound = getConstantIntValue(create.getOperand(d));
      if (iterator == vector::IteratorType::reduction &&
          (!bound || *bound < maskType.getDimSize(d)))
        return failure();
    }
    // The accumulator's dims are the parallel loops, in its map's order.
    SmallVector<Value> bounds;
    for (AffineExpr result : contract.getIndexingMapsArray()[2].getResults())
      bounds.push_back(create.getOperand(cast<AffineDimExpr>(result).getPosition()));
    Location loc = mask.getLoc();
    rewriter.setInsertionPoint(mask);
    Value lanes = vector::CreateMaskOp::create(
        rewriter, loc, VectorType::get(resultType.getShape(), rewriter.getI1Type()), bounds);
    Value product = vector::ContractionOp::create(
        rewriter, loc, contract.getLhs(), contract.getRhs(), contract.getAcc(),
        contract.getIndexingMaps(), contract.getIteratorTypes(), contract.getKind());
    rewriter.replaceOpWithNewOp<arith::SelectOp>(mask, lanes, product, contract.getAcc());
    return success();
  }
};

/// Vectorizes every op marked by the steps above. Peeling and
/// canonicalization have made most shapes static; a dynamic one whose vector
/// shape was given (kVectorSizes) takes masks. A marked matmul tile that
/// does not vectorize is an error, other ops stay scalar.
LogicalResult vectorizeMarked(RewriterBase &rewriter, func::FuncOp func) {
  SmallVector<linalg::LinalgOp> marked;
  func.walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(kVectorize) || op->hasAttr(kVectorizeIfPossible))
      marked.push_back(op);
  });
  for (linalg::LinalgOp op : marked) {
    bool required = op->hasAttr(kVectorize);
    op->removeAttr(kVectorize);
    op->removeAttr(kVectorizeIfPossible);
    op->removeAttr(kPackedB);
    op->removeAttr(kPanelGroup);
    // A row of a window copy (scheduleElementwise), whose single-step loops
    // are all that keep its maps from vectorizing, reads without them. Only
    // those: a tile whose reduction loop is a single step would lose that
    // loop from every map.
    bool windowRow = op->hasAttr(kWindowRow);
    op->removeAttr(kWindowRow);
    if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
        generic && windowRow && !op.hasDynamicShape() &&
        failed(linalg::vectorizeOpPrecondition(op))) {
      SmallVector<AffineMap> maps = mapsWithoutSingleSteps(op, op.getStaticLoopRanges());
      // Outputs keep their maps: they must stay permutations of the loops.
      for (OpOperand &init : generic.getDpsInitsMutable())
        maps[init.getOperandNumber()] = op.getMatchingIndexingMap(&init);
      rewriter.modifyOpInPlace(op, [&] {
        generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      if (failed(linalg::vectorizeOpPrecondition(op))) {
        if (required)
          return op->emitError("nnc: a marked op's tile does not vectorize");
        continue;
      }
    }
    // A reduction whose body reads nothing along a reduced loop (a sum of a
    // fill the fusion folded into a constant) is vectorized by MLIR 22 as
    // one step per vector, not per element (a sum of 40 ones gave 3): left
    // to scalar loops.
    auto reduced = [&](unsigned loop) {
      return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
        return op.getMatchingIndexingMap(input).isFunctionOfDim(loop) &&
               op.getMatchingBlockArgument(input).getNumUses() > 0;
      });
    };
    SmallVector<unsigned> reductions;
    op.getReductionDims(reductions);
    if (!llvm::all_of(reductions, reduced)) {
      op->removeAttr(kVectorSizes);
      if (required)
        return op->emitError("nnc: a marked reduction reads nothing along a reduced loop");
      continue;
    }
    // A dynamic op with its bounds (a dynamic row's edge) takes masks.
    auto vectorSizes = op->getAttrOfType<DenseI64ArrayAttr>(kVectorSizes);
    op->removeAttr(kVectorSizes);
    FailureOr<linalg::VectorizationResult> vectorized = failure();
    if (!op.hasDynamicShape() || vectorSizes) {
      rewriter.setInsertionPoint(op);
      ArrayRef<int64_t> sizes;
      if (op.hasDynamicShape())
        sizes = vectorSizes.asArrayRef();
      // One flag per size, none scalable: given sizes and no flags, MLIR 22's
      // vectorizer reads flags past the end of its empty list for the masks'
      // types (garbage that made a mask's type differ from the one the
      // verifier infers, on some machines only).
      SmallVector<bool> scalable(sizes.size(), false);
      vectorized = linalg::vectorize(rewriter, op, sizes, scalable,
                                     /*vectorizeNDExtract=*/false,
                                     /*flatten1DDepthwiseConv=*/false,
                                     /*assumeDynamicDimsMatchVecSizes=*/false,
                                     /*createNamedContraction=*/true);
    }
    if (succeeded(vectorized))
      rewriter.replaceOp(op, vectorized->replacements);
    else if (required)
      return op->emitError("nnc: could not vectorize a register tile of a matmul");
  }
  return success();
}

/// A static pad with a constant value as fills of its border and the
/// insertion of its source: once bufferization's empty-tensor elimination has
/// run, the op producing the source writes straight into the interior of the
/// padded buffer, and only the border is written besides (a whole-buffer
/// fill cost as much as the convolution reading it, for depthwise ones).
void decomposePad(RewriterBase &rewriter, tensor::PadOp pad) {
  RankedTensorType type = pad.getResultType();
  Value value = pad.getConstantPaddingValue();
  if (!value || !type.hasStaticShape() || !pad.getSourceType().hasStaticShape())
    return;
  SmallVector<int64_t> low(pad.getStaticLow()), high(pad.getStaticHigh());
  if (ShapedType::isDynamicShape(low) || ShapedType::isDynamicShape(high))
    return;
  Location loc = pad.getLoc();
  rewriter.setInsertionPoint(pad);
  Type element = type.getElementType();
  Value padded = tensor::EmptyOp::create(rewriter, loc, type.getShape(), element);
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank();
  SmallVector<int64_t> ones(rank, 1);
  auto fillRegion = [&](ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
    Value region = tensor::EmptyOp::create(rewriter, loc, sizes, element);
    auto fill = linalg::FillOp::create(rewriter, loc, value, region);
    fill->setAttr(nnc::kPadBorderAttr, rewriter.getUnitAttr());
    Value filled = fill.getResult(0);
    padded = tensor::InsertSliceOp::create(
        rewriter, loc, filled, padded, getAsIndexOpFoldResult(rewriter.getContext(), offsets),
        getAsIndexOpFoldResult(rewriter.getContext(), sizes),
        getAsIndexOpFoldResult(rewriter.getContext(), ones));
  };
  for (int64_t d = 0; d < rank; ++d) {
    SmallVector<int64_t> offsets(rank, 0), sizes(shape);
    if (low[d] > 0) {
      sizes[d] = low[d];
      fillRegion(offsets, sizes);
    }
    if (high[d] > 0) {
      offsets[d] = shape[d] - high[d];
      sizes[d] = high[d];
      fillRegion(offsets, sizes);
    }
  }
  SmallVector<int64_t> sourceSizes(pad.getSourceType().getShape());
  rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
      pad, pad.getSource(), padded, getAsIndexOpFoldResult(rewriter.getContext(), low),
      getAsIndexOpFoldResult(rewriter.getContext(), sourceSizes),
      getAsIndexOpFoldResult(rewriter.getContext(), ones));
}

/// A vector read of every other element of a row (the windows of a
/// depthwise convolution or pooling with column stride 2) as two contiguous
/// reads and one shuffle keeping the even elements: the lowering would
/// otherwise load the lanes one by one. The reads cover elements 0 .. L-1 and
/// L-1 .. 2L-2 of the row from the first one on, so they stay within the
/// elements the strided read reaches.
struct StridedReadAsShuffle : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(vector::TransferReadOp read,
                                PatternRewriter &rewriter) const override {
    auto slice = read.getBase().getDefiningOp<tensor::ExtractSliceOp>();
    VectorType type = read.getVectorType();
    if (!slice || type.getRank() != 1 || type.getDimSize(0) < 2 || read.getMask() ||
        !read.getPermutationMap().isMinorIdentity() || !read.getInBoundsValues()[0])
      return failure();
    int64_t rank = slice.getSourceType().getRank();
    std::optional<int64_t> stride = getConstantIntValue(slice.getMixedStrides().back());
    if (slice.getResultType().getRank() != rank || stride != 2)
      return failure();
    Location loc = read.getLoc();
    AffineExpr offset = rewriter.getAffineDimExpr(0), index = rewriter.getAffineDimExpr(1);
    // The first element read, in the slice's source.
    SmallVector<Value> indices;
    for (int64_t d = 0; d < rank; ++d) {
      std::optional<int64_t> step = getConstantIntValue(slice.getMixedStrides()[d]);
      if (!step)
        return failure();
      indices.push_back(getValueOrCreateConstantIndexOp(
          rewriter, loc,
          affine::makeComposedFoldedAffineApply(
              rewriter, loc, offset + index * *step,
              {slice.getMixedOffsets()[d], read.getIndices()[d]})));
    }
    int64_t lanes = type.getDimSize(0);
    auto contiguous = [&](int64_t start) {
      SmallVector<Value> at(indices);
      at.back() = affine::makeComposedAffineApply(rewriter, loc, offset + start,
                                                  {indices.back()});
      return vector::TransferReadOp::create(rewriter, loc, type, slice.getSource(), at,
                                            read.getPadding(), ArrayRef<bool>{true});
    };
    Value low = contiguous(0), high = contiguous(lanes - 1);
    // Element 2j is lane 2j of the first read while that is below L, else
    // lane 2j - (L - 1) of the second (shuffle index L + that).
    SmallVector<int64_t> mask;
    for (int64_t j = 0; j < lanes; ++j)
      mask.push_back(2 * j < lanes ? 2 * j : 2 * j + 1);
    rewriter.replaceOpWithNewOp<vector::ShuffleOp>(read, low, high, mask);
    return success();
  }
};

struct TileAndVectorizePass : nnc::impl::TileAndVectorizeBase<TileAndVectorizePass> {
  using TileAndVectorizeBase::TileAndVectorizeBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    RegisterShapes shapes = RegisterShapes::of(vectorBits, vectorRegisters);
    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    // Pads become border fills and an insertion.
    SmallVector<tensor::PadOp> pads;
    func.walk([&](tensor::PadOp pad) { pads.push_back(pad); });
    for (tensor::PadOp pad : pads)
      decomposePad(rewriter, pad);
    {
      // erf (GELU), tanh and exp (softmax) as f32 polynomials: no libm call per element,
      // and the elementwise loops around them vectorize.
      RewritePatternSet patterns(ctx);
      populatePolynomialApproximateErfPattern(patterns);
      populatePolynomialApproximateTanhPattern(patterns);
      populateMathPolynomialApproximationPatterns(
          patterns, [](StringRef name) { return name == "exp" || name == "math.exp"; });
      if (failed(applyPatternsGreedily(func, std::move(patterns))))
        return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, linalg::ContractionDimensions>> matmuls, dynamicMatmuls;
    SmallVector<linalg::GenericOp> others;
    func.walk([&](linalg::LinalgOp op) {
      // Ops in loops (the steps of cumsum, say) keep their loop-carried form;
      // a loop over a dynamic batch (DynamicBatch.cpp) runs each sample's op
      // as if it were the whole.
      if (!nnc::isKernelLevel(op))
        return;
      // An op over a zero-size dim has nothing to tile: its plain loops run
      // no iteration (or, for an empty reduction, leave the initial value).
      if (llvm::is_contained(op.getStaticLoopRanges(), 0))
        return;
      if (FailureOr<linalg::ContractionDimensions> dims = matmulDims(op); succeeded(dims))
        matmuls.emplace_back(op, *dims);
      else if (FailureOr<linalg::ContractionDimensions> dynamic = matmulDims(op, /*dynamic=*/true);
               succeeded(dynamic))
        dynamicMatmuls.emplace_back(op, *dynamic);
      else if (FailureOr<linalg::ContractionDimensions> conv = shiftedConvDims(op);
               succeeded(conv))
        matmuls.emplace_back(op, *conv);
      else if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
        others.push_back(generic);
    });
    for (auto &[op, dims] : matmuls)
      if (failed(scheduleMatmul(rewriter, op, dims, shapes)))
        return signalPassFailure();
    for (auto &[op, dims] : dynamicMatmuls)
      if (failed(scheduleDynamicMatmul(rewriter, op, dims, shapes)))
        return signalPassFailure();
    for (linalg::GenericOp op : others) {
      // Dynamic dims (docs/dynamic-shapes.md): a loop over each, around the
      // op on the static rest, which is scheduled as usual.
      if (op.hasDynamicShape()) {
        FailureOr<linalg::GenericOp> inner = loopOverDynamicDims(rewriter, op, shapes.lanes);
        if (failed(inner) || !*inner || inner->hasDynamicShape())
          continue;
        op = *inner;
      }
      FailureOr<linalg::GenericOp> chunk = splitIntoChunks(rewriter, op, shapes.lanes);
      if (failed(chunk))
        return signalPassFailure();
      if (!scheduleReduction(rewriter, *chunk, shapes.lanes))
        scheduleElementwise(rewriter, *chunk, shapes.lanes);
    }
    peelMarkedLoops(rewriter, func);
    // Peeled tiles get constant sizes; canonicalization makes their types static.
    if (failed(canonicalize(func)))
      return signalPassFailure();
    foldWholeSlices(func);
    SmallVector<linalg::GenericOp> convTiles;
    func.walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kVectorize) && !op.hasDynamicShape() && succeeded(shiftedConvDims(op)))
        convTiles.push_back(op);
    });
    for (linalg::GenericOp op : convTiles)
      convTileAsMatmul(rewriter, op);
    // B -> its packed panels, one per B and column group.
    DenseMap<std::pair<Value, int64_t>, Value> panels;
    auto panelsOf = [&](Value matrix, int64_t group) {
      Value &flat = panels[{matrix, group}];
      if (flat)
        return flat;
      auto type = cast<RankedTensorType>(matrix.getType());
      if (std::optional<std::vector<float>> values = nnc::constantMatrix(matrix)) {
        rewriter.setInsertionPointToStart(&func.getBody().front());
        flat = constantPanels(rewriter, matrix.getLoc(), type, *values, group, shapes);
      } else if (group == type.getDimSize(1) && group % shapes.n == 0) {
        if (Operation *def = matrix.getDefiningOp())
          rewriter.setInsertionPointAfter(def);
        else
          rewriter.setInsertionPointToStart(matrix.getParentBlock());
        flat = flatPanels(rewriter, matrix.getLoc(),
                           packPanels(rewriter, matrix.getLoc(), matrix, shapes));
      }
      return flat;
    };
    // Register tiles read B from its panels.
    SmallVector<linalg::LinalgOp> readPanels;
    func.walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kPackedB) && !op.hasDynamicShape())
        readPanels.push_back(op);
    });
    for (linalg::LinalgOp op : readPanels)
      readPackedB(rewriter, op->getOpOperand(op->getAttrOfType<IntegerAttr>(kPackedB).getInt()),
                  panelsOf,
                  op->hasAttr(kPanelGroup) ? op->getAttrOfType<IntegerAttr>(kPanelGroup).getInt() : 0,
                  shapes);
    if (failed(vectorizeMarked(rewriter, func)))
      return signalPassFailure();

    // Fold the slices into the transfers, then keep each accumulator tile in
    // registers across its k loop.
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorReductionToContractPatterns(patterns);
      // Batched tiles carry a leading unit batch dim: contract 2-D like the rest.
      vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
      // A transposed read becomes a row read plus vector.transpose, and the
      // unit dims around it drop, so the transpose is the 2-D one the 16x16
      // shuffle lowering (Pipelines.cpp) takes.
      vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
      vector::populateDropUnitDimWithShapeCastPatterns(patterns);
      // Convolution tiles are written back through a unit-dim expansion.
      tensor::populateReassociativeReshapeFoldingPatterns(patterns);
      scf::ForOp::getCanonicalizationPatterns(patterns, ctx);
      // A row reduction's step reduces over a unit dim: plain elementwise.
      vector::MultiDimReductionOp::getCanonicalizationPatterns(patterns, ctx);
      tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
      patterns.add<StridedReadAsShuffle>(ctx);
      vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
      vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
      affine::AffineMinOp::getCanonicalizationPatterns(patterns, ctx);
      // Upstream's unit-dim patterns can undo each other forever on a
      // one-column tile (a [4, 1] slice of a concat: vector.extract after
      // vector.extract). Every rewrite leaves valid IR, so a run cut short
      // by the bound is correct code, if less folded; far more rewrites
      // than any model needs.
      GreedyRewriteConfig config;
      config.setMaxNumRewrites(1 << 18);
      (void)applyPatternsGreedily(func, std::move(patterns), config);
    }
    // A reduction along a dynamic row (loopOverDynamicDims) reduces one
    // vector per step; after the contractions above have taken theirs.
    {
      RewritePatternSet patterns(ctx);
      vector::populateVectorMultiReductionLoweringPatterns(
          patterns, vector::VectorMultiReductionLowering::InnerReduction);
      // Masked edges: the masks move into the transfers themselves.
      vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
      patterns.add<UnmaskFloatReduction, UnmaskContraction, DimOfCarriedTensor>(ctx);
      // A batched tile's mask is an extract of a mask with the unit batch dim.
      vector::ExtractOp::getCanonicalizationPatterns(patterns, ctx);
      (void)applyPatternsGreedily(func, std::move(patterns));
    }
    // Every use of an empty tensor gets its own (CSE merged them): empty-
    // tensor elimination then places each in its own destination.
    SmallVector<tensor::EmptyOp> empties;
    func.walk([&](tensor::EmptyOp empty) {
      if (!empty->hasOneUse())
        empties.push_back(empty);
    });
    for (tensor::EmptyOp empty : empties) {
      SmallVector<OpOperand *> uses = llvm::to_vector(llvm::make_pointer_range(empty->getUses()));
      for (OpOperand *use : llvm::drop_begin(uses)) {
        rewriter.setInsertionPoint(empty);
        Operation *own = rewriter.clone(*empty);
        rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(own->getResult(0)); });
      }
    }
    // Reads of tensors are pure here: per-channel values (a depthwise
    // filter's taps, batch norm's scale and shift) leave the loops over a
    // row. After bufferization LLVM could not hoist them past the stores
    // into the same workspace. Not out of a loop over a dynamic batch: what
    // its samples share left it before tiling (nnc-hoist-batch-invariants),
    // and what stays initializes a sample's buffers (a pad's border filled
    // once outside would be copied, border and all, for every sample).
    func.walk([&](scf::ForOp loop) {
      if (!loop->hasAttr(kRegisterK) && !loop->hasAttr(nnc::kBatchLoopAttr))
        moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
    });
    func.walk([&](scf::ForOp loop) {
      // Only the k loops of register tiles, inner ones first (others, like
      // cumsum's or the cache tiles', keep the form their bufferization
      // relies on).
      if (!loop->hasAttr(kRegisterK))
        return;
      loop->removeAttr(kRegisterK);
      moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
      hoistLoopInvariantSubsets(rewriter, cast<LoopLikeOpInterface>(loop.getOperation()));
    });
  }
};
} // namespace

namespace {
/// A large copy split into thread chunks along its outer dims, as
/// splitIntoChunks does for elementwise ops: a stem convolution's padded
/// input and patch matrix ran on one thread while the other waited
/// (MobileNetV2 at batch 8: 1.9 ms at two threads, 1.3 ms chunked).
linalg::LinalgOp splitCopyIntoChunks(RewriterBase &rewriter, linalg::LinalgOp copy) {
  SmallVector<int64_t> ranges = copy.getStaticLoopRanges();
  int64_t elements = 1;
  for (int64_t r : ranges)
    elements = nnc::saturatingMul(elements, r);
  if (elements < kMinParallelWork / 32 || ranges.size() < 2)
    return copy;
  // The innermost dim stays whole: it is what the vectors run along.
  SmallVector<int64_t> minChunk(ranges.size(), 1);
  minChunk.back() = 0;
  SmallVector<int64_t> split = chunkSizes(ranges, minChunk, 1);
  if (split.empty())
    return copy;
  FailureOr<scf::SCFTilingResult> tiled = tile(rewriter, copy, split, {}, LoopType::ForallOp);
  if (failed(tiled))
    return copy;
  return cast<linalg::LinalgOp>(tiled->tiledOps.front());
}

/// Copies between buffers (concatenation, padding, results) as vector loads
/// and stores along their innermost dim. LLVM does not vectorize
/// them by itself: source and target often are views of the same workspace.
struct VectorizeCopiesPass : nnc::impl::VectorizeCopiesBase<VectorizeCopiesPass> {
  using VectorizeCopiesBase::VectorizeCopiesBase;

  void runOnOperation() override {
    int64_t lanes = RegisterShapes::lanesOf(vectorBits);
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::CopyOp> copies;
    func.walk([&](linalg::CopyOp copy) {
      // Dynamic outer dims too (a key-value cache copied into its grown
      // buffer: 8 heads x 100 positions x 64 took 55 us as scalar loops, 4.6
      // as vectors): rows of a static innermost dim.
      auto type = dyn_cast<MemRefType>(copy.getOutputs()[0].getType());
      if (type && type.getRank() > 0 && !type.isDynamicDim(type.getRank() - 1) &&
          type.getShape().back() >= lanes / 2 && type.getElementType().isIntOrFloat() &&
          type.getElementType().getIntOrFloatBitWidth() >= 8)
        copies.push_back(copy);
    });
    for (linalg::CopyOp copy : copies) {
      linalg::LinalgOp op = copy;
      // Only a copy at the function's top level (or a sample's, in a loop
      // over a dynamic batch): one in another loop (a parallel chunk, or a
      // cumsum's step, whose add runs on one thread) would dispatch to the
      // threads once per iteration.
      // Thread chunks need static extents; a dynamic copy runs on one thread.
      if (nnc::isKernelLevel(copy) && cast<MemRefType>(copy.getOutputs()[0].getType()).hasStaticShape())
        op = splitCopyIntoChunks(rewriter, op);
      splitRowIntoVectors(rewriter, op, lanes);
    }
    peelMarkedLoops(rewriter, func);
    if (failed(canonicalize(func)))
      return signalPassFailure();
    if (failed(vectorizeMarked(rewriter, func)))
      return signalPassFailure();
  }
};
} // namespace

FailureOr<scf::SCFTilingResult> nnc::cpu::tile(RewriterBase &rewriter, linalg::LinalgOp op,
                                               ArrayRef<int64_t> sizes, ArrayRef<int64_t> order,
                                               LoopType loops) {
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), sizes));
  options.setInterchange(order);
  options.setLoopType(loops);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled =
      scf::tileUsingSCF(rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (succeeded(tiled))
    rewriter.replaceOp(op, tiled->replacements);
  return tiled;
}

bool nnc::cpu::onBytes(linalg::GenericOp op) {
  return llvm::all_of(op->getOperands(), [](Value operand) {
    Type element = getElementTypeOrSelf(operand.getType());
    return element.isIntOrFloat() && element.getIntOrFloatBitWidth() >= 8;
  });
}
