/*===- run_model.c - embedding the nnc runtime in a C program -------------===*
 *
 * Loads a compiled module, prints its functions, fills the inputs of one
 * function with a deterministic pattern, runs it and prints the outputs.
 *
 *   run_model_c model.so [function]
 *
 *===----------------------------------------------------------------------===*/

#include "nnc/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints "f32 2x3" for a tensor. */
static void print_type(int32_t dtype, int32_t rank, const int64_t *shape) {
  printf("%s ", nnc_dtype_name(dtype));
  if (rank == 0)
    printf("scalar");
  for (int32_t i = 0; i < rank; ++i) {
    if (shape[i] < 0)
      printf("%s?", i ? "x" : "");
    else
      printf("%s%lld", i ? "x" : "", (long long)shape[i]);
  }
}

static void print_signature(const nnc_function_t *function) {
  printf("function '%s': %d inputs, %d outputs, workspace %llu bytes\n",
         nnc_function_name(function), nnc_function_input_count(function),
         nnc_function_output_count(function),
         (unsigned long long)nnc_function_workspace_size(function));
  for (int32_t i = 0; i < nnc_function_input_count(function); ++i) {
    const nnc_tensor_info_t *info = nnc_function_input(function, i);
    printf("  input %d '%s': ", i, info->name);
    print_type(info->dtype, info->rank, info->shape);
    printf("\n");
  }
  for (int32_t i = 0; i < nnc_function_output_count(function); ++i) {
    const nnc_tensor_info_t *info = nnc_function_output(function, i);
    printf("  output %d '%s': ", i, info->name);
    print_type(info->dtype, info->rank, info->shape);
    printf("\n");
  }
}

/* Input i, element j gets (j % 5) + i, stored in the input's type. Types
 * this example does not convert (f16, bf16) stay zero. */
static void fill(const nnc_tensor_info_t *info, void *data, int32_t input) {
  memset(data, 0, info->byte_size);
  for (int64_t j = 0; j < info->element_count; ++j) {
    double value = (double)(j % 5) + input;
    switch (info->dtype) {
    case NNC_DTYPE_F32: ((float *)data)[j] = (float)value; break;
    case NNC_DTYPE_F64: ((double *)data)[j] = value; break;
    case NNC_DTYPE_I32: ((int32_t *)data)[j] = (int32_t)value; break;
    case NNC_DTYPE_I64: ((int64_t *)data)[j] = (int64_t)value; break;
    case NNC_DTYPE_U8: ((uint8_t *)data)[j] = (uint8_t)value; break;
    case NNC_DTYPE_BOOL: ((uint8_t *)data)[j] = (uint8_t)((j + input) % 2); break;
    default: break;
    }
  }
}

static void print_values(const nnc_tensor_view_t *view) {
  int64_t count = 1;
  for (int32_t i = 0; i < view->rank; ++i)
    count *= view->shape[i];
  for (int64_t j = 0; j < count; ++j) {
    const void *data = view->data;
    switch (view->dtype) {
    case NNC_DTYPE_F32: printf(" %g", ((const float *)data)[j]); break;
    case NNC_DTYPE_F64: printf(" %g", ((const double *)data)[j]); break;
    case NNC_DTYPE_I32: printf(" %d", ((const int32_t *)data)[j]); break;
    case NNC_DTYPE_I64: printf(" %lld", (long long)((const int64_t *)data)[j]); break;
    case NNC_DTYPE_U8:
    case NNC_DTYPE_BOOL: printf(" %u", ((const uint8_t *)data)[j]); break;
    default: printf(" (%s values not shown)", nnc_dtype_name(view->dtype)); return;
    }
  }
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s MODULE.so [FUNCTION]\n", argv[0]);
    return 2;
  }
  nnc_runtime_t *runtime = NULL;
  nnc_module_t *module = NULL;
  nnc_session_t *session = NULL;
  void **inputs = NULL;
  int32_t num_inputs = 0;
  nnc_status_t status = NULL;
  int exit_code = 0;

  /* One runtime per process is enough: it owns the thread pool. */
  status = nnc_runtime_create(NULL, &runtime);
  if (!status)
    status = nnc_module_load(argv[1], &module);
  if (status)
    goto done;
  printf("module '%s': target %s, producer '%s'\n", nnc_module_path(module),
         nnc_module_target(module), nnc_module_producer(module));
  for (int32_t i = 0; i < nnc_module_function_count(module); ++i)
    print_signature(nnc_module_function(module, i));

  nnc_session_options_t options;
  nnc_session_options_initialize(&options);
  if (argc == 3)
    options.function = argv[2];
  status = nnc_session_create(runtime, module, &options, &session);
  if (status)
    goto done;

  /* Inputs are bound zero-copy: the buffers must outlive the runs. */
  const nnc_function_t *function = nnc_session_function(session);
  num_inputs = nnc_function_input_count(function);
  inputs = calloc((size_t)num_inputs, sizeof(void *));
  for (int32_t i = 0; i < num_inputs && !status; ++i) {
    const nnc_tensor_info_t *info = nnc_function_input(function, i);
    inputs[i] = malloc(info->byte_size ? info->byte_size : 1);
    if (!inputs || !inputs[i]) {
      fprintf(stderr, "error: out of memory\n");
      exit_code = 1;
      goto done;
    }
    fill(info, inputs[i], i);
    nnc_tensor_view_t view = {inputs[i], info->byte_size, info->dtype, info->rank, info->shape};
    status = nnc_session_bind_input(session, i, &view);
  }
  if (!status)
    status = nnc_session_run(session);
  if (status)
    goto done;

  printf("ran '%s'\n", nnc_function_name(function));
  for (int32_t i = 0; i < nnc_function_output_count(function); ++i) {
    nnc_tensor_view_t view;
    status = nnc_session_output(session, i, &view);
    if (status)
      goto done;
    printf("output '%s' (", nnc_function_output(function, i)->name);
    print_type(view.dtype, view.rank, view.shape);
    printf("):");
    print_values(&view);
    printf("\n");
  }

done:
  if (status) {
    fprintf(stderr, "error: %s\n", nnc_status_message(status));
    nnc_status_free(status);
    exit_code = 1;
  }
  for (int32_t i = 0; inputs && i < num_inputs; ++i)
    free(inputs[i]);
  free(inputs);
  nnc_session_release(session);
  nnc_module_release(module);
  nnc_runtime_release(runtime);
  return exit_code;
}
