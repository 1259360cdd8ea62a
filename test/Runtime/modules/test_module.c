/*===- test_module.c - a hand-written module implementing the nnc ABI -----===*
 *
 * Stands in for compiler output in the runtime's tests: real entry points
 * that use the workspace and the runtime's parallel_for, and check what the
 * runtime promises them (alignment, disjoint ranges covering the loop).
 *
 *===----------------------------------------------------------------------===*/

#include "nnc/abi.h"

#include <stddef.h>
#include <string.h>

#define COUNT(array) ((int32_t)(sizeof(array) / sizeof((array)[0])))

/* Error codes the entry points return when the runtime breaks a promise. */
enum { kBadWorkspace = 2, kBadRanges = 3, kFailed = 7 };

/*===- main: c = a + b over f32[2,3], staged through the workspace -------===*/

static const int64_t kShape2x3[] = {2, 3};
static const nnc_abi_tensor_t kMainInputs[] = {{"a", NNC_DTYPE_F32, 2, kShape2x3},
                                               {"b", NNC_DTYPE_F32, 2, kShape2x3}};
static const nnc_abi_tensor_t kMainOutputs[] = {{"c", NNC_DTYPE_F32, 2, kShape2x3}};

struct add_args {
  const float *a, *b;
  float *sum;
};

static void add_body(void *arg, int64_t begin, int64_t end) {
  const struct add_args *args = arg;
  for (int64_t i = begin; i < end; ++i)
    args->sum[i] = args->a[i] + args->b[i];
}

static int32_t main_entry(void *const *inputs, void *const *outputs, void *workspace,
                          const nnc_abi_context_t *context) {
  if ((uintptr_t)workspace % 128 != 0)
    return kBadWorkspace;
  struct add_args args = {inputs[0], inputs[1], workspace};
  context->parallel_for(context->runtime, 6, add_body, &args);
  memcpy(outputs[0], workspace, 6 * sizeof(float));
  return 0;
}

/*===- scale: y = x * k, total = sum(y); a scalar input, two outputs -----===*/

static const int64_t kShape4[] = {4};
static const nnc_abi_tensor_t kScaleInputs[] = {{"x", NNC_DTYPE_F32, 1, kShape4},
                                                {"k", NNC_DTYPE_I32, 0, NULL}};
static const nnc_abi_tensor_t kScaleOutputs[] = {{"y", NNC_DTYPE_F32, 1, kShape4},
                                                 {"total", NNC_DTYPE_F64, 0, NULL}};

static int32_t scale_entry(void *const *inputs, void *const *outputs, void *workspace,
                           const nnc_abi_context_t *context) {
  (void)workspace;
  (void)context;
  const float *x = inputs[0];
  int32_t k = *(const int32_t *)inputs[1];
  float *y = outputs[0];
  double total = 0;
  for (int i = 0; i < 4; ++i) {
    y[i] = x[i] * (float)k;
    total += y[i];
  }
  *(double *)outputs[1] = total;
  return 0;
}

/*===- large: y = 2x + 1 over f32[4096] in parallel ----------------------===*
 * Also reports how many ranges parallel_for made and where the workspace is,
 * and fails if the ranges overlap or leave a gap, here and in a loop of three
 * iterations. */

#define LARGE_N 4096
static const int64_t kShapeLarge[] = {LARGE_N};
static const nnc_abi_tensor_t kLargeInputs[] = {{"x", NNC_DTYPE_F32, 1, kShapeLarge}};
static const nnc_abi_tensor_t kLargeOutputs[] = {{"y", NNC_DTYPE_F32, 1, kShapeLarge},
                                                 {"ranges", NNC_DTYPE_I32, 0, NULL},
                                                 {"workspace", NNC_DTYPE_U64, 0, NULL}};

struct large_args {
  const float *x;
  float *y;
  int32_t *visits; /* per element, in the workspace */
  int32_t ranges;
};

static void large_body(void *arg, int64_t begin, int64_t end) {
  struct large_args *args = arg;
  __atomic_fetch_add(&args->ranges, 1, __ATOMIC_RELAXED);
  for (int64_t i = begin; i < end; ++i) {
    args->y[i] = 2 * args->x[i] + 1;
    args->visits[i] += 1; /* ranges are disjoint: no other thread touches i */
  }
}

static void few_body(void *arg, int64_t begin, int64_t end) {
  int32_t *visits = arg;
  for (int64_t i = begin; i < end; ++i)
    __atomic_fetch_add(&visits[i], 1, __ATOMIC_RELAXED);
}

static int32_t large_entry(void *const *inputs, void *const *outputs, void *workspace,
                           const nnc_abi_context_t *context) {
  struct large_args args = {inputs[0], outputs[0], workspace, 0};
  memset(args.visits, 0, LARGE_N * sizeof(int32_t));
  context->parallel_for(context->runtime, LARGE_N, large_body, &args);
  for (int i = 0; i < LARGE_N; ++i)
    if (args.visits[i] != 1)
      return kBadRanges;
  /* Fewer iterations than threads: some threads' shares are empty. */
  int32_t few[3] = {0, 0, 0};
  context->parallel_for(context->runtime, 3, few_body, few);
  for (int i = 0; i < 3; ++i)
    if (few[i] != 1)
      return kBadRanges;
  *(int32_t *)outputs[1] = args.ranges;
  *(uint64_t *)outputs[2] = (uint64_t)(uintptr_t)workspace;
  return 0;
}

/*===- nested: y = x + 1 over f32[64] with a parallel_for in each body ---===*/

static const int64_t kShape64[] = {64};
static const nnc_abi_tensor_t kNestedInputs[] = {{"x", NNC_DTYPE_F32, 1, kShape64}};
static const nnc_abi_tensor_t kNestedOutputs[] = {{"y", NNC_DTYPE_F32, 1, kShape64}};

struct nested_args {
  const nnc_abi_context_t *context;
  const float *x;
  float *y;
  int64_t row; /* set per inner loop */
};

static void inner_body(void *arg, int64_t begin, int64_t end) {
  const struct nested_args *args = arg;
  for (int64_t i = begin; i < end; ++i)
    args->y[args->row * 8 + i] = args->x[args->row * 8 + i] + 1;
}

static void outer_body(void *arg, int64_t begin, int64_t end) {
  const struct nested_args *outer = arg;
  for (int64_t row = begin; row < end; ++row) {
    struct nested_args inner = *outer;
    inner.row = row;
    outer->context->parallel_for(outer->context->runtime, 8, inner_body, &inner);
  }
}

static int32_t nested_entry(void *const *inputs, void *const *outputs, void *workspace,
                            const nnc_abi_context_t *context) {
  (void)workspace;
  struct nested_args args = {context, inputs[0], outputs[0], 0};
  context->parallel_for(context->runtime, 8, outer_body, &args);
  return 0;
}

/*===- types: one identity per element type, for nnc-run's converters ----===*/

static const int64_t kShape2[] = {2};
#define TYPE_TENSOR(name, dtype) {name, dtype, 1, kShape2}
#define TYPE_TENSORS(prefix)                                                                   \
  {                                                                                            \
    TYPE_TENSOR(prefix "f32", NNC_DTYPE_F32), TYPE_TENSOR(prefix "f64", NNC_DTYPE_F64),        \
        TYPE_TENSOR(prefix "f16", NNC_DTYPE_F16), TYPE_TENSOR(prefix "bf16", NNC_DTYPE_BF16),  \
        TYPE_TENSOR(prefix "i8", NNC_DTYPE_I8), TYPE_TENSOR(prefix "i16", NNC_DTYPE_I16),      \
        TYPE_TENSOR(prefix "i32", NNC_DTYPE_I32), TYPE_TENSOR(prefix "i64", NNC_DTYPE_I64),    \
        TYPE_TENSOR(prefix "u8", NNC_DTYPE_U8), TYPE_TENSOR(prefix "u16", NNC_DTYPE_U16),      \
        TYPE_TENSOR(prefix "u32", NNC_DTYPE_U32), TYPE_TENSOR(prefix "u64", NNC_DTYPE_U64),    \
        TYPE_TENSOR(prefix "bool", NNC_DTYPE_BOOL)                                             \
  }
static const nnc_abi_tensor_t kTypesInputs[] = TYPE_TENSORS("in_");
static const nnc_abi_tensor_t kTypesOutputs[] = TYPE_TENSORS("out_");

static int32_t types_entry(void *const *inputs, void *const *outputs, void *workspace,
                           const nnc_abi_context_t *context) {
  (void)workspace;
  (void)context;
  static const size_t sizes[] = {4, 8, 2, 2, 1, 2, 4, 8, 1, 2, 4, 8, 1};
  for (int i = 0; i < COUNT(kTypesInputs); ++i)
    memcpy(outputs[i], inputs[i], 2 * sizes[i]);
  return 0;
}

/*===- fail: reports an error -------------------------------------------===*/

static const nnc_abi_tensor_t kFailOutputs[] = {{"status", NNC_DTYPE_I32, 0, NULL}};

static int32_t fail_entry(void *const *inputs, void *const *outputs, void *workspace,
                          const nnc_abi_context_t *context) {
  (void)inputs;
  (void)outputs;
  (void)workspace;
  (void)context;
  return kFailed;
}

/*===- dynamic: y = x + v[:, None] over x f32[n, 3], v f32[n] ------------===*
 * As the compiler emits a function with dynamic dims: a prepare that
 * computes y's dims and the workspace size (y staged there) and checks that
 * x's and v's n agree and that n is at most 1000; an entry that reads the
 * dims from the context. */

static const int64_t kShapeNx3[] = {-1, 3}, kShapeN[] = {-1};
static const nnc_abi_tensor_t kDynamicInputs[] = {{"x", NNC_DTYPE_F32, 2, kShapeNx3},
                                                  {"v", NNC_DTYPE_F32, 1, kShapeN}};
static const nnc_abi_tensor_t kDynamicOutputs[] = {{"y", NNC_DTYPE_F32, 2, kShapeNx3}};
static const char *const kDynamicChecks[] = {"the rows of 'x' and the length of 'v' differ",
                                             "'x' has more than 1000 rows"};
enum { kBadDims = 4 };

static int32_t dynamic_prepare(const int64_t *input_dims, void *const *inputs,
                               int64_t *output_dims, uint64_t *workspace_size) {
  (void)inputs;
  /* input_dims: x's n, 3, v's n. */
  if (input_dims[0] != input_dims[2])
    return 1;
  if (input_dims[0] > 1000)
    return 2;
  /* 998 rows stand for a workspace past 2^62 bytes, 999 for one past this
   * machine's memory: refused either way. */
  if (input_dims[0] == 998)
    return -1;
  output_dims[0] = input_dims[0];
  output_dims[1] = 3;
  *workspace_size = input_dims[0] == 999 ? (uint64_t)1 << 61
                                         : (uint64_t)input_dims[0] * 3 * sizeof(float);
  return 0;
}

static int32_t dynamic_entry(void *const *inputs, void *const *outputs, void *workspace,
                             const nnc_abi_context_t *context) {
  /* dims: x (n, 3), v (n), y (n, 3), workspace bytes. */
  const int64_t *dims = context ? context->dims : NULL;
  if (!dims || dims[1] != 3 || dims[2] != dims[0] || dims[3] != dims[0] || dims[4] != 3 ||
      dims[5] < dims[0] * 3 * (int64_t)sizeof(float) || (uintptr_t)workspace % 64 != 0)
    return kBadDims;
  const float *x = inputs[0], *v = inputs[1];
  float *staged = workspace;
  for (int64_t i = 0; i < dims[0]; ++i)
    for (int64_t j = 0; j < 3; ++j)
      staged[i * 3 + j] = x[i * 3 + j] + v[i];
  if (dims[0] > 0) /* an empty output may be bound with no data at all */
    memcpy(outputs[0], staged, (size_t)dims[0] * 3 * sizeof(float));
  return 0;
}

/*===- writes_input, unsteady: break what nnc-run's repeat-run check guards ===*
 * writes_input: y = x + 1, and x[1] += 1 (compiled code must never write an
 * input). unsteady: y = x + the number of earlier runs (outputs must repeat). */

static const int64_t kShape3[] = {3};
static const nnc_abi_tensor_t kVec3[] = {{"x", NNC_DTYPE_F32, 1, kShape3}};
static const nnc_abi_tensor_t kVec3Out[] = {{"y", NNC_DTYPE_F32, 1, kShape3}};

static int32_t writes_input_entry(void *const *inputs, void *const *outputs, void *workspace,
                                  const nnc_abi_context_t *context) {
  (void)workspace;
  (void)context;
  float *x = inputs[0], *y = outputs[0];
  for (int i = 0; i < 3; ++i)
    y[i] = x[i] + 1;
  x[1] += 1;
  return 0;
}

static int32_t unsteady_entry(void *const *inputs, void *const *outputs, void *workspace,
                              const nnc_abi_context_t *context) {
  (void)workspace;
  (void)context;
  static int runs;
  const float *x = inputs[0];
  float *y = outputs[0];
  for (int i = 0; i < 3; ++i)
    y[i] = x[i] + (float)runs;
  ++runs;
  return 0;
}

/*===- profiled, profile_gap: y = x + 1 in two marked kernels -----------===*
 * As nnc --profile compiles a function: a kernel table, and a call of the
 * context's profile hook as each kernel starts and after the last.
 * profile_gap forgets the last mark. */

static const nnc_abi_kernel_t kProfiledKernels[] = {{"serial loop", "add", 3, 12, 12, 1e-9},
                                                    {"serial loop", "copy", 0, 12, 12, 0}};

static void mark(const nnc_abi_context_t *context, int32_t kernel) {
  if (context && context->profile)
    context->profile(context->profile_state, kernel);
}

static int32_t add_one_marked(void *const *inputs, void *const *outputs, void *workspace,
                              const nnc_abi_context_t *context, int last_mark) {
  const float *x = inputs[0];
  float *staged = workspace;
  mark(context, 0);
  for (int i = 0; i < 3; ++i)
    staged[i] = x[i] + 1;
  mark(context, 1);
  memcpy(outputs[0], staged, 3 * sizeof(float));
  if (last_mark)
    mark(context, 2);
  return 0;
}

static int32_t profiled_entry(void *const *inputs, void *const *outputs, void *workspace,
                              const nnc_abi_context_t *context) {
  return add_one_marked(inputs, outputs, workspace, context, 1);
}

static int32_t profile_gap_entry(void *const *inputs, void *const *outputs, void *workspace,
                                 const nnc_abi_context_t *context) {
  return add_one_marked(inputs, outputs, workspace, context, 0);
}

/*===- the descriptor ----------------------------------------------------===*/

/*===- take: y = x[:n] over x f32[8], n i64[1] --------------------------===*
 * An output whose dims are an input's value, as the compiler emits a Slice
 * to a bound given at run time: n is a shape input, which prepare reads. */

static const int64_t kShape8[] = {8}, kShape1[] = {1}, kShapeDynamic[] = {-1};
static const nnc_abi_tensor_t kTakeInputs[] = {{"x", NNC_DTYPE_F32, 1, kShape8},
                                               {"n", NNC_DTYPE_I64, 1, kShape1}};
static const nnc_abi_tensor_t kTakeOutputs[] = {{"y", NNC_DTYPE_F32, 1, kShapeDynamic}};
static const char *const kTakeChecks[] = {"'n' is outside [0, 8]"};
static const int32_t kTakeShapeInputs[] = {1};

static int32_t take_prepare(const int64_t *input_dims, void *const *inputs, int64_t *output_dims,
                            uint64_t *workspace_size) {
  (void)input_dims;
  int64_t n = *(const int64_t *)inputs[1];
  if (n < 0 || n > 8)
    return 1;
  output_dims[0] = n;
  *workspace_size = 0;
  return 0;
}

static int32_t take_entry(void *const *inputs, void *const *outputs, void *workspace,
                          const nnc_abi_context_t *context) {
  (void)workspace;
  /* dims: x (8), n (1), y (n), workspace bytes. */
  int64_t n = context->dims[2];
  if (n != *(const int64_t *)inputs[1])
    return kBadDims;
  if (n > 0) /* an empty output may have no buffer */
    memcpy(outputs[0], inputs[0], (size_t)n * sizeof(float));
  return 0;
}

static const nnc_abi_function_t kFunctions[] = {
    {"main", main_entry, 2, 1, kMainInputs, kMainOutputs, 6 * sizeof(float), 128},
    {"scale", scale_entry, 2, 2, kScaleInputs, kScaleOutputs, 0, 0},
    {"large", large_entry, 1, 3, kLargeInputs, kLargeOutputs, LARGE_N * sizeof(int32_t), 64},
    {"nested", nested_entry, 1, 1, kNestedInputs, kNestedOutputs, 0, 0},
    {"types", types_entry, COUNT(kTypesInputs), COUNT(kTypesOutputs), kTypesInputs,
     kTypesOutputs, 0, 0},
    {"fail", fail_entry, 0, 1, NULL, kFailOutputs, 0, 0},
    {"dynamic", dynamic_entry, 2, 1, kDynamicInputs, kDynamicOutputs, 0, 64, 0, NULL,
     dynamic_prepare, COUNT(kDynamicChecks), kDynamicChecks},
    {"writes_input", writes_input_entry, 1, 1, kVec3, kVec3Out, 0, 0},
    {"unsteady", unsteady_entry, 1, 1, kVec3, kVec3Out, 0, 0},
    {"profiled", profiled_entry, 1, 1, kVec3, kVec3Out, 3 * sizeof(float), 64,
     COUNT(kProfiledKernels), kProfiledKernels},
    {"profile_gap", profile_gap_entry, 1, 1, kVec3, kVec3Out, 3 * sizeof(float), 64,
     COUNT(kProfiledKernels), kProfiledKernels},
    {"take", take_entry, 2, 1, kTakeInputs, kTakeOutputs, 0, 64, 0, NULL, take_prepare,
     COUNT(kTakeChecks), kTakeChecks, COUNT(kTakeShapeInputs), kTakeShapeInputs},
};

static const nnc_abi_module_t kModule = {
    NNC_ABI_VERSION, 0, "nnc-test 1.0", "cpu", "generic", COUNT(kFunctions), kFunctions, 0};

__attribute__((visibility("default"))) const nnc_abi_module_t *nnc_module_v1(void) {
  return &kModule;
}
