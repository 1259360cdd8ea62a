/*===- strings_module.c - a hand-written module with string tensors -------===*
 *
 * Stands in for compiled Cast and StringNormalizer code in the runtime's
 * tests: its functions make and read strings through the session's hooks
 * (nnc_abi_context_t.strings, abi.h). `main` stops at the first hook that
 * fails, returning kHookFailed; `parse` goes on after a failed read, as
 * compiled code may, and still returns 0.
 *
 * -DCUDA_TARGET labels the module "cuda" (sessions on a CUDA device refuse
 * string tensors); -DTRAINING names its functions as a training module's
 * (the trainer refuses string tensors).
 *
 *===----------------------------------------------------------------------===*/

#include "nnc/abi.h"

#include <stddef.h>
#include <string.h>

#define COUNT(array) ((int32_t)(sizeof(array) / sizeof((array)[0])))

/* Error codes the entry points return. */
enum { kNoHooks = 2, kHookFailed = 3 };

#define CHECK_HOOKS(context)                                                                   \
  do {                                                                                         \
    if (!(context) || !(context)->strings)                                                     \
      return kNoHooks;                                                                         \
  } while (0)

/* The stopwords of `main` and `stopword`: case-insensitive matches of "the",
 * "Über" and "ΣΟΦΊΑ" are stopwords. */
static const char kStopwords[] = "the\0a\0\xC3\x9C" "ber\0\xCE\xA3\xCE\x9F\xCE\xA6\xCE\x8A\xCE\x91";
enum { kStopwordCount = 4 };

/*===- main: upper, lower, stop = StringNormalizer(text); formatted = x --===*/

static const int64_t kShape4[] = {4};
static const nnc_abi_tensor_t kMainInputs[] = {{"text", NNC_DTYPE_STRING, 1, kShape4},
                                               {"x", NNC_DTYPE_F32, 1, kShape4}};
static const nnc_abi_tensor_t kMainOutputs[] = {{"upper", NNC_DTYPE_STRING, 1, kShape4},
                                                {"lower", NNC_DTYPE_STRING, 1, kShape4},
                                                {"formatted", NNC_DTYPE_STRING, 1, kShape4},
                                                {"stop", NNC_DTYPE_BOOL, 1, kShape4}};

static int32_t main_entry(void *const *inputs, void *const *outputs, void *workspace,
                          const nnc_abi_context_t *context) {
  (void)workspace;
  CHECK_HOOKS(context);
  const nnc_abi_strings_t *s = context->strings;
  const char *const *text = inputs[0];
  const float *x = inputs[1];
  const char **upper = outputs[0], **lower = outputs[1], **formatted = outputs[2];
  unsigned char *stop = outputs[3];
  for (int i = 0; i < 4; ++i) {
    upper[i] = s->change_case(s->state, text[i], 2);
    if (!upper[i])
      return kHookFailed;
    lower[i] = s->change_case(s->state, text[i], 1);
    if (!lower[i])
      return kHookFailed;
    formatted[i] = s->format(s->state, NNC_DTYPE_F32, &x[i]);
    if (!formatted[i])
      return kHookFailed;
    int32_t found = s->is_stopword(s->state, text[i], kStopwords, kStopwordCount, 0);
    if (found < 0)
      return kHookFailed;
    stop[i] = (unsigned char)found;
  }
  return 0;
}

/*===- format: text = format(dtype, the low bytes of bits) ---------------===*/

static const nnc_abi_tensor_t kFormatInputs[] = {{"dtype", NNC_DTYPE_I32, 0, NULL},
                                                 {"bits", NNC_DTYPE_U64, 0, NULL}};
static const nnc_abi_tensor_t kFormatOutputs[] = {{"text", NNC_DTYPE_STRING, 0, NULL}};

static int32_t format_entry(void *const *inputs, void *const *outputs, void *workspace,
                            const nnc_abi_context_t *context) {
  (void)workspace;
  CHECK_HOOKS(context);
  const nnc_abi_strings_t *s = context->strings;
  int32_t dtype;
  uint64_t bits;
  memcpy(&dtype, inputs[0], sizeof(dtype));
  memcpy(&bits, inputs[1], sizeof(bits)); /* little-endian: narrower types in the low bytes */
  const char *text = s->format(s->state, dtype, &bits);
  memcpy(outputs[0], &text, sizeof(text));
  return text ? 0 : kHookFailed;
}

/*===- parse: bits = parse(dtype, text), zero-extended; status = its result ===*
 * Goes on after a failure: the runtime must fail the run all the same. */

static const nnc_abi_tensor_t kParseInputs[] = {{"dtype", NNC_DTYPE_I32, 0, NULL},
                                                {"text", NNC_DTYPE_STRING, 0, NULL}};
static const nnc_abi_tensor_t kParseOutputs[] = {{"bits", NNC_DTYPE_U64, 0, NULL},
                                                 {"status", NNC_DTYPE_I32, 0, NULL}};

static int32_t parse_entry(void *const *inputs, void *const *outputs, void *workspace,
                           const nnc_abi_context_t *context) {
  (void)workspace;
  CHECK_HOOKS(context);
  const nnc_abi_strings_t *s = context->strings;
  int32_t dtype;
  const char *text;
  memcpy(&dtype, inputs[0], sizeof(dtype));
  memcpy(&text, inputs[1], sizeof(text));
  uint64_t bits = 0;
  int32_t status = s->parse(s->state, dtype, text, &bits);
  memcpy(outputs[0], &bits, sizeof(bits));
  memcpy(outputs[1], &status, sizeof(status));
  return 0;
}

/*===- case: result = change_case(text, action) --------------------------===*/

static const nnc_abi_tensor_t kCaseInputs[] = {{"action", NNC_DTYPE_I32, 0, NULL},
                                               {"text", NNC_DTYPE_STRING, 0, NULL}};
static const nnc_abi_tensor_t kCaseOutputs[] = {{"result", NNC_DTYPE_STRING, 0, NULL}};

static int32_t case_entry(void *const *inputs, void *const *outputs, void *workspace,
                          const nnc_abi_context_t *context) {
  (void)workspace;
  CHECK_HOOKS(context);
  const nnc_abi_strings_t *s = context->strings;
  int32_t action;
  const char *text;
  memcpy(&action, inputs[0], sizeof(action));
  memcpy(&text, inputs[1], sizeof(text));
  const char *result = s->change_case(s->state, text, action);
  memcpy(outputs[0], &result, sizeof(result));
  return result ? 0 : kHookFailed;
}

/*===- stopword: found = is_stopword(text, kStopwords, case_sensitive) ---===*/

static const nnc_abi_tensor_t kStopwordInputs[] = {{"text", NNC_DTYPE_STRING, 0, NULL},
                                                   {"case_sensitive", NNC_DTYPE_I32, 0, NULL}};
static const nnc_abi_tensor_t kStopwordOutputs[] = {{"found", NNC_DTYPE_I32, 0, NULL}};

static int32_t stopword_entry(void *const *inputs, void *const *outputs, void *workspace,
                              const nnc_abi_context_t *context) {
  (void)workspace;
  CHECK_HOOKS(context);
  const nnc_abi_strings_t *s = context->strings;
  const char *text;
  int32_t caseSensitive;
  memcpy(&text, inputs[0], sizeof(text));
  memcpy(&caseSensitive, inputs[1], sizeof(caseSensitive));
  int32_t found = s->is_stopword(s->state, text, kStopwords, kStopwordCount, caseSensitive);
  memcpy(outputs[0], &found, sizeof(found));
  return found < 0 ? kHookFailed : 0;
}

#define FUNCTION(name, entry, inputs, outputs)                                                 \
  {name, entry, COUNT(inputs), COUNT(outputs), inputs, outputs, 0, 16, 0, NULL, NULL, 0, NULL,  \
   0, NULL, 0, NULL}

static const nnc_abi_function_t kFunctions[] = {
#if defined(TRAINING)
    FUNCTION("init", case_entry, kCaseInputs, kCaseOutputs),
    FUNCTION("train_step", case_entry, kCaseInputs, kCaseOutputs),
    FUNCTION("loss_and_gradients", case_entry, kCaseInputs, kCaseOutputs),
    FUNCTION("eval", case_entry, kCaseInputs, kCaseOutputs),
#else
    FUNCTION("main", main_entry, kMainInputs, kMainOutputs),
    FUNCTION("format", format_entry, kFormatInputs, kFormatOutputs),
    FUNCTION("parse", parse_entry, kParseInputs, kParseOutputs),
    FUNCTION("case", case_entry, kCaseInputs, kCaseOutputs),
    FUNCTION("stopword", stopword_entry, kStopwordInputs, kStopwordOutputs),
#endif
};

#if defined(CUDA_TARGET)
#define TARGET "cuda" /* no kernels: a CUDA module of views needs no image */
#else
#define TARGET "cpu"
#endif
static const nnc_abi_module_t kModule = {
    NNC_ABI_VERSION, 0, "nnc-test 1.0", TARGET, "generic", COUNT(kFunctions), kFunctions, 0};

__attribute__((visibility("default"))) const nnc_abi_module_t *nnc_module_v1(void) {
  return &kModule;
}
