//===- DynamicBatch.cpp - per-sample ops over a dynamic batch -------------===//
//
// Convolutions, pools, normalizations and the like treat each index of
// their leading dim on its own. With that dim dynamic (a symbolic batch) and
// every other dim static, the op becomes a loop over the batch of the same op
// on one sample: static, so it takes the static lowering and the CPU
// schedules' register tiles, and the loop's bound is the only dynamic value.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

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
} // namespace

bool lowering::isBatchLoop(Operation *op) {
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
/// An op of isBatchLoop as scf.for over its batch of the op on [1, ...].
class BatchLoopPattern : public ConversionPattern {
public:
  BatchLoopPattern(TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/10, context) {}

  LogicalResult matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                                ConversionPatternRewriter &b) const override {
    if (!isa<nn::NNDialect>(op->getDialect()) || !isBatchLoop(op))
      return failure();
    Location loc = op->getLoc();
    Value input = operands[0];
    Value batch = tensor::DimOp::create(b, loc, input, 0);
    bool product = isa<nn::MatMulOp>(op);
    for (Value other : operands.drop_front())
      if (product && batchedType(other.getType()))
        checkSameSize(b, loc, batch, tensor::DimOp::create(b, loc, other, 0),
                      "the batch sizes of two operands");
    auto one = [&](Type type) {
      auto tensor = cast<RankedTensorType>(type);
      SmallVector<int64_t> shape(tensor.getShape());
      shape[0] = 1;
      return tensor.clone(shape);
    };
    SmallVector<Value> inits;
    for (Type t : op->getResultTypes())
      inits.push_back(emptyTensor(b, loc, cast<RankedTensorType>(getTypeConverter()->convertType(t)),
                                  ValueRange{batch}));
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value step = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ForOp::create(
        b, loc, zero, batch, step, inits,
        [&](OpBuilder &nb, Location nl, Value i, ValueRange results) {
          auto sliceOf = [&](Value tensor, RankedTensorType type) {
            int64_t rank = type.getRank();
            SmallVector<OpFoldResult> offsets(rank, nb.getIndexAttr(0)), sizes, strides(rank, nb.getIndexAttr(1));
            offsets[0] = i;
            for (int64_t d : type.getShape())
              sizes.push_back(nb.getIndexAttr(d));
            return std::make_tuple(offsets, sizes, strides);
          };
          auto sampleType = one(input.getType());
          auto [offsets, sizes, strides] = sliceOf(input, sampleType);
          Value sample = tensor::ExtractSliceOp::create(nb, nl, sampleType, input, offsets, sizes, strides);
          IRMapping mapping;
          mapping.map(op->getOperand(0), sample);
          for (auto [original, converted] : llvm::zip(op->getOperands().drop_front(), operands.drop_front())) {
            if (!product || !batchedType(converted.getType())) {
              mapping.map(original, converted);
              continue;
            }
            auto otherType = one(converted.getType());
            auto [o, s, st] = sliceOf(converted, otherType);
            mapping.map(original, tensor::ExtractSliceOp::create(nb, nl, otherType, converted, o, s, st).getResult());
          }
          Operation *body = nb.clone(*op, mapping);
          for (OpResult r : body->getResults())
            r.setType(one(r.getType()));
          SmallVector<Value> updated;
          for (auto [r, acc] : llvm::zip(body->getResults(), results)) {
            auto [o, s, st] = sliceOf(r, cast<RankedTensorType>(r.getType()));
            updated.push_back(tensor::InsertSliceOp::create(nb, nl, r, acc, o, s, st));
          }
          scf::YieldOp::create(nb, nl, updated);
        });
    // The CPU schedules take the ops in its body like top-level ones.
    loop->setAttr("nnc.batch_loop", b.getUnitAttr());
    b.replaceOp(op, loop.getResults());
    return success();
  }
};
} // namespace

void lowering::populateDynamicBatchPatterns(NNTypeConverter &converter,
                                            RewritePatternSet &patterns) {
  patterns.add<BatchLoopPattern>(converter, patterns.getContext());
}
