/*===- train_module.c - a hand-written training module --------------------===*
 *
 * Stands in for nnc --train output in the trainer's tests: the four functions
 * of docs/training.md for a linear layer y = x @ W + b (x f32[4,3], W f32[3,2],
 * b f32[2]) with the MSE loss and SGD at learning rate 0.1, or with -DMOMENTUM
 * SGD with momentum 0.9 (PyTorch's definitions). Each entry fails with
 * kAliased when an output buffer overlaps an input (the trainer promises they
 * never do), and train_step fails with kPoisoned after scribbling over its
 * outputs when x[0][0] is -999, as a run that breaks midway would.
 *
 * Other definitions make modules the trainer must refuse: NO_EVAL (a function
 * missing), NO_LABELS, GRAD_SHAPE, EVAL_ORDER, EVAL_STATE and LOSS_SHAPE (functions whose
 * signatures disagree).
 *
 *===----------------------------------------------------------------------===*/

#include "nnc/abi.h"

#include <stddef.h>
#include <stdint.h>

#define COUNT(array) ((int32_t)(sizeof(array) / sizeof((array)[0])))

enum { N = 4, K = 3, M = 2 };
#define LEARNING_RATE 0.1f
#define MOMENTUM_FACTOR 0.9f

enum { kAliased = 4, kPoisoned = 5 };

static const int64_t kShapeX[] = {N, K};
static const int64_t kShapeY[] = {N, M};
static const int64_t kShapeW[] = {K, M};
static const int64_t kShapeB[] = {M};
#ifdef GRAD_SHAPE
static const int64_t kShapeGradW[] = {M, K};
#else
#define kShapeGradW kShapeW
#endif
#ifdef LOSS_SHAPE
static const int64_t kShapeLoss[] = {1};
#define LOSS_TENSOR {"loss", NNC_DTYPE_F32, 1, kShapeLoss}
#else
#define LOSS_TENSOR {"loss", NNC_DTYPE_F32, 0, NULL}
#endif
#ifdef NO_LABELS
#define LABELS "targets"
#else
#define LABELS "labels"
#endif

#define X_TENSOR {"x", NNC_DTYPE_F32, 2, kShapeX}
#define LABELS_TENSOR {LABELS, NNC_DTYPE_F32, 2, kShapeY}
#define W_TENSOR(prefix) {prefix "fc.weight", NNC_DTYPE_F32, 2, kShapeW}
#define B_TENSOR(prefix) {prefix "fc.bias", NNC_DTYPE_F32, 1, kShapeB}
#define STEP_TENSOR {"state:step", NNC_DTYPE_F32, 0, NULL}
#ifdef MOMENTUM
#define MOMENTUM_TENSORS                                                                       \
  , {"state:fc.weight:momentum", NNC_DTYPE_F32, 2, kShapeW}, {                                 \
    "state:fc.bias:momentum", NNC_DTYPE_F32, 1, kShapeB                                        \
  }
#else
#define MOMENTUM_TENSORS
#endif

/* Bytes of each tensor of a function, for the overlap check. */
static size_t tensor_bytes(const nnc_abi_tensor_t *tensor) {
  size_t bytes = 4; /* every tensor here is f32 */
  for (int32_t d = 0; d < tensor->rank; ++d)
    bytes *= (size_t)tensor->shape[d];
  return bytes;
}

static int overlaps(void *const *inputs, const nnc_abi_tensor_t *in, int32_t num_inputs,
                    void *const *outputs, const nnc_abi_tensor_t *out, int32_t num_outputs) {
  for (int32_t o = 0; o < num_outputs; ++o) {
    uintptr_t ob = (uintptr_t)outputs[o], oe = ob + tensor_bytes(&out[o]);
    for (int32_t i = 0; i < num_inputs; ++i) {
      uintptr_t ib = (uintptr_t)inputs[i], ie = ib + tensor_bytes(&in[i]);
      if (ob < ie && ib < oe)
        return 1;
    }
  }
  return 0;
}

/*===- the model and its gradients ---------------------------------------===*/

static void forward(const float *x, const float *w, const float *b, float *y) {
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < M; ++m) {
      float sum = b[m];
      for (int k = 0; k < K; ++k)
        sum += x[n * K + k] * w[k * M + m];
      y[n * M + m] = sum;
    }
}

/* loss = mean((y - labels)^2); dW = x^T @ dy, db = sum over rows of dy, where
 * dy = 2 (y - labels) / (N M). */
static void loss_and_gradients(const float *x, const float *labels, const float *w,
                               const float *b, float *loss, float *grad_w, float *grad_b) {
  float y[N * M], dy[N * M];
  forward(x, w, b, y);
  float sum = 0;
  for (int i = 0; i < N * M; ++i) {
    float diff = y[i] - labels[i];
    sum += diff * diff;
    dy[i] = 2 * diff / (N * M);
  }
  *loss = sum / (N * M);
  for (int k = 0; k < K; ++k)
    for (int m = 0; m < M; ++m) {
      float g = 0;
      for (int n = 0; n < N; ++n)
        g += x[n * K + k] * dy[n * M + m];
      grad_w[k * M + m] = g;
    }
  for (int m = 0; m < M; ++m) {
    float g = 0;
    for (int n = 0; n < N; ++n)
      g += dy[n * M + m];
    grad_b[m] = g;
  }
}

/*===- init --------------------------------------------------------------===*/

static const nnc_abi_tensor_t kInitOutputs[] = {W_TENSOR("param:"), B_TENSOR("param:"),
                                                STEP_TENSOR MOMENTUM_TENSORS};

static int32_t init_entry(void *const *inputs, void *const *outputs, void *workspace,
                          const nnc_abi_context_t *context) {
  (void)inputs;
  (void)workspace;
  (void)context;
  float *w = outputs[0], *b = outputs[1];
  for (int k = 0; k < K; ++k)
    for (int m = 0; m < M; ++m)
      w[k * M + m] = 0.25f * (float)(k - m) + 0.125f;
  b[0] = 0.5f;
  b[1] = -0.25f;
  for (int i = 2; i < COUNT(kInitOutputs); ++i)
    for (size_t j = 0; j < tensor_bytes(&kInitOutputs[i]) / 4; ++j)
      ((float *)outputs[i])[j] = 0;
  return 0;
}

/*===- train_step --------------------------------------------------------===*/

static const nnc_abi_tensor_t kStepInputs[] = {X_TENSOR,           LABELS_TENSOR,
                                               W_TENSOR("param:"), B_TENSOR("param:"),
                                               STEP_TENSOR MOMENTUM_TENSORS};
static const nnc_abi_tensor_t kStepOutputs[] = {LOSS_TENSOR, W_TENSOR("param:"),
                                                B_TENSOR("param:"), STEP_TENSOR MOMENTUM_TENSORS};

static int32_t train_step_entry(void *const *inputs, void *const *outputs, void *workspace,
                                const nnc_abi_context_t *context) {
  (void)workspace;
  (void)context;
  if (overlaps(inputs, kStepInputs, COUNT(kStepInputs), outputs, kStepOutputs,
               COUNT(kStepOutputs)))
    return kAliased;
  const float *x = inputs[0], *labels = inputs[1], *w = inputs[2], *b = inputs[3];
  float *new_w = outputs[1], *new_b = outputs[2];
  if (x[0] == -999) {
    for (int i = 0; i < COUNT(kStepOutputs); ++i)
      for (size_t j = 0; j < tensor_bytes(&kStepOutputs[i]) / 4; ++j)
        ((float *)outputs[i])[j] = 12345;
    return kPoisoned;
  }
  float grad_w[K * M], grad_b[M];
  loss_and_gradients(x, labels, w, b, outputs[0], grad_w, grad_b);
#ifdef MOMENTUM
  const float *buf_w = inputs[5], *buf_b = inputs[6];
  float *new_buf_w = outputs[4], *new_buf_b = outputs[5];
  for (int i = 0; i < K * M; ++i) {
    new_buf_w[i] = MOMENTUM_FACTOR * buf_w[i] + grad_w[i];
    grad_w[i] = new_buf_w[i];
  }
  for (int i = 0; i < M; ++i) {
    new_buf_b[i] = MOMENTUM_FACTOR * buf_b[i] + grad_b[i];
    grad_b[i] = new_buf_b[i];
  }
#endif
  for (int i = 0; i < K * M; ++i)
    new_w[i] = w[i] - LEARNING_RATE * grad_w[i];
  for (int i = 0; i < M; ++i)
    new_b[i] = b[i] - LEARNING_RATE * grad_b[i];
  *(float *)outputs[3] = *(const float *)inputs[4] + 1;
  return 0;
}

/*===- loss_and_gradients ------------------------------------------------===*/

static const nnc_abi_tensor_t kGradientsInputs[] = {X_TENSOR, LABELS_TENSOR, W_TENSOR("param:"),
                                                    B_TENSOR("param:")};
static const nnc_abi_tensor_t kGradientsOutputs[] = {
    LOSS_TENSOR, {"grad:fc.weight", NNC_DTYPE_F32, 2, kShapeGradW}, B_TENSOR("grad:")};

static int32_t gradients_entry(void *const *inputs, void *const *outputs, void *workspace,
                               const nnc_abi_context_t *context) {
  (void)workspace;
  (void)context;
  if (overlaps(inputs, kGradientsInputs, COUNT(kGradientsInputs), outputs, kGradientsOutputs,
               COUNT(kGradientsOutputs)))
    return kAliased;
  loss_and_gradients(inputs[0], inputs[1], inputs[2], inputs[3], outputs[0], outputs[1],
                     outputs[2]);
  return 0;
}

/*===- eval --------------------------------------------------------------===*/

#ifdef EVAL_ORDER
static const nnc_abi_tensor_t kEvalInputs[] = {X_TENSOR, B_TENSOR("param:"), W_TENSOR("param:")};
#elif defined(EVAL_STATE)
static const nnc_abi_tensor_t kEvalInputs[] = {X_TENSOR, W_TENSOR("param:"), B_TENSOR("param:"),
                                               {"state:running:nosuch", NNC_DTYPE_F32, 0, NULL}};
#else
static const nnc_abi_tensor_t kEvalInputs[] = {X_TENSOR, W_TENSOR("param:"), B_TENSOR("param:")};
#endif
static const nnc_abi_tensor_t kEvalOutputs[] = {{"y", NNC_DTYPE_F32, 2, kShapeY}};

static int32_t eval_entry(void *const *inputs, void *const *outputs, void *workspace,
                          const nnc_abi_context_t *context) {
  (void)workspace;
  (void)context;
  if (overlaps(inputs, kEvalInputs, COUNT(kEvalInputs), outputs, kEvalOutputs,
               COUNT(kEvalOutputs)))
    return kAliased;
  forward(inputs[0], inputs[1], inputs[2], outputs[0]);
  return 0;
}

/*===- the descriptor ----------------------------------------------------===*/

static const nnc_abi_function_t kFunctions[] = {
    {"init", init_entry, 0, COUNT(kInitOutputs), NULL, kInitOutputs, 0, 0},
    {"train_step", train_step_entry, COUNT(kStepInputs), COUNT(kStepOutputs), kStepInputs,
     kStepOutputs, 0, 0},
    {"loss_and_gradients", gradients_entry, COUNT(kGradientsInputs), COUNT(kGradientsOutputs),
     kGradientsInputs, kGradientsOutputs, 0, 0},
#ifndef NO_EVAL
    {"eval", eval_entry, COUNT(kEvalInputs), COUNT(kEvalOutputs), kEvalInputs, kEvalOutputs, 0,
     0},
#endif
};

static const nnc_abi_module_t kModule = {
    NNC_ABI_VERSION, 0, "nnc-test 1.0", "cpu", "generic", COUNT(kFunctions), kFunctions, 0};

__attribute__((visibility("default"))) const nnc_abi_module_t *nnc_module_v1(void) {
  return &kModule;
}
