/*===- bad_module.c - modules that break the nnc ABI, one way per build ---===*
 *
 * Built once per BAD_* macro (see CMakeLists.txt); each variant must make
 * nnc_module_load or nnc_session_create fail with a clear status.
 *
 *===----------------------------------------------------------------------===*/

#include "nnc/abi.h"

#include <stddef.h>

static int32_t entry(void *const *inputs, void *const *outputs, void *workspace,
                     const nnc_abi_context_t *context) {
  (void)inputs;
  (void)outputs;
  (void)workspace;
  (void)context;
  return 0;
}

#if defined(BAD_UNRESOLVED)
/* Defined nowhere: RTLD_NOW must refuse the library. */
extern void nnc_test_undefined_symbol(void);
void (*volatile nnc_test_use)(void) = nnc_test_undefined_symbol;
#endif

static const int64_t kShape[] = {
#if defined(BAD_DIM)
    -5,
#else
    2,
#endif
    3};

static const nnc_abi_tensor_t kTensors[] = {{"x",
#if defined(BAD_DTYPE)
                                             42,
#else
                                             NNC_DTYPE_F32,
#endif
                                             2, kShape}};

#if defined(BAD_SHAPE_INPUTS)
/* A shape input past the function's one input. */
static int32_t prepare(const int64_t *input_dims, void *const *inputs, int64_t *output_dims,
                       uint64_t *workspace_size) {
  (void)input_dims;
  (void)inputs;
  (void)output_dims;
  *workspace_size = 0;
  return 0;
}
static const int32_t kShapeInputs[] = {1};
#endif

#if defined(BAD_KERNEL_TABLE)
/* A kernel without its node list. */
static const nnc_abi_kernel_t kKernels[] = {{"parallel loop", NULL, 1, 1, 1, 0}};
#endif

static const nnc_abi_function_t kFunctions[] = {{"main",
#if defined(BAD_NO_ENTRY)
                                                 NULL,
#else
                                                 entry,
#endif
                                                 1, 1, kTensors, kTensors,
#if defined(BAD_HUGE_WORKSPACE)
                                                 (uint64_t)1 << 62,
#else
                                                 0,
#endif
#if defined(BAD_ALIGNMENT)
                                                 48,
#else
                                                 64,
#endif
#if defined(BAD_KERNEL_COUNT)
                                                 -1, NULL
#elif defined(BAD_KERNEL_TABLE)
                                                 1, kKernels
#elif defined(BAD_SHAPE_INPUTS)
                                                 0, NULL, prepare, 0, NULL, 1, kShapeInputs
#else
                                                 0, NULL
#endif
                                                 }
#if defined(BAD_DUPLICATE_NAME)
                                                 ,
                                                 {"main", entry, 1, 1, kTensors, kTensors, 0, 64}
#endif
};

#if defined(BAD_CUDA_CHIP) || defined(BAD_CUDA_NO_IMAGE)
static const char *const kKernelNames[] = {"kernel"};
#endif
#if defined(BAD_CUDA_CHIP)
static const nnc_abi_cuda_image_t kImages[] = {{"compute_90", ".version 8.0\n", 13}};
#endif

static const nnc_abi_module_t kModule = {
#if defined(BAD_VERSION)
    99,
#else
    NNC_ABI_VERSION,
#endif
#if defined(BAD_CPU_FEATURES)
    /* A bit no runtime knows yet (a newer compiler's). */
    1u << 31,
#else
    0,
#endif
    "nnc-test 1.0",
#if defined(BAD_NO_TARGET)
    NULL,
#elif defined(BAD_CUDA_NO_IMAGE) || defined(BAD_CUDA_CHIP)
    "cuda",
#else
    "cpu",
#endif
    "generic", (int32_t)(sizeof(kFunctions) / sizeof(kFunctions[0])), kFunctions, 0,
#if defined(BAD_CUDA_CHIP)
    /* A virtual architecture's name, not a chip's. */
    NULL, 0, NULL, 1, kImages,
#elif defined(BAD_CUDA_NO_IMAGE)
    /* A kernel, but no image to take it from. */
    NULL, 1, kKernelNames, 0, NULL,
#elif defined(BAD_CPU_PRECISION)
    /* Tensor-core precision on a CPU module. */
    NULL, 0, NULL, 0, NULL, NULL, "tf32",
#endif
};

__attribute__((visibility("default"))) const nnc_abi_module_t *nnc_module_v1(void) {
#if defined(BAD_NULL_DESCRIPTOR)
  return NULL;
#else
  return &kModule;
#endif
}
