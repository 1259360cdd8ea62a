//===- Pipelines.cpp - nnc's stage pipelines ------------------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Codegen/Passes.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToFuncs/MathToFuncs.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "dialects/NN/IR/NNOps.h"
#include "mlir/Dialect/Affine/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/TensorTilingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/Transforms/SubsetOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void nnc::buildLowerPipeline(OpPassManager &pm, const CompileOptions &options) {
  // One pattern per nn op family; needs the static shapes the graph stage made.
  // A depthwise convolution's sum over taps takes each tap's window as an
  // operand, on CUDA a kernel parameter of about 128 bytes: 49 of them (7x7,
  // 6400 bytes) exceed PTX 8.0's 4352, and ptxas refuses the kernel. CUDA keeps 5x5's
  // 25 taps; larger filters keep the loop nest there.
  ConvertNNToLinalgOptions lowering;
  if (options.target == "cuda")
    lowering.maxTapSum = 25;
  // Text is read and made by the runtime on the host (Strings.cpp).
  lowering.strings = options.target != "cuda";
  pm.addPass(createConvertNNToLinalg(lowering));
  // Before CSE merges the empty tensors of concats of the same type.
  pm.addNestedPass<func::FuncOp>(nnc::createShareConcatPrefixes());
  // Folds the reshapes and constants the patterns produce in isolation.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Dynamic dims: each result's dims in terms of the arguments' (checks that
  // two are equal fold away where they are the same dim), then the functions
  // the runtime calls for output dims and checks before a run.
  pm.addPass(memref::createResolveShapedTypeResultDimsPass());
  pm.addPass(createCanonicalizerPass());
  // The same dim reached two ways becomes one value (a Reshape's 0 that
  // copies the dim it already is folds away).
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(nnc::createHoistBatchInvariants());
  pm.addPass(nnc::createShapeFunctions());
}

/// Tensors to buffers: @main's arguments become the caller's buffers (inputs
/// read-only), its results out-params, every intermediate a view of the
/// workspace. The same for every target.
static void addBufferization(OpPassManager &pm,
                             llvm::function_ref<void(OpPassManager &)> beforePlan = {}) {
  // Ops whose result is inserted into a larger tensor (a pad's interior)
  // compute it in place there.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  // The caller's input buffers are read-only: an op updating its operand in
  // place works on a copy.
  pm.addPass(nnc::createReadOnlyInputs());
  bufferization::OneShotBufferizePassOptions bufferize;
  // @main's arguments become plain contiguous memrefs, as the ABI hands them over.
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion = bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Its constants' order follows heap addresses (LLVM 22): fix it.
  pm.addPass(nnc::createOrderGlobals());
  // Loops carry buffers they only pass through, and tiles copy onto themselves:
  // fold both so a result is seen to be its allocation and becomes the out-param.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Results are written into caller-provided buffers instead of returned.
  // (Its hoist-static-allocs option crashes on a buffer returned twice:
  // nnc-plan-memory computes results in their out-params instead.)
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (beforePlan)
    beforePlan(pm);
  // Every intermediate goes to the session's workspace; no malloc at run time.
  pm.addPass(nnc::createPlanMemory());
}

void nnc::buildCPUBufferizePipeline(OpPassManager &pm, const CompileOptions &options) {
  // Weights transposed once, at compile time, not on every run.
  pm.addNestedPass<func::FuncOp>(createFoldConstantTransposes());
  // Elementwise chains as one loop nest each.
  pm.addNestedPass<func::FuncOp>(createFuseElementwise());
  // Schedules are chosen on tensors, where tiles are values and hoisting is safe.
  pm.addNestedPass<func::FuncOp>(
      createTileAndVectorize({options.vectorBits, options.vectorRegisters}));
  // No CSE here: it would merge the empty tensors the schedule gave each
  // destination of its own.
  pm.addPass(createCanonicalizerPass());
  addBufferization(pm, /*beforePlan=*/[](OpPassManager &pm) {
    // A pad's border is filled by the thread chunks that write its interior.
    pm.addNestedPass<func::FuncOp>(createSinkBorderFills());
  });
  pm.addNestedPass<func::FuncOp>(createVectorizeCopies({options.vectorBits}));
  // Weights too large to stay cached are prefetched ahead of the matmuls.
  pm.addNestedPass<func::FuncOp>(createPrefetchPanels());
  // Last, so the marks bound the kernels nnc --report lists.
  if (options.profile)
    pm.addPass(createProfileKernels());
}

void nnc::buildCUDABufferizePipeline(OpPassManager &pm, const CompileOptions &options) {
  // Weights transposed once, at compile time, not by a kernel on every run;
  // before fusion, which could fold a transpose into a consumer's kernel.
  pm.addNestedPass<func::FuncOp>(createFoldConstantTransposes());
  // Contractions with too few output tiles for the GPU split their reduction
  // across blocks; the partial results are intermediates the plan places.
  // Before fusion, which gives the op that combines the partials the
  // contraction's elementwise consumers.
  pm.addNestedPass<func::FuncOp>(createCUDASplitK());
  // Chains of elementwise ops become one op, hence one kernel; per-channel
  // values are recomputed rather than launched apart.
  pm.addNestedPass<func::FuncOp>(createFuseElementwise({/*broadcasts=*/true}));
  pm.addPass(createCanonicalizerPass());
  addBufferization(pm);
  // The marks time launches as the host enqueues them: meaningful where a
  // launch completes before it returns (cuda-emulated).
  if (options.profile)
    pm.addPass(createProfileKernels());
}

void nnc::buildCUDAKernelPipeline(OpPassManager &pm, const CompileOptions &options) {
  // Kernels read the weights from the device block the runtime uploads.
  pm.addPass(createCUDAConstantsToArgument());
  // One launch per linalg op; what is not a parallel loop runs in one thread.
  CUDAMapToGPUOptions mapping;
  mapping.precision = options.precision;
  pm.addNestedPass<func::FuncOp>(createCUDAMapToGPU(mapping));
  pm.addPass(createCanonicalizerPass());
  // Constants and index arithmetic move into the kernels rather than
  // becoming kernel parameters.
  pm.addNestedPass<func::FuncOp>(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // All kernels in one module: one PTX image per chip.
  pm.addPass(createCUDAMergeKernels());
  for (const std::string &chip : options.cudaChips) {
    GpuNVVMAttachTargetOptions target;
    target.chip = chip;
    // MLIR's default PTX version (6.0) is older than sm_90 allows.
    target.features = "+ptx80";
    target.optLevel = 3;
    pm.addPass(createGpuNVVMAttachTarget(target));
  }
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  // No libdevice: math becomes arithmetic first.
  // (convert-gpu-to-nvvm has both intrinsic and libdevice patterns for some
  // math ops, and its choice between them was not deterministic.)
  kernels.addPass(createCUDAApproximateMath());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createSCFToControlFlowPass());
  // Block arguments of the loops must be LLVM types before the GPU ops are
  // converted (as in MLIR's own NVVM pipeline).
  kernels.addPass(createArithToLLVMConversionPass());
  kernels.addPass(createConvertIndexToLLVMPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  // The same kernels rewritten for the host, for the cuda-emulated device
  // (CI checks their numerics without a GPU).
  pm.addPass(createCUDAEmulationImage());
  // PTX text: the driver compiles it for the GPU it runs on.
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

/// Host code's last step, for every target: what remains of memrefs, arith,
/// index, func and cf becomes the LLVM dialect.
static void addToLLVM(OpPassManager &pm) {
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(nnc::createConstantsAsBytes());
  pm.addPass(nnc::createLoopAnnotations());
}

void nnc::buildCUDAHostLLVMPipeline(OpPassManager &pm, const CompileOptions &) {
  // Launches become calls of the runtime's hook; the PTX moves to attributes.
  pm.addPass(createCUDALowerLaunches());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  addToLLVM(pm);
}

void nnc::buildCPULLVMPipeline(OpPassManager &pm, const CompileOptions &) {
  // Outer scf.forall loops run on the runtime's thread pool; nested ones run serially.
  pm.addPass(createLowerForallToRuntime());
  // What no schedule claimed becomes scalar loops.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // A dynamic batch's loop calls its sample's ops as a function, and loops
  // over other dynamic sizes are functions of their own: LLVM's loop passes
  // would scan the whole function per use of an index.
  pm.addPass(createOutlineLoops());
  // Multi-dimensional transfers become 1-D ones.
  VectorTransferToSCFOptions toSCF;
  toSCF.enableFullUnroll();
  // Passes that stay within a function run on one function per thread: a
  // module has one function per parallel loop (DenseNet-121: 262).
  OpPassManager &perFunction = pm.nest<func::FuncOp>();
  perFunction.addPass(createConvertVectorToSCFPass(toSCF));
  perFunction.addPass(createLowerAffinePass());
  perFunction.addPass(createSplitBlocksAtRegions());
  perFunction.addPass(createSCFToControlFlowPass());
  // Subviews and views become plain pointer arithmetic.
  perFunction.addPass(createExpandDynamicViews());
  perFunction.addPass(memref::createExpandStridedMetadataPass());
  perFunction.addPass(createLowerAffinePass());
  // Integer powers have no LLVM intrinsic: expand them into loops.
  pm.addPass(createConvertMathToFuncs());
  // Math with LLVM intrinsics first; the rest (erf, tanh, ...) as libm calls.
  pm.addNestedPass<func::FuncOp>(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // Register-tile contractions become outer products, then FMAs.
  ConvertVectorToLLVMPassOptions toLLVM;
  toLLVM.vectorContractLowering = vector::VectorContractLowering::OuterProduct;
  toLLVM.vectorTransposeLowering = vector::VectorTransposeLowering::Shuffle16x16;
  // A vector's float sum in a tree of shuffles, not a chain of 16 dependent
  // adds (row reductions end with one per row).
  toLLVM.reassociateFPReductions = true;
  pm.addNestedPass<func::FuncOp>(createConvertVectorToLLVMPass(toLLVM));
  addToLLVM(pm);
}

void nnc::registerCompilerDialects(DialectRegistry &registry) {
  registry.insert<nn::NNDialect, func::FuncDialect, arith::ArithDialect, cf::ControlFlowDialect, linalg::LinalgDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect, tensor::TensorDialect,
                  bufferization::BufferizationDialect, LLVM::LLVMDialect, vector::VectorDialect,
                  affine::AffineDialect, gpu::GPUDialect, NVVM::NVVMDialect>();
  // The CUDA target: PTX through MLIR's NVVM target.
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  // convert-gpu-to-nvvm takes the patterns for the ops in kernels from these.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);
  // Tiling, peeling and subset hoisting query these interfaces.
  linalg::registerTilingInterfaceExternalModels(registry);
  tensor::registerTilingInterfaceExternalModels(registry);
  linalg::registerSubsetOpInterfaceExternalModels(registry);
  tensor::registerSubsetOpInterfaceExternalModels(registry);
  vector::registerSubsetOpInterfaceExternalModels(registry);
  affine::registerValueBoundsOpInterfaceExternalModels(registry);
  arith::registerValueBoundsOpInterfaceExternalModels(registry);
  linalg::registerValueBoundsOpInterfaceExternalModels(registry);
  memref::registerValueBoundsOpInterfaceExternalModels(registry);
  scf::registerValueBoundsOpInterfaceExternalModels(registry);
  tensor::registerValueBoundsOpInterfaceExternalModels(registry);
  vector::registerValueBoundsOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
}

void nnc::registerPipelines() {
  CompileOptions options;
  PassPipelineRegistration<>("nnc-graph", "nnc's graph stage (nn -> nn)",
                             [=](OpPassManager &pm) { buildGraphPipeline(pm, options); });
  PassPipelineRegistration<>("nnc-lower", "nnc's lower stage (nn -> linalg on tensors)",
                             [=](OpPassManager &pm) { buildLowerPipeline(pm, options); });
  PassPipelineRegistration<>("nnc-cpu-bufferize", "CPU codegen: tensors to planned buffers",
                             [=](OpPassManager &pm) { buildCPUBufferizePipeline(pm, options); });
  PassPipelineRegistration<>("nnc-cpu-llvm", "CPU codegen: buffers to the LLVM dialect",
                             [=](OpPassManager &pm) { buildCPULLVMPipeline(pm, options); });
  PassPipelineRegistration<>("nnc-cuda-bufferize", "CUDA codegen: tensors to planned buffers",
                             [=](OpPassManager &pm) { buildCUDABufferizePipeline(pm, options); });
  PassPipelineRegistration<>("nnc-cuda-kernels", "CUDA codegen: buffers to launches and PTX",
                             [=](OpPassManager &pm) { buildCUDAKernelPipeline(pm, options); });
  PassPipelineRegistration<>("nnc-cuda-host", "CUDA codegen: host code to the LLVM dialect",
                             [=](OpPassManager &pm) { buildCUDAHostLLVMPipeline(pm, options); });
}
