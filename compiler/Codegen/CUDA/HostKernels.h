//===- HostKernels.h - CUDA kernels' LLVM IR rewritten for the host -*- C++ -*-===//
//
// The cuda-emulated device runs a CUDA module's kernels on the CPU from a
// second image of them: their LLVM IR as optimized for the NVPTX back end,
// rewritten so that the host's back end compiles it and the runtime's
// emulator runs it (runtime/include/nnc/abi.h, nnc_abi_cuda_thread_t).
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_CODEGEN_CUDA_HOSTKERNELS_H
#define NNC_COMPILER_CODEGEN_CUDA_HOSTKERNELS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace nnc {

/// The global `nnc_abi_cuda_host_kernel_t` describing kernel `kernel` in a
/// rewritten module: its host entry, flags, static shared memory and launch
/// bounds. External, so that the artifact (or a hand-written test module)
/// can gather them into the descriptor's table.
inline std::string hostKernelSymbol(llvm::StringRef kernel) {
  return ("nnc_host_kernel_" + kernel).str();
}

/// Rewrites `module`, NVPTX kernels (functions of the ptx_kernel calling
/// convention) and the device functions they call, for the host:
/// - every defined function takes the thread's state (nnc_abi_cuda_thread_t *)
///   as a trailing argument;
/// - special registers become loads from the state, barriers and warp
///   collectives calls through its hooks, NVVM math intrinsics the generic
///   LLVM ones; any other NVVM intrinsic, and any call of an undefined
///   function, is an error naming it;
/// - shared (addrspace 3) variables become offsets into the block's shared
///   memory, which the state points to;
/// - NVVM-only attributes and metadata go, as do function attributes inferred
///   from the intrinsics' semantics (memory effects, nosync, ...);
/// - each kernel K gets `void entry(void **params, ptr thread)` and a global
///   hostKernelSymbol(K).
/// The target triple and data layout are left to the caller (the host's).
llvm::Error rewriteKernelsForHost(llvm::Module &module);

} // namespace nnc

#endif // NNC_COMPILER_CODEGEN_CUDA_HOSTKERNELS_H
