/*===- fake_cuda.h - the test-only CUDA driver's controls -----------------===*
 *
 * libfakecuda.so implements the CUDA driver entry points the runtime uses on
 * host memory, so the runtime's CUDA device is tested without a GPU (point
 * NNC_CUDA_DRIVER at it). "Device" addresses are host addresses; a kernel
 * launch runs a host function standing in for the kernel, if one is provided;
 * every call is recorded. Events time on a fake GPU clock on which each kernel
 * takes one microsecond per block.
 *
 * Configured by the environment, read at each call:
 *   NNC_FAKE_CUDA_DEVICES   number of GPUs (default 1; 0: none)
 *   NNC_FAKE_CUDA_CC        compute capability, "major.minor" (default "9.0")
 *   NNC_FAKE_CUDA_FAIL      "call[:code][@n]", comma-separated: the call
 *                           returns code (default 999, CUDA_ERROR_UNKNOWN),
 *                           on its n-th call since the last reset only if @n
 *                           is given
 *   NNC_FAKE_CUDA_KERNELS   a shared library whose nnc_fake_kernel_<name>
 *                           functions (nnc_fake_cuda_kernel_fn) run kernel
 *                           <name>; without one, launches only record
 *   NNC_FAKE_CUDA_LOG       a file each recorded call is appended to
 *   NNC_FAKE_CUDA_LEAK      bytes each graph launch leaves in use on the
 *                           device (cuMemGetInfo_v2): a runtime leaking per
 *                           run, for the tests of the checks that catch it
 *   NNC_FAKE_CUDA_RECORD    "0": keep no calls in memory (nnc_fake_cuda_log
 *                           then stays empty), for long runs whose memory
 *                           is measured (nnc-stress)
 *
 * Like the real driver, it checks what it can: a current context for calls
 * that need one, copies within allocations, PTX whose .target the device
 * runs (else CUDA_ERROR_INVALID_PTX with a ptxas-like log), kernels that the
 * PTX defines, launch shapes, the dynamic shared memory opt-in, and no
 * synchronization or copies while a stream is captured.
 *
 *===----------------------------------------------------------------------===*/

#ifndef NNC_FAKE_CUDA_H
#define NNC_FAKE_CUDA_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnc_fake_cuda_launch {
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_bytes;
} nnc_fake_cuda_launch_t;

/* A kernel's host stand-in: runs the whole grid. params as cuLaunchKernel
 * received them (or, replaying a graph, copies of their values). */
typedef void (*nnc_fake_cuda_kernel_fn)(const nnc_fake_cuda_launch_t *launch, void **params);

/* Clears the log and the call counts; objects alive stay alive. */
void nnc_fake_cuda_reset(void);

/* The calls since the last reset, one line each: "<call> <details> -> <result>". */
const char *nnc_fake_cuda_log(void);

/* How many times `call` was made since the last reset. */
long nnc_fake_cuda_calls(const char *call);

/* Objects alive now: "allocations", "streams", "modules", "contexts" (primary
 * context references), "graphs", "graph_execs", "events"; -1 for another
 * name. */
long nnc_fake_cuda_live(const char *kind);

#ifdef __cplusplus
}
#endif

#endif /* NNC_FAKE_CUDA_H */
