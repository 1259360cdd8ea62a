/*===- cuda_module.c - a hand-written CUDA module implementing the nnc ABI -===*
 *
 * Stands in for compiler output in the runtime's CUDA tests: host code that
 * launches kernels through context->cuda with device addresses, constants,
 * PTX images for three chips, and host versions of the kernels
 * (nnc_fake_kernel_<name>) that the fake driver runs in place of the PTX, so
 * that real numbers flow from input to output. Built a second time with
 * MISLABELED_IMAGE: its sm_80 image holds sm_90 PTX, which a JIT for an
 * sm_8x device rejects.
 *
 *===----------------------------------------------------------------------===*/

#include "nnc/abi.h"

#include "../fake_cuda/fake_cuda.h"

#include <stddef.h>
#include <stdint.h>

#define COUNT(array) ((int32_t)(sizeof(array) / sizeof((array)[0])))
#define EXPORT __attribute__((visibility("default")))

/* Error codes the entry points return when the runtime breaks a promise. */
enum { kBadWorkspace = 2, kBadConstants = 3, kFailed = 7 };

/*===- kernels, by index into kKernels -----------------------------------===*/

enum { kZeroCount, kAffine, kReluCount, kFill, kNumKernels };
static const char *const kKernels[] = {"zero_count", "affine", "relu_count", "fill"};

/* One PTX text per chip; the fake driver reads the .target and each .entry
 * with its parameters. The bodies do nothing: the fake runs the host
 * versions below. */
#define PTX(target)                                                                            \
  "//\n// nnc-test: stands in for compiled kernels\n//\n"                                      \
  ".version 8.0\n.target " target "\n.address_size 64\n\n"                                     \
  ".visible .entry zero_count(\n\t.param .u64 zero_count_param_0\n)\n{\n\tret;\n}\n\n"         \
  ".visible .entry affine(\n\t.param .u64 affine_param_0,\n\t.param .u64 affine_param_1,\n"    \
  "\t.param .u64 affine_param_2,\n\t.param .u64 affine_param_3,\n"                             \
  "\t.param .u64 affine_param_4,\n\t.param .u32 affine_param_5\n)\n{\n\tret;\n}\n\n"           \
  ".visible .entry relu_count(\n\t.param .u64 relu_count_param_0,\n"                           \
  "\t.param .u64 relu_count_param_1,\n\t.param .u64 relu_count_param_2,\n"                     \
  "\t.param .u32 relu_count_param_3\n)\n{\n\tret;\n}\n\n"                                      \
  ".visible .entry fill(\n\t.param .u64 fill_param_0,\n\t.param .u32 fill_param_1,\n"          \
  "\t.param .f32 fill_param_2\n)\n{\n\tret;\n}\n"

static const char kPtx80[] = PTX(
#if defined(MISLABELED_IMAGE)
    "sm_90"
#else
    "sm_80"
#endif
);
static const char kPtx90[] = PTX("sm_90");
static const char kPtx90a[] = PTX("sm_90a");

static const nnc_abi_cuda_image_t kImages[] = {
    {"sm_80", kPtx80, sizeof(kPtx80) - 1},
    {"sm_90", kPtx90, sizeof(kPtx90) - 1},
    {"sm_90a", kPtx90a, sizeof(kPtx90a) - 1},
};

/* Host versions: each runs the whole grid, one iteration per CUDA thread. */
#define FOR_EACH_THREAD(launch, i)                                                             \
  for (uint64_t i = 0; i < (uint64_t)(launch)->grid[0] * (launch)->block[0]; ++i)

EXPORT void nnc_fake_kernel_zero_count(const nnc_fake_cuda_launch_t *launch, void **params) {
  (void)launch;
  **(int32_t **)params[0] = 0;
}

EXPORT void nnc_fake_kernel_affine(const nnc_fake_cuda_launch_t *launch, void **params) {
  const float *x = *(float **)params[0], *scale = *(float **)params[1];
  const float *w = *(float **)params[2], *b = *(float **)params[3];
  float *t = *(float **)params[4];
  uint32_t n = *(uint32_t *)params[5];
  FOR_EACH_THREAD(launch, i) {
    if (i < n)
      t[i] = *scale * x[i] * w[i] + b[i];
  }
}

EXPORT void nnc_fake_kernel_relu_count(const nnc_fake_cuda_launch_t *launch, void **params) {
  const float *t = *(float **)params[0];
  float *y = *(float **)params[1];
  int32_t *count = *(int32_t **)params[2];
  uint32_t n = *(uint32_t *)params[3];
  FOR_EACH_THREAD(launch, i) {
    if (i < n) {
      y[i] = t[i] > 0 ? t[i] : 0;
      *count += t[i] > 0;
    }
  }
}

EXPORT void nnc_fake_kernel_fill(const nnc_fake_cuda_launch_t *launch, void **params) {
  float *y = *(float **)params[0];
  uint32_t n = *(uint32_t *)params[1];
  float value = *(float *)params[2];
  FOR_EACH_THREAD(launch, i) {
    if (i < n)
      y[i] = value;
  }
}

/*===- constants: w[N] then b[N] -----------------------------------------===*/

#define N 1000
static float kConstants[2 * N];

/* The formulas the test checks against. */
__attribute__((constructor)) static void fillConstants(void) {
  for (int i = 0; i < N; ++i) {
    kConstants[i] = (float)(i % 7 - 3);
    kConstants[N + i] = 0.25f * (float)(i % 5) - 0.5f;
  }
}

/*===- main: y = relu(scale * x * w + b), positives = count(y > 0) -------===*
 * Three launches in order (the count is zeroed, then accumulated), the
 * intermediate in the workspace. */

static const int64_t kShapeN[] = {N};
static const nnc_abi_tensor_t kMainInputs[] = {{"x", NNC_DTYPE_F32, 1, kShapeN},
                                               {"scale", NNC_DTYPE_F32, 0, NULL}};
static const nnc_abi_tensor_t kMainOutputs[] = {{"y", NNC_DTYPE_F32, 1, kShapeN},
                                                {"positives", NNC_DTYPE_I32, 0, NULL}};

static int32_t main_entry(void *const *inputs, void *const *outputs, void *workspace,
                          const nnc_abi_context_t *context) {
  const nnc_abi_cuda_t *cuda = context->cuda;
  if ((uintptr_t)workspace % 512 != 0)
    return kBadWorkspace;
  if (!cuda->constants)
    return kBadConstants;
  void *x = inputs[0], *scale = inputs[1], *y = outputs[0], *positives = outputs[1];
  const float *w = cuda->constants, *b = w + N;
  float *t = workspace;
  uint32_t n = N, blocks = (N + 127) / 128;
  void *zeroParams[] = {&positives};
  void *affineParams[] = {&x, &scale, &w, &b, &t, &n};
  void *reluParams[] = {&t, &y, &positives, &n};
  int32_t result;
  if ((result = cuda->launch(cuda->device, kZeroCount, 1, 1, 1, 1, 1, 1, 0, zeroParams)))
    return result;
  if ((result = cuda->launch(cuda->device, kAffine, blocks, 1, 1, 128, 1, 1, 0, affineParams)))
    return result;
  return cuda->launch(cuda->device, kReluCount, blocks, 1, 1, 128, 1, 1, 0, reluParams);
}

/*===- shared: y = 2.5 by a kernel asking for 64 KiB of shared memory ----===*/

static const int64_t kShape4[] = {4};
static const nnc_abi_tensor_t kSharedOutputs[] = {{"y", NNC_DTYPE_F32, 1, kShape4}};

static int32_t shared_entry(void *const *inputs, void *const *outputs, void *workspace,
                            const nnc_abi_context_t *context) {
  (void)inputs;
  (void)workspace;
  void *y = outputs[0];
  uint32_t n = 4;
  float value = 2.5f;
  void *params[] = {&y, &n, &value};
  return context->cuda->launch(context->cuda->device, kFill, 1, 1, 1, 32, 1, 1, 64 * 1024,
                               params);
}

/*===- failures: a kernel index out of range, a launch the driver refuses,
 * an entry reporting an error ------------------------------------------===*/

static int32_t bad_kernel_entry(void *const *inputs, void *const *outputs, void *workspace,
                                const nnc_abi_context_t *context) {
  (void)inputs;
  (void)workspace;
  void *y = outputs[0];
  void *params[] = {&y};
  return context->cuda->launch(context->cuda->device, kNumKernels, 1, 1, 1, 1, 1, 1, 0, params);
}

static int32_t bad_launch_entry(void *const *inputs, void *const *outputs, void *workspace,
                                const nnc_abi_context_t *context) {
  (void)inputs;
  (void)workspace;
  void *y = outputs[0];
  uint32_t n = 4;
  float value = 1;
  void *params[] = {&y, &n, &value};
  /* 2048 threads per block: more than any GPU runs. */
  return context->cuda->launch(context->cuda->device, kFill, 1, 1, 1, 2048, 1, 1, 0, params);
}

static int32_t fail_entry(void *const *inputs, void *const *outputs, void *workspace,
                          const nnc_abi_context_t *context) {
  (void)inputs;
  (void)outputs;
  (void)workspace;
  (void)context;
  return kFailed;
}

/*===- the descriptor ----------------------------------------------------===*/

static const nnc_abi_function_t kFunctions[] = {
    {"main", main_entry, 2, 2, kMainInputs, kMainOutputs, N * sizeof(float), 512},
    {"shared", shared_entry, 0, 1, NULL, kSharedOutputs, 0, 0},
    {"bad_kernel", bad_kernel_entry, 0, 1, NULL, kSharedOutputs, 0, 0},
    {"bad_launch", bad_launch_entry, 0, 1, NULL, kSharedOutputs, 0, 0},
    {"fail", fail_entry, 0, 1, NULL, kSharedOutputs, 0, 0},
};

static const nnc_abi_module_t kModule = {NNC_ABI_VERSION,
                                         0,
                                         "nnc-test 1.0",
                                         "cuda",
                                         "generic",
                                         COUNT(kFunctions),
                                         kFunctions,
                                         sizeof(kConstants),
                                         kConstants,
                                         kNumKernels,
                                         kKernels,
                                         COUNT(kImages),
                                         kImages};

EXPORT const nnc_abi_module_t *nnc_module_v1(void) { return &kModule; }
