//===- Contraction.cpp - matmul, einsum, conv and pooling to linalg -------===//
//
// Contractions become linalg.generic ops whose indexing maps carry the
// broadcasting, strides, dilations and groups; padding is an explicit
// tensor.pad. Transposed convolution is a convolution of the stride-dilated,
// padded input with the flipped filter. Schedules (tiling, vectorization) are
// the codegen stage's business, so correctness is all that matters here.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"
#include "compiler/Codegen/Common/SaturatingMath.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace nnc;
using namespace nnc::lowering;

namespace {
using utils::IteratorType;


Value multiplyAdd(OpBuilder &b, Location loc, Value x, Value y, Value acc) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, acc, arith::MulFOp::create(b, loc, x, y));
  return arith::AddIOp::create(b, loc, acc, arith::MulIOp::create(b, loc, x, y));
}

/// Dim `d` of `tensor` as reshapes state sizes: a constant when static, else
/// dimOf's value.
OpFoldResult mixedDim(OpBuilder &b, Location loc, Value tensor, int64_t d) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(d))
    return b.getIndexAttr(type.getDimSize(d));
  return dimOf(b, loc, tensor, d);
}

/// A tensor of `type` holding zeros.
Value zeros(OpBuilder &b, Location loc, RankedTensorType type, ValueRange dynamicSizes = {}) {
  return filledTensor(b, loc, type, scalarConstant(b, loc, type.getElementType(), 0), dynamicSizes);
}

/// Rows of a chunk of a matrix product whose row count is dynamic (the CPU
/// target's only: CUDA refuses dynamic dims): the CPU schedule's cache tile
/// of rows, which B's panels are streamed once for anyway.
constexpr int64_t kRowChunk = 32;

/// The multiply-adds from which the CPU schedule splits a static product
/// into thread chunks (kMinParallelWork in TileAndVectorize.cpp), and the
/// most rows a chunk takes to reach them.
constexpr int64_t kParallelWork = 1 << 20, kMaxRowChunk = 4 * kRowChunk;

/// The rows of a chunk of a [?, K] x [K, N] product: kRowChunk, or the
/// least multiple of it by a power of two whose product the schedule
/// splits across threads. A GPT block's 128x128 projection in chunks of 32
/// rows (2^19 multiply-adds) ran on one thread, 2.3x its time pinned at a
/// batch of 32 on two threads.
int64_t chunkRows(int64_t k, int64_t n) {
  int64_t work = saturatingMul(k, n);
  if (saturatingMul(work, kRowChunk) >= kParallelWork || work * kMaxRowChunk < kParallelWork)
    return kRowChunk;
  int64_t rows = kRowChunk;
  while (rows * work < kParallelWork)
    rows *= 2;
  return rows;
}

/// The register tiles' rows on AVX2 and AVX-512: a dynamic row count's rows
/// past whole tiles of this many are products of their own.
constexpr int64_t kRowGroup = 8;

/// rows [M, K] x rhs [K, N] into `out` [M, N], M dynamic, as static products:
/// a loop over chunks of chunkRows rows, then the R rows left as
/// one product of R rounded down to a multiple of kRowGroup and one of the
/// fewer than kRowGroup rows after it, each chosen by a switch on its
/// static size. Every product takes the static schedule of exactly its rows:
/// 7 rows (a sequence of 7) padded with a zero row to a product of 8 took
/// 1.19x the pinned product's time. B is read once per chunk and at most
/// twice for the rest. The loop and the switches carry
/// nnc.batch_loop for the schedules.
Value rowChunkedMatmul(OpBuilder &b, Location loc, Value rows, Value rhs, Value out) {
  auto outType = tensorType(out);
  int64_t k = tensorType(rows).getDimSize(1), n = outType.getDimSize(1);
  Type element = outType.getElementType();
  auto strides = SmallVector<OpFoldResult>(2, b.getIndexAttr(1));
  // `count` rows of A from `at` times B, into acc at `at`.
  auto product = [&](OpBuilder &nb, Location nl, Value at, int64_t count, Value acc) {
    SmallVector<OpFoldResult> offsets{at, nb.getIndexAttr(0)};
    Value a = tensor::ExtractSliceOp::create(
        nb, nl, RankedTensorType::get({count, k}, element), rows, offsets,
        SmallVector<OpFoldResult>{nb.getIndexAttr(count), nb.getIndexAttr(k)}, strides);
    Value c = linalg::MatmulOp::create(nb, nl, ValueRange{a, rhs},
                                       ValueRange{zeros(nb, nl, RankedTensorType::get({count, n}, element))})
                  .getResult(0);
    return tensor::InsertSliceOp::create(
               nb, nl, c, acc, offsets,
               SmallVector<OpFoldResult>{nb.getIndexAttr(count), nb.getIndexAttr(n)}, strides)
        .getResult();
  };
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value m = dimOf(b, loc, rows, 0);
  int64_t chunk = chunkRows(k, n);
  Value full = arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, m, index(chunk)),
                                     index(chunk));
  auto loop = scf::ForOp::create(
      b, loc, index(0), full, index(chunk), ValueRange{out},
      [&](OpBuilder &nb, Location nl, Value at, ValueRange acc) {
        scf::YieldOp::create(nb, nl, product(nb, nl, at, chunk, acc[0]));
      });
  loop->setAttr("nnc.batch_loop", b.getUnitAttr());
  // One product of `size` rows from `at`, `size` one of `sizes` (none
  // else): one switch, not a chain of branches, as bufferization's analysis
  // of a chain, each branch yielding the tensor the next one updates, took
  // seconds per product.
  auto restProduct = [&](Value size, Value at, ArrayRef<int64_t> sizes, Value acc) -> Value {
    auto switchOp = scf::IndexSwitchOp::create(b, loc, TypeRange{out.getType()}, size, sizes,
                                               sizes.size());
    switchOp->setAttr("nnc.batch_loop", b.getUnitAttr());
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&switchOp.getDefaultRegion().emplaceBlock());
    scf::YieldOp::create(b, loc, acc);
    for (auto [p, region] : llvm::zip(sizes, switchOp.getCaseRegions())) {
      b.setInsertionPointToStart(&region.emplaceBlock());
      scf::YieldOp::create(b, loc, product(b, loc, at, p, acc));
    }
    return switchOp.getResult(0);
  };
  Value rest = arith::SubIOp::create(b, loc, m, full);
  Value grouped = arith::AndIOp::create(b, loc, rest, index(~(kRowGroup - 1)));
  SmallVector<int64_t> groups, fewer;
  for (int64_t p = kRowGroup; p < chunk; p += kRowGroup)
    groups.push_back(p);
  for (int64_t p = 1; p < kRowGroup; ++p)
    fewer.push_back(p);
  Value acc = restProduct(grouped, full, groups, loop.getResult(0));
  return restProduct(arith::SubIOp::create(b, loc, rest, grouped),
                     arith::AddIOp::create(b, loc, full, grouped), fewer, acc);
}

/// A matrix product with dynamic dims: [..., M, K] x [K, N] (the leading
/// dims of A folded into its rows) or [M, K] x [K, N].
Value dynamicMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs, RankedTensorType resultType) {
  auto a = tensorType(lhs), bt = tensorType(rhs);
  Type element = resultType.getElementType();
  if (a.isDynamicDim(a.getRank() - 1) || bt.isDynamicDim(0))
    checkSameSize(b, loc, tensor::DimOp::create(b, loc, lhs, a.getRank() - 1),
                  tensor::DimOp::create(b, loc, rhs, 0), "the matrix product's inner dims");
  Value rows = lhs;
  if (a.getRank() > 2) {
    SmallVector<ReassociationIndices> groups{llvm::to_vector(llvm::seq<int64_t>(0, a.getRank() - 1)),
                                             {a.getRank() - 1}};
    rows = tensor::CollapseShapeOp::create(b, loc, lhs, groups);
  }
  auto rowsType = tensorType(rows);
  auto type = RankedTensorType::get({rowsType.getDimSize(0), bt.getDimSize(1)}, element);
  SmallVector<Value> sizes;
  if (type.isDynamicDim(0))
    sizes.push_back(dimOf(b, loc, rows, 0));
  if (type.isDynamicDim(1))
    sizes.push_back(dimOf(b, loc, rhs, 1));
  Value out = type.isDynamicDim(0) && !type.isDynamicDim(1) && !rowsType.isDynamicDim(1)
                  ? rowChunkedMatmul(b, loc, rows, rhs, emptyTensor(b, loc, type, sizes))
                  : linalg::MatmulOp::create(b, loc, ValueRange{rows, rhs},
                                             ValueRange{zeros(b, loc, type, sizes)})
                        .getResult(0);
  if (a.getRank() == 2)
    return out;
  SmallVector<OpFoldResult> shape;
  for (int64_t d = 0; d + 1 < a.getRank(); ++d)
    shape.push_back(mixedDim(b, loc, lhs, d));
  shape.push_back(mixedDim(b, loc, rhs, 1));
  SmallVector<ReassociationIndices> groups{llvm::to_vector(llvm::seq<int64_t>(0, a.getRank() - 1)),
                                           {a.getRank() - 1}};
  return tensor::ExpandShapeOp::create(b, loc, resultType, out, groups, shape);
}

/// A batched product with dynamic dims, [B..., M, K] x [B..., K, N] (the
/// batch dims alike on both sides, isDynamicBatchedMatmul): one
/// linalg.batch_matmul over the batch dims folded into one, which the CPU
/// schedule tiles like a static one (scheduleDynamicMatmul).
Value dynamicBatchedMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  auto a = tensorType(lhs), bt = tensorType(rhs);
  int64_t rank = a.getRank();
  Type element = a.getElementType();
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (a.isDynamicDim(d) || bt.isDynamicDim(d))
      checkSameSize(b, loc, dimOf(b, loc, lhs, d), dimOf(b, loc, rhs, d),
                    "the batch dims of a matrix product's operands");
  if (a.isDynamicDim(rank - 1) || bt.isDynamicDim(rank - 2))
    checkSameSize(b, loc, dimOf(b, loc, lhs, rank - 1), dimOf(b, loc, rhs, rank - 2),
                  "the matrix product's inner dims");
  // The batch dims as one ([B*H, M, K]): a view, as each group of a
  // collapse may hold several dynamic dims. Where one side's folded batch
  // is static, the other's (checked equal above) is cast to it.
  ReassociationIndices batch = llvm::to_vector(llvm::seq<int64_t>(0, rank - 2));
  SmallVector<ReassociationIndices> groups{batch, {rank - 2}, {rank - 1}};
  Value lhs3 = tensor::CollapseShapeOp::create(b, loc, lhs, groups);
  Value rhs3 = tensor::CollapseShapeOp::create(b, loc, rhs, groups);
  auto l3 = tensorType(lhs3), r3 = tensorType(rhs3);
  int64_t batchSize = l3.isDynamicDim(0) ? r3.getDimSize(0) : l3.getDimSize(0);
  auto type3 = RankedTensorType::get({batchSize, l3.getDimSize(1), r3.getDimSize(2)}, element);
  SmallVector<Value> sizes;
  if (type3.isDynamicDim(0))
    sizes.push_back(dimOf(b, loc, lhs3, 0));
  if (type3.isDynamicDim(1))
    sizes.push_back(dimOf(b, loc, lhs3, 1));
  if (type3.isDynamicDim(2))
    sizes.push_back(dimOf(b, loc, rhs3, 2));
  auto withBatch = [&](Value v) -> Value {
    auto type = tensorType(v);
    auto cast = RankedTensorType::get({batchSize, type.getDimSize(1), type.getDimSize(2)}, element);
    return type == cast ? v : tensor::CastOp::create(b, loc, cast, v).getResult();
  };
  Value a3 = withBatch(lhs3), b3 = withBatch(rhs3);
  auto product = [&](Value a, RankedTensorType type, ValueRange dynamicSizes) {
    return linalg::BatchMatmulOp::create(b, loc, ValueRange{a, b3},
                                         ValueRange{zeros(b, loc, type, dynamicSizes)});
  };
  Value out;
  if (!type3.isDynamicDim(1)) {
    out = product(a3, type3, sizes).getResult(0);
  } else {
    // A dynamic row count: the rows in whole register tiles (a multiple of
    // kRowGroup), then the fewer left as products of 4, 2 and 1 rows (each
    // of its size or none), whose register tiles the CPU schedule takes of
    // that many rows (nnc.row_tile), so no tile is masked along its rows.
    // As one product, the rest took a tile of kRowGroup rows masked to it,
    // a branch per row at each k step: a decoding step's one query row
    // against 100 keys (4 heads of 32) ran 5.6x its pinned time, now 1.5x.
    auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
    Value m = dimOf(b, loc, a3, 1);
    out = emptyTensor(b, loc, type3, sizes);
    SmallVector<OpFoldResult> aSizes = tensor::getMixedSizes(b, loc, a3);
    SmallVector<OpFoldResult> outSizes = tensor::getMixedSizes(b, loc, out);
    auto strides = SmallVector<OpFoldResult>(3, b.getIndexAttr(1));
    Value from = index(0);
    for (int64_t tile = kRowGroup; tile >= 1; tile /= 2) {
      // The rows of this part: m's bits from `tile` up for the first, the
      // bit `tile` alone for the others.
      Value rows = arith::AndIOp::create(b, loc, m, index(tile == kRowGroup ? ~(tile - 1) : tile));
      SmallVector<OpFoldResult> offsets{b.getIndexAttr(0), from, b.getIndexAttr(0)};
      aSizes[1] = rows;
      outSizes[1] = rows;
      Value a = tensor::ExtractSliceOp::create(b, loc, a3, offsets, aSizes, strides);
      SmallVector<Value> partSizes(sizes);
      partSizes[type3.isDynamicDim(0) ? 1 : 0] = rows;
      linalg::BatchMatmulOp part = product(a, type3, partSizes);
      if (tile < kRowGroup) // kRowTileAttr (compiler/Codegen/Passes.h)
        part->setAttr("nnc.row_tile", b.getI64IntegerAttr(tile));
      out = tensor::InsertSliceOp::create(b, loc, part.getResult(0), out, offsets, outSizes, strides);
      from = arith::AddIOp::create(b, loc, from, rows);
    }
  }
  // Back to the batch dims: an expansion whose batch group holds at most one
  // dynamic dim (the gate's rule), which MLIR's memref lowering takes.
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> outShape;
  for (int64_t d = 0; d + 2 < rank; ++d) {
    bool useLhs = !a.isDynamicDim(d) || bt.isDynamicDim(d);
    shape.push_back(useLhs ? a.getDimSize(d) : bt.getDimSize(d));
    outShape.push_back(mixedDim(b, loc, useLhs ? lhs : rhs, d));
  }
  shape.append({type3.getDimSize(1), type3.getDimSize(2)});
  outShape.push_back(mixedDim(b, loc, lhs, rank - 2));
  outShape.push_back(mixedDim(b, loc, rhs, rank - 1));
  return tensor::ExpandShapeOp::create(b, loc, RankedTensorType::get(shape, element), out, groups,
                                       outShape);
}

/// The accumulator a convolution starts from: the bias viewed as `biasShape`
/// (ones but for the channel dims) broadcast to `type`, or zeros.
Value initFromBias(OpBuilder &b, Location loc, Value bias, RankedTensorType type,
                   ArrayRef<int64_t> biasShape) {
  if (!bias)
    return zeros(b, loc, type);
  Value view = reshapeTo(b, loc, bias, RankedTensorType::get(biasShape, type.getElementType()));
  return buildElementwise(b, loc, type, {view},
                          [](OpBuilder &, Location, ValueRange a) { return a[0]; });
}

/// Whether a convolution lowers to a matmul (buildConvAsMatmul).
bool isMatmulConv(int64_t group, RankedTensorType resultType) {
  return group == 1 && resultType.getRank() == 4 && resultType.getElementType().isF32();
}

/// `input` padded with `value` by `low` and `high` per dim (negative ones
/// crop; cropping a whole dim away leaves `value` alone).
Value padTensor(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high, Value value) {
  auto type = tensorType(input);
  SmallVector<int64_t> lo(low), hi(high), shape;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.getDimSize(d) + std::min<int64_t>(0, lo[d]) + std::min<int64_t>(0, hi[d]) <= 0) {
      for (int64_t e = 0; e < type.getRank(); ++e)
        shape.push_back(type.getDimSize(e) + lo[e] + hi[e]);
      return filledTensor(b, loc, RankedTensorType::get(shape, type.getElementType()), value);
    }
  // Cropping first: take the slice the negative pads leave.
  SmallVector<int64_t> offsets, sizes, ones(type.getRank(), 1);
  bool crop = false;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    int64_t cropLo = std::max<int64_t>(0, -lo[d]), cropHi = std::max<int64_t>(0, -hi[d]);
    crop |= cropLo || cropHi;
    offsets.push_back(cropLo);
    sizes.push_back(type.getDimSize(d) - cropLo - cropHi);
    lo[d] = std::max<int64_t>(0, lo[d]);
    hi[d] = std::max<int64_t>(0, hi[d]);
  }
  if (crop)
    input = tensor::ExtractSliceOp::create(b, loc, input, indexAttrs(b, offsets),
                                           indexAttrs(b, sizes), indexAttrs(b, ones));
  if (llvm::all_of(lo, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(hi, [](int64_t v) { return v == 0; }))
    return input;
  for (int64_t d = 0; d < type.getRank(); ++d)
    shape.push_back(sizes[d] + lo[d] + hi[d]);
  auto padType = RankedTensorType::get(shape, type.getElementType());
  SmallVector<OpFoldResult> loF, hiF;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    loF.push_back(b.getIndexAttr(lo[d]));
    hiF.push_back(b.getIndexAttr(hi[d]));
  }
  return tensor::PadOp::create(b, loc, padType, input, loF, hiF, value);
}

//===----------------------------------------------------------------------===//
// MatMul and Einsum
//===----------------------------------------------------------------------===//

struct MatMulPattern : OpConversionPattern<nn::MatMulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::MatMulOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    auto resultType = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Type element = resultType.getElementType();
    // Promote 1-D operands to matrices (the result drops the promoted dim again).
    SmallVector<int64_t> a(tensorType(lhs).getShape()), bs(tensorType(rhs).getShape());
    if (a.size() == 1) {
      a.insert(a.begin(), 1);
      lhs = reshapeTo(b, loc, lhs, RankedTensorType::get(a, element));
    }
    if (bs.size() == 1) {
      bs.push_back(1);
      rhs = reshapeTo(b, loc, rhs, RankedTensorType::get(bs, element));
    }
    if (!resultType.hasStaticShape() || !tensorType(lhs).hasStaticShape() ||
        !tensorType(rhs).hasStaticShape()) {
      if (bs.size() > 2) {
        b.replaceOp(op, reshapeTo(b, loc, dynamicBatchedMatmul(b, loc, lhs, rhs), resultType));
        return success();
      }
      // NNToLinalg's gate lets through only a 2-D right operand, static when
      // the left one has more than two dims, or batched products
      // (isDynamicBatchedMatmul).
      assert(bs.size() == 2 && (a.size() == 2 || tensorType(rhs).hasStaticShape()));
      b.replaceOp(op, reshapeTo(b, loc, dynamicMatmul(b, loc, lhs, rhs,
                                                      RankedTensorType::get(
                                                          llvm::to_vector(llvm::concat<const int64_t>(
                                                              ArrayRef<int64_t>(a).drop_back(),
                                                              ArrayRef<int64_t>(bs).take_back())),
                                                          element)),
                                resultType));
      return success();
    }
    if (a.size() > 2 && bs.size() == 2) {
      // A stack of rows times one matrix is one matrix product: [..., M, K]
      // is viewed as [(...) * M, K], which the CPU schedule tiles as a whole.
      int64_t rows = 1;
      for (int64_t d : ArrayRef<int64_t>(a).drop_back())
        rows *= d;
      a = {rows, a.back()};
      lhs = reshapeTo(b, loc, lhs, RankedTensorType::get(a, element));
    }
    if (a.size() == 2 && bs.size() == 2) {
      auto type = RankedTensorType::get({a[0], bs[1]}, element);
      Value out = linalg::MatmulOp::create(b, loc, ValueRange{lhs, rhs}, ValueRange{zeros(b, loc, type)})
                      .getResult(0);
      b.replaceOp(op, reshapeTo(b, loc, out, resultType));
      return success();
    }
    // Batched: loops are (batch..., m, n, k) with NumPy broadcasting of batch dims.
    int64_t batchRank = std::max(a.size(), bs.size()) - 2;
    SmallVector<int64_t> shape;
    for (int64_t i = 0; i < batchRank; ++i) {
      int64_t da = i < batchRank - (int64_t)(a.size() - 2) ? 1 : a[i - (batchRank - (a.size() - 2))];
      int64_t db = i < batchRank - (int64_t)(bs.size() - 2) ? 1 : bs[i - (batchRank - (bs.size() - 2))];
      shape.push_back(std::max(da, db));
    }
    int64_t m = a[a.size() - 2], n = bs.back();
    if (a.size() == bs.size() && ArrayRef<int64_t>(a).drop_back(2) == ArrayRef<int64_t>(bs).drop_back(2)) {
      // Same batch dims on both sides: one linalg.batch_matmul over their
      // product, the form the CPU schedule vectorizes like a plain matmul.
      int64_t batch = 1;
      for (int64_t d : ArrayRef<int64_t>(a).drop_back(2))
        batch *= d;
      int64_t k = a.back();
      Value lhs3 = reshapeTo(b, loc, lhs, RankedTensorType::get({batch, m, k}, element));
      Value rhs3 = reshapeTo(b, loc, rhs, RankedTensorType::get({batch, k, n}, element));
      auto type3 = RankedTensorType::get({batch, m, n}, element);
      Value out = linalg::BatchMatmulOp::create(b, loc, ValueRange{lhs3, rhs3},
                                                ValueRange{zeros(b, loc, type3)})
                      .getResult(0);
      b.replaceOp(op, reshapeTo(b, loc, out, resultType));
      return success();
    }
    shape.push_back(m);
    shape.push_back(n);
    int64_t loops = batchRank + 3;
    auto batchExprs = [&](ArrayRef<int64_t> s) {
      SmallVector<AffineExpr> exprs;
      int64_t offset = batchRank - (s.size() - 2);
      for (size_t i = 0; i + 2 < s.size(); ++i)
        exprs.push_back(s[i] == 1 && shape[i + offset] != 1 ? getAffineConstantExpr(0, ctx)
                                                            : getAffineDimExpr(i + offset, ctx));
      return exprs;
    };
    AffineExpr dm = getAffineDimExpr(batchRank, ctx), dn = getAffineDimExpr(batchRank + 1, ctx),
               dk = getAffineDimExpr(batchRank + 2, ctx);
    SmallVector<AffineExpr> lhsExprs = batchExprs(a), rhsExprs = batchExprs(bs), outExprs;
    lhsExprs.append({dm, dk});
    rhsExprs.append({dk, dn});
    for (int64_t i = 0; i < batchRank + 2; ++i)
      outExprs.push_back(getAffineDimExpr(i, ctx));
    SmallVector<AffineMap> maps{AffineMap::get(loops, 0, lhsExprs, ctx),
                                AffineMap::get(loops, 0, rhsExprs, ctx),
                                AffineMap::get(loops, 0, outExprs, ctx)};
    SmallVector<IteratorType> iterators(loops - 1, IteratorType::parallel);
    iterators.push_back(IteratorType::reduction);
    auto type = RankedTensorType::get(shape, element);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{type}, ValueRange{lhs, rhs}, ValueRange{zeros(b, loc, type)}, maps,
        iterators, [](OpBuilder &nb, Location nl, ValueRange args) {
          linalg::YieldOp::create(nb, nl, multiplyAdd(nb, nl, args[0], args[1], args[2]));
        });
    b.replaceOp(op, reshapeTo(b, loc, generic.getResult(0), resultType));
    return success();
  }
};

struct EinsumPattern : OpConversionPattern<nn::EinsumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::EinsumOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    auto resultType = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    auto [lhs, output] = op.getEquation().split("->");
    SmallVector<StringRef> terms;
    lhs.split(terms, ',');
    // Loop dims: output letters first (parallel), then the contracted ones.
    std::string letters = output.str();
    llvm::DenseMap<char, int64_t> sizes;
    for (auto [term, v] : llvm::zip(terms, adaptor.getInputs()))
      for (auto [c, d] : llvm::zip(term, tensorType(v).getShape())) {
        if (letters.find(c) == std::string::npos)
          letters.push_back(c);
        sizes[c] = std::max(sizes.lookup(c), d);
      }
    auto dimOf = [&](char c) { return getAffineDimExpr(letters.find(c), ctx); };
    SmallVector<AffineMap> maps;
    for (auto [term, v] : llvm::zip(terms, adaptor.getInputs())) {
      SmallVector<AffineExpr> exprs;
      for (auto [c, d] : llvm::zip(term, tensorType(v).getShape()))
        exprs.push_back(d == 1 && sizes[c] != 1 ? getAffineConstantExpr(0, ctx) : dimOf(c));
      maps.push_back(AffineMap::get(letters.size(), 0, exprs, ctx));
    }
    SmallVector<AffineExpr> outExprs;
    for (char c : output)
      outExprs.push_back(dimOf(c));
    maps.push_back(AffineMap::get(letters.size(), 0, outExprs, ctx));
    SmallVector<IteratorType> iterators;
    for (size_t i = 0; i < letters.size(); ++i)
      iterators.push_back(i < output.size() ? IteratorType::parallel : IteratorType::reduction);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{resultType}, adaptor.getInputs(), ValueRange{zeros(b, loc, resultType)},
        maps, iterators, [](OpBuilder &nb, Location nl, ValueRange args) {
          Value product = args[0];
          for (Value v : args.drop_front().drop_back())
            product = isa<FloatType>(v.getType()) ? Value(arith::MulFOp::create(nb, nl, product, v))
                                                  : Value(arith::MulIOp::create(nb, nl, product, v));
          Value acc = args.back();
          Value sum = isa<FloatType>(acc.getType()) ? Value(arith::AddFOp::create(nb, nl, acc, product))
                                                    : Value(arith::AddIOp::create(nb, nl, acc, product));
          linalg::YieldOp::create(nb, nl, sum);
        });
    b.replaceOp(op, generic.getResult(0));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

/// The patch matrix of a 2-D convolution as a tensor of `shape`, whose dims
/// play the roles in `roles` (0 n, 1 c, 2 kh, 3 kw, 4 oh, 5 ow; n may be
/// absent for one image): element = x[n, c, oh*s + kh*d - pad, ow*s + kw*d -
/// pad], zero outside x. Reading the unpadded input with a bounds check saves
/// the padded copy of every activation.
Value buildPatches(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> roles,
                   ArrayRef<int64_t> shape, ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                   ArrayRef<int64_t> padsBegin) {
  MLIRContext *ctx = b.getContext();
  auto inType = tensorType(x);
  Type element = inType.getElementType();
  int64_t rank = shape.size();
  auto position = [&](int64_t role) -> int64_t {
    auto it = llvm::find(roles, role);
    return it == roles.end() ? -1 : it - roles.begin();
  };
  auto type = RankedTensorType::get(shape, element);
  // Does any window reach outside x?
  bool outside = false;
  for (int i = 0; i < 2; ++i) {
    int64_t out = shape[position(4 + i)], k = shape[position(2 + i)];
    int64_t last = (out - 1) * strides[i] + (k - 1) * dilations[i] - padsBegin[i];
    outside |= padsBegin[i] > 0 || last >= inType.getDimSize(2 + i);
  }
  auto d = [&](int64_t role) {
    int64_t pos = position(role);
    return pos < 0 ? getAffineConstantExpr(0, ctx) : getAffineDimExpr(pos, ctx);
  };
  if (!outside) {
    AffineMap read = AffineMap::get(
        rank, 0,
        {d(0), d(1), d(4) * strides[0] + d(2) * dilations[0] - padsBegin[0],
         d(5) * strides[1] + d(3) * dilations[1] - padsBegin[1]},
        ctx);
    return buildMappedCopy(b, loc, x, type, read);
  }
  SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(rank, ctx)};
  SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{}, ValueRange{emptyTensor(b, loc, type)}, maps,
             iterators,
             [&](OpBuilder &nb, Location nl, ValueRange) {
               auto index = [&](int64_t role) -> Value {
                 int64_t pos = position(role);
                 return pos < 0 ? Value(arith::ConstantIndexOp::create(nb, nl, 0))
                                : Value(linalg::IndexOp::create(nb, nl, pos));
               };
               auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(nb, nl, v); };
               Value zero = cst(0);
               Value inside = arith::ConstantIntOp::create(nb, nl, 1, 1);
               SmallVector<Value> at{index(0), index(1)};
               for (int i = 0; i < 2; ++i) {
                 // Ops built one per statement: as nested call arguments their
                 // order would be the host compiler's (gcc and clang differ).
                 Value dilation = cst(dilations[i]);
                 Value tap = index(2 + i);
                 Value dilated = arith::MulIOp::create(nb, nl, tap, dilation);
                 Value stride = cst(strides[i]);
                 Value out = index(4 + i);
                 Value strided = arith::MulIOp::create(nb, nl, out, stride);
                 Value pos = arith::AddIOp::create(nb, nl, strided, dilated);
                 pos = arith::SubIOp::create(nb, nl, pos, cst(padsBegin[i]));
                 // One unsigned compare covers both ends: negatives wrap to huge.
                 Value ok = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, pos,
                                                  cst(inType.getDimSize(2 + i)));
                 inside = arith::AndIOp::create(nb, nl, inside, ok);
                 at.push_back(arith::SelectOp::create(nb, nl, ok, pos, zero));
               }
               Value v = tensor::ExtractOp::create(nb, nl, x, at);
               Value result =
                   arith::SelectOp::create(nb, nl, inside, v, scalarConstant(nb, nl, element, 0));
               linalg::YieldOp::create(nb, nl, result);
             })
      .getResult(0);
}

Value spaceToDepth(OpBuilder &b, Location loc, Value x);

/// The most rows buildStride2Patches copies one by one.
constexpr int64_t kMaxPatchRowCopies = 64;

/// The patch matrix [N, C, KH, KW, OH, OW] of a 2-D stride-2 convolution (no
/// dilation) copied from the 2x2 space-to-depth of its padded input: tap
/// (i, j) reads phase (i % 2, j % 2) at offset (i / 2, j / 2), a contiguous
/// window, so each patch row is a row copy (16-wide vector loads and stores)
/// instead of elements gathered at stride 2 with a bounds check each
/// (MobileNetV2's 3x3 stem: 27 rows of 112x112 from 3 channels).
Value buildStride2Patches(OpBuilder &b, Location loc, Value input, int64_t kh, int64_t kw,
                          int64_t oh, int64_t ow, ArrayRef<int64_t> padsBegin) {
  auto inType = tensorType(input);
  Type element = inType.getElementType();
  int64_t n = inType.getDimSize(0), c = inType.getDimSize(1);
  // Phase rows and columns every window reaches.
  int64_t hs = oh + (kh - 1) / 2, ws = ow + (kw - 1) / 2;
  Value x = padTensor(b, loc, input, {0, 0, padsBegin[0], padsBegin[1]},
                      {0, 0, 2 * hs - inType.getDimSize(2) - padsBegin[0],
                       2 * ws - inType.getDimSize(3) - padsBegin[1]},
                      scalarConstant(b, loc, element, 0));
  Value phases = spaceToDepth(b, loc, x);
  auto windowType = RankedTensorType::get({n, 1, oh, ow}, element);
  Value patches = emptyTensor(b, loc, RankedTensorType::get({n, c * kh * kw, oh, ow}, element));
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        Value window = tensor::ExtractSliceOp::create(
            b, loc, windowType, phases,
            indexAttrs(b, {0, 4 * ci + 2 * (i % 2) + j % 2, i / 2, j / 2}),
            indexAttrs(b, {n, 1, oh, ow}), indexAttrs(b, {1, 1, 1, 1}));
        patches = tensor::InsertSliceOp::create(
            b, loc, window, patches, indexAttrs(b, {0, (ci * kh + i) * kw + j, 0, 0}),
            indexAttrs(b, {n, 1, oh, ow}), indexAttrs(b, {1, 1, 1, 1}));
      }
  return reshapeTo(b, loc, patches, RankedTensorType::get({n, c, kh, kw, oh, ow}, element));
}

/// Whether `channels` channels at each of `positions` output positions fill
/// vector registers better along the channels than along the positions: the
/// channels a multiple of 32 (the widest register tile) and the positions
/// not, or the channels' tiles clearly fuller. With M not a multiple of 32
/// either, the side whose register tiles waste fewer lanes goes on the
/// vector; channels only by a clear margin, since their result is copied back
/// to NCHW. RegNetY's 440 channels of 7x7 (49 positions: 77% of two tiles'
/// lanes, 98% for 440) ran 3x faster so.
bool channelsFillVectors(int64_t channels, int64_t positions) {
  auto lanesUsed = [](int64_t n) { return double(n) / double(llvm::alignTo(n, 32)); };
  return (channels % 32 == 0 && positions % 32 != 0) ||
         (channels >= 32 && lanesUsed(channels) > lanesUsed(positions) + 0.1);
}

/// Whether NCHW `value` is the permutation of a channels-last result (a
/// channels-last depthwise convolution's, buildDepthwiseConv), maybe through
/// elementwise ops (its activation).
bool computedChannelsLast(Value value) {
  while (auto generic = value.getDefiningOp<linalg::GenericOp>()) {
    if (generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 0 ||
        !generic.getMatchingIndexingMap(generic.getDpsInitOperand(0)).isIdentity())
      return false;
    // The one operand of the value's rank; others must be scalars.
    OpOperand *source = nullptr;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      if (cast<ShapedType>(input->get().getType()).getRank() == 0)
        continue;
      if (source)
        return false;
      source = input;
    }
    if (!source)
      return false;
    AffineMap map = generic.getMatchingIndexingMap(source);
    MLIRContext *ctx = value.getContext();
    auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
    if (map == AffineMap::get(4, 0, {d(0), d(2), d(3), d(1)}, ctx))
      return true;
    if (!map.isIdentity())
      return false;
    value = source->get();
  }
  return false;
}

/// A 2-D, ungrouped f32 convolution as a matmul (the input padded by
/// `padsBegin` at the top and left, and as far as the windows reach below):
/// filter [M, C*KH*KW] times the patch matrix [C*KH*KW, OH*OW] of each image
/// (im2col; a 1x1 stride-1 convolution is already one). The matmul is the
/// kernel the CPU schedule makes fast; the patch copy is memory-bound and
/// small next to it.
Value buildConvAsMatmul(OpBuilder &b, Location loc, Value input, Value filter, Value bias,
                        ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                        ArrayRef<int64_t> padsBegin, RankedTensorType resultType) {
  MLIRContext *ctx = b.getContext();
  auto inType = tensorType(input), wType = tensorType(filter);
  Type element = resultType.getElementType();
  int64_t n = inType.getDimSize(0), c = inType.getDimSize(1), m = wType.getDimSize(0);
  int64_t kh = wType.getDimSize(2), kw = wType.getDimSize(3);
  int64_t oh = resultType.getDimSize(2), ow = resultType.getDimSize(3);
  int64_t k = c * kh * kw, p = oh * ow;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  AffineMap swap = AffineMap::get(2, 0, {d(1), d(0)}, ctx);
  bool pointwise = kh == 1 && kw == 1 && strides[0] == 1 && strides[1] == 1;
  // A window larger than the output is a filter gradient (Autodiff's dW: the
  // batch and channels swapped, the output gradient as the filter): few
  // output positions per image, and a long reduction.
  bool filterGradient = kh * kw > p;
  // Channels also go on the vector for convolutions with windows over 16
  // input channels or more, and for filter gradients.
  bool channelsOnVector =
      channelsFillVectors(m, p) || (m % 32 == 0 && ((c >= 16 && !pointwise) || filterGradient));
  if (channelsOnVector) {
    // Output channels along the vector: out^T [N*P, M] = patches^T [N*P, K] x
    // filter^T [K, M], the images' output positions one after another down
    // the rows (the filter is shared). Every output row is a full set of
    // channels, so the small spatial sizes of deep layers (7x7 = 49) only
    // shorten the row loop instead of leaving ragged vector edges, and the
    // filter is laid out for the kernel at compile time. Measured on
    // ResNet-18's layers, this beats vectors along P (which need the patches
    // packed at run time) except for few input channels (the RGB stem),
    // where the patch copies dominate, and for 1x1 convolutions with P a
    // multiple of 32, whose input already is the patch matrix. With a ragged
    // P (MobileNetV2's 28x28, 14x14 and 7x7 layers) channels on the vector
    // win for them too (MobileNetV2 about 15% faster at one thread). At batch
    // 8, ResNet-18's 7x7 layers ran 25x faster this way than as a batched
    // matmul along P.
    // The input [K, P] of one image's 1x1 convolution is its transposed patch
    // matrix already: the matmul reads it across (the kernel broadcasts single
    // elements of A anyway) instead of copying it transposed; unless it was
    // computed channels-last, when the copy cancels with the permutation
    // that made it NCHW.
    bool unpadded = pointwise && padsBegin[0] == 0 && padsBegin[1] == 0 &&
                    inType.getDimSize(2) == oh && inType.getDimSize(3) == ow;
    bool readAcross = n == 1 && unpadded && !computedChannelsLast(input);
    int64_t rowCount = n * p;
    Value patches;
    if (readAcross) {
      patches = reshapeTo(b, loc, input, RankedTensorType::get({k, p}, element));
    } else if (unpadded) {
      // The input channels-last: a plain permutation, which fuses with a
      // producer computed channels-last.
      Value copied = buildMappedCopy(b, loc, input,
                                     RankedTensorType::get({n, oh, ow, c}, element),
                                     AffineMap::get(4, 0, {d(0), d(3), d(1), d(2)}, ctx));
      patches = reshapeTo(b, loc, copied, RankedTensorType::get({rowCount, k}, element));
    } else {
      // Patches in (n, oh, ow, c, kh, kw) order (no n for one image).
      Value copied =
          n == 1 ? buildPatches(b, loc, input, {4, 5, 1, 2, 3}, {oh, ow, c, kh, kw}, strides,
                                dilations, padsBegin)
                 : buildPatches(b, loc, input, {0, 4, 5, 1, 2, 3}, {n, oh, ow, c, kh, kw},
                                strides, dilations, padsBegin);
      patches = reshapeTo(b, loc, copied, RankedTensorType::get({rowCount, k}, element));
    }
    Value w = reshapeTo(b, loc, filter, RankedTensorType::get({m, k}, element));
    Value wT = buildMappedCopy(b, loc, w, RankedTensorType::get({k, m}, element), swap);
    Value init =
        initFromBias(b, loc, bias, RankedTensorType::get({rowCount, m}, element), {1, m});
    SmallVector<NamedAttribute> attrs;
    if (readAcross) {
      SmallVector<Attribute> maps{AffineMapAttr::get(AffineMap::get(3, 0, {d(2), d(0)}, ctx)),
                                  AffineMapAttr::get(AffineMap::get(3, 0, {d(2), d(1)}, ctx)),
                                  AffineMapAttr::get(AffineMap::get(3, 0, {d(0), d(1)}, ctx))};
      attrs.push_back(b.getNamedAttr("indexing_maps", b.getArrayAttr(maps)));
    }
    Value product = linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                             ValueRange{patches, wT}, ValueRange{init}, attrs)
                        .getResult(0);
    // Written straight into NCHW, so elementwise consumers (bias, batch
    // norm, activation) can fuse with this copy.
    // Read as [OH, OW, M] (one image) or [N, OH, OW, M]: a permutation,
    // which the CPU schedule vectorizes as 16x16 register transposes.
    if (n == 1) {
      Value rows = tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get({oh, ow, m}, element), product,
          SmallVector<ReassociationIndices>{{0, 1}, {2}});
      AffineMap back = AffineMap::get(4, 0, {d(2), d(3), d(1)}, ctx);
      return buildMappedCopy(b, loc, rows, resultType, back);
    }
    Value rows = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({n, oh, ow, m}, element), product,
        SmallVector<ReassociationIndices>{{0, 1, 2}, {3}});
    AffineMap back = AffineMap::get(4, 0, {d(0), d(2), d(3), d(1)}, ctx);
    return buildMappedCopy(b, loc, rows, resultType, back);
  }
  Value patches;
  if (pointwise && padsBegin[0] == 0 && padsBegin[1] == 0 && inType.getDimSize(2) == oh &&
      inType.getDimSize(3) == ow) {
    patches = reshapeTo(b, loc, input, RankedTensorType::get({n, k, p}, element));
  } else {
    // Row copies from phases beat gathers for few channels (a stem); for
    // many, the phases' extra copy of the input would not pay (not measured).
    // Each row is an insert into the patch tensor, a chain whose
    // bufferization analysis grows with its square: ResNet's 7x7 stem (147
    // rows) took 12 s of a 32x32 compile. Longer chains gather.
    bool phases = strides[0] == 2 && strides[1] == 2 && dilations[0] == 1 &&
                  dilations[1] == 1 && c <= 4 && c * kh * kw <= kMaxPatchRowCopies;
    Value copied = phases ? buildStride2Patches(b, loc, input, kh, kw, oh, ow, padsBegin)
                          : buildPatches(b, loc, input, {0, 1, 2, 3, 4, 5},
                                         {n, c, kh, kw, oh, ow}, strides, dilations, padsBegin);
    patches = reshapeTo(b, loc, copied, RankedTensorType::get({n, k, p}, element));
  }
  Value w = reshapeTo(b, loc, filter, RankedTensorType::get({m, k}, element));
  auto outType = RankedTensorType::get({n, m, p}, element);
  Value out;
  if (n == 1) {
    // The bias broadcast straight to the matmul's shape: behind a reshape
    // the CPU schedule could not fuse it into the register tiles.
    auto type2 = RankedTensorType::get({m, p}, element);
    Value x2 = reshapeTo(b, loc, patches, RankedTensorType::get({k, p}, element));
    out = linalg::MatmulOp::create(b, loc, ValueRange{w, x2},
                                   ValueRange{initFromBias(b, loc, bias, type2, {m, 1})})
              .getResult(0);
  } else {
    Value init = initFromBias(b, loc, bias, outType, {1, m, 1});
    // Loops (n, m, p, k): the filter is shared by every image.
    SmallVector<AffineMap> maps{AffineMap::get(4, 0, {d(1), d(3)}, ctx),
                                AffineMap::get(4, 0, {d(0), d(3), d(2)}, ctx),
                                AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)};
    SmallVector<IteratorType> iterators(3, IteratorType::parallel);
    iterators.push_back(IteratorType::reduction);
    out = linalg::GenericOp::create(
              b, loc, TypeRange{outType}, ValueRange{w, patches}, ValueRange{init}, maps, iterators,
              [](OpBuilder &nb, Location nl, ValueRange args) {
                linalg::YieldOp::create(nb, nl, multiplyAdd(nb, nl, args[0], args[1], args[2]));
              })
              .getResult(0);
  }
  return reshapeTo(b, loc, out, resultType);
}

/// A 2-D, stride-1, ungrouped f32 convolution read straight from its padded
/// input, with no patch matrix. With the padded rows (width Wp) laid end to
/// end, tap (i, j) of output position q = oh*Wp + ow reads input position
/// q + i*dh*Wp + j*dw: each tap is the filter's [M, C] slice times a shifted
/// window of the flattened input, a matmul whose rows are contiguous. The
/// output is computed Wp wide (the last Wp - OW columns of each row are
/// wasted work) and sliced. Loops (n, m, q, c, i, j); the CPU schedule
/// recognizes this form (TileAndVectorize.cpp) and gives it the matmul
/// kernel. Null when the convolution is not of that kind or the waste is too
/// large.
Value buildShiftedConv(OpBuilder &b, Location loc, Value input, Value filter, Value bias,
                       ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                       ArrayRef<int64_t> lo, ArrayRef<int64_t> hi, RankedTensorType resultType) {
  auto wType = tensorType(filter);
  int64_t n = resultType.getDimSize(0), m = resultType.getDimSize(1),
          oh = resultType.getDimSize(2), ow = resultType.getDimSize(3);
  int64_t c = wType.getDimSize(1), kh = wType.getDimSize(2), kw = wType.getDimSize(3);
  int64_t wp = tensorType(input).getDimSize(3) + lo[3] + hi[3];
  // 1x1 convolutions are matmuls already; narrow rows waste too much.
  if (strides[0] != 1 || strides[1] != 1 || kh * kw == 1 || ow * 8 < wp * 7)
    return nullptr;
  Type element = resultType.getElementType();
  // Output positions are computed in whole multiples of 32, the CPU
  // register tile's width: tiles need no ragged edge, and thread chunks can
  // split them (56x58 = 3248 cannot split into 32s; 3264 can).
  int64_t q = oh * wp, qr = llvm::alignTo(q, 32);
  // One more zero row below: the wasted columns of the last row reach past it
  // (and the rounding's).
  SmallVector<int64_t> below(hi);
  below[2] += 1 + llvm::divideCeil(qr - q, wp);
  Value x = padTensor(b, loc, input, lo, below, scalarConstant(b, loc, element, 0));
  auto xType = tensorType(x);
  int64_t length = xType.getDimSize(2) * wp;
  Value flat = reshapeTo(b, loc, x, RankedTensorType::get({n, c, length}, element));
  MLIRContext *ctx = b.getContext();
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps{
      AffineMap::get(6, 0, {d(1), d(3), d(4), d(5)}, ctx),
      AffineMap::get(6, 0, {d(0), d(3), d(2) + d(4) * (dilations[0] * wp) + d(5) * dilations[1]},
                     ctx),
      AffineMap::get(6, 0, {d(0), d(1), d(2)}, ctx)};
  SmallVector<IteratorType> iterators(3, IteratorType::parallel);
  iterators.append(3, IteratorType::reduction);
  auto outType = RankedTensorType::get({n, m, qr}, element);
  Value init = initFromBias(b, loc, bias, outType, {1, m, 1});
  Value out = linalg::GenericOp::create(
                  b, loc, TypeRange{outType}, ValueRange{filter, flat}, ValueRange{init}, maps,
                  iterators,
                  [](OpBuilder &nb, Location nl, ValueRange args) {
                    linalg::YieldOp::create(nb, nl,
                                            multiplyAdd(nb, nl, args[0], args[1], args[2]));
                  })
                  .getResult(0);
  if (qr != q)
    out = tensor::ExtractSliceOp::create(b, loc, RankedTensorType::get({n, m, q}, element), out,
                                         indexAttrs(b, {0, 0, 0}), indexAttrs(b, {n, m, q}),
                                         indexAttrs(b, {1, 1, 1}));
  Value rows = reshapeTo(b, loc, out, RankedTensorType::get({n, m, oh, wp}, element));
  return tensor::ExtractSliceOp::create(b, loc, resultType, rows, indexAttrs(b, {0, 0, 0, 0}),
                                        indexAttrs(b, {n, m, oh, ow}),
                                        indexAttrs(b, {1, 1, 1, 1}));
}

/// The window of an already padded input that tap (i, j) of a 2-D
/// windowed op reads for every output of `resultType`, whose rows are dim
/// `rowDim` and columns the next (NCHW: 2; channels-last: 1). A column
/// stride of 2 in NCHW reads every other element of a row: the CPU schedule
/// reads it as two contiguous vectors and a shuffle (StridedReadAsShuffle).
Value tapWindow(OpBuilder &b, Location loc, Value input, int64_t i, int64_t j,
                ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                RankedTensorType resultType, int64_t rowDim = 2) {
  SmallVector<int64_t> offsets(4, 0), steps(4, 1);
  offsets[rowDim] = i * dilations[0];
  offsets[rowDim + 1] = j * dilations[1];
  steps[rowDim] = strides[0];
  steps[rowDim + 1] = strides[1];
  return tensor::ExtractSliceOp::create(b, loc, resultType, input, indexAttrs(b, offsets),
                                        indexAttrs(b, resultType.getShape()),
                                        indexAttrs(b, steps));
}

/// A 2-D depthwise f32 convolution (one filter per channel) as one
/// elementwise op over its padded input (`lo` and `hi` per dim): the sum over
/// taps of the input window at the tap's offset times that tap's per-channel
/// weight. Every operand is read along the output's loops, so the CPU
/// schedule vectorizes it along the innermost one and fuses its activation.
/// Strides are strided windows (tapWindow). Where channels fill vectors
/// better than the input's positions (channelsFillVectors, the rule that puts
/// a 1x1 convolution's channels on the vector), it runs channels-last, its
/// input and output permuted: the permutations cancel against those of the
/// 1x1 convolutions around it once fused, so MobileNetV2's 28x28 to 7x7
/// blocks stay [N, H, W, C] from one matmul to the next, and its rows of 28,
/// 14 and 7 positions no longer leave ragged vectors. Null when the
/// convolution is not of that kind or has more than `maxTaps` taps.
Value buildDepthwiseConv(OpBuilder &b, Location loc, Value input, Value filter, Value bias,
                         ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations, int64_t group,
                         ArrayRef<int64_t> lo, ArrayRef<int64_t> hi,
                         RankedTensorType resultType, int64_t maxTaps) {
  auto inType = tensorType(input), wType = tensorType(filter);
  Type element = resultType.getElementType();
  if (resultType.getRank() != 4 || !element.isF32() || group != inType.getDimSize(1) ||
      wType.getDimSize(0) != group || wType.getDimSize(1) != 1)
    return nullptr;
  int64_t n = resultType.getDimSize(0), c = group, oh = resultType.getDimSize(2),
          ow = resultType.getDimSize(3), kh = wType.getDimSize(2), kw = wType.getDimSize(3);
  // Column strides above 2 stay with the generic loops: their windows would
  // be read an element at a time. So do filters of more than `maxTaps` taps
  // (the CPU's 49, 7x7: ConvNeXt's ran 15x faster as a sum of 49 taps than
  // as the loops over 192x28x28; CUDA's 25, see buildLowerPipeline).
  if (kh * kw > maxTaps || strides[1] > 2)
    return nullptr;
  MLIRContext *ctx = b.getContext();
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  Value zero = scalarConstant(b, loc, element, 0);
  bool channelsLast = channelsFillVectors(c, inType.getDimSize(2) * inType.getDimSize(3));
  Value x;
  RankedTensorType outType = resultType;
  int64_t rowDim = 2, channelDim = 1;
  if (channelsLast) {
    auto lastType = RankedTensorType::get(
        {n, inType.getDimSize(2), inType.getDimSize(3), c}, element);
    Value permuted = buildMappedCopy(b, loc, input, lastType,
                                     AffineMap::get(4, 0, {d(0), d(3), d(1), d(2)}, ctx));
    x = padTensor(b, loc, permuted, {0, lo[2], lo[3], 0}, {0, hi[2], hi[3], 0}, zero);
    outType = RankedTensorType::get({n, oh, ow, c}, element);
    rowDim = 1;
    channelDim = 3;
  } else {
    x = padTensor(b, loc, input, lo, hi, zero);
  }
  // Channels-last, the taps' weights [taps, C]: each tap's channels
  // contiguous, one vector load (a constant filter's transpose folds at
  // compile time). NCHW reads one weight per channel.
  Value w2 = reshapeTo(b, loc, filter, RankedTensorType::get({c, kh * kw}, element));
  if (channelsLast)
    w2 = buildMappedCopy(b, loc, w2, RankedTensorType::get({kh * kw, c}, element),
                         AffineMap::get(2, 0, {d(1), d(0)}, ctx));
  SmallVector<Value> operands;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) {
      operands.push_back(tapWindow(b, loc, x, i, j, strides, dilations, outType, rowDim));
      SmallVector<int64_t> tap{0, i * kw + j}, sizes{c, 1};
      if (channelsLast) {
        std::swap(tap[0], tap[1]);
        std::swap(sizes[0], sizes[1]);
      }
      operands.push_back(tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get({c}, element), w2, indexAttrs(b, tap),
          indexAttrs(b, sizes), indexAttrs(b, {1, 1})));
    }
  if (bias)
    operands.push_back(bias);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(4, ctx);
  AffineMap channel = AffineMap::get(4, 0, {d(channelDim)}, ctx);
  SmallVector<AffineMap> maps;
  for (int64_t t = 0; t < kh * kw; ++t)
    maps.append({identity, channel});
  if (bias)
    maps.push_back(channel);
  maps.push_back(identity);
  SmallVector<IteratorType> iterators(4, IteratorType::parallel);
  int64_t taps = kh * kw;
  bool hasBias = bool(bias);
  Value sum = linalg::GenericOp::create(
                  b, loc, TypeRange{outType}, operands,
                  ValueRange{emptyTensor(b, loc, outType)}, maps, iterators,
                  [&](OpBuilder &nb, Location nl, ValueRange args) {
                    // The taps in groups of about sqrt(taps), each a chain of
                    // multiply-adds that may contract into FMAs, the groups'
                    // sums added pairwise: one chain of 25 dependent adds left
                    // a 5x5 depthwise convolution latency-bound, at twice
                    // ONNX Runtime's time.
                    auto contract = arith::FastMathFlags::contract;
                    int64_t group = int64_t(std::ceil(std::sqrt(double(taps))));
                    SmallVector<Value> sums;
                    for (int64_t first = 0; first < taps; first += group) {
                      Value acc = first == 0 && hasBias ? args[2 * taps] : Value();
                      for (int64_t t = first; t < std::min(taps, first + group); ++t) {
                        Value product = arith::MulFOp::create(nb, nl, args[2 * t], args[2 * t + 1], contract);
                        acc = acc ? arith::AddFOp::create(nb, nl, acc, product, contract) : product;
                      }
                      sums.push_back(acc);
                    }
                    while (sums.size() > 1) {
                      SmallVector<Value> next;
                      for (size_t i = 0; i + 1 < sums.size(); i += 2)
                        next.push_back(arith::AddFOp::create(nb, nl, sums[i], sums[i + 1]));
                      if (sums.size() % 2)
                        next.push_back(sums.back());
                      sums = std::move(next);
                    }
                    linalg::YieldOp::create(nb, nl, sums.front());
                  })
      .getResult(0);
  if (!channelsLast)
    return sum;
  return buildMappedCopy(b, loc, sum, resultType,
                         AffineMap::get(4, 0, {d(0), d(2), d(3), d(1)}, ctx));
}

/// A 2-D f32 convolution of groups of 4 or more input channels (of an already
/// padded input) as one matmul per image and group: filter [G, Mg, Cg*KH*KW]
/// times the patch matrix [N, G, Cg*KH*KW, OH*OW], loops (n, g, m, p, k), the
/// filter shared by the images. The CPU schedule runs it as its matmul kernel
/// with n and g as batch loops. (The direct loop nest below, vectorized by
/// LLVM along output rows, ran RegNetY's groups of 8 channels at 1 to 10
/// GFLOP/s.)
Value buildGroupedConvAsMatmul(OpBuilder &b, Location loc, Value input, Value filter, Value bias,
                               ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                               int64_t group, RankedTensorType resultType) {
  MLIRContext *ctx = b.getContext();
  auto inType = tensorType(input), wType = tensorType(filter);
  Type element = resultType.getElementType();
  int64_t n = inType.getDimSize(0), c = inType.getDimSize(1), m = wType.getDimSize(0);
  int64_t kh = wType.getDimSize(2), kw = wType.getDimSize(3);
  int64_t oh = resultType.getDimSize(2), ow = resultType.getDimSize(3);
  int64_t mg = m / group, k = c / group * kh * kw, p = oh * ow;
  Value copied = buildPatches(b, loc, input, {0, 1, 2, 3, 4, 5}, {n, c, kh, kw, oh, ow}, strides,
                              dilations, {0, 0});
  Value patches = reshapeTo(b, loc, copied, RankedTensorType::get({n, group, k, p}, element));
  Value w = reshapeTo(b, loc, filter, RankedTensorType::get({group, mg, k}, element));
  auto outType = RankedTensorType::get({n, group, mg, p}, element);
  Value init = initFromBias(b, loc, bias, outType, {1, group, mg, 1});
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps{AffineMap::get(5, 0, {d(1), d(2), d(4)}, ctx),
                              AffineMap::get(5, 0, {d(0), d(1), d(4), d(3)}, ctx),
                              AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx)};
  SmallVector<IteratorType> iterators(4, IteratorType::parallel);
  iterators.push_back(IteratorType::reduction);
  Value out = linalg::GenericOp::create(
                  b, loc, TypeRange{outType}, ValueRange{w, patches}, ValueRange{init}, maps,
                  iterators,
                  [](OpBuilder &nb, Location nl, ValueRange args) {
                    linalg::YieldOp::create(nb, nl, multiplyAdd(nb, nl, args[0], args[1], args[2]));
                  })
                  .getResult(0);
  return reshapeTo(b, loc, out, resultType);
}

/// Grouped N-d convolution of an already padded input; the output starts
/// from the bias (or zero).
Value buildConv(OpBuilder &b, Location loc, Value input, Value filter, Value bias,
                ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations, int64_t group,
                RankedTensorType resultType) {
  if (isMatmulConv(group, resultType))
    return buildConvAsMatmul(b, loc, input, filter, bias, strides, dilations, {0, 0}, resultType);
  MLIRContext *ctx = b.getContext();
  auto inType = tensorType(input), wType = tensorType(filter);
  Type element = resultType.getElementType();
  int64_t spatial = inType.getRank() - 2;
  int64_t n = inType.getDimSize(0), c = inType.getDimSize(1), m = wType.getDimSize(0);
  int64_t cg = c / group, mg = m / group;
  // The patch matrix holds KH*KW copies of the input, which pays for groups
  // of 4 channels or more: at 2 or 3 per group the loop nest below was up to
  // twice as fast, at 8 (RegNetY) nine times slower.
  if (spatial == 2 && cg >= 4 && element.isF32())
    return buildGroupedConvAsMatmul(b, loc, input, filter, bias, strides, dilations, group,
                                    resultType);
  SmallVector<int64_t> inShape{n, group, cg}, wShape{group, mg, cg}, outShape{n, group, mg};
  for (int64_t i = 0; i < spatial; ++i) {
    inShape.push_back(inType.getDimSize(i + 2));
    wShape.push_back(wType.getDimSize(i + 2));
    outShape.push_back(resultType.getDimSize(i + 2));
  }
  Value x = reshapeTo(b, loc, input, RankedTensorType::get(inShape, element));
  Value w = reshapeTo(b, loc, filter, RankedTensorType::get(wShape, element));
  auto outType = RankedTensorType::get(outShape, element);
  SmallVector<int64_t> biasShape(outShape.size(), 1);
  biasShape[1] = group;
  biasShape[2] = mg;
  Value init = initFromBias(b, loc, bias, outType, biasShape);
  int64_t loops = 3 + spatial + 1 + spatial;
  // Loops run (n, g, m, o..., c, k..., o_last): the last output dim is the
  // innermost loop, a contiguous row that LLVM vectorizes, with the filter
  // taps outside it (depthwise convolutions have no other long loop).
  int64_t last = 3 + spatial - 1;
  auto d = [&](int64_t i) {
    int64_t pos = i == last ? loops - 1 : i > last ? i - 1 : i;
    return getAffineDimExpr(pos, ctx);
  };
  int64_t cDim = 3 + spatial, kDim = 4 + spatial;
  SmallVector<AffineExpr> xExprs{d(0), d(1), d(cDim)}, wExprs{d(1), d(2), d(cDim)},
      oExprs{d(0), d(1), d(2)};
  for (int64_t i = 0; i < spatial; ++i) {
    xExprs.push_back(d(3 + i) * strides[i] + d(kDim + i) * dilations[i]);
    wExprs.push_back(d(kDim + i));
    oExprs.push_back(d(3 + i));
  }
  SmallVector<AffineMap> maps{AffineMap::get(loops, 0, xExprs, ctx),
                              AffineMap::get(loops, 0, wExprs, ctx),
                              AffineMap::get(loops, 0, oExprs, ctx)};
  SmallVector<IteratorType> iterators(3 + spatial - 1, IteratorType::parallel);
  iterators.append(1 + spatial, IteratorType::reduction);
  iterators.push_back(IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{outType}, ValueRange{x, w}, ValueRange{init}, maps, iterators,
      [](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, multiplyAdd(nb, nl, args[0], args[1], args[2]));
      });
  return reshapeTo(b, loc, generic.getResult(0), resultType);
}

/// The 2x2 space-to-depth of the last two dims of a 4-D tensor whose last two
/// dims are even: [N, C, 2H, 2W] -> [N, 4C, H, W], channel c*4 + p*2 + q
/// holding the elements at row parity p and column parity q.
Value spaceToDepth(OpBuilder &b, Location loc, Value x) {
  auto type = tensorType(x);
  int64_t n = type.getDimSize(0), c = type.getDimSize(1), h = type.getDimSize(2) / 2,
          w = type.getDimSize(3) / 2;
  Type element = type.getElementType();
  Value split = reshapeTo(b, loc, x, RankedTensorType::get({n, c, h, 2, w, 2}, element));
  MLIRContext *ctx = b.getContext();
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  // result[n, c, p, q, y, x] = split[n, c, y, p, x, q]
  AffineMap map = AffineMap::get(6, 0, {d(0), d(1), d(4), d(2), d(5), d(3)}, ctx);
  Value phases =
      buildMappedCopy(b, loc, split, RankedTensorType::get({n, c, 2, 2, h, w}, element), map);
  return reshapeTo(b, loc, phases, RankedTensorType::get({n, c * 4, h, w}, element));
}

/// A stride-2 convolution of few input channels (an RGB stem) as a stride-1
/// one over the 2x2 space-to-depth of its padded input, with the filter
/// rearranged (and zero-padded to even sizes) the same way: tap (2a + p,
/// 2b + q) of channel c becomes tap (a, b) of channel 4c + 2p + q. The
/// stride-1 convolution reads shifted windows (buildShiftedConv): no patch
/// matrix, whose strided gathers cost as much as the stem's multiply-adds,
/// at the price of the zero taps (7x7 -> 8x8: a third more multiply-adds).
/// Filters whose zero taps would add more than half (3x3 -> 4x4: 78% more)
/// are left to the patch matrix: on MobileNetV2's 3x3 stem it takes 250 us
/// (rows copied from the space-to-depth, buildStride2Patches) against 425
/// here; ResNet-18's 7x7 stem takes 1.7 ms here against 2.9 with patches
/// (measured when they were gathered; copying them saves at most 0.6 ms).
/// Null when the convolution is not of that kind.
Value buildSpaceToDepthConv(OpBuilder &b, Location loc, Value input, Value filter, Value bias,
                            ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                            ArrayRef<int64_t> lo, RankedTensorType resultType) {
  auto inType = tensorType(input), wType = tensorType(filter);
  int64_t c = inType.getDimSize(1), kh = wType.getDimSize(2), kw = wType.getDimSize(3);
  int64_t oh = resultType.getDimSize(2), ow = resultType.getDimSize(3);
  if (strides[0] != 2 || strides[1] != 2 || dilations[0] != 1 || dilations[1] != 1 || c > 4 ||
      kh < 3 || kw < 3)
    return nullptr;
  int64_t taps = (kh + 1) / 2 * 2 * ((kw + 1) / 2 * 2);
  if (2 * taps > 3 * kh * kw)
    return nullptr;
  Type element = resultType.getElementType();
  // Filter taps rounded up to even; the space-to-depth rows and columns
  // every output's windows reach.
  int64_t th = (kh + 1) / 2, tw = (kw + 1) / 2;
  int64_t hs = oh + th - 1, ws = ow + tw - 1;
  // buildShiftedConv's own limit on wasted columns, checked before building.
  if (ow * 8 < ws * 7)
    return nullptr;
  Value zero = scalarConstant(b, loc, element, 0);
  Value x = padTensor(b, loc, input, {0, 0, lo[2], lo[3]},
                      {0, 0, 2 * hs - inType.getDimSize(2) - lo[2],
                       2 * ws - inType.getDimSize(3) - lo[3]},
                      zero);
  Value w = padTensor(b, loc, filter, {0, 0, 0, 0}, {0, 0, 2 * th - kh, 2 * tw - kw}, zero);
  // One at a time: as call arguments, their order in the IR would be the
  // host compiler's evaluation order (gcc and clang differ).
  Value filterPhases = spaceToDepth(b, loc, w);
  Value inputPhases = spaceToDepth(b, loc, x);
  return buildShiftedConv(b, loc, inputPhases, filterPhases, bias, {1, 1}, {1, 1}, {0, 0, 0, 0},
                          {0, 0, 0, 0}, resultType);
}

struct ConvPattern : OpConversionPattern<nn::ConvOp> {
  ConvPattern(const TypeConverter &converter, MLIRContext *context, int64_t maxTapSum)
      : OpConversionPattern(converter, context), maxTapSum(maxTapSum) {}
  int64_t maxTapSum;
  LogicalResult matchAndRewrite(nn::ConvOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Type element = resultType.getElementType();
    int64_t spatial = resultType.getRank() - 2;
    ArrayRef<int64_t> pads = op.getPads();
    SmallVector<int64_t> lo{0, 0}, hi{0, 0};
    lo.append(pads.begin(), pads.begin() + spatial);
    hi.append(pads.begin() + spatial, pads.end());
    // Trailing input rows no window reaches are cropped, so shapes stay exact.
    auto inType = tensorType(adaptor.getInput());
    auto wType = tensorType(adaptor.getFilter());
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t used = (resultType.getDimSize(i + 2) - 1) * op.getStrides()[i] +
                     (wType.getDimSize(i + 2) - 1) * op.getDilations()[i] + 1;
      hi[i + 2] = used - inType.getDimSize(i + 2) - lo[i + 2];
    }
    if (isMatmulConv(op.getGroup(), resultType)) {
      if (Value stem = buildSpaceToDepthConv(b, loc, adaptor.getInput(), adaptor.getFilter(),
                                             adaptor.getBias(), op.getStrides(),
                                             op.getDilations(), lo, resultType)) {
        b.replaceOp(op, stem);
        return success();
      }
      if (Value shifted = buildShiftedConv(b, loc, adaptor.getInput(), adaptor.getFilter(),
                                           adaptor.getBias(), op.getStrides(), op.getDilations(),
                                           lo, hi, resultType)) {
        b.replaceOp(op, shifted);
        return success();
      }
      b.replaceOp(op, buildConvAsMatmul(b, loc, adaptor.getInput(), adaptor.getFilter(),
                                        adaptor.getBias(), op.getStrides(), op.getDilations(),
                                        {lo[2], lo[3]}, resultType));
      return success();
    }
    if (Value depthwise = buildDepthwiseConv(b, loc, adaptor.getInput(), adaptor.getFilter(),
                                             adaptor.getBias(), op.getStrides(),
                                             op.getDilations(), op.getGroup(), lo, hi,
                                             resultType, maxTapSum)) {
      b.replaceOp(op, depthwise);
      return success();
    }
    Value x = padTensor(b, loc, adaptor.getInput(), lo, hi, scalarConstant(b, loc, element, 0));
    b.replaceOp(op, buildConv(b, loc, x, adaptor.getFilter(), adaptor.getBias(), op.getStrides(),
                              op.getDilations(), op.getGroup(), resultType));
    return success();
  }
};

/// A 2-D transposed convolution whose windows do not overlap (kernel equal to
/// the strides, no pads or dilation, one group: UNet's 2x2 upsampling) as a
/// matmul of the filter [M*kh*kw, C] by the input [C, H*W], each input pixel
/// then becoming its own kh x kw block of the output (with the bias). Spread
/// with zeros and padded, it would be a convolution doing kh*kw times the
/// multiply-adds over a patch matrix as many times larger. Null otherwise.
Value buildBlockConvTranspose(OpBuilder &b, Location loc, Value input, Value filter, Value bias,
                              nn::ConvTransposeOp op, RankedTensorType resultType) {
  auto inType = tensorType(input), wType = tensorType(filter);
  Type element = resultType.getElementType();
  if (resultType.getRank() != 4 || op.getGroup() != 1 || !isMatmulConv(1, resultType) ||
      !wType.hasStaticShape() || !inType.hasStaticShape() ||
      llvm::any_of(op.getPads(), [](int64_t p) { return p != 0; }) ||
      llvm::any_of(op.getOutputPadding(), [](int64_t p) { return p != 0; }) ||
      llvm::any_of(op.getDilations(), [](int64_t d) { return d != 1; }) ||
      op.getStrides()[0] != wType.getDimSize(2) || op.getStrides()[1] != wType.getDimSize(3))
    return nullptr;
  MLIRContext *ctx = b.getContext();
  int64_t n = inType.getDimSize(0), c = inType.getDimSize(1), h = inType.getDimSize(2),
          w = inType.getDimSize(3), m = wType.getDimSize(1), kh = wType.getDimSize(2),
          kw = wType.getDimSize(3);
  // Filter [C, M, kh, kw] -> [M*kh*kw, C, 1, 1]: a transpose of a constant
  // folds at compile time.
  Value flat = reshapeTo(b, loc, filter, RankedTensorType::get({c, m * kh * kw}, element));
  AffineMap swap = AffineMap::get(2, 0, {getAffineDimExpr(1, ctx), getAffineDimExpr(0, ctx)}, ctx);
  Value rows = buildMappedCopy(b, loc, flat, RankedTensorType::get({m * kh * kw, c}, element), swap);
  rows = reshapeTo(b, loc, rows, RankedTensorType::get({m * kh * kw, c, 1, 1}, element));
  Value blocks = buildConv(b, loc, input, rows, nullptr, {1, 1}, {1, 1}, 1,
                           RankedTensorType::get({n, m * kh * kw, h, w}, element));
  blocks = reshapeTo(b, loc, blocks, RankedTensorType::get({n, m, kh, kw, h, w}, element));
  // out[n, m, y*kh + i, x*kw + j] = blocks[n, m, i, j, y, x] (+ bias[m]).
  auto outType = RankedTensorType::get({n, m, h, kh, w, kw}, element);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<Value> inputs{blocks};
  SmallVector<AffineMap> maps{AffineMap::get(6, 0, {d(0), d(1), d(3), d(5), d(2), d(4)}, ctx)};
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(AffineMap::get(6, 0, {d(1)}, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(6, ctx));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{outType}, inputs, ValueRange{emptyTensor(b, loc, outType)}, maps,
      SmallVector<IteratorType>(6, IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value v = args[0];
        if (bias)
          v = arith::AddFOp::create(nb, nl, v, args[1]);
        linalg::YieldOp::create(nb, nl, v);
      });
  return reshapeTo(b, loc, generic.getResult(0), resultType);
}

/// A strided 2-D transposed convolution, ungrouped and undilated, split by
/// output phase (sub-pixel): output rows o = q*s + r of phase r take only
/// the filter taps t = t0, t0 + s, ... that land on input rows, so each phase
/// is a stride-1 convolution of the input itself with those taps, written to
/// every s-th output row and column. The spread input's convolution
/// (below) multiplies s_h * s_w times as many zeros (a strided
/// convolution's input gradient in training). `wConv` is the flipped filter
/// [M, C, kh, kw] of that convolution and `lo` its low pads of the spread
/// input. Null when the convolution is not of that kind.
Value buildSubPixelConvTranspose(OpBuilder &b, Location loc, Value input, Value wConv, Value bias,
                                 ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                                 ArrayRef<int64_t> lo, RankedTensorType resultType) {
  if (!isMatmulConv(1, resultType) || (strides[0] == 1 && strides[1] == 1) ||
      dilations[0] != 1 || dilations[1] != 1)
    return nullptr;
  auto inType = tensorType(input), wType = tensorType(wConv);
  Type element = resultType.getElementType();
  int64_t n = resultType.getDimSize(0), m = resultType.getDimSize(1);
  // Per dim and phase r: the first tap, the tap count, the phase's output
  // count and the input row its first output's first tap reads.
  struct Phase {
    int64_t first, taps, outputs, base;
  };
  SmallVector<Phase> phases[2];
  for (int d = 0; d < 2; ++d) {
    int64_t s = strides[d], k = wType.getDimSize(d + 2), out = resultType.getDimSize(d + 2);
    for (int64_t r = 0; r < s; ++r) {
      int64_t first = ((lo[d + 2] - r) % s + s) % s;
      int64_t taps = first < k ? llvm::divideCeil(k - first, s) : 0;
      int64_t outputs = r < out ? llvm::divideCeil(out - r, s) : 0;
      phases[d].push_back({first, taps, outputs, (r + first - lo[d + 2]) / s});
    }
  }
  bool covered = true;
  for (int d = 0; d < 2; ++d)
    for (const Phase &p : phases[d])
      covered &= p.taps > 0 || p.outputs == 0;
  // Outputs no tap reaches hold the bias (or zero).
  Value out = covered ? emptyTensor(b, loc, resultType)
                      : initFromBias(b, loc, bias, resultType, {1, m, 1, 1});
  // A stride over a single element is 1: strided unit dims crash memref's
  // rank-reducing subview folding after bufferization.
  auto step = [](int64_t count, int64_t stride) { return count > 1 ? stride : 1; };
  for (auto [rh, ph] : llvm::enumerate(phases[0]))
    for (auto [rw, pw] : llvm::enumerate(phases[1])) {
      if (!ph.taps || !pw.taps || !ph.outputs || !pw.outputs)
        continue;
      Value taps = tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get({m, wType.getDimSize(1), ph.taps, pw.taps}, element),
          wConv, indexAttrs(b, {0, 0, ph.first, pw.first}),
          indexAttrs(b, {m, wType.getDimSize(1), ph.taps, pw.taps}),
          indexAttrs(b, {1, 1, step(ph.taps, strides[0]), step(pw.taps, strides[1])}));
      auto phaseType = RankedTensorType::get({n, m, ph.outputs, pw.outputs}, element);
      // Negative pads crop the input rows no output of the phase reads.
      SmallVector<int64_t> low{0, 0, -ph.base, -pw.base};
      SmallVector<int64_t> high{0, 0, ph.outputs + ph.base + ph.taps - 1 - inType.getDimSize(2),
                                pw.outputs + pw.base + pw.taps - 1 - inType.getDimSize(3)};
      Value phase = buildShiftedConv(b, loc, input, taps, bias, {1, 1}, {1, 1}, low, high,
                                     phaseType);
      if (!phase) {
        Value x = padTensor(b, loc, input, low, high, scalarConstant(b, loc, element, 0));
        phase = buildConv(b, loc, x, taps, bias, {1, 1}, {1, 1}, 1, phaseType);
      }
      out = tensor::InsertSliceOp::create(
          b, loc, phase, out, indexAttrs(b, {0, 0, (int64_t)rh, (int64_t)rw}),
          indexAttrs(b, phaseType.getShape()),
          indexAttrs(b, {1, 1, step(ph.outputs, strides[0]), step(pw.outputs, strides[1])}));
    }
  return out;
}

struct ConvTransposePattern : OpConversionPattern<nn::ConvTransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(nn::ConvTransposeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    auto resultType = cast<RankedTensorType>(getTypeConverter()->convertType(op.getType()));
    Type element = resultType.getElementType();
    Value input = adaptor.getInput(), filter = adaptor.getFilter();
    auto inType = tensorType(input), wType = tensorType(filter);
    int64_t spatial = inType.getRank() - 2, group = op.getGroup();
    ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations(), pads = op.getPads();
    if (Value blocks = buildBlockConvTranspose(b, loc, input, filter, adaptor.getBias(), op,
                                               resultType)) {
      b.replaceOp(op, blocks);
      return success();
    }

    // 1. Spread the input: stride - 1 zeros between neighbours (made below,
    // unless the phases need none).
    SmallVector<int64_t> spreadShape{inType.getDimSize(0), inType.getDimSize(1)};
    SmallVector<int64_t> offsets(inType.getRank(), 0), sizes(inType.getShape()), steps{1, 1};
    for (int64_t i = 0; i < spatial; ++i) {
      spreadShape.push_back((inType.getDimSize(i + 2) - 1) * strides[i] + 1);
      steps.push_back(strides[i]);
    }
    // 2. Pad so a stride-1 convolution with the flipped filter yields the output.
    SmallVector<int64_t> lo{0, 0}, hi{0, 0};
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t reach = (wType.getDimSize(i + 2) - 1) * dilations[i];
      lo.push_back(reach - pads[i]);
      hi.push_back(resultType.getDimSize(i + 2) + reach - spreadShape[i + 2] - lo.back());
    }
    // 3. Filter [C, M/g, K...] -> [M, C/g, K...], flipped along each K.
    int64_t c = wType.getDimSize(0), mg = wType.getDimSize(1), cg = c / group;
    SmallVector<int64_t> src{group, cg, mg}, dst{group, mg, cg};
    for (int64_t i = 0; i < spatial; ++i) {
      src.push_back(wType.getDimSize(i + 2));
      dst.push_back(wType.getDimSize(i + 2));
    }
    Value w = reshapeTo(b, loc, filter, RankedTensorType::get(src, element));
    int64_t rank = dst.size();
    SmallVector<AffineExpr> readExprs{getAffineDimExpr(0, ctx), getAffineDimExpr(2, ctx),
                                      getAffineDimExpr(1, ctx)};
    for (int64_t i = 0; i < spatial; ++i)
      readExprs.push_back(getAffineConstantExpr(dst[3 + i] - 1, ctx) - getAffineDimExpr(3 + i, ctx));
    Value flipped = buildMappedCopy(b, loc, w, RankedTensorType::get(dst, element),
                                    AffineMap::get(rank, 0, readExprs, ctx));
    SmallVector<int64_t> convFilter{group * mg, cg};
    for (int64_t i = 0; i < spatial; ++i)
      convFilter.push_back(dst[3 + i]);
    Value wConv = reshapeTo(b, loc, flipped, RankedTensorType::get(convFilter, element));
    if (group == 1 && spatial == 2)
      if (Value phases = buildSubPixelConvTranspose(b, loc, input, wConv, adaptor.getBias(),
                                                    strides, dilations, lo, resultType)) {
        b.replaceOp(op, phases);
        return success();
      }
    Value spread = zeros(b, loc, RankedTensorType::get(spreadShape, element));
    spread = tensor::InsertSliceOp::create(b, loc, input, spread, indexAttrs(b, offsets),
                                           indexAttrs(b, sizes), indexAttrs(b, steps));
    SmallVector<int64_t> ones(spatial, 1);
    // A stride-1 2-D convolution reads shifted windows of the spread input,
    // padded once, with no patch matrix (a filter gradient's input gradient
    // in training: as fast as the forward convolution).
    if (isMatmulConv(group, resultType) && llvm::all_of(lo, [](int64_t v) { return v >= 0; }) &&
        llvm::all_of(hi, [](int64_t v) { return v >= 0; }))
      if (Value shifted = buildShiftedConv(b, loc, spread, wConv, adaptor.getBias(), ones,
                                           dilations, lo, hi, resultType)) {
        b.replaceOp(op, shifted);
        return success();
      }
    Value x = padTensor(b, loc, spread, lo, hi, scalarConstant(b, loc, element, 0));
    b.replaceOp(op, buildConv(b, loc, x, wConv, adaptor.getBias(), ones, dilations, group, resultType));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// A 2-D f32 pooling of an already padded input as one elementwise op: the
/// max (or sum) over taps of the input window at each tap's offset, the form
/// of buildDepthwiseConv. The CPU schedule vectorizes it along the row, where
/// the window loops of a reduction generic would run scalar per element
/// (ResNet-18's 3x3 max pool: 760 us that way). Null when the pooling is not
/// of that kind.
Value buildTapPool(OpBuilder &b, Location loc, Value x, bool isMax, ArrayRef<int64_t> kernel,
                   ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                   RankedTensorType resultType) {
  Type element = resultType.getElementType();
  if (resultType.getRank() != 4 || !element.isF32() || kernel[0] > 25 || kernel[1] > 25 ||
      kernel[0] * kernel[1] > 25 || strides[1] > 2)
    return nullptr;
  SmallVector<Value> windows;
  for (int64_t i = 0; i < kernel[0]; ++i)
    for (int64_t j = 0; j < kernel[1]; ++j)
      windows.push_back(tapWindow(b, loc, x, i, j, strides, dilations, resultType));
  // Taps combined pairwise: a chain of nine maxima is a long dependency
  // chain. A maximum is a compare-and-select, one vmaxps on x86, which drops
  // a NaN in its first operand; NaN propagates instead by one unordered
  // compare per pair of taps, or-ed, selecting NaN at the end: 18
  // instructions for nine taps on AVX-512, where NaN-propagating maxima take
  // 24 (poolMax) or 48 (ordering zeros too).
  auto combine = [&](OpBuilder &nb, Location nl, ValueRange taps) -> Value {
    SmallVector<Value> level(taps);
    Value unordered;
    if (isMax)
      for (size_t i = 0; i < taps.size(); i += 2) {
        Value pair = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNO, taps[i],
                                           taps[std::min(i + 1, taps.size() - 1)]);
        unordered = unordered ? arith::OrIOp::create(nb, nl, unordered, pair) : pair;
      }
    while (level.size() > 1) {
      SmallVector<Value> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2) {
        Value x = level[i], y = level[i + 1];
        next.push_back(
            isMax ? Value(arith::SelectOp::create(
                        nb, nl, arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT, x, y), x, y))
                  : Value(arith::AddFOp::create(nb, nl, x, y)));
      }
      if (level.size() % 2)
        next.push_back(level.back());
      level = std::move(next);
    }
    if (!isMax)
      return level.front();
    Value nan = arith::ConstantOp::create(
        nb, nl, nb.getFloatAttr(element, APFloat::getQNaN(cast<FloatType>(element).getFloatSemantics())));
    return arith::SelectOp::create(nb, nl, unordered, nan, level.front());
  };
  return buildElementwise(b, loc, resultType, windows, combine);
}

/// Any pooling of an already padded input as a generic whose window loops
/// are reductions.
Value buildWindowLoops(OpBuilder &b, Location loc, Value x, bool isMax, bool isUnsigned,
                       ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> dilations, RankedTensorType resultType,
                       Value padValue) {
  MLIRContext *ctx = b.getContext();
  Type element = resultType.getElementType();
  int64_t spatial = resultType.getRank() - 2;
  int64_t loops = 2 + 2 * spatial;
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xExprs{d(0), d(1)}, kExprs, oExprs{d(0), d(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    xExprs.push_back(d(2 + i) * strides[i] + d(2 + spatial + i) * dilations[i]);
    kExprs.push_back(d(2 + spatial + i));
    oExprs.push_back(d(2 + i));
  }
  Value window = tensor::EmptyOp::create(b, loc, kernel, element);
  SmallVector<IteratorType> iterators(2 + spatial, IteratorType::parallel);
  iterators.append(spatial, IteratorType::reduction);
  Value init = filledTensor(b, loc, resultType, padValue);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, ValueRange{x, window}, ValueRange{init},
      SmallVector<AffineMap>{AffineMap::get(loops, 0, xExprs, ctx),
                             AffineMap::get(loops, 0, kExprs, ctx),
                             AffineMap::get(loops, 0, oExprs, ctx)},
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value v = args[0], acc = args[2], r;
        bool isFloat = isa<FloatType>(v.getType());
        if (isMax)
          r = isFloat ? poolMax(nb, nl, acc, v)
                      : isUnsigned ? Value(arith::MaxUIOp::create(nb, nl, acc, v))
                                   : Value(arith::MaxSIOp::create(nb, nl, acc, v));
        else
          r = isFloat ? Value(arith::AddFOp::create(nb, nl, acc, v))
                      : Value(arith::AddIOp::create(nb, nl, acc, v));
        linalg::YieldOp::create(nb, nl, r);
      });
  return generic.getResult(0);
}

template <typename Op, bool isMax> struct PoolPattern : OpConversionPattern<Op> {
  using OpConversionPattern<Op>::OpConversionPattern;
  LogicalResult matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(this->getTypeConverter()->convertType(op.getType()));
    Type element = resultType.getElementType();
    bool isUnsigned = isUnsignedType(op.getType());
    Value input = adaptor.getInput();
    auto inType = tensorType(input);
    int64_t spatial = inType.getRank() - 2;
    ArrayRef<int64_t> kernel = op.getKernel(), strides = op.getStrides(),
                      dilations = op.getDilations(), pads = op.getPads();
    // Pad by the explicit pads, plus whatever the last (ceil_mode) window needs;
    // crop rows no window reaches.
    SmallVector<int64_t> lo{0, 0}, hi{0, 0};
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t used = (resultType.getDimSize(i + 2) - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1;
      lo.push_back(pads[i]);
      hi.push_back(used - inType.getDimSize(i + 2) - pads[i]);
    }
    Value padValue = isMax ? lowestValue(b, loc, element, isUnsigned) : scalarConstant(b, loc, element, 0);
    Value x = padTensor(b, loc, input, lo, hi, padValue);
    Value result = buildTapPool(b, loc, x, isMax, kernel, strides, dilations, resultType);
    if (!result)
      result = buildWindowLoops(b, loc, x, isMax, isUnsigned, kernel, strides, dilations,
                                resultType, padValue);
    if constexpr (!isMax) {
      // Divide by the number of counted elements of each window, known
      // statically. It is a product over spatial dims, one small table each.
      SmallVector<Value> operands{result};
      for (int64_t i = 0; i < spatial; ++i) {
        SmallVector<int64_t> shape(resultType.getRank(), 1);
        shape[i + 2] = resultType.getDimSize(i + 2);
        auto countType = RankedTensorType::get(shape, element);
        SmallVector<Attribute> counts;
        for (int64_t counted : nn::avgPoolDivisors(op, i))
          counts.push_back(b.getFloatAttr(element, (double)counted));
        operands.push_back(arith::ConstantOp::create(b, loc, DenseElementsAttr::get(countType, counts)));
      }
      result = buildElementwise(b, loc, resultType, operands,
                                [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                                  Value n = a[1];
                                  for (Value c : a.drop_front(2))
                                    n = arith::MulFOp::create(nb, nl, n, c);
                                  return arith::DivFOp::create(nb, nl, a[0], n);
                                });
    }
    b.replaceOp(op, result);
    return success();
  }
};
} // namespace

bool lowering::isDynamicBatchedMatmul(nn::MatMulOp op) {
  auto a = cast<RankedTensorType>(op.getLhs().getType());
  auto b = cast<RankedTensorType>(op.getRhs().getType());
  int64_t rank = a.getRank();
  if (rank < 3 || b.getRank() != rank || !isa<FloatType>(a.getElementType()))
    return false;
  // Each batch dim alike on both sides: a static 1 against another size
  // would broadcast, which the product's one folded batch dim cannot; and
  // at most one dynamic on both (the expansion back, dynamicBatchedMatmul).
  int64_t dynamic = 0;
  for (int64_t d = 0; d + 2 < rank; ++d) {
    int64_t x = a.getDimSize(d), y = b.getDimSize(d);
    if (ShapedType::isDynamic(x) && ShapedType::isDynamic(y))
      ++dynamic;
    else if (ShapedType::isDynamic(x) || ShapedType::isDynamic(y)) {
      if (x == 1 || y == 1)
        return false;
    } else if (x != y)
      return false;
  }
  return dynamic <= 1;
}

void lowering::populateContractionPatterns(NNTypeConverter &converter, RewritePatternSet &patterns,
                                           int64_t maxTapSum) {
  patterns.add<MatMulPattern, EinsumPattern, ConvTransposePattern,
               PoolPattern<nn::MaxPoolOp, true>, PoolPattern<nn::AvgPoolOp, false>>(
      converter, patterns.getContext());
  patterns.add<ConvPattern>(converter, patterns.getContext(), maxTapSum);
}
