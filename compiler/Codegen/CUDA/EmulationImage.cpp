//===- EmulationImage.cpp - the kernels' host image for cuda-emulated -----===//
//
// CI machines have no GPU: the cuda-emulated device checks the CUDA kernels'
// numerics there by running the very IR the NVPTX back end compiles,
// rewritten for the host, so that what is tested is what the GPU runs (less
// instruction selection and ptxas).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/CUDA.h"
#include "compiler/Codegen/CUDA/HostKernels.h"
#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace nnc {
#define GEN_PASS_DEF_CUDAEMULATIONIMAGE
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
struct EmulationImage : nnc::impl::CUDAEmulationImageBase<EmulationImage> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>(nnc::kKernelModule);
    if (!kernels)
      return;
    ArrayAttr targets = kernels.getTargetsAttr();
    auto target = targets && !targets.empty() ? dyn_cast<gpu::TargetAttrInterface>(targets[0])
                                              : gpu::TargetAttrInterface();
    if (!target) {
      kernels.emitOpError("expected a GPU target to serialize the kernels for");
      return signalPassFailure();
    }
    // The optimized bitcode ("offload" format) of the first chip: what its
    // back end would compile. The chips' IR differs only in target features,
    // which the host does not have anyway.
    SymbolTable symbols(module);
    gpu::TargetOptions options(/*toolkitPath=*/{}, /*librariesToLink=*/{}, /*cmdOptions=*/{},
                               /*elfSection=*/{}, gpu::CompilationTarget::Offload,
                               [&]() { return &symbols; });
    std::optional<SmallVector<char, 0>> bitcode = target.serializeToObject(kernels, options);
    if (!bitcode) {
      kernels.emitOpError("cannot produce the kernels' LLVM IR for the cuda-emulated device");
      return signalPassFailure();
    }
    llvm::LLVMContext context;
    llvm::Expected<std::unique_ptr<llvm::Module>> parsed = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(StringRef(bitcode->data(), bitcode->size()), "kernels"), context);
    if (!parsed) {
      kernels.emitOpError("cannot read the kernels' LLVM IR: ")
          << llvm::toString(parsed.takeError());
      return signalPassFailure();
    }
    llvm::Module &ir = **parsed;
    if (llvm::Error error = nnc::rewriteKernelsForHost(ir)) {
      kernels.emitOpError("cannot run on the cuda-emulated device: ")
          << llvm::toString(std::move(error));
      return signalPassFailure();
    }
    // The host's triple and layout are the artifact's to set.
    ir.setTargetTriple(llvm::Triple());
    ir.setDataLayout("");
    SmallVector<char, 0> rewritten;
    llvm::raw_svector_ostream os(rewritten);
    llvm::WriteBitcodeToFile(ir, os);
    module->setAttr(nnc::kCUDAHostImageAttr,
                    StringAttr::get(&getContext(), StringRef(rewritten.data(), rewritten.size())));
  }
};
} // namespace
