/*===- collectives_module.c - host code for collectives.mlir's kernels ----===*
 *
 * The part of a CUDA module nnc would generate around the kernels of
 * collectives.mlir: the descriptor and entry functions launching them
 * through the runtime's hook. Linked with the kernels' host image (the
 * rewritten bitcode), it runs on the cuda-emulated device; its PTX image is
 * a placeholder, since no GPU runs it.
 *
 *===----------------------------------------------------------------------===*/

#include "nnc/abi.h"

#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

/* The records the rewrite defines, gathered as the artifact does. */
extern const nnc_abi_cuda_host_kernel_t nnc_host_kernel_collectives, nnc_host_kernel_racy,
    nnc_host_kernel_mma, nnc_host_kernel_mma_exit, nnc_host_kernel_mma_diverge;
static nnc_abi_cuda_host_kernel_t kHostKernels[5];
__attribute__((constructor)) static void gather(void) {
  kHostKernels[0] = nnc_host_kernel_collectives;
  kHostKernels[1] = nnc_host_kernel_racy;
  kHostKernels[2] = nnc_host_kernel_mma;
  kHostKernels[3] = nnc_host_kernel_mma_exit;
  kHostKernels[4] = nnc_host_kernel_mma_diverge;
}
static const char *const kKernels[] = {"collectives", "racy", "mma", "mma_exit", "mma_diverge"};

static const char kPtx[] = ".version 8.0\n.target sm_80\n.address_size 64\n";
static const nnc_abi_cuda_image_t kImages[] = {{"sm_80", kPtx, sizeof(kPtx) - 1}};

/* y: memref<4x64xf32> expanded as the NVVM kernels take it. */
static int32_t launch(const nnc_abi_context_t *context, int32_t kernel, uint32_t block,
                      void *y) {
  int64_t offset = 0, size0 = 4, size1 = 64, stride0 = 64, stride1 = 1;
  void *params[] = {&y, &y, &offset, &size0, &size1, &stride0, &stride1};
  const nnc_abi_cuda_t *cuda = context->cuda;
  return cuda->launch(cuda->device, kernel, 1, 1, 1, block, 1, 1, 0, params);
}

static int32_t main_entry(void *const *inputs, void *const *outputs, void *workspace,
                          const nnc_abi_context_t *context) {
  (void)inputs;
  (void)workspace;
  return launch(context, 0, 64, outputs[0]);
}

static int32_t racy_entry(void *const *inputs, void *const *outputs, void *workspace,
                          const nnc_abi_context_t *context) {
  (void)inputs;
  (void)workspace;
  return launch(context, 1, 64, outputs[0]);
}

/* Blocks of 128: more than the 64 the kernel was compiled for. */
static int32_t oversized_entry(void *const *inputs, void *const *outputs, void *workspace,
                               const nnc_abi_context_t *context) {
  (void)inputs;
  (void)workspace;
  return launch(context, 0, 128, outputs[0]);
}

/* mma.sync: two whole warps; a block of 48, whose second warp has 16
 * threads; and a warp whose lane 0 exits first. */
static int32_t mma_entry(void *const *inputs, void *const *outputs, void *workspace,
                         const nnc_abi_context_t *context) {
  (void)inputs;
  (void)workspace;
  return launch(context, 2, 64, outputs[0]);
}

static int32_t mma_partial_entry(void *const *inputs, void *const *outputs, void *workspace,
                                 const nnc_abi_context_t *context) {
  (void)inputs;
  (void)workspace;
  return launch(context, 2, 48, outputs[0]);
}

static int32_t mma_exit_entry(void *const *inputs, void *const *outputs, void *workspace,
                              const nnc_abi_context_t *context) {
  (void)inputs;
  (void)workspace;
  return launch(context, 3, 32, outputs[0]);
}

static int32_t mma_diverge_entry(void *const *inputs, void *const *outputs, void *workspace,
                                 const nnc_abi_context_t *context) {
  (void)inputs;
  (void)workspace;
  return launch(context, 4, 32, outputs[0]);
}

static const int64_t kShape[] = {4, 64};
static const nnc_abi_tensor_t kY[] = {{"y", NNC_DTYPE_F32, 2, kShape}};
static const nnc_abi_function_t kFunctions[] = {
    {"main", main_entry, 0, 1, 0, kY, 0, 0},
    {"racy", racy_entry, 0, 1, 0, kY, 0, 0},
    {"oversized", oversized_entry, 0, 1, 0, kY, 0, 0},
    {"mma", mma_entry, 0, 1, 0, kY, 0, 0},
    {"mma_partial", mma_partial_entry, 0, 1, 0, kY, 0, 0},
    {"mma_exit", mma_exit_entry, 0, 1, 0, kY, 0, 0},
    {"mma_diverge", mma_diverge_entry, 0, 1, 0, kY, 0, 0},
};

static const nnc_abi_module_t kModule = {
    NNC_ABI_VERSION, 0, "nnc-test 1.0", "cuda", "generic", 7, kFunctions, 0, 0, 5, kKernels, 1,
    kImages,         kHostKernels};

EXPORT const nnc_abi_module_t *nnc_module_v1(void) { return &kModule; }
