//===- CUDA.h - names shared by the CUDA codegen and the artifact -*- C++ -*-===//

#ifndef NNC_COMPILER_CODEGEN_CUDA_CUDA_H
#define NNC_COMPILER_CODEGEN_CUDA_CUDA_H

namespace nnc {

/// The global holding a CUDA module's constants, uploaded by the runtime.
inline constexpr char kConstantsGlobal[] = "nnc_constants";
/// On a public function: bytes of its trailing constants argument.
inline constexpr char kConstantsSizeAttr[] = "nnc.constants_size";
/// On the module: chip name -> PTX text of every kernel.
inline constexpr char kCUDAImagesAttr[] = "nnc.cuda_images";
/// On the module: the kernel names; a launch names its kernel by index here.
inline constexpr char kCUDAKernelsAttr[] = "nnc.cuda_kernels";
/// On the module: the kernels rewritten for the host, as LLVM bitcode
/// (compiler/Codegen/CUDA/HostKernels.h), for the cuda-emulated device.
inline constexpr char kCUDAHostImageAttr[] = "nnc.cuda_host_image";
/// On a gpu.launch_func: bytes of shared memory the kernel declares (its
/// workgroup buffers, each 16-byte aligned), for the report.
inline constexpr char kStaticSharedAttr[] = "nnc.static_shared_bytes";
/// The gpu.module (then gpu.binary) holding every kernel.
inline constexpr char kKernelModule[] = "nnc_kernels";

} // namespace nnc

#endif // NNC_COMPILER_CODEGEN_CUDA_CUDA_H
