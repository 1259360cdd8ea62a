//===- TiledMatmul.cpp - contractions tiled through shared memory ---------===//
//
// A generic whose inputs are a "left" operand (batch, M and K dims) and a
// "right" one (batch, N and K dims) -- a matmul, the im2col and shifted-window
// convolutions of NNToLinalg -- is computed in blocks of BM x BN outputs. The
// block walks K in steps of BK, staging both operands' tiles in shared memory
// (each element read from global memory once per block instead of once per
// output), and each of its 256 threads keeps a 4 x 4 or 2 x 2 tile of outputs
// in registers. Every
// output still starts from its previous value and takes its K terms in order,
// exactly as the one-thread loop does, so any body with one output is fine.
//
// With --precision=tf32, bf16 or f16, a plain sum of products (out + a * b) takes
// its products from the tensor cores instead: each warp computes a 16 x 8
// (or 32 x 16) part of the tile with mma.sync, its operands read from the
// same staged tiles in the fragments PTX assigns each lane, rounded to the
// precision as they are read.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Schedules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace nnc::cuda {
namespace {

/// K per shared-memory stage.
constexpr int64_t kTileK = 32;
/// Shorter reductions are not worth staging.
constexpr int64_t kMinK = 16;
/// CUDA's largest grid y and z.
constexpr int64_t kMaxGridYZ = 65535;
/// Reductions up to this long stay tiled however few the blocks (a
/// projection of a late MobileNet stage, attention's per-head products):
/// split across threads, each output's few terms would cost more to combine
/// than to sum, and every operand element would be read once per output.
constexpr int64_t kShortK = 256;

using Roles = ContractionRoles;

/// How far the operand's last index moves when loop dim `d` steps by one
/// (linear maps; anything else reads as "not 1").
int64_t stride(AffineMap map, unsigned d) {
  MLIRContext *ctx = map.getContext();
  auto at = [&](int64_t v) -> std::optional<int64_t> {
    SmallVector<AffineExpr> dims;
    for (unsigned i = 0; i < map.getNumDims(); ++i)
      dims.push_back(getAffineConstantExpr(i == d ? v : 0, ctx));
    AffineExpr e = simplifyAffineExpr(map.getResults().back().replaceDims(dims), 0, 0);
    if (auto c = dyn_cast<AffineConstantExpr>(e))
      return c.getValue();
    return std::nullopt;
  };
  std::optional<int64_t> zero = at(0), one = at(1);
  return zero && one ? *one - *zero : 0;
}

struct Tiling : MatmulTile {
  /// Outputs per thread along M and along N. Blocks have 256 threads
  /// whatever the tile (8 warps keep an SM busy when the blocks are few): a
  /// 64 x 64 tile gives each 4 x 4 outputs (operands reused 4 times from
  /// registers), 32 x 32, 16 x 64 and 64 x 16 tiles 2 x 2.
  int64_t threadTile() const { return tileM == 64 && tileN == 64 ? 4 : 2; }
  int64_t threadsM() const { return tileM / threadTile(); }
  int64_t threadsN() const { return tileN / threadTile(); }
  int64_t threads() const { return threadsM() * threadsN(); }
  /// Tensor cores: the tile's 8 warps as warpsM x warpsN, each computing
  /// (tileM / warpsM) x (tileN / warpsN) outputs in 16 x 8 fragments.
  int64_t warpsM() const {
    for (int64_t w : {2, 1, 4, 8})
      if (tileM % (16 * w) == 0 && tileN % (8 * (8 / w)) == 0)
        return w;
    return 0;
  }
  int64_t warpsN() const { return 8 / warpsM(); }
  int64_t fragmentsM() const { return tileM / warpsM() / 16; }
  int64_t fragmentsN() const { return tileN / warpsN() / 8; }
};

/// Whether `op`'s body is out + a * b, in f32 (in either operand order).
bool isSumOfProducts(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 3)
    return false;
  auto add = dyn_cast_or_null<arith::AddFOp>(body.getTerminator()->getOperand(0).getDefiningOp());
  if (!add || !add.getType().isF32())
    return false;
  Value out = body.getArgument(2);
  Value other = add.getLhs() == out ? add.getRhs() : add.getRhs() == out ? add.getLhs() : Value();
  auto mul = other ? other.getDefiningOp<arith::MulFOp>() : arith::MulFOp();
  if (!mul)
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1);
  return (mul.getLhs() == a && mul.getRhs() == b) || (mul.getLhs() == b && mul.getRhs() == a);
}

struct Builder {
  mutable linalg::GenericOp op; // op accessors are not const
  LoopShape shape;
  Roles roles;
  Tiling tiling;
  Location loc;
  int64_t batch, sizeM, sizeN, sizeK;
  Precision precision; // TF32 or BF16: on the tensor cores

  bool tensorCores() const { return precision != Precision::F32; }

  Value index(OpBuilder &b, int64_t v) const { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(OpBuilder &b, Value x, Value y) const { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(OpBuilder &b, Value x, int64_t y) const {
    return arith::MulIOp::create(b, loc, x, index(b, y));
  }
  Value less(OpBuilder &b, Value x, int64_t bound) const {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, index(b, bound));
  }
  Value both(OpBuilder &b, Value x, Value y) const {
    if (!x)
      return y;
    return y ? arith::AndIOp::create(b, loc, x, y).getResult() : x;
  }

  /// Loop indices from linearized batch, M, N and K positions (null: 0).
  SmallVector<Value> ivs(OpBuilder &b, Value bt, Value m, Value n, Value k) const {
    SmallVector<Value> all(shape.ranges.size());
    auto place = [&](ArrayRef<unsigned> dims, Value linear) {
      SmallVector<int64_t> sizes;
      for (unsigned d : dims)
        sizes.push_back(shape.ranges[d]);
      SmallVector<Value> coords = delinearize(b, loc, linear ? linear : index(b, 0), sizes);
      for (auto [d, c] : llvm::zip(dims, coords))
        all[d] = c;
    };
    place(roles.batch, bt);
    place(roles.m, m);
    place(roles.n, n);
    place(roles.k, k);
    return all;
  }

  /// The value of `load` when `valid` (null: always), else 0.
  Value guarded(OpBuilder &b, Value valid, llvm::function_ref<Value(OpBuilder &)> load) const {
    if (!valid)
      return load(b);
    auto ifOp = scf::IfOp::create(
        b, loc, valid, [&](OpBuilder &nb, Location) { scf::YieldOp::create(nb, loc, load(nb)); },
        [&](OpBuilder &nb, Location) {
          scf::YieldOp::create(nb, loc,
                               arith::ConstantOp::create(nb, loc, nb.getF32FloatAttr(0)).getResult());
        });
    return ifOp.getResult(0);
  }

  /// Where this thread's elements of the [kTileK x rows] tile of input
  /// `which` go: (k, row) in the tile, for each of elements / threads.
  /// Consecutive threads take consecutive elements along whichever of K and
  /// the row dim the operand is laid out along, so global reads coalesce.
  SmallVector<std::pair<Value, Value>> tileSlots(OpBuilder &b, unsigned which, Value tid,
                                                 int64_t rows) const {
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(which));
    ArrayRef<unsigned> rowDims = which == 0 ? roles.m : roles.n;
    int64_t rowStride = stride(map, rowDims.back()), kStride = stride(map, roles.k.back());
    bool alongK = kStride == 1 && (rowStride != 1 || shape.ranges[roles.k.back()] >
                                                         shape.ranges[rowDims.back()]);
    int64_t elements = kTileK * rows, threads = tiling.threads();
    SmallVector<std::pair<Value, Value>> slots;
    for (int64_t r = 0; r < elements / threads; ++r) {
      Value e = add(b, tid, index(b, r * threads));
      if (alongK)
        slots.push_back({arith::RemUIOp::create(b, loc, e, index(b, kTileK)),
                         arith::DivUIOp::create(b, loc, e, index(b, kTileK))});
      else
        slots.push_back({arith::DivUIOp::create(b, loc, e, index(b, rows)),
                         arith::RemUIOp::create(b, loc, e, index(b, rows))});
    }
    return slots;
  }

  /// This thread's elements of input `which`'s tile at (k0, row0), 0 past
  /// the operand's rows or K.
  SmallVector<Value> loadTile(OpBuilder &b, unsigned which,
                              ArrayRef<std::pair<Value, Value>> slots, Value bt, Value row0,
                              Value k0, int64_t rows) const {
    OpOperand *operand = op.getDpsInputOperand(which);
    AffineMap map = op.getMatchingIndexingMap(operand);
    int64_t rowSize = which == 0 ? sizeM : sizeN;
    SmallVector<Value> values;
    for (auto [kk, rr] : slots) {
      Value row = add(b, row0, rr), k = add(b, k0, kk);
      Value valid = both(b, rowSize % rows ? less(b, row, rowSize) : Value(),
                         sizeK % kTileK ? less(b, k, sizeK) : Value());
      values.push_back(guarded(b, valid, [&](OpBuilder &nb) {
        SmallVector<Value> at = which == 0 ? ivs(nb, bt, row, nullptr, k)
                                           : ivs(nb, bt, nullptr, row, k);
        return loadAt(nb, loc, operand->get(), map, at);
      }));
    }
    return values;
  }

  /// Stores staged elements into `smem`.
  void storeTile(OpBuilder &b, Value smem, ArrayRef<std::pair<Value, Value>> slots,
                 ValueRange values) const {
    for (auto [slot, v] : llvm::zip(slots, values))
      memref::StoreOp::create(b, loc, v, smem, ValueRange{slot.first, slot.second});
  }

  /// The tensor cores' operand from staged f32 values: one tf32 as a 32-bit
  /// register, two bf16 packed low half first in one, or two f16 as the
  /// vector<2xf16> that mma.sync's f16 form takes.
  Value operandRegister(OpBuilder &b, ArrayRef<Value> values) const {
    if (precision == Precision::TF32)
      return NVVM::ConvertFloatToTF32Op::create(b, loc, b.getI32Type(), values[0],
                                                NVVM::FPRoundingMode::RNA,
                                                NVVM::SaturationMode::NONE, false);
    if (precision == Precision::F16)
      return NVVM::ConvertF32x2ToF16x2Op::create(
          b, loc, VectorType::get({2}, b.getF16Type()), /*src_hi=*/values[1],
          /*src_lo=*/values[0], /*random_bits=*/Value(), NVVM::FPRoundingMode::RN,
          NVVM::SaturationMode::NONE, false);
    auto pair = NVVM::ConvertF32x2ToBF16x2Op::create(
        b, loc, VectorType::get({2}, b.getBF16Type()), /*src_hi=*/values[1], /*src_lo=*/values[0],
        /*random_bits=*/Value(), NVVM::FPRoundingMode::RN, NVVM::SaturationMode::NONE, false);
    return LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair);
  }

  /// One step of `kStep` along K through the staged tiles on the tensor
  /// cores: this lane's fragments of A and B (PTX's layouts for
  /// m16n8k8.tf32 and m16n8k16.bf16/f16: lane = 4 g + t reads rows g and g + 8
  /// of A and column g of B, at K offsets from t), then one mma.sync per
  /// 16 x 8 fragment of the warp's outputs.
  SmallVector<Value> mmaStep(OpBuilder &b, Value smemA, Value smemB, Value kk, Value warpRow,
                             Value warpCol, Value g, Value t, ValueRange sums) const {
    bool tf32 = precision == Precision::TF32;
    // Each register holds one element (tf32) or two consecutive along K.
    int64_t perRegister = tf32 ? 1 : 2;
    auto kOffset = [&](int64_t i, int64_t half) {
      // tf32: t, t + 4; bf16 and f16: 2 t + i, 2 t + i + 8.
      Value base = tf32 ? t : mul(b, t, 2);
      return add(b, add(b, kk, base), index(b, i + half * (tf32 ? 4 : 8)));
    };
    SmallVector<SmallVector<Value>> fragA, fragB;
    for (int64_t mi = 0; mi < tiling.fragmentsM(); ++mi) {
      Value row = add(b, add(b, warpRow, index(b, mi * 16)), g);
      SmallVector<Value> regs;
      for (int64_t r = 0; r < 4; ++r) {
        // Registers 0-3: rows g, g + 8, g, g + 8; K's first half, then its second.
        Value m = add(b, row, index(b, (r & 1) * 8));
        SmallVector<Value> values;
        for (int64_t i = 0; i < perRegister; ++i)
          values.push_back(
              memref::LoadOp::create(b, loc, smemA, ValueRange{kOffset(i, r >> 1), m}));
        regs.push_back(operandRegister(b, values));
      }
      fragA.push_back(regs);
    }
    for (int64_t nj = 0; nj < tiling.fragmentsN(); ++nj) {
      Value col = add(b, add(b, warpCol, index(b, nj * 8)), g);
      SmallVector<Value> regs;
      for (int64_t r = 0; r < 2; ++r) {
        SmallVector<Value> values;
        for (int64_t i = 0; i < perRegister; ++i)
          values.push_back(
              memref::LoadOp::create(b, loc, smemB, ValueRange{kOffset(i, r), col}));
        regs.push_back(operandRegister(b, values));
      }
      fragB.push_back(regs);
    }
    Type f32 = b.getF32Type();
    auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
    NVVM::MMATypes type = tf32                           ? NVVM::MMATypes::tf32
                          : precision == Precision::F16 ? NVVM::MMATypes::f16
                                                        : NVVM::MMATypes::bf16;
    SmallVector<Value> next;
    for (int64_t mi = 0; mi < tiling.fragmentsM(); ++mi)
      for (int64_t nj = 0; nj < tiling.fragmentsN(); ++nj) {
        ValueRange acc = sums.slice((mi * tiling.fragmentsN() + nj) * 4, 4);
        auto mma = NVVM::MmaOp::create(
            b, loc, resultType, fragA[mi], fragB[nj], acc,
            ArrayRef<int64_t>{16, 8, tf32 ? 8 : 16}, std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{type, type},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
        for (int64_t r = 0; r < 4; ++r)
          next.push_back(LLVM::ExtractValueOp::create(b, loc, mma.getRes(), r));
      }
    return next;
  }

  void build(OpBuilder &b) const {
    MLIRContext *ctx = b.getContext();
    auto workgroup = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    Type f32 = b.getF32Type();
    // Rows padded by 4 floats: 16-byte aligned for the vector reads, and the
    // transposing stores spread over 8 banks instead of one. The tensor
    // cores' fragment reads (lanes t = 0..3 on rows t, g = 0..7 along them)
    // take 8: rows 8 banks apart, so a warp's 32 reads hit 32 banks.
    int64_t pad = tensorCores() ? 8 : 4;
    auto typeA = MemRefType::get({kTileK, tiling.tileM + pad}, f32, AffineMap(), workgroup);
    auto typeB = MemRefType::get({kTileK, tiling.tileN + pad}, f32, AffineMap(), workgroup);
    gpu::LaunchOp launch = createLaunch(
        b, loc, index(b, llvm::divideCeil(sizeN, tiling.tileN)), index(b, tiling.threads()),
        index(b, llvm::divideCeil(sizeM, tiling.tileM)), index(b, batch), {typeA, typeB});
    Value smemA = launch.getWorkgroupAttributions()[0];
    Value smemB = launch.getWorkgroupAttributions()[1];
    Value tid = launch.getThreadIds().x;
    Value bt = launch.getBlockIds().z;
    Value m0 = mul(b, launch.getBlockIds().y, tiling.tileM);
    Value n0 = mul(b, launch.getBlockIds().x, tiling.tileN);
    // This thread's outputs, as (row, column) in the block's tile.
    SmallVector<std::pair<Value, Value>> outputs;
    int64_t t = tiling.threadTile();
    Value row0, col0, warpRow, warpCol, g, lane4;
    if (tensorCores()) {
      // Warp w computes rows warpRow.. and columns warpCol.. of the tile;
      // its lane 4 g + t holds, of each 16 x 8 fragment, rows g and g + 8,
      // columns 2 t and 2 t + 1.
      Value warp = arith::DivUIOp::create(b, loc, tid, index(b, 32));
      Value lane = arith::RemUIOp::create(b, loc, tid, index(b, 32));
      g = arith::DivUIOp::create(b, loc, lane, index(b, 4));
      lane4 = arith::RemUIOp::create(b, loc, lane, index(b, 4));
      warpRow = mul(b, arith::DivUIOp::create(b, loc, warp, index(b, tiling.warpsN())),
                    tiling.tileM / tiling.warpsM());
      warpCol = mul(b, arith::RemUIOp::create(b, loc, warp, index(b, tiling.warpsN())),
                    tiling.tileN / tiling.warpsN());
      for (int64_t mi = 0; mi < tiling.fragmentsM(); ++mi)
        for (int64_t nj = 0; nj < tiling.fragmentsN(); ++nj)
          for (int64_t r = 0; r < 4; ++r)
            outputs.push_back(
                {add(b, add(b, warpRow, g), index(b, mi * 16 + (r >> 1) * 8)),
                 add(b, add(b, warpCol, mul(b, lane4, 2)), index(b, nj * 8 + (r & 1)))});
    } else {
      // Rows ty * T + i, columns tx * T + j (T x T outputs), so that each
      // step reads its T elements of A's tile and of B's as one vector; a
      // warp reads a row of B's tile across and one or two vectors of A's.
      Value tx = arith::RemUIOp::create(b, loc, tid, index(b, tiling.threadsN()));
      Value ty = arith::DivUIOp::create(b, loc, tid, index(b, tiling.threadsN()));
      row0 = mul(b, ty, t);
      col0 = mul(b, tx, t);
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = 0; j < t; ++j)
          outputs.push_back({add(b, row0, index(b, i)), add(b, col0, index(b, j))});
    }
    OpOperand *init = op.getDpsInitOperand(0);
    AffineMap outMap = op.getMatchingIndexingMap(init);
    auto outputValid = [&](OpBuilder &nb, std::pair<Value, Value> at) {
      return both(nb, sizeM % tiling.tileM ? less(nb, add(nb, m0, at.first), sizeM) : Value(),
                  sizeN % tiling.tileN ? less(nb, add(nb, n0, at.second), sizeN) : Value());
    };
    auto outIndices = [&](OpBuilder &nb, std::pair<Value, Value> at) {
      return indicesAt(nb, loc, outMap,
                       ivs(nb, bt, add(nb, m0, at.first), add(nb, n0, at.second), nullptr));
    };
    // Each output starts from its previous value, as in the one-thread loop.
    SmallVector<Value> accs;
    for (auto at : outputs)
      accs.push_back(guarded(b, outputValid(b, at), [&](OpBuilder &nb) -> Value {
        return memref::LoadOp::create(nb, loc, init->get(), outIndices(nb, at));
      }));
    Block &body = op.getRegion().front();
    // Software pipelined: a step stores the tiles loaded during the one
    // before into shared memory, then issues the next step's global loads
    // before its FMAs, so their latency overlaps the arithmetic.
    SmallVector<std::pair<Value, Value>> slotsA = tileSlots(b, 0, tid, tiling.tileM);
    SmallVector<std::pair<Value, Value>> slotsB = tileSlots(b, 1, tid, tiling.tileN);
    auto loadBoth = [&](OpBuilder &nb, Value k) {
      SmallVector<Value> values = loadTile(nb, 0, slotsA, bt, m0, k, tiling.tileM);
      llvm::append_range(values, loadTile(nb, 1, slotsB, bt, n0, k, tiling.tileN));
      return values;
    };
    size_t numAccs = accs.size(), numA = slotsA.size();
    SmallVector<Value> inits = accs;
    llvm::append_range(inits, loadBoth(b, index(b, 0)));
    auto steps = scf::ForOp::create(
        b, loc, index(b, 0), index(b, sizeK), index(b, kTileK), inits,
        [&](OpBuilder &nb, Location, Value k0, ValueRange carried) {
          ValueRange iters = carried.take_front(numAccs);
          ValueRange staged = carried.drop_front(numAccs);
          // The previous step's reads of the tiles are done before they are
          // overwritten.
          gpu::BarrierOp::create(nb, loc);
          storeTile(nb, smemA, slotsA, staged.take_front(numA));
          storeTile(nb, smemB, slotsB, staged.drop_front(numA));
          gpu::BarrierOp::create(nb, loc);
          Value nextK = add(nb, k0, index(nb, kTileK));
          auto prefetch = scf::IfOp::create(
              nb, loc, less(nb, nextK, sizeK),
              [&](OpBuilder &tb, Location) { scf::YieldOp::create(tb, loc, loadBoth(tb, nextK)); },
              [&](OpBuilder &eb, Location) {
                Value zero = arith::ConstantOp::create(eb, loc, eb.getF32FloatAttr(0));
                scf::YieldOp::create(eb, loc, SmallVector<Value>(staged.size(), zero));
              });
          scf::ForOp inner;
          if (tensorCores()) {
            // The staged tiles are zero past K, which adds nothing to a sum
            // of products: every step takes the whole tile.
            int64_t kStep = precision == Precision::TF32 ? 8 : 16;
            inner = scf::ForOp::create(
                nb, loc, index(nb, 0), index(nb, kTileK), index(nb, kStep), iters,
                [&](OpBuilder &ib, Location, Value kk, ValueRange sums) {
                  scf::YieldOp::create(
                      ib, loc, mmaStep(ib, smemA, smemB, kk, warpRow, warpCol, g, lane4, sums));
                });
          } else {
            // The last step of a ragged K stops at K: the body may not be
            // neutral on the zeros past it.
            Value count = index(nb, kTileK);
            if (sizeK % kTileK)
              count = arith::MinSIOp::create(
                  nb, loc, count, arith::SubIOp::create(nb, loc, index(nb, sizeK), k0));
            inner = scf::ForOp::create(
                nb, loc, index(nb, 0), count, index(nb, 1), iters,
                [&](OpBuilder &ib, Location, Value kk, ValueRange sums) {
                  auto vectorType = VectorType::get({t}, f32);
                  auto readVector = [&](Value smem, Value at) {
                    auto read =
                        vector::LoadOp::create(ib, loc, vectorType, smem, ValueRange{kk, at});
                    read.setAlignment(uint64_t(t * 4));
                    return read.getResult();
                  };
                  Value va = readVector(smemA, row0), vc = readVector(smemB, col0);
                  SmallVector<Value> a, c;
                  for (int64_t i = 0; i < t; ++i) {
                    a.push_back(vector::ExtractOp::create(ib, loc, va, i));
                    c.push_back(vector::ExtractOp::create(ib, loc, vc, i));
                  }
                  SmallVector<Value> next;
                  for (int64_t i = 0; i < t; ++i)
                    for (int64_t j = 0; j < t; ++j) {
                      IRMapping mapping;
                      mapping.map(body.getArgument(0), a[i]);
                      mapping.map(body.getArgument(1), c[j]);
                      mapping.map(body.getArgument(2), sums[i * t + j]);
                      for (Operation &inner : body.without_terminator())
                        ib.clone(inner, mapping);
                      next.push_back(
                          mapping.lookupOrDefault(body.getTerminator()->getOperand(0)));
                    }
                  scf::YieldOp::create(ib, loc, next);
                });
          }
          SmallVector<Value> yielded = inner.getResults();
          llvm::append_range(yielded, prefetch.getResults());
          scf::YieldOp::create(nb, loc, yielded);
        });
    for (auto [i, at] : llvm::enumerate(outputs)) {
      Value valid = outputValid(b, at);
      Value result = steps.getResult(i);
      auto store = [&](OpBuilder &nb) {
        memref::StoreOp::create(nb, loc, result, init->get(), outIndices(nb, at));
      };
      if (!valid) {
        store(b);
        continue;
      }
      auto ifOp = scf::IfOp::create(b, loc, valid, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      store(b);
    }
  }
};

} // namespace

std::optional<ContractionRoles> classifyContraction(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 || op.getNumResults() > 1)
    return std::nullopt;
  auto isF32 = [](Value v) {
    auto type = dyn_cast<ShapedType>(v.getType());
    return type && type.getElementType().isF32();
  };
  if (!llvm::all_of(op->getOperands(), isF32))
    return std::nullopt;
  // The body is cloned per output with only its arguments bound.
  if (!op.getRegion().front().getOps<linalg::IndexOp>().empty())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  AffineMap left = op.getIndexingMapsArray()[0], right = op.getIndexingMapsArray()[1];
  auto iterators = op.getIteratorTypesArray();
  Roles roles;
  for (unsigned d = 0; d < ranges.size(); ++d) {
    bool l = left.isFunctionOfDim(d), r = right.isFunctionOfDim(d);
    if (iterators[d] != utils::IteratorType::parallel) {
      roles.k.push_back(d);
      roles.sizeK *= ranges[d];
    } else if (l && r) {
      roles.batch.push_back(d);
      roles.batchSize *= ranges[d];
    } else if (l) {
      roles.m.push_back(d);
      roles.sizeM *= ranges[d];
    } else if (r) {
      roles.n.push_back(d);
      roles.sizeN *= ranges[d];
    } else {
      return std::nullopt;
    }
  }
  if (roles.m.empty() || roles.n.empty() || roles.k.empty())
    return std::nullopt;
  return roles;
}

int64_t tiledMatmulBlocks(const ContractionRoles &roles, MatmulTile tile) {
  return llvm::divideCeil(roles.sizeM, tile.tileM) * llvm::divideCeil(roles.sizeN, tile.tileN) *
         roles.batchSize;
}

std::optional<MatmulTile> tiledMatmulTile(const ContractionRoles &roles) {
  if (roles.sizeK < kMinK || std::min(roles.sizeM, roles.sizeN) < 8)
    return std::nullopt;
  MatmulTile tile{32, 32};
  if (roles.sizeM < 32 || roles.sizeN < 32) {
    // A narrow side (a projection to 24 channels) takes 16-wide tiles.
    tile = roles.sizeM < 32 ? MatmulTile{16, 64} : MatmulTile{64, 16};
  } else if (tiledMatmulBlocks(roles, {64, 64}) >= kGpuSMs) {
    // Large tiles reuse each staged element more; small ones give more blocks.
    tile = MatmulTile{64, 64};
  }
  // Long reductions of few blocks are better split across threads (on
  // tensors nnc-cuda-split-k splits them across blocks first).
  if (tiledMatmulBlocks(roles, tile) < kGpuSMs / 2 && roles.sizeK > kShortK)
    return std::nullopt;
  // M tiles and the batch go on grid y and z, which CUDA caps at 65535.
  if (llvm::divideCeil(roles.sizeM, tile.tileM) > kMaxGridYZ || roles.batchSize > kMaxGridYZ)
    return std::nullopt;
  return tile;
}

std::optional<Precision> parsePrecision(StringRef name) {
  return llvm::StringSwitch<std::optional<Precision>>(name)
      .Case("f32", Precision::F32)
      .Case("tf32", Precision::TF32)
      .Case("bf16", Precision::BF16)
      .Case("f16", Precision::F16)
      .Default(std::nullopt);
}

LogicalResult scheduleTiledMatmul(RewriterBase &rewriter, linalg::GenericOp op,
                                  Precision precision) {
  if (op.getNumResults() != 0)
    return rewriter.notifyMatchFailure(op, "not on buffers");
  std::optional<LoopShape> shape = getLoopShape(op);
  if (!shape)
    return rewriter.notifyMatchFailure(op, "dynamic or unordered loops");
  std::optional<Roles> roles = classifyContraction(op);
  if (!roles)
    return rewriter.notifyMatchFailure(op, "not a contraction of two operands");
  std::optional<MatmulTile> tile = tiledMatmulTile(*roles);
  if (!tile)
    return rewriter.notifyMatchFailure(op, "too small, or too few blocks to fill the GPU");
  // Only a plain sum of products may change how its terms are rounded, and
  // only a tile its 8 warps cover in 16 x 8 fragments takes the tensor cores.
  if (!isSumOfProducts(op) || !Tiling{*tile}.warpsM())
    precision = Precision::F32;
  Builder builder{op,          *shape,           *roles,       Tiling{*tile},
                  op.getLoc(), roles->batchSize, roles->sizeM, roles->sizeN,
                  roles->sizeK, precision};
  OpBuilder b(op);
  builder.build(b);
  rewriter.eraseOp(op);
  return success();
}

} // namespace nnc::cuda
