//===- MergeKernels.cpp - every kernel in one gpu.module ------------------===//
//
// One gpu.module serializes to one PTX image per chip, which the runtime
// loads once per session.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/CUDA.h"
#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "mlir/IR/SymbolTable.h"

namespace nnc {
#define GEN_PASS_DEF_CUDAMERGEKERNELS
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
struct MergeKernels : nnc::impl::CUDAMergeKernelsBase<MergeKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> outlined(module.getOps<gpu::GPUModuleOp>());
    if (outlined.empty())
      return;
    if (module.lookupSymbol(nnc::kKernelModule)) {
      module.emitOpError("expected no symbol named '") << nnc::kKernelModule << "' yet";
      return signalPassFailure();
    }
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto merged = gpu::GPUModuleOp::create(b, module.getLoc(), nnc::kKernelModule);
    SymbolTable mergedSymbols(merged);
    // Kernel (old module, old name) -> new name.
    llvm::DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    llvm::DenseMap<StringAttr, int64_t> shared; // new name -> static shared bytes
    for (gpu::GPUModuleOp old : outlined) {
      for (Operation &op : llvm::make_early_inc_range(old.getBody()->getOperations())) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol) {
          op.emitOpError("unexpected op in an outlined kernel module");
          return signalPassFailure();
        }
        StringAttr oldName = symbol.getNameAttr();
        // Outlining names each module after its launch, uniquely; a module of
        // one kernel gives the kernel its name.
        std::string name = old.getName().str();
        if (!llvm::hasSingleElement(old.getOps<gpu::GPUFuncOp>()) || !isa<gpu::GPUFuncOp>(op))
          name += "_" + oldName.str();
        // Every shared-memory buffer 16-byte aligned: the tiled matmul reads
        // its tiles as 4-float vectors (ld.shared.v4), which need it.
        int64_t sharedBytes = 0;
        if (auto func = dyn_cast<gpu::GPUFuncOp>(op)) {
          for (unsigned i = 0; i < func.getNumWorkgroupAttributions(); ++i) {
            func.setWorkgroupAttributionAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                                             b.getI64IntegerAttr(16));
            auto type = cast<MemRefType>(func.getWorkgroupAttributions()[i].getType());
            int64_t bytes = type.getNumElements() *
                            llvm::divideCeil(type.getElementTypeBitWidth(), 8);
            sharedBytes = llvm::alignTo(sharedBytes, 16) + bytes;
          }
        }
        op.remove();
        symbol.setName(name);
        mergedSymbols.insert(&op);
        renamed[{old.getNameAttr(), oldName}] = symbol.getNameAttr();
        shared[symbol.getNameAttr()] = sharedBytes;
      }
      old.erase();
    }
    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      StringAttr name =
          renamed.lookup({launch.getKernelModuleName(), launch.getKernelName()});
      if (!name) {
        launch.emitOpError("launches an unknown kernel");
        return WalkResult::interrupt();
      }
      launch.setKernelAttr(SymbolRefAttr::get(merged.getNameAttr(),
                                              {FlatSymbolRefAttr::get(name)}));
      launch->setAttr(nnc::kStaticSharedAttr, b.getI64IntegerAttr(shared.lookup(name)));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
