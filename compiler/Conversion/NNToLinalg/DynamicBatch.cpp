//===- DynamicBatch.cpp - per-sample ops over a dynamic batch -------------===//
//
// Convolutions, pools, normalizations and the like treat each index of
// their leading dim on its own. With that dim dynamic (a symbolic batch) and
// every other dim static, a run of such ops becomes a loop over the batch of
// the same ops on one sample: static, so they take the static lowering and
// the CPU schedules' register tiles as in code pinned to batch 1, and the
// loop's bound is the only dynamic value. Runs of ops on rows alone (norms,
// softmaxes, attention's products) keep their dynamic lowerings instead
// (rowWise), which split the whole batch across threads.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::lowering;

namespace {
bool staticType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return !tensor || tensor.hasStaticShape();
}

/// Dynamic in its leading dim only, and not empty whatever the batch (a
/// sample of no elements has no slice to take: its offsets are out of
/// bounds).
bool batchedType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() == 0 || !tensor.isDynamicDim(0))
    return false;
  return llvm::all_of(tensor.getShape().drop_front(), [](int64_t d) { return d > 0; });
}

/// Whether the op computes each index of its first operand's leading dim
/// from that index alone, into the same index of each result.
bool perSampleOp(Operation *op) {
  if (isa<nn::ConvOp, nn::ConvTransposeOp, nn::MaxPoolOp, nn::AvgPoolOp, nn::BatchNormOp,
          nn::InstanceNormOp>(op))
    return true;
  auto axisAttr = [&](StringRef name) {
    auto attr = op->getAttrOfType<IntegerAttr>(name);
    return attr ? attr.getInt() : -1;
  };
  if (isa<nn::LayerNormOp>(op))
    return axisAttr("axis") >= 1;
  // Flatten to [N, rest]: at a later axis the leading dim is N times more.
  if (isa<nn::FlattenOp>(op))
    return axisAttr("axis") == 1;
  if (isa<nn::SoftmaxOp, nn::LogSoftmaxOp, nn::GatherOp>(op))
    return axisAttr("axis") >= 1;
  if (auto transpose = dyn_cast<nn::TransposeOp>(op))
    return transpose.getPerm()[0] == 0;
  if (isa<nn::SplitOp>(op))
    return axisAttr("axis") >= 1;
  // A batched product of batched operands ([N, ..., M, K] x [N, ..., K, P]:
  // attention's scores and weighted sums).
  if (auto matmul = dyn_cast<nn::MatMulOp>(op)) {
    auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
    auto rhs = cast<RankedTensorType>(matmul.getRhs().getType());
    return lhs.getRank() >= 3 && lhs.getRank() == rhs.getRank() && batchedType(rhs);
  }
  if (isa<nn::ReduceSumOp, nn::ReduceMeanOp, nn::ReduceMaxOp, nn::ReduceMinOp, nn::ReduceProdOp,
          nn::ReduceSumSquareOp, nn::ReduceLogSumOp, nn::ReduceLogSumExpOp>(op)) {
    auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
    return axes && !axes.empty() && !llvm::is_contained(axes.asArrayRef(), 0);
  }
  return false;
}

/// Whether per-sample op `op` takes the dynamic-dim lowering as well as a
/// sample's static one: an op on rows (a norm, a softmax, a transpose, a
/// split, attention's products), whose dynamic schedules split the whole
/// batch into thread chunks. A window over an image (a convolution, a pool,
/// a batch norm) needs a sample's static shape for its register tiles. Each
/// of these has a dynamic lowering for every form perSampleOp accepts but a
/// product whose other batch dims broadcast (multi-query attention's one
/// head of keys against four of queries), which only the loop takes.
bool rowWise(Operation *op) {
  if (auto matmul = dyn_cast<nn::MatMulOp>(op))
    return isDynamicBatchedMatmul(matmul);
  return isElementwise(op) ||
         isa<nn::LayerNormOp, nn::SoftmaxOp, nn::LogSoftmaxOp, nn::TransposeOp, nn::SplitOp>(op);
}

bool floatType(Type type) { return isa<FloatType>(getElementTypeOrSelf(type)); }

/// Whether elementwise `op` works within each sample: its batched operands
/// (a dynamic leading dim) have the result's rank, and its static ones do
/// not broadcast along the batch (a lower rank, or a leading 1).
bool perSampleElementwise(Operation *op) {
  if (!llvm::all_of(op->getResultTypes(), batchedType) || !llvm::all_of(op->getResultTypes(), floatType))
    return false;
  int64_t rank = cast<RankedTensorType>(op->getResult(0).getType()).getRank();
  bool batched = false;
  for (Type type : op->getOperandTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !floatType(type))
      return false;
    if (batchedType(tensor) && tensor.getRank() == rank) {
      batched = true;
      continue;
    }
    if (!tensor.hasStaticShape() || (tensor.getRank() == rank && tensor.getDimSize(0) != 1))
      return false;
  }
  return batched;
}

} // namespace

bool lowering::isBatchLoop(Operation *op) {
  // An elementwise op on what per-sample ops computed (a convolution's
  // activation, a residual add) joins their loop over the batch, where it
  // fuses into the sample's kernels as in pinned code (formBatchLoops: it
  // never starts a loop). Elsewhere it keeps the elementwise lowering.
  if (isElementwise(op))
    return perSampleElementwise(op);
  if (!perSampleOp(op) || op->getNumOperands() == 0 || !batchedType(op->getOperand(0).getType()))
    return false;
  // Float data only: the loop body's op takes the converted (signless)
  // operands, which are the nn types for floats.
  if (!isa<FloatType>(cast<RankedTensorType>(op->getOperand(0).getType()).getElementType()))
    return false;
  // The other operands are shared by the samples (a norm's scale, a
  // convolution's weights), or for a product of two activations batched too
  // (sliced alike; their batch is checked to be the first operand's).
  bool product = isa<nn::MatMulOp>(op);
  return llvm::all_of(op->getOperands().drop_front(),
                      [&](Value v) {
                        return staticType(v.getType()) || (product && batchedType(v.getType()));
                      }) &&
         llvm::all_of(op->getResultTypes(), batchedType);
}

namespace {
RankedTensorType sampleType(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[0] = 1;
  return tensor.clone(shape);
}

/// The slices of a batched tensor of `type` at sample `i`.
std::tuple<SmallVector<OpFoldResult>, SmallVector<OpFoldResult>, SmallVector<OpFoldResult>>
sampleSlice(OpBuilder &b, Value i, RankedTensorType type) {
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes, strides(rank, b.getIndexAttr(1));
  offsets[0] = i;
  sizes.push_back(b.getIndexAttr(1));
  for (int64_t d : type.getShape().drop_front())
    sizes.push_back(b.getIndexAttr(d));
  return {offsets, sizes, strides};
}

/// `group` (per-sample ops in block order) as one scf.for over the batch,
/// placed after its last op, of the same ops on one sample; unless every op
/// is rowWise. The loop's body runs a sample at a time, so its ops split
/// only a sample's work into thread chunks: a GPT block's (a 64-token
/// sample's norms, softmax and 4-head products) were too small to, and at a
/// batch of 32 it ran 1.40x its pinned time on two threads, against 1.13x
/// with those runs left to the dynamic-dim lowerings.
void buildBatchLoop(ArrayRef<Operation *> group) {
  if (llvm::all_of(group, rowWise))
    return;
  llvm::SmallPtrSet<Operation *, 16> members(group.begin(), group.end());
  Block *block = group.front()->getBlock();
  auto inGroup = [&](Operation *user) {
    Operation *top = block->findAncestorOpInBlock(*user);
    return top && members.contains(top);
  };
  // What the ops read from outside, and which operand first reads it.
  llvm::SetVector<Value> inputs;
  DenseMap<Value, Operation *> firstReader;
  for (Operation *op : group)
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands()) {
        Operation *def = v.getDefiningOp();
        if ((def && inGroup(def)) || (!def && op->isAncestor(v.getParentBlock()->getParentOp())))
          continue;
        if (inputs.insert(v))
          firstReader[v] = op;
      }
    });
  SmallVector<Value> outputs;
  for (Operation *op : group)
    for (Value r : op->getResults())
      if (llvm::any_of(r.getUsers(), [&](Operation *u) { return !inGroup(u); }))
        outputs.push_back(r);

  Operation *last = group.back();
  OpBuilder b(last->getContext());
  b.setInsertionPointAfter(last);
  Location loc = group.front()->getLoc();
  // The batch is the first batched input's; any other must agree, which the
  // op reading it checks (named in the message).
  Value batch;
  for (Value v : inputs) {
    if (!batchedType(v.getType()))
      continue;
    Value size = tensor::DimOp::create(b, loc, v, 0);
    if (!batch) {
      batch = size;
      continue;
    }
    Operation *reader = firstReader[v];
    checkSameSize(b, reader->getLoc(), batch, size,
                  isElementwise(reader) ? "dynamic dims broadcast against each other"
                                        : "the batch sizes of two operands");
  }
  assert(batch && "a per-sample op reads a batched tensor");
  SmallVector<Value> inits;
  for (Value r : outputs)
    inits.push_back(emptyTensor(b, loc, cast<RankedTensorType>(r.getType()), ValueRange{batch}));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(
      b, loc, zero, batch, one, inits, [&](OpBuilder &nb, Location nl, Value i, ValueRange accs) {
        IRMapping mapping;
        for (Value v : inputs) {
          if (!batchedType(v.getType()))
            continue;
          auto type = cast<RankedTensorType>(v.getType());
          auto [offsets, sizes, strides] = sampleSlice(nb, i, type);
          mapping.map(v, tensor::ExtractSliceOp::create(nb, nl, sampleType(type), v, offsets, sizes, strides)
                             .getResult());
        }
        for (Operation *op : group) {
          Operation *clone = nb.clone(*op, mapping);
          for (OpResult r : clone->getResults())
            r.setType(sampleType(r.getType()));
        }
        SmallVector<Value> updated;
        for (auto [r, acc] : llvm::zip(outputs, accs)) {
          auto [offsets, sizes, strides] = sampleSlice(nb, i, cast<RankedTensorType>(r.getType()));
          updated.push_back(
              tensor::InsertSliceOp::create(nb, nl, mapping.lookup(r), acc, offsets, sizes, strides));
        }
        scf::YieldOp::create(nb, nl, updated);
      });
  // The CPU schedules take the ops in its body like top-level ones.
  loop->setAttr("nnc.batch_loop", b.getUnitAttr());
  for (auto [r, result] : llvm::zip(outputs, loop.getResults()))
    r.replaceUsesWithIf(result, [&](OpOperand &use) { return !inGroup(use.getOwner()); });
  for (Operation *op : llvm::reverse(group))
    op->erase();
}
} // namespace

void lowering::formBatchLoops(func::FuncOp func) {
  // Runs of per-sample ops become one loop each: the sample's ops then
  // follow one another as in code pinned to batch 1, so the lowering and the
  // schedules see the same chains (a convolution's activation fused into it,
  // a depthwise convolution's channels-last result read as such by the next
  // product), and a sample's intermediates are a sample in size. A run ends
  // at the first op reading its results that cannot join it.
  for (Block &block : func.getBody()) {
    SmallVector<Operation *> group;
    llvm::SmallPtrSet<Operation *, 16> members;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (isa<nn::NNDialect>(op.getDialect()) && isBatchLoop(&op)) {
        // An op joins the run through a batched operand the run computes:
        // one whose batched operands all come from elsewhere may have
        // another batch (a second input's, or a reshape's folding time into
        // it), and starts a run of its own.
        bool joins = llvm::any_of(op.getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && members.contains(def);
        });
        // An elementwise op only joins: alone, its elementwise lowering is
        // as good.
        if (!joins && isElementwise(&op))
          continue;
        if (!joins && !group.empty()) {
          buildBatchLoop(group);
          group.clear();
          members.clear();
        }
        group.push_back(&op);
        members.insert(&op);
        continue;
      }
      bool readsGroup = false;
      op.walk([&](Operation *nested) {
        for (Value v : nested->getOperands())
          if (Operation *def = v.getDefiningOp(); def && members.contains(def))
            readsGroup = true;
      });
      if (readsGroup) {
        buildBatchLoop(group);
        group.clear();
        members.clear();
      }
    }
    if (!group.empty())
      buildBatchLoop(group);
  }
}
