/*===- cuda_module.c - a hand-written CUDA module implementing the nnc ABI -===*
 *
 * Stands in for compiler output in the runtime's CUDA tests: host code that
 * launches kernels through context->cuda with device addresses, constants,
 * PTX images for three chips, and host versions of the kernels
 * (nnc_fake_kernel_<name>) that the fake driver runs in place of the PTX, so
 * that real numbers flow from input to output without a GPU, and the same
 * numbers come out of a GPU; and the host images the cuda-emulated device
 * runs (one CUDA thread per call, as the compiler's are). Built a second time
 * with MISLABELED_IMAGE: its sm_80 image holds sm_90 PTX, which a JIT for an
 * sm_8x device rejects; and with NO_HOST_IMAGE, without host images.
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

/* One PTX text per chip, the same kernels for each (checked with ptxas
 * -arch=sm_80/sm_90/sm_90a -Werror): a GPU runs them, the fake driver reads
 * the .target and each .entry's parameters and runs the host versions below
 * instead. */
#define PTX(target)                                                                              \
  ".version 8.0\n.target " target "\n.address_size 64\n\n"                                       \
  ".visible .entry zero_count(\n"                                                                \
  "\t.param .u64 zero_count_param_0\n"                                                           \
  ")\n"                                                                                          \
  "{\n"                                                                                          \
  "\t.reg .b32 \t%r<2>;\n"                                                                       \
  "\t.reg .b64 \t%rd<3>;\n"                                                                      \
  "\n"                                                                                           \
  "\tld.param.u64 \t%rd1, [zero_count_param_0];\n"                                               \
  "\tcvta.to.global.u64 \t%rd2, %rd1;\n"                                                         \
  "\tmov.u32 \t%r1, 0;\n"                                                                        \
  "\tst.global.u32 \t[%rd2], %r1;\n"                                                             \
  "\tret;\n"                                                                                     \
  "}\n"                                                                                          \
  "\n"                                                                                           \
  ".visible .entry affine(\n"                                                                    \
  "\t.param .u64 affine_param_0,\n"                                                              \
  "\t.param .u64 affine_param_1,\n"                                                              \
  "\t.param .u64 affine_param_2,\n"                                                              \
  "\t.param .u64 affine_param_3,\n"                                                              \
  "\t.param .u64 affine_param_4,\n"                                                              \
  "\t.param .u32 affine_param_5\n"                                                               \
  ")\n"                                                                                          \
  "{\n"                                                                                          \
  "\t.reg .pred \t%p<2>;\n"                                                                      \
  "\t.reg .b32 \t%r<6>;\n"                                                                       \
  "\t.reg .f32 \t%f<7>;\n"                                                                       \
  "\t.reg .b64 \t%rd<16>;\n"                                                                     \
  "\n"                                                                                           \
  "\tld.param.u32 \t%r1, [affine_param_5];\n"                                                    \
  "\tmov.u32 \t%r2, %ctaid.x;\n"                                                                 \
  "\tmov.u32 \t%r3, %ntid.x;\n"                                                                  \
  "\tmov.u32 \t%r4, %tid.x;\n"                                                                   \
  "\tmad.lo.s32 \t%r5, %r2, %r3, %r4;\n"                                                         \
  "\tsetp.ge.u32 \t%p1, %r5, %r1;\n"                                                             \
  "\t@%p1 bra \t$affine_done;\n"                                                                 \
  "\tld.param.u64 \t%rd1, [affine_param_0];\n"                                                   \
  "\tld.param.u64 \t%rd2, [affine_param_1];\n"                                                   \
  "\tld.param.u64 \t%rd3, [affine_param_2];\n"                                                   \
  "\tld.param.u64 \t%rd4, [affine_param_3];\n"                                                   \
  "\tld.param.u64 \t%rd5, [affine_param_4];\n"                                                   \
  "\tcvta.to.global.u64 \t%rd6, %rd1;\n"                                                         \
  "\tcvta.to.global.u64 \t%rd7, %rd2;\n"                                                         \
  "\tcvta.to.global.u64 \t%rd8, %rd3;\n"                                                         \
  "\tcvta.to.global.u64 \t%rd9, %rd4;\n"                                                         \
  "\tcvta.to.global.u64 \t%rd10, %rd5;\n"                                                        \
  "\tmul.wide.u32 \t%rd11, %r5, 4;\n"                                                            \
  "\tadd.s64 \t%rd12, %rd6, %rd11;\n"                                                            \
  "\tld.global.f32 \t%f1, [%rd12];\n"                                                            \
  "\tld.global.f32 \t%f2, [%rd7];\n"                                                             \
  "\tadd.s64 \t%rd13, %rd8, %rd11;\n"                                                            \
  "\tld.global.f32 \t%f3, [%rd13];\n"                                                            \
  "\tadd.s64 \t%rd14, %rd9, %rd11;\n"                                                            \
  "\tld.global.f32 \t%f4, [%rd14];\n"                                                            \
  "\tmul.rn.f32 \t%f5, %f2, %f1;\n"                                                              \
  "\tmul.rn.f32 \t%f6, %f5, %f3;\n"                                                              \
  "\tadd.rn.f32 \t%f6, %f6, %f4;\n"                                                              \
  "\tadd.s64 \t%rd15, %rd10, %rd11;\n"                                                           \
  "\tst.global.f32 \t[%rd15], %f6;\n"                                                            \
  "$affine_done:\n"                                                                              \
  "\tret;\n"                                                                                     \
  "}\n"                                                                                          \
  "\n"                                                                                           \
  ".visible .entry relu_count(\n"                                                                \
  "\t.param .u64 relu_count_param_0,\n"                                                          \
  "\t.param .u64 relu_count_param_1,\n"                                                          \
  "\t.param .u64 relu_count_param_2,\n"                                                          \
  "\t.param .u32 relu_count_param_3\n"                                                           \
  ")\n"                                                                                          \
  "{\n"                                                                                          \
  "\t.reg .pred \t%p<3>;\n"                                                                      \
  "\t.reg .b32 \t%r<7>;\n"                                                                       \
  "\t.reg .f32 \t%f<3>;\n"                                                                       \
  "\t.reg .b64 \t%rd<10>;\n"                                                                     \
  "\n"                                                                                           \
  "\tld.param.u32 \t%r1, [relu_count_param_3];\n"                                                \
  "\tmov.u32 \t%r2, %ctaid.x;\n"                                                                 \
  "\tmov.u32 \t%r3, %ntid.x;\n"                                                                  \
  "\tmov.u32 \t%r4, %tid.x;\n"                                                                   \
  "\tmad.lo.s32 \t%r5, %r2, %r3, %r4;\n"                                                         \
  "\tsetp.ge.u32 \t%p1, %r5, %r1;\n"                                                             \
  "\t@%p1 bra \t$relu_done;\n"                                                                   \
  "\tld.param.u64 \t%rd1, [relu_count_param_0];\n"                                               \
  "\tld.param.u64 \t%rd2, [relu_count_param_1];\n"                                               \
  "\tld.param.u64 \t%rd3, [relu_count_param_2];\n"                                               \
  "\tcvta.to.global.u64 \t%rd4, %rd1;\n"                                                         \
  "\tcvta.to.global.u64 \t%rd5, %rd2;\n"                                                         \
  "\tcvta.to.global.u64 \t%rd6, %rd3;\n"                                                         \
  "\tmul.wide.u32 \t%rd7, %r5, 4;\n"                                                             \
  "\tadd.s64 \t%rd8, %rd4, %rd7;\n"                                                              \
  "\tld.global.f32 \t%f1, [%rd8];\n"                                                             \
  "\tsetp.gt.f32 \t%p2, %f1, 0f00000000;\n"                                                      \
  "\tselp.f32 \t%f2, %f1, 0f00000000, %p2;\n"                                                    \
  "\tadd.s64 \t%rd9, %rd5, %rd7;\n"                                                              \
  "\tst.global.f32 \t[%rd9], %f2;\n"                                                             \
  "\t@!%p2 bra \t$relu_done;\n"                                                                  \
  "\tatom.global.add.u32 \t%r6, [%rd6], 1;\n"                                                    \
  "$relu_done:\n"                                                                                \
  "\tret;\n"                                                                                     \
  "}\n"                                                                                          \
  "\n"                                                                                           \
  ".visible .entry fill(\n"                                                                      \
  "\t.param .u64 fill_param_0,\n"                                                                \
  "\t.param .u32 fill_param_1,\n"                                                                \
  "\t.param .f32 fill_param_2\n"                                                                 \
  ")\n"                                                                                          \
  "{\n"                                                                                          \
  "\t.reg .pred \t%p<2>;\n"                                                                      \
  "\t.reg .b32 \t%r<6>;\n"                                                                       \
  "\t.reg .f32 \t%f<2>;\n"                                                                       \
  "\t.reg .b64 \t%rd<5>;\n"                                                                      \
  "\n"                                                                                           \
  "\tld.param.u32 \t%r1, [fill_param_1];\n"                                                      \
  "\tmov.u32 \t%r2, %ctaid.x;\n"                                                                 \
  "\tmov.u32 \t%r3, %ntid.x;\n"                                                                  \
  "\tmov.u32 \t%r4, %tid.x;\n"                                                                   \
  "\tmad.lo.s32 \t%r5, %r2, %r3, %r4;\n"                                                         \
  "\tsetp.ge.u32 \t%p1, %r5, %r1;\n"                                                             \
  "\t@%p1 bra \t$fill_done;\n"                                                                   \
  "\tld.param.u64 \t%rd1, [fill_param_0];\n"                                                     \
  "\tld.param.f32 \t%f1, [fill_param_2];\n"                                                      \
  "\tcvta.to.global.u64 \t%rd2, %rd1;\n"                                                         \
  "\tmul.wide.u32 \t%rd3, %r5, 4;\n"                                                             \
  "\tadd.s64 \t%rd4, %rd2, %rd3;\n"                                                              \
  "\tst.global.f32 \t[%rd4], %f1;\n"                                                             \
  "$fill_done:\n"                                                                                \
  "\tret;\n"                                                                                     \
  "}\n"

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

/* The host images for the cuda-emulated device: one thread per call. */
static uint32_t globalThread(const nnc_abi_cuda_thread_t *thread) {
  return thread->ctaid[0] * thread->ntid[0] + thread->tid[0];
}

static void host_zero_count(void **params, nnc_abi_cuda_thread_t *thread) {
  (void)thread;
  **(int32_t **)params[0] = 0;
}

static void host_affine(void **params, nnc_abi_cuda_thread_t *thread) {
  const float *x = *(float **)params[0], *scale = *(float **)params[1];
  const float *w = *(float **)params[2], *b = *(float **)params[3];
  float *t = *(float **)params[4];
  uint32_t n = *(uint32_t *)params[5], i = globalThread(thread);
  if (i < n)
    t[i] = *scale * x[i] * w[i] + b[i];
}

static void host_relu_count(void **params, nnc_abi_cuda_thread_t *thread) {
  const float *t = *(float **)params[0];
  float *y = *(float **)params[1];
  int32_t *count = *(int32_t **)params[2];
  uint32_t n = *(uint32_t *)params[3], i = globalThread(thread);
  if (i < n) {
    y[i] = t[i] > 0 ? t[i] : 0;
    if (t[i] > 0)
      __atomic_fetch_add(count, 1, __ATOMIC_RELAXED); /* blocks run on several threads */
  }
}

static void host_fill(void **params, nnc_abi_cuda_thread_t *thread) {
  float *y = *(float **)params[0];
  uint32_t n = *(uint32_t *)params[1], i = globalThread(thread);
  if (i < n)
    y[i] = *(float *)params[2];
}

/* Any block of up to 1024 threads, any grid; no shared memory. */
#define HOST_KERNEL(entry)                                                                     \
  { entry, 0, 0, {1, 1, 1}, {1024, 1024, 64}, {1, 1, 1}, {0x7fffffff, 65535, 65535} }
static const nnc_abi_cuda_host_kernel_t kHostKernels[] = {
    HOST_KERNEL(host_zero_count), HOST_KERNEL(host_affine), HOST_KERNEL(host_relu_count),
    HOST_KERNEL(host_fill)};

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

/* Kernel k of main starts: nnc --profile's mark, where the function has them. */
static void mark(const nnc_abi_context_t *context, int marked, int32_t k) {
  if (marked && context->profile)
    context->profile(context->profile_state, k);
}

static int32_t run_main(void *const *inputs, void *const *outputs, void *workspace,
                        const nnc_abi_context_t *context, int marked) {
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
  mark(context, marked, 0);
  if ((result = cuda->launch(cuda->device, kZeroCount, 1, 1, 1, 1, 1, 1, 0, zeroParams)))
    return result;
  mark(context, marked, 1);
  if ((result = cuda->launch(cuda->device, kAffine, blocks, 1, 1, 128, 1, 1, 0, affineParams)))
    return result;
  mark(context, marked, 2);
  result = cuda->launch(cuda->device, kReluCount, blocks, 1, 1, 128, 1, 1, 0, reluParams);
  mark(context, marked, 3);
  return result;
}

static int32_t main_entry(void *const *inputs, void *const *outputs, void *workspace,
                          const nnc_abi_context_t *context) {
  return run_main(inputs, outputs, workspace, context, 0);
}

/* main with nnc --profile's marks: one per launch, then the end. */
static int32_t profiled_entry(void *const *inputs, void *const *outputs, void *workspace,
                              const nnc_abi_context_t *context) {
  return run_main(inputs, outputs, workspace, context, 1);
}

static const nnc_abi_kernel_t kProfiledKernels[] = {{"zero", "", 0, 0, 4, 0},
                                                    {"affine", "", 0, 0, 0, 0},
                                                    {"relu", "", 0, 0, 0, 0}};

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

/* As nnc's host code: it does not look at what a launch returns; the failed
 * launch must still fail the run. */
static int32_t ignored_failure_entry(void *const *inputs, void *const *outputs, void *workspace,
                                     const nnc_abi_context_t *context) {
  (void)bad_launch_entry(inputs, outputs, workspace, context);
  return 0;
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
    {"ignored_failure", ignored_failure_entry, 0, 1, NULL, kSharedOutputs, 0, 0},
    {"profiled", profiled_entry, 2, 2, kMainInputs, kMainOutputs, N * sizeof(float), 512,
     COUNT(kProfiledKernels), kProfiledKernels},
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
                                         kImages,
#if defined(NO_HOST_IMAGE)
                                         NULL
#else
                                         kHostKernels
#endif
};

EXPORT const nnc_abi_module_t *nnc_module_v1(void) { return &kModule; }
