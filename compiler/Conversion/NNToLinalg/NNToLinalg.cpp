//===- NNToLinalg.cpp - the nn -> linalg conversion pass ------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"

namespace nnc {
#define GEN_PASS_DEF_CONVERTNNTOLINALG
#include "compiler/Conversion/Passes.h.inc"
} // namespace nnc

using namespace mlir;
using namespace nnc;

namespace {
bool isDynamic(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && !tensor.hasStaticShape();
}

bool hasDynamicDims(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), isDynamic) ||
         llvm::any_of(op->getResultTypes(), isDynamic);
}

/// Whether `v`'s dims may hold a count only the run computes: it is, or is
/// computed (through tensors of dynamic dims) from, a result of NonZero,
/// Compress, NonMaxSuppression or Unique (DataDependent.cpp).
bool sizedByData(Value v) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    Operation *op = x.getDefiningOp();
    if (!seen.insert(x).second || !op || !isDynamic(x.getType()))
      continue;
    if (isa<nn::NonZeroOp, nn::CompressOp, nn::NonMaxSuppressionOp, nn::UniqueOp,
            nn::StringNormalizerOp>(op))
      return true;
    work.append(op->operand_begin(), op->operand_end());
  }
  return false;
}

/// Why `op`, which has dynamic dims, cannot be lowered; nothing when it can.
std::optional<std::string> dynamicDimsRefusal(Operation *op) {
  std::string name = op->getName().getStringRef().str();
  bool fromData = llvm::any_of(op->getOperands(), sizedByData);
  auto refuse = [&](const std::string &why) -> std::optional<std::string> {
    return "cannot compile " + name + " with dynamic dims: " + why +
           (fromData ? "; its dims are counts the data gives (NonZero, Compress, "
                       "NonMaxSuppression, Unique), known only after the run"
                     : "; pin them with --dim or --input-shape");
  };
  // Dims read from operand values (a Reshape to a shape input), or from the
  // data (DataDependent.cpp).
  if (lowering::isValueShaped(op) || isa<nn::NonZeroOp, nn::CompressOp, nn::NonMaxSuppressionOp,
                                         nn::UniqueOp, nn::StringNormalizerOp>(op))
    return std::nullopt;
  bool inputsStatic = !llvm::any_of(op->getOperandTypes(), isDynamic);
  if (inputsStatic)
    return refuse("its result's shape depends on values known only at run time");
  if (lowering::isElementwise(op) || lowering::isBatchLoop(op))
    return std::nullopt;
  if (auto matmul = dyn_cast<nn::MatMulOp>(op)) {
    auto rhs = cast<RankedTensorType>(matmul.getRhs().getType());
    if (rhs.getRank() == 2 &&
        (cast<RankedTensorType>(matmul.getLhs().getType()).getRank() == 2 || rhs.hasStaticShape()))
      return std::nullopt;
    if (lowering::isDynamicBatchedMatmul(matmul))
      return std::nullopt;
    return refuse("only a matrix product with a 2-D right operand, or a batched product with "
                  "the same batch dims on both sides (no static 1 against another size) and at "
                  "most one of them dynamic on both, is supported yet");
  }
  // Reductions over any dims, dynamic ones included (a mean over a symbolic
  // sequence, a sum kept per sample of a symbolic batch).
  if (isa<nn::ReduceSumOp, nn::ReduceMeanOp, nn::ReduceMaxOp, nn::ReduceMinOp, nn::ReduceProdOp,
          nn::ReduceL1Op, nn::ReduceL2Op, nn::ReduceSumSquareOp, nn::ReduceLogSumOp,
          nn::ReduceLogSumExpOp>(op))
    return std::nullopt;
  // Softmax reduces over its axis, dynamic or not.
  if (isa<nn::SoftmaxOp, nn::LogSoftmaxOp, nn::TransposeOp>(op))
    return std::nullopt;
  // Normalized over static dims; the leading ones (batch, sequence) any.
  if (auto norm = dyn_cast<nn::LayerNormOp>(op)) {
    auto type = cast<RankedTensorType>(norm.getInput().getType());
    int64_t axis = norm.getAxis();
    if (llvm::all_of(type.getShape().drop_front(axis), [](int64_t d) { return !ShapedType::isDynamic(d); }))
      return std::nullopt;
    return refuse("the normalized dims must be static");
  }
  if (auto split = dyn_cast<nn::SplitOp>(op)) {
    if (!cast<RankedTensorType>(split.getInput().getType()).isDynamicDim(split.getAxis()))
      return std::nullopt;
    return refuse("the split axis must be static");
  }
  // Unit dims added or dropped: a reshape that keeps the dynamic dims
  // (reshapeTo). A dropped dim must be a static 1.
  if (isa<nn::UnsqueezeOp>(op))
    return std::nullopt;
  // A flatten of one dynamic leading dim (and 1s) over static trailing ones
  // (a detector's regions, [R, C, 7, 7] to [R, C * 49]): the dynamic dim is
  // kept as is. Collapsing it with another size is not supported.
  if (auto flatten = dyn_cast<nn::FlattenOp>(op)) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(flatten.getInput().getType()).getShape();
    ArrayRef<int64_t> leading = shape.take_front(flatten.getAxis()), trailing = shape.drop_front(flatten.getAxis());
    if (llvm::none_of(trailing, ShapedType::isDynamic) &&
        llvm::count_if(leading, [](int64_t d) { return d != 1; }) <= 1)
      return std::nullopt;
    return refuse("only one dynamic dim (and 1s) before the axis, and static dims after it, are "
                  "supported");
  }
  if (auto squeeze = dyn_cast<nn::SqueezeOp>(op)) {
    auto from = cast<RankedTensorType>(squeeze.getInput().getType());
    auto to = cast<RankedTensorType>(squeeze.getResult().getType());
    if (llvm::count(from.getShape(), ShapedType::kDynamic) ==
        llvm::count(to.getShape(), ShapedType::kDynamic))
      return std::nullopt;
    return refuse("a squeezed dim must be static");
  }
  // Concatenation along any dim (a key-value cache grows along a dynamic
  // one); gathers along any dims (an embedding of a symbolic batch and
  // sequence, the boxes a detector kept picked by their scores' order).
  if (isa<nn::ConcatOp, nn::GatherOp, nn::GatherNDOp, nn::ScatterElementsOp>(op))
    return std::nullopt;
  // Constants, the dims of a tensor as values, and checks passing a tensor on.
  if (isa<nn::ConstantOp, nn::ShapeOp, nn::SizeOp, nn::CheckOp>(op))
    return std::nullopt;
  return refuse("not supported for this op yet");
}


struct ConvertNNToLinalgPass : nnc::impl::ConvertNNToLinalgBase<ConvertNNToLinalgPass> {
  using ConvertNNToLinalgBase::ConvertNNToLinalgBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // String tensors (docs/strings.md) and dynamic dims
    // (docs/dynamic-shapes.md) lower for the ops below; any other op
    // meeting one is refused by name.
    bool refused = false;
    module.walk([&](Operation *op) {
      if (std::optional<std::string> why = lowering::stringRefusal(op, strings)) {
        op->emitError() << *why;
        refused = true;
      }
      if (!isa<nn::NNDialect>(op->getDialect()) || !hasDynamicDims(op))
        return;
      if (isa<nn::SliceOp, nn::TopKOp>(op) && llvm::any_of(op->getOperands(), sizedByData))
        op->setAttr(lowering::kCountSized, UnitAttr::get(op->getContext()));
      if (std::optional<std::string> why = dynamicDimsRefusal(op)) {
        op->emitError() << *why;
        refused = true;
      }
    });
    if (refused)
      return signalPassFailure();
    // Per-sample ops over a dynamic batch: loops of static ops.
    for (auto func : module.getOps<func::FuncOp>())
      lowering::formBatchLoops(func);

    MLIRContext *context = &getContext();
    lowering::NNTypeConverter converter;
    RewritePatternSet patterns(context);
    lowering::populateElementwisePatterns(converter, patterns);
    lowering::populateContractionPatterns(converter, patterns, maxTapSum);
    lowering::populateReductionPatterns(converter, patterns);
    lowering::populateDataMovementPatterns(converter, patterns);
    lowering::populateValueShapePatterns(converter, patterns);
    lowering::populateTopKPatterns(converter, patterns);
    lowering::populateDataDependentPatterns(converter, patterns);
    lowering::populateStringPatterns(converter, patterns);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);

    ConversionTarget target(*context);
    target.addIllegalDialect<nn::NNDialect>();
    // The data-dependent sizes the lowering makes (DataDependent.cpp).
    target.addLegalOp<nn::BoundedExtentOp>();
    target.addLegalOp<ModuleOp>();
    // Calls into the runtime's string functions, and the stopword tables
    // they read (Strings.cpp).
    target.addLegalOp<func::CallOp>();
    target.addLegalDialect<LLVM::LLVMDialect>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect, math::MathDialect,
                           tensor::TensorDialect, scf::SCFDialect, cf::ControlFlowDialect>();
    target.addDynamicallyLegalOp<func::FuncOp>(
        [&](func::FuncOp f) { return converter.isSignatureLegal(f.getFunctionType()); });
    target.addDynamicallyLegalOp<func::ReturnOp>(
        [&](func::ReturnOp r) { return converter.isLegal(r.getOperandTypes()); });
    if (failed(applyFullConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
