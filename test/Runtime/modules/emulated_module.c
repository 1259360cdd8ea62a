/*===- emulated_module.c - CUDA kernels for the cuda-emulated device ------===*
 *
 * Hand-written host images (nnc_abi_cuda_host_kernel_t) in the form the
 * compiler emits them, one CUDA thread per call, calling the emulator's
 * hooks where a kernel would use shared memory, __syncthreads, warp
 * shuffles and votes: correct kernels whose results the tests know, and
 * kernels that break CUDA's rules (divergent barriers, a warp divided at a
 * shuffle, a race, a launch beyond the kernel's bounds) for the errors.
 * The module has no PTX worth running: it exists for the emulator.
 *
 *===----------------------------------------------------------------------===*/

#include "nnc/abi.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define COUNT(array) ((int32_t)(sizeof(array) / sizeof((array)[0])))
#define EXPORT __attribute__((visibility("default")))
#define FULL_MASK 0xffffffffu

/*===- helpers standing for what the compiler's rewrite emits ------------===*/

static void syncthreads(nnc_abi_cuda_thread_t *t, int32_t site) {
  t->barrier(t, 0, site, /*aligned=*/1);
}

static uint64_t warp(nnc_abi_cuda_thread_t *t, int32_t op, uint32_t mask, uint32_t a, uint32_t b,
                     uint32_t c) {
  return t->warp(t, op, /*site=*/0, mask, a, b, c);
}

static float shuffleXor(nnc_abi_cuda_thread_t *t, float value, uint32_t offset) {
  uint32_t bits;
  memcpy(&bits, &value, 4);
  bits = (uint32_t)warp(t, NNC_CUDA_WARP_SHFL_BFLY, FULL_MASK, bits, offset, 31);
  memcpy(&value, &bits, 4);
  return value;
}

/*===- kernels -----------------------------------------------------------===*/

/* sums[block] = the sum of the block's 128 values: a butterfly sum in each
 * warp, the four warp sums through shared memory after a barrier. */
static void block_sum(void **params, nnc_abi_cuda_thread_t *t) {
  const float *x = *(float **)params[0];
  float *sums = *(float **)params[1];
  float *partial = (float *)t->shared;
  float v = x[t->ctaid[0] * 128 + t->tid[0]];
  for (uint32_t offset = 16; offset; offset >>= 1)
    v += shuffleXor(t, v, offset);
  if (t->laneid == 0)
    partial[t->tid[0] / 32] = v;
  syncthreads(t, 0);
  if (t->tid[0] == 0)
    sums[t->ctaid[0]] = partial[0] + partial[1] + partial[2] + partial[3];
}

/* Each collective's result per lane, in rows of 32 (see the test). */
static void collectives(void **params, nnc_abi_cuda_thread_t *t) {
  int32_t *out = *(int32_t **)params[0];
  uint32_t lane = t->laneid, value = lane * 10;
  out[0 * 32 + lane] = (int32_t)warp(t, NNC_CUDA_WARP_SHFL_UP, FULL_MASK, value, 3, 0);
  uint64_t down = warp(t, NNC_CUDA_WARP_SHFL_DOWN, FULL_MASK, value, 5, 31);
  out[1 * 32 + lane] = (int32_t)down;
  out[2 * 32 + lane] = (int32_t)(down >> 32); /* in range */
  out[3 * 32 + lane] = (int32_t)warp(t, NNC_CUDA_WARP_SHFL_IDX, FULL_MASK, value, 7, 31);
  /* Segments of 8 lanes (width 8): lane 2 of each. */
  out[4 * 32 + lane] =
      (int32_t)warp(t, NNC_CUDA_WARP_SHFL_IDX, FULL_MASK, value, 2, (24u << 8) | 7);
  out[5 * 32 + lane] = (int32_t)warp(t, NNC_CUDA_WARP_VOTE_BALLOT, FULL_MASK, lane % 3 == 0, 0, 0);
  out[6 * 32 + lane] = (int32_t)(warp(t, NNC_CUDA_WARP_VOTE_ALL, FULL_MASK, lane < 40, 0, 0) +
                                 2 * warp(t, NNC_CUDA_WARP_VOTE_ANY, FULL_MASK, lane == 31, 0, 0) +
                                 4 * warp(t, NNC_CUDA_WARP_VOTE_UNI, FULL_MASK, lane < 16, 0, 0));
}

/* Threads 0-15 return before a __syncthreads that 16-63 reach: warp 0 is
 * divided at it. */
static void early_exit(void **params, nnc_abi_cuda_thread_t *t) {
  float *y = *(float **)params[0];
  if (t->tid[0] < 16)
    return;
  syncthreads(t, 1);
  y[t->tid[0]] = 1;
}

/* Warp 1 returns as a whole, which PTX allows: the barrier releases warp 0. */
static void warp_exit(void **params, nnc_abi_cuda_thread_t *t) {
  float *y = *(float **)params[0];
  if (t->tid[0] >= 32)
    return;
  syncthreads(t, 2);
  y[t->tid[0]] = 2;
}

/* Two __syncthreads, one per branch. */
static void two_barriers(void **params, nnc_abi_cuda_thread_t *t) {
  float *y = *(float **)params[0];
  if (t->tid[0] < 32)
    syncthreads(t, 3);
  else
    syncthreads(t, 4);
  y[t->tid[0]] = 3;
}

/* Lanes 16-31 wait at a barrier while 0-15 shuffle with all 32. */
static void divided_warp(void **params, nnc_abi_cuda_thread_t *t) {
  float *y = *(float **)params[0];
  if (t->laneid < 16)
    y[t->tid[0]] = shuffleXor(t, 1.0f, 16);
  else
    syncthreads(t, 5);
}

/* y[i] = x[i + 1] through shared memory: without the barrier (racy) a
 * thread may read its neighbour's slot before the neighbour wrote it. */
static void shift(void **params, nnc_abi_cuda_thread_t *t, int barrier) {
  const float *x = *(float **)params[0];
  float *y = *(float **)params[1];
  float *slots = (float *)t->shared;
  uint32_t i = t->tid[0];
  slots[i] = x[i];
  if (barrier)
    syncthreads(t, 6);
  y[i] = slots[(i + 1) % 64];
}
static void racy_shift(void **params, nnc_abi_cuda_thread_t *t) { shift(params, t, 0); }
static void synced_shift(void **params, nnc_abi_cuda_thread_t *t) { shift(params, t, 1); }

enum {
  kBlockSum,
  kCollectives,
  kEarlyExit,
  kWarpExit,
  kTwoBarriers,
  kDividedWarp,
  kRacyShift,
  kSyncedShift,
  kNumKernels
};
static const char *const kKernels[] = {"block_sum",    "collectives",  "early_exit",
                                       "warp_exit",    "two_barriers", "divided_warp",
                                       "racy_shift",   "synced_shift"};

#define COLLECTIVES NNC_CUDA_HOST_KERNEL_COLLECTIVES
#define ANY_GRID {1, 1, 1}, {0x7fffffff, 65535, 65535}
/* Blocks of exactly n threads (a kernel compiled with reqntid n). */
#define KERNEL(entry, flags, shared, n) {entry, flags, shared, {n, 1, 1}, {n, 1, 1}, ANY_GRID}
static const nnc_abi_cuda_host_kernel_t kHostKernels[] = {
    KERNEL(block_sum, COLLECTIVES, 16, 128),    KERNEL(collectives, COLLECTIVES, 0, 32),
    KERNEL(early_exit, COLLECTIVES, 0, 64),     KERNEL(warp_exit, COLLECTIVES, 0, 64),
    KERNEL(two_barriers, COLLECTIVES, 0, 64),   KERNEL(divided_warp, COLLECTIVES, 0, 32),
    KERNEL(racy_shift, 0, 256, 64),             KERNEL(synced_shift, COLLECTIVES, 256, 64),
};

/* PTX is never loaded by the tests; the loader wants one well-formed image. */
static const char kPtx[] = ".version 8.0\n.target sm_80\n.address_size 64\n";
static const nnc_abi_cuda_image_t kImages[] = {{"sm_80", kPtx, sizeof(kPtx) - 1}};

/*===- functions ---------------------------------------------------------===*/

static int32_t launch(const nnc_abi_context_t *context, int32_t kernel, uint32_t grid,
                      uint32_t block, void **params) {
  const nnc_abi_cuda_t *cuda = context->cuda;
  return cuda->launch(cuda->device, kernel, grid, 1, 1, block, 1, 1, 0, params);
}

/* reduce: sums[2] of x[256], one block per 128 values. */
static int32_t reduce_entry(void *const *inputs, void *const *outputs, void *workspace,
                            const nnc_abi_context_t *context) {
  (void)workspace;
  void *x = inputs[0], *sums = outputs[0];
  void *params[] = {&x, &sums};
  return launch(context, kBlockSum, 2, 128, params);
}

/* oversized: the same kernel with blocks of 256 threads. */
static int32_t oversized_entry(void *const *inputs, void *const *outputs, void *workspace,
                               const nnc_abi_context_t *context) {
  (void)workspace;
  void *x = inputs[0], *sums = outputs[0];
  void *params[] = {&x, &sums};
  return launch(context, kBlockSum, 1, 256, params);
}

static int32_t collectives_entry(void *const *inputs, void *const *outputs, void *workspace,
                                 const nnc_abi_context_t *context) {
  (void)inputs;
  (void)workspace;
  void *out = outputs[0];
  void *params[] = {&out};
  return launch(context, kCollectives, 1, 32, params);
}

/* One launch of a kernel taking y[64]: which one is the function's name. */
#define Y_ENTRY(name, kernel, block)                                                            \
  static int32_t name##_entry(void *const *inputs, void *const *outputs, void *workspace,      \
                              const nnc_abi_context_t *context) {                              \
    (void)inputs;                                                                              \
    (void)workspace;                                                                           \
    void *y = outputs[0];                                                                      \
    void *params[] = {&y};                                                                     \
    return launch(context, kernel, 1, block, params);                                          \
  }
Y_ENTRY(early_exit, kEarlyExit, 64)
Y_ENTRY(warp_exit, kWarpExit, 64)
Y_ENTRY(two_barriers, kTwoBarriers, 64)
Y_ENTRY(divided_warp, kDividedWarp, 32)

#define SHIFT_ENTRY(name, kernel)                                                               \
  static int32_t name##_entry(void *const *inputs, void *const *outputs, void *workspace,      \
                              const nnc_abi_context_t *context) {                              \
    (void)workspace;                                                                           \
    void *x = inputs[0], *y = outputs[0];                                                      \
    void *params[] = {&x, &y};                                                                 \
    return launch(context, kernel, 1, 64, params);                                             \
  }
SHIFT_ENTRY(racy_shift, kRacyShift)
SHIFT_ENTRY(synced_shift, kSyncedShift)

static const int64_t kShape256[] = {256}, kShape2[] = {2}, kShape64[] = {64},
                     kShape7x32[] = {7, 32};
static const nnc_abi_tensor_t kX256[] = {{"x", NNC_DTYPE_F32, 1, kShape256}};
static const nnc_abi_tensor_t kSums[] = {{"sums", NNC_DTYPE_F32, 1, kShape2}};
static const nnc_abi_tensor_t kResults[] = {{"results", NNC_DTYPE_I32, 2, kShape7x32}};
static const nnc_abi_tensor_t kX64[] = {{"x", NNC_DTYPE_F32, 1, kShape64}};
static const nnc_abi_tensor_t kY64[] = {{"y", NNC_DTYPE_F32, 1, kShape64}};

static const nnc_abi_function_t kFunctions[] = {
    {"reduce", reduce_entry, 1, 1, kX256, kSums, 0, 0},
    {"oversized", oversized_entry, 1, 1, kX256, kSums, 0, 0},
    {"collectives", collectives_entry, 0, 1, NULL, kResults, 0, 0},
    {"early_exit", early_exit_entry, 0, 1, NULL, kY64, 0, 0},
    {"warp_exit", warp_exit_entry, 0, 1, NULL, kY64, 0, 0},
    {"two_barriers", two_barriers_entry, 0, 1, NULL, kY64, 0, 0},
    {"divided_warp", divided_warp_entry, 0, 1, NULL, kY64, 0, 0},
    {"racy_shift", racy_shift_entry, 1, 1, kX64, kY64, 0, 0},
    {"synced_shift", synced_shift_entry, 1, 1, kX64, kY64, 0, 0},
};

static const nnc_abi_module_t kModule = {NNC_ABI_VERSION, 0,           "nnc-test 1.0",
                                         "cuda",          "generic",   COUNT(kFunctions),
                                         kFunctions,      0,           NULL,
                                         kNumKernels,     kKernels,    COUNT(kImages),
                                         kImages,         kHostKernels};

EXPORT const nnc_abi_module_t *nnc_module_v1(void) { return &kModule; }
