//===- PlanMemory.cpp - static workspace planning for @main ---------------===//
//
// Intermediates live in one workspace the runtime allocates per session, so a
// run allocates nothing and memory use is known at compile time. Lifetimes
// are intervals over @main's top-level ops, from a buffer's first use to its
// last; its uses include those of every view derived from it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Passes.h"
#include "dialects/NN/IR/CheckedInt.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <limits>

namespace nnc {
#define GEN_PASS_DEF_PLANMEMORY
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
struct Buffer {
  memref::AllocOp alloc;
  int64_t size, start, end, offset = 0;
};

/// The buffer's bytes; invalid when they do not fit in int64 (a lowering's
/// intermediate can be larger than any tensor of the model: a pool's padded
/// input with huge pads).
nnc::CheckedInt byteSize(MemRefType type) {
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  nnc::CheckedInt bytes(std::max<int64_t>(1, bits / 8));
  for (int64_t dim : type.getShape())
    bytes *= dim;
  return bytes;
}

/// Workspace offsets and sizes stay below 2^62, so that the planner's sums
/// cannot wrap and the runtime reports a plan that large as unallocatable.
constexpr int64_t kMaxWorkspaceBytes = int64_t(1) << 62;

/// A result computed in a buffer and then copied to its out-param is computed
/// in the out-param instead, when nothing else touches that out-param and the
/// buffer is dead after the copy.
void computeResultsInPlace(func::FuncOp func) {
  if (func.isExternal())
    return;
  Block &body = func.getBody().front();
  for (memref::CopyOp copy : llvm::make_early_inc_range(body.getOps<memref::CopyOp>())) {
    auto target = dyn_cast<BlockArgument>(copy.getTarget());
    auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
    if (!target || target.getOwner() != &body || !target.hasOneUse() || !alloc ||
        alloc->getBlock() != &body || alloc.getType() != target.getType())
      continue;
    bool usedAfter = llvm::any_of(alloc->getUsers(), [&](Operation *user) {
      Operation *top = body.findAncestorOpInBlock(*user);
      return top != copy && !top->isBeforeInBlock(copy) &&
             !isa<memref::DeallocOp>(user);
    });
    if (usedAfter)
      continue;
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    copy.erase();
    alloc.replaceAllUsesWith(target);
    alloc.erase();
  }
}

struct PlanMemoryPass : nnc::impl::PlanMemoryBase<PlanMemoryPass> {
  using PlanMemoryBase::PlanMemoryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    module.walk([](func::FuncOp func) { computeResultsInPlace(func); });
    // Copies become linalg.copy, which lowers to loops like everything else.
    module.walk([](memref::CopyOp copy) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
    });
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal() && failed(plan(func)))
        return signalPassFailure();
  }

  /// Places every allocation of `func` in one workspace, its last argument.
  LogicalResult plan(func::FuncOp func) {
    Block &body = func.getBody().front();
    DenseMap<Operation *, int64_t> position;
    for (auto [i, op] : llvm::enumerate(body))
      position[&op] = i;

    SmallVector<Buffer> buffers;
    for (Operation &op : body) {
      auto alloc = dyn_cast<memref::AllocOp>(op);
      if (!alloc)
        continue;
      MemRefType type = alloc.getType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          !type.getElementType().isIntOrFloat()) {
        alloc.emitError("cannot plan a dynamic or strided buffer");
        return failure();
      }
      // Alive from its first use to its last: allocations are often placed
      // well before their first use (empty tensors CSE merged, then split
      // again at the first one's place).
      std::optional<int64_t> size = byteSize(type).get();
      if (!size || *size > kMaxWorkspaceBytes) {
        alloc.emitError("an intermediate buffer of type ")
            << type << " needs more than 2^62 bytes";
        return failure();
      }
      Buffer buffer{alloc, *size, std::numeric_limits<int64_t>::max(),
                    std::numeric_limits<int64_t>::min()};
      // Follow every memref derived from the buffer to its uses.
      SmallVector<Value> worklist{alloc.getResult()};
      while (!worklist.empty()) {
        Value v = worklist.pop_back_val();
        for (Operation *user : v.getUsers()) {
          Operation *top = body.findAncestorOpInBlock(*user);
          buffer.start = std::min(buffer.start, position[top]);
          buffer.end = std::max(buffer.end, position[top]);
          for (Value r : user->getResults())
            if (isa<MemRefType>(r.getType()))
              worklist.push_back(r);
        }
      }
      if (buffer.start > buffer.end) // never used
        buffer.start = buffer.end = position[alloc];
      buffers.push_back(buffer);
    }

    // First fit: the lowest aligned offset not used by a buffer alive at the same time.
    int64_t total = 0;
    for (size_t i = 0; i < buffers.size(); ++i) {
      Buffer &b = buffers[i];
      SmallVector<std::pair<int64_t, int64_t>> busy;
      for (size_t j = 0; j < i; ++j)
        if (buffers[j].start <= b.end && b.start <= buffers[j].end)
          busy.push_back({buffers[j].offset, buffers[j].offset + buffers[j].size});
      llvm::sort(busy);
      int64_t offset = 0;
      for (auto [lo, hi] : busy) {
        if (offset + b.size <= lo)
          break;
        offset = std::max<int64_t>(offset, llvm::alignTo(hi, alignment));
      }
      b.offset = offset;
      total = std::max(total, offset + b.size);
      // Each buffer is at most 2^62 bytes, so these sums have not wrapped.
      if (total > kMaxWorkspaceBytes) {
        b.alloc.emitError("the workspace would need more than 2^62 bytes");
        return failure();
      }
    }
    total = (int64_t)llvm::alignTo(std::max<int64_t>(total, 1), alignment);

    // The workspace is the last argument.
    MLIRContext *context = &getContext();
    auto wsType = MemRefType::get({total}, IntegerType::get(context, 8));
    unsigned index = func.getNumArguments();
    if (failed(func.insertArgument(index, wsType, {}, func.getLoc())))
      return failure();
    Value workspace = func.getArgument(index);
    for (Buffer &b : buffers) {
      OpBuilder builder(b.alloc);
      Value offset = arith::ConstantIndexOp::create(builder, b.alloc.getLoc(), b.offset);
      Value view = memref::ViewOp::create(builder, b.alloc.getLoc(), b.alloc.getType(), workspace,
                                          offset, ValueRange{});
      for (Operation *user : llvm::make_early_inc_range(b.alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      b.alloc.replaceAllUsesWith(view);
      b.alloc.erase();
    }
    func->setAttr("nnc.workspace_size", IntegerAttr::get(IntegerType::get(context, 64), total));
    // What the plan saved: the bytes of all intermediates, were none shared.
    nnc::CheckedInt sum(0);
    for (const Buffer &b : buffers)
      sum += b.size;
    func->setAttr("nnc.intermediates_size", IntegerAttr::get(IntegerType::get(context, 64),
                                                             sum.valueOr(INT64_MAX)));
    return success();
  }
};
} // namespace
