//===- MapToGPU.cpp - linalg ops on buffers to GPU kernel launches --------===//
//
// One kernel per linalg op. Large contractions get a shared-memory tiled
// schedule (TiledMatmul.cpp), long reductions of few outputs are split
// across threads (SplitReduction.cpp); everything else gets one thread per
// output element, reductions as a loop in each thread: simple and correct
// for every op the lowering produces.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Passes.h"
#include "compiler/Codegen/CUDA/Schedules.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace nnc {
#define GEN_PASS_DEF_CUDAMAPTOGPU
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {

/// Ops that may stay on the host: they compute addresses and sizes, never
/// touch the memory behind a memref.
bool staysOnHost(Operation *op) {
  if (isa<func::ReturnOp, memref::ViewOp, memref::SubViewOp, memref::ReinterpretCastOp,
          memref::CollapseShapeOp, memref::ExpandShapeOp, memref::CastOp,
          memref::ExtractStridedMetadataOp, memref::AssumeAlignmentOp, memref::DeallocOp,
          gpu::LaunchOp>(op))
    return true;
  // Pure scalar computations (constants, index arithmetic).
  return isMemoryEffectFree(op) && op->getNumRegions() == 0 &&
         llvm::none_of(op->getOperandTypes(), [](Type t) { return isa<MemRefType>(t); });
}

/// A call of nnc --profile's mark, which times kernels from the host.
bool isProfileMark(Operation *op) {
  auto call = dyn_cast<LLVM::CallOp>(op);
  return call && call.getCallee() == StringRef(nnc::kProfileMarkFunction);
}

struct MapToGPU : nnc::impl::CUDAMapToGPUBase<MapToGPU> {
  using CUDAMapToGPUBase::CUDAMapToGPUBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Checks on input values before a run (a Reshape to a shape input)
    // need a prepare, which CUDA modules do not have.
    if (auto checks = func->getAttrOfType<ArrayAttr>("nnc.checks"); checks && !checks.empty()) {
      func.emitError("function '")
          << func.getSymName() << "' checks values given at run time ("
          << cast<StringAttr>(checks[0]).getValue()
          << "), which the CUDA target does not support yet; the CPU target does";
      return signalPassFailure();
    }
    // Loops over a count only the run knows (a Loop's trip count given at
    // run time or its condition computed, a recurrence over a dynamic
    // sequence: the importer's nnc.batch_loop, or an scf.while) stay host
    // loops on the CPU target.
    WalkResult loops = func.walk([](Operation *loop) {
      return isa<scf::ForOp, scf::WhileOp>(loop) && nnc::isBatchLoop(loop) ? WalkResult::interrupt()
                                                                          : WalkResult::advance();
    });
    if (loops.wasInterrupted()) {
      func.emitError("function '")
          << func.getSymName()
          << "' loops over a count known only at run time (a Loop whose trip count is an input or "
             "whose body computes its condition, or a recurrence over a dynamic sequence), which "
             "the CUDA target does not support yet; the CPU target does";
      return signalPassFailure();
    }
    if (!func.getBody().hasOneBlock()) {
      func.emitOpError("expected a function body of one block");
      return signalPassFailure();
    }
    std::optional<nnc::cuda::Precision> parsed = nnc::cuda::parsePrecision(precision);
    if (!parsed) {
      func.emitError("unknown precision '") << precision << "' (expected f32, tf32, bf16 or f16)";
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    if (failed(toLoops(func, rewriter, *parsed)))
      return signalPassFailure();
    Block &body = func.getBody().front();
    SmallVector<Operation *> ops;
    for (Operation &op : body)
      ops.push_back(&op);
    SmallVector<Operation *> serial;
    auto flush = [&]() -> LogicalResult {
      if (serial.empty())
        return success();
      LogicalResult result = launchSerial(serial, rewriter);
      serial.clear();
      return result;
    };
    for (Operation *op : ops) {
      // A schedule's own launch: the serial ops before it run before it.
      if (isa<gpu::LaunchOp>(op) || isProfileMark(op)) {
        if (failed(flush()))
          return signalPassFailure();
        continue;
      }
      if (auto parallel = dyn_cast<scf::ParallelOp>(op); parallel && parallel.getNumResults() == 0) {
        if (failed(flush()) || failed(launchParallel(parallel, rewriter)))
          return signalPassFailure();
        continue;
      }
      // Host-side address arithmetic may not depend on what a kernel computes.
      bool usesSerial = llvm::any_of(op->getOperands(), [&](Value v) {
        return v.getDefiningOp() && llvm::is_contained(serial, v.getDefiningOp());
      });
      if (staysOnHost(op) && !usesSerial) {
        continue;
      }
      serial.push_back(op);
    }
    if (failed(flush()))
      signalPassFailure();
  }

  /// Every linalg op becomes parallel loops over its parallel dims with its
  /// reduction loops inside.
  LogicalResult toLoops(func::FuncOp func, IRRewriter &rewriter,
                        nnc::cuda::Precision precision) {
    SmallVector<linalg::LinalgOp> linalgOps;
    func.walk([&](linalg::LinalgOp op) { linalgOps.push_back(op); });
    for (linalg::LinalgOp op : linalgOps) {
      if (!op.hasPureBufferSemantics())
        return op.emitOpError("expected buffers (the CUDA target maps bufferized code)");
      rewriter.setInsertionPoint(op);
      linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized = linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized))
          return op.emitOpError("cannot be generalized for the GPU");
        generic = *generalized;
      }
      // Parallel dims first, so that they form one parallel loop nest.
      SmallVector<unsigned> order;
      for (auto [i, kind] : llvm::enumerate(generic.getIteratorTypesArray()))
        if (kind == utils::IteratorType::parallel)
          order.push_back(i);
      for (auto [i, kind] : llvm::enumerate(generic.getIteratorTypesArray()))
        if (kind != utils::IteratorType::parallel)
          order.push_back(i);
      if (!llvm::equal(order, llvm::seq<unsigned>(0, order.size()))) {
        FailureOr<linalg::GenericOp> interchanged =
            linalg::interchangeGenericOp(rewriter, generic, order);
        if (failed(interchanged))
          return generic.emitOpError("cannot reorder its loops for the GPU");
        generic = *interchanged;
      }
      nnc::cuda::allowFusedMultiplyAdd(generic);
      // Reductions get a schedule of their own where one fits; whatever
      // none takes keeps one thread per output.
      if (succeeded(nnc::cuda::scheduleTiledMatmul(rewriter, generic, precision)) ||
          succeeded(nnc::cuda::scheduleSplitReduction(rewriter, generic)))
        continue;
      rewriter.setInsertionPoint(generic);
      if (failed(linalg::linalgOpToParallelLoops(rewriter, generic)))
        return generic.emitOpError("cannot be turned into loops for the GPU");
      rewriter.eraseOp(generic);
    }
    return success();
  }

  /// The loop nest's iterations, linearized (innermost dim fastest), one per
  /// thread of a grid of blockSize-thread blocks.
  LogicalResult launchParallel(scf::ParallelOp loop, IRRewriter &rewriter) {
    Location loc = loop.getLoc();
    OpBuilder b(loop);
    SmallVector<Value> counts;
    Value total = arith::ConstantIndexOp::create(b, loc, 1);
    std::optional<int64_t> staticTotal = 1;
    for (auto [lb, ub, step] :
         llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      Value span = arith::SubIOp::create(b, loc, ub, lb);
      Value count = arith::CeilDivSIOp::create(b, loc, span, step);
      counts.push_back(count);
      total = arith::MulIOp::create(b, loc, total, count);
      std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                             s = getConstantIntValue(step);
      if (staticTotal && l && u && s)
        *staticTotal *= llvm::divideCeil(*u - *l, *s);
      else
        staticTotal.reset();
    }
    if (staticTotal && *staticTotal == 0) {
      rewriter.eraseOp(loop);
      return success();
    }
    // Small loops get one block of whole warps.
    int64_t threadCount = blockSize;
    if (staticTotal && *staticTotal < blockSize)
      threadCount = llvm::alignTo(*staticTotal, 32);
    Value threads = arith::ConstantIndexOp::create(b, loc, threadCount);
    Value blocks = arith::CeilDivUIOp::create(b, loc, total, threads);
    gpu::LaunchOp launch = nnc::cuda::createLaunch(b, loc, blocks, threads);
    Value id = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, launch.getBlockIds().x, threads),
        launch.getThreadIds().x);
    Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id, total);
    auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
    IRMapping mapping;
    Value rest = id;
    for (int64_t d = counts.size() - 1; d >= 0; --d) {
      Value index = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, counts[d]).getResult();
      if (d > 0)
        rest = arith::DivUIOp::create(b, loc, rest, counts[d]);
      Value iv = arith::AddIOp::create(
          b, loc, loop.getLowerBound()[d],
          arith::MulIOp::create(b, loc, index, loop.getStep()[d]));
      mapping.map(loop.getInductionVars()[d], iv);
    }
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, mapping);
    rewriter.eraseOp(loop);
    return success();
  }

  /// Runs `ops` (consecutive in their block) in one thread on the device.
  LogicalResult launchSerial(ArrayRef<Operation *> ops, IRRewriter &rewriter) {
    Block *block = ops.front()->getBlock();
    for (Operation *op : ops)
      for (Operation *user : op->getUsers())
        if (!llvm::is_contained(ops, block->findAncestorOpInBlock(*user)))
          return op->emitOpError("computes a value the host needs; the CUDA target cannot "
                                 "run it on the device");
    // After the last of them: host ops in between (constants, views) may
    // define what the earlier ones use, and none uses what they compute.
    OpBuilder b(ops.front()->getContext());
    b.setInsertionPointAfter(ops.back());
    Location loc = ops.front()->getLoc();
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    gpu::LaunchOp launch = nnc::cuda::createLaunch(b, loc, one, one);
    Operation *terminator = launch.getBody().front().getTerminator();
    for (Operation *op : ops)
      rewriter.moveOpBefore(op, terminator);
    return success();
  }
};
} // namespace
