//===- NNToLinalg.cpp - the nn -> linalg conversion pass ------------------===//

#include "compiler/Conversion/NNToLinalg/Lowering.h"
#include "compiler/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"

namespace nnc {
#define GEN_PASS_DEF_CONVERTNNTOLINALG
#include "compiler/Conversion/Passes.h.inc"
} // namespace nnc

using namespace mlir;
using namespace nnc;

namespace {
struct ConvertNNToLinalgPass : nnc::impl::ConvertNNToLinalgBase<ConvertNNToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Lowering needs every shape known. A dynamic graph input is the cause to
    // name; otherwise the first op whose shape depends on run-time values.
    bool dynamic = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
        auto tensor = dyn_cast<RankedTensorType>(type);
        if (!tensor || tensor.hasStaticShape())
          continue;
        auto name = func.getArgAttrOfType<StringAttr>(i, "nn.name");
        func.emitError("graph input '") << (name ? name.getValue() : "?") << "' has dynamic dims ("
                                        << tensor << "); pin them with --dim or --input-shape";
        dynamic = true;
      }
    }
    if (!dynamic)
      module.walk([&](Operation *op) {
        if (!isa<nn::NNDialect>(op->getDialect()))
          return WalkResult::advance();
        for (Type t : op->getResultTypes())
          if (auto type = dyn_cast<RankedTensorType>(t); type && !type.hasStaticShape()) {
            op->emitError("cannot compile a dynamic shape (")
                << type << "): it depends on values known only at run time";
            dynamic = true;
            return WalkResult::interrupt();
          }
        return WalkResult::advance();
      });
    if (dynamic)
      return signalPassFailure();

    MLIRContext *context = &getContext();
    lowering::NNTypeConverter converter;
    RewritePatternSet patterns(context);
    lowering::populateElementwisePatterns(converter, patterns);
    lowering::populateContractionPatterns(converter, patterns);
    lowering::populateReductionPatterns(converter, patterns);
    lowering::populateDataMovementPatterns(converter, patterns);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);

    ConversionTarget target(*context);
    target.addIllegalDialect<nn::NNDialect>();
    target.addLegalOp<ModuleOp>();
    target.addLegalDialect<arith::ArithDialect, linalg::LinalgDialect, math::MathDialect,
                           tensor::TensorDialect, scf::SCFDialect>();
    target.addDynamicallyLegalOp<func::FuncOp>(
        [&](func::FuncOp f) { return converter.isSignatureLegal(f.getFunctionType()); });
    target.addDynamicallyLegalOp<func::ReturnOp>(
        [&](func::ReturnOp r) { return converter.isLegal(r.getOperandTypes()); });
    if (failed(applyFullConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
