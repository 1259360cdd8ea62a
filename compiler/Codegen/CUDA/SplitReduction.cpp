//===- SplitReduction.cpp - reductions spread over a warp or a block ------===//
//
// One thread per output leaves a long reduction latency-bound when the
// outputs are few (a batch-1 matmul has a few hundred). Here each output's
// reduction is split across S threads that stride over its linearized
// iterations, keep partial results in registers and combine them with warp
// shuffles or through shared memory; one thread combines the total with the
// output's previous value and writes it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Schedules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace nnc::cuda {
namespace {

constexpr int64_t kWarp = 32;
/// Shorter reductions keep one thread per output: combining would cost about
/// as much as the loop it replaces.
constexpr int64_t kMinReduction = 32;
/// With more outputs, one thread each already gives the GPU enough threads
/// (an H100 holds 132 x 2048); splitting would only add combining work.
constexpr int64_t kMaxOutputs = 65536;
/// The threads a split aims for in all, about half of what an H100 holds.
constexpr int64_t kTargetThreads = 131072;

/// How the threads of a block share out outputs and reduction iterations.
enum class Split {
  /// Consecutive lanes take consecutive reduction iterations of one output:
  /// for operands laid out along the reduction. A warp per output, combined
  /// by shuffles.
  Warp,
  /// As Warp with a whole block per output: very long reductions of few outputs.
  Block,
  /// Consecutive lanes take consecutive outputs, the warps of a block split
  /// the reduction: for operands laid out along the outputs' innermost dim.
  /// Combined through shared memory.
  Columns,
};

/// The layout of the largest input decides which threads read neighbours.
Split chooseSplit(linalg::GenericOp op, const LoopShape &shape) {
  int64_t largest = -1;
  std::optional<unsigned> fastDim;
  for (OpOperand *in : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(in->get().getType());
    if (!type || !type.hasStaticShape() || type.getRank() == 0 ||
        type.getNumElements() <= largest)
      continue;
    largest = type.getNumElements();
    AffineExpr last = op.getMatchingIndexingMap(in).getResults().back();
    fastDim.reset();
    if (auto dim = dyn_cast<AffineDimExpr>(last))
      fastDim = dim.getPosition();
  }
  int64_t outputs = shape.parallelCount(), length = shape.reductionCount();
  if (shape.numParallel > 0 && fastDim == unsigned(shape.numParallel - 1))
    return Split::Columns;
  return outputs < 512 && length >= 2048 ? Split::Block : Split::Warp;
}

/// The parallel dims in the order output indices are linearized, outermost
/// first. Warps of a block take consecutive outputs; with the dims the
/// largest input does not read innermost, they read the same slice of it (a
/// convolution's filter row, for each of its output positions), which then
/// comes from L1 rather than once per output from L2.
SmallVector<unsigned> outputOrder(linalg::GenericOp op, const LoopShape &shape) {
  OpOperand *largest = nullptr;
  int64_t size = -1;
  for (OpOperand *in : op.getDpsInputOperands())
    if (auto type = dyn_cast<MemRefType>(in->get().getType());
        type && type.hasStaticShape() && type.getNumElements() > size) {
      size = type.getNumElements();
      largest = in;
    }
  SmallVector<unsigned> read, other;
  for (unsigned d = 0; d < shape.numParallel; ++d)
    (largest && op.getMatchingIndexingMap(largest).isFunctionOfDim(d) ? read : other)
        .push_back(d);
  llvm::append_range(read, other);
  return read;
}

struct Builder {
  mutable linalg::GenericOp op; // op accessors are not const
  Operation *combiner;
  LoopShape shape;
  Location loc;
  Type element;
  /// See outputOrder; the identity where consecutive outputs must stay
  /// consecutive in memory.
  SmallVector<unsigned> order;

  /// The parallel loop indices of linearized output `out`.
  SmallVector<Value> outputIndices(OpBuilder &b, Value out) const {
    SmallVector<int64_t> sizes;
    for (unsigned d : order)
      sizes.push_back(shape.ranges[d]);
    SmallVector<Value> coords = delinearize(b, loc, out, sizes), ivs(order.size());
    for (auto [d, c] : llvm::zip(order, coords))
      ivs[d] = c;
    return ivs;
  }

  Value index(OpBuilder &b, int64_t v) const { return arith::ConstantIndexOp::create(b, loc, v); }

  /// Where every thread's partial starts. A sum starts from -0.0, the true
  /// neutral element, so that a reduction of negative zeros stays one.
  Value neutral(OpBuilder &b) const {
    return arith::ConstantOp::create(b, loc, neutralElement(combiner));
  }

  Value combine(OpBuilder &b, Value x, Value y) const {
    Operation *c = b.clone(*combiner);
    c->setOperands({x, y});
    return c->getResult(0);
  }

  /// This thread's share of output `out`'s reduction: iterations `first`,
  /// `first + stride`, ... combined from the neutral element.
  Value partial(OpBuilder &b, Value out, Value first, int64_t stride) const {
    SmallVector<Value> outer = outputIndices(b, out);
    auto loop = scf::ForOp::create(
        b, loc, first, index(b, shape.reductionCount()), index(b, stride), ValueRange{neutral(b)},
        [&](OpBuilder &nb, Location, Value iv, ValueRange iters) {
          SmallVector<Value> ivs(outer);
          llvm::append_range(ivs, delinearize(nb, loc, iv, shape.reductionRanges()));
          SmallVector<Value> args;
          for (OpOperand *in : op.getDpsInputOperands())
            args.push_back(isa<MemRefType>(in->get().getType())
                               ? loadAt(nb, loc, in->get(), op.getMatchingIndexingMap(in), ivs)
                               : in->get());
          args.push_back(iters[0]);
          scf::YieldOp::create(nb, loc, cloneBody(nb, op, args, ivs));
        });
    return loop.getResult(0);
  }

  /// The output's previous value combined once with `total`, in the body's
  /// operand order, as the one-thread loop would.
  void write(OpBuilder &b, Value out, Value total) const {
    OpOperand *init = op.getDpsInitOperand(0);
    SmallVector<Value> indices = indicesAt(b, loc, op.getMatchingIndexingMap(init),
                                           outputIndices(b, out));
    Value old = memref::LoadOp::create(b, loc, init->get(), indices);
    BlockArgument outArg = op.getRegion().front().getArguments().back();
    Operation *c = b.clone(*combiner);
    for (OpOperand &operand : c->getOpOperands())
      operand.set(operand.get() == outArg ? old : total);
    memref::StoreOp::create(b, loc, c->getResult(0), init->get(), indices);
  }

  /// Combines `value` across the 32 lanes of a warp; every lane gets the total.
  Value warpReduce(OpBuilder &b, Value value) const {
    for (int32_t offset = kWarp / 2; offset > 0; offset /= 2) {
      Value other =
          gpu::ShuffleOp::create(b, loc, value, offset, kWarp, gpu::ShuffleMode::XOR).getResult(0);
      value = combine(b, value, other);
    }
    return value;
  }

  Value cmp(OpBuilder &b, arith::CmpIPredicate pred, Value x, Value y) const {
    return arith::CmpIOp::create(b, loc, pred, x, y);
  }

  void thenDo(OpBuilder &b, Value cond, llvm::function_ref<void(OpBuilder &)> body) const {
    auto guard = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
    body(b);
  }

  /// A warp per output, 8 warps per block.
  void buildWarp(OpBuilder &b) const {
    int64_t outputs = shape.parallelCount(), perBlock = 8;
    gpu::LaunchOp launch = createLaunch(b, loc, index(b, llvm::divideCeil(outputs, perBlock)),
                                        index(b, perBlock * kWarp));
    Value tid = launch.getThreadIds().x;
    Value lane = arith::RemUIOp::create(b, loc, tid, index(b, kWarp));
    Value out = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, index(b, perBlock)),
        arith::DivUIOp::create(b, loc, tid, index(b, kWarp)));
    // Whole warps skip or run, so the shuffles always see 32 lanes.
    thenDo(b, cmp(b, arith::CmpIPredicate::ult, out, index(b, outputs)), [&](OpBuilder &b) {
      Value total = warpReduce(b, partial(b, out, lane, kWarp));
      thenDo(b, cmp(b, arith::CmpIPredicate::eq, lane, index(b, 0)),
             [&](OpBuilder &b) { write(b, out, total); });
    });
  }

  /// A block of 8 warps per output: shuffles within each warp, then the
  /// warps' totals through shared memory.
  void buildBlock(OpBuilder &b) const {
    int64_t warps = 8;
    auto smemType = MemRefType::get({warps}, element, AffineMap(),
                                    gpu::AddressSpaceAttr::get(b.getContext(),
                                                               gpu::AddressSpace::Workgroup));
    gpu::LaunchOp launch = createLaunch(b, loc, index(b, shape.parallelCount()),
                                        index(b, warps * kWarp), nullptr, nullptr, {smemType});
    Value smem = launch.getWorkgroupAttributions()[0];
    Value tid = launch.getThreadIds().x, out = launch.getBlockIds().x;
    Value lane = arith::RemUIOp::create(b, loc, tid, index(b, kWarp));
    Value warp = arith::DivUIOp::create(b, loc, tid, index(b, kWarp));
    Value total = warpReduce(b, partial(b, out, tid, warps * kWarp));
    thenDo(b, cmp(b, arith::CmpIPredicate::eq, lane, index(b, 0)),
           [&](OpBuilder &b) { memref::StoreOp::create(b, loc, total, smem, warp); });
    gpu::BarrierOp::create(b, loc);
    thenDo(b, cmp(b, arith::CmpIPredicate::eq, tid, index(b, 0)), [&](OpBuilder &b) {
      Value sum = memref::LoadOp::create(b, loc, smem, index(b, 0));
      for (int64_t w = 1; w < warps; ++w)
        sum = combine(b, sum, memref::LoadOp::create(b, loc, smem, index(b, w)));
      write(b, out, sum);
    });
  }

  /// 32 consecutive outputs per block, its `splits` warps each taking every
  /// splits-th reduction iteration; partials meet in shared memory.
  void buildColumns(OpBuilder &b) const {
    int64_t outputs = shape.parallelCount();
    int64_t splits = llvm::PowerOf2Ceil(llvm::divideCeil(kTargetThreads, outputs));
    splits = std::clamp<int64_t>(splits, 4, 32);
    auto smemType = MemRefType::get({splits * kWarp}, element, AffineMap(),
                                    gpu::AddressSpaceAttr::get(b.getContext(),
                                                               gpu::AddressSpace::Workgroup));
    gpu::LaunchOp launch =
        createLaunch(b, loc, index(b, llvm::divideCeil(outputs, kWarp)), index(b, splits * kWarp),
                     nullptr, nullptr, {smemType});
    Value smem = launch.getWorkgroupAttributions()[0];
    Value tid = launch.getThreadIds().x;
    Value lane = arith::RemUIOp::create(b, loc, tid, index(b, kWarp));
    Value split = arith::DivUIOp::create(b, loc, tid, index(b, kWarp));
    Value out = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, index(b, kWarp)), lane);
    Value inRange = cmp(b, arith::CmpIPredicate::ult, out, index(b, outputs));
    // Threads past the last output still reach the barrier.
    auto guarded = scf::IfOp::create(
        b, loc, inRange,
        [&](OpBuilder &nb, Location) {
          scf::YieldOp::create(nb, loc, partial(nb, out, split, splits));
        },
        [&](OpBuilder &nb, Location) { scf::YieldOp::create(nb, loc, neutral(nb)); });
    memref::StoreOp::create(b, loc, guarded.getResult(0), smem, tid);
    gpu::BarrierOp::create(b, loc);
    Value first = cmp(b, arith::CmpIPredicate::eq, split, index(b, 0));
    thenDo(b, arith::AndIOp::create(b, loc, first, inRange), [&](OpBuilder &b) {
      Value sum = memref::LoadOp::create(b, loc, smem, lane);
      auto loop = scf::ForOp::create(
          b, loc, index(b, 1), index(b, splits), index(b, 1), ValueRange{sum},
          [&](OpBuilder &nb, Location, Value s, ValueRange iters) {
            Value at = arith::AddIOp::create(
                nb, loc, arith::MulIOp::create(nb, loc, s, index(nb, kWarp)), lane);
            Value v = memref::LoadOp::create(nb, loc, smem, at);
            scf::YieldOp::create(nb, loc, combine(nb, iters[0], v));
          });
      write(b, out, loop.getResult(0));
    });
  }
};

} // namespace

LogicalResult scheduleSplitReduction(RewriterBase &rewriter, linalg::GenericOp op) {
  Operation *combiner = matchCombiner(op);
  if (!combiner)
    return rewriter.notifyMatchFailure(op, "no recognised combiner of the output");
  // 32-bit values: what gpu.shuffle and the shared buffers here carry.
  Type element = combiner->getResult(0).getType();
  if (!element.isF32() && !element.isInteger(32))
    return rewriter.notifyMatchFailure(op, "not a 32-bit reduction");
  std::optional<LoopShape> shape = getLoopShape(op);
  if (!shape)
    return rewriter.notifyMatchFailure(op, "dynamic or unordered loops");
  if (shape->reductionCount() < kMinReduction || shape->parallelCount() > kMaxOutputs)
    return rewriter.notifyMatchFailure(op, "one thread per output is enough");
  if (llvm::any_of(op.getDpsInputOperands(), [](OpOperand *in) {
        return !isa<MemRefType>(in->get().getType()) && isa<ShapedType>(in->get().getType());
      }))
    return rewriter.notifyMatchFailure(op, "an operand that is not a memref");
  Split split = chooseSplit(op, *shape);
  SmallVector<unsigned> order = llvm::to_vector(llvm::seq<unsigned>(0, shape->numParallel));
  if (split == Split::Warp)
    order = outputOrder(op, *shape);
  Builder builder{op, combiner, *shape, op.getLoc(), element, order};
  OpBuilder b(op);
  switch (split) {
  case Split::Warp:
    builder.buildWarp(b);
    break;
  case Split::Block:
    builder.buildBlock(b);
    break;
  case Split::Columns:
    builder.buildColumns(b);
    break;
  }
  rewriter.eraseOp(op);
  return success();
}

} // namespace nnc::cuda
