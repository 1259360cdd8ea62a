//===- run_model.cpp - embedding the nnc runtime in a C++ program ---------===//
//
// The C example (run_model.c) written with the RAII wrapper runtime.hpp: load
// a module, print its functions, fill one function's inputs with a
// deterministic pattern, run it and print the outputs.
//
//   run_model_cpp model.so [function]
//
//===----------------------------------------------------------------------===//

#include "nnc/runtime.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace {

/// "f32 2x3" for a tensor.
std::string typeString(int32_t dtype, int32_t rank, const int64_t *shape) {
  std::string text = std::string(nnc_dtype_name(dtype)) + " ";
  if (rank == 0)
    text += "scalar";
  for (int32_t i = 0; i < rank; ++i)
    text += (i ? "x" : "") + (shape[i] < 0 ? std::string("?") : std::to_string(shape[i]));
  return text;
}

void printSignature(const nnc::Function &function) {
  std::printf("function '%s': %d inputs, %d outputs, workspace %llu bytes\n", function.name(),
              function.inputCount(), function.outputCount(),
              static_cast<unsigned long long>(function.workspaceSize()));
  for (int32_t i = 0; i < function.inputCount(); ++i) {
    const nnc_tensor_info_t &info = *function.input(i);
    std::printf("  input %d '%s': %s\n", i, info.name,
                typeString(info.dtype, info.rank, info.shape).c_str());
  }
  for (int32_t i = 0; i < function.outputCount(); ++i) {
    const nnc_tensor_info_t &info = *function.output(i);
    std::printf("  output %d '%s': %s\n", i, info.name,
                typeString(info.dtype, info.rank, info.shape).c_str());
  }
}

template <typename T>
void fillAs(std::vector<unsigned char> &bytes, int64_t count, int32_t input) {
  T *values = reinterpret_cast<T *>(bytes.data());
  for (int64_t j = 0; j < count; ++j)
    values[j] = static_cast<T>(j % 5 + input);
}

/// Input i, element j gets (j % 5) + i in the input's type; the same pattern
/// as run_model.c. Types it does not convert (f16, bf16) stay zero.
std::vector<unsigned char> fill(const nnc_tensor_info_t &info, int32_t input) {
  std::vector<unsigned char> bytes(info.byte_size);
  int64_t count = info.element_count;
  switch (info.dtype) {
  case NNC_DTYPE_F32: fillAs<float>(bytes, count, input); break;
  case NNC_DTYPE_F64: fillAs<double>(bytes, count, input); break;
  case NNC_DTYPE_I32: fillAs<int32_t>(bytes, count, input); break;
  case NNC_DTYPE_I64: fillAs<int64_t>(bytes, count, input); break;
  case NNC_DTYPE_U8: fillAs<uint8_t>(bytes, count, input); break;
  case NNC_DTYPE_BOOL:
    for (int64_t j = 0; j < count; ++j)
      bytes[j] = static_cast<unsigned char>((j + input) % 2);
    break;
  default: break;
  }
  return bytes;
}

void printValues(const nnc_tensor_view_t &view) {
  int64_t count = 1;
  for (int32_t i = 0; i < view.rank; ++i)
    count *= view.shape[i];
  for (int64_t j = 0; j < count; ++j) {
    switch (view.dtype) {
    case NNC_DTYPE_F32: std::printf(" %g", static_cast<const float *>(view.data)[j]); break;
    case NNC_DTYPE_F64: std::printf(" %g", static_cast<const double *>(view.data)[j]); break;
    case NNC_DTYPE_I32: std::printf(" %d", static_cast<const int32_t *>(view.data)[j]); break;
    case NNC_DTYPE_I64:
      std::printf(" %lld", static_cast<long long>(static_cast<const int64_t *>(view.data)[j]));
      break;
    case NNC_DTYPE_U8:
    case NNC_DTYPE_BOOL: std::printf(" %u", static_cast<const uint8_t *>(view.data)[j]); break;
    default: std::printf(" (%s values not shown)", nnc_dtype_name(view.dtype)); return;
    }
  }
}

int fail(const nnc::Status &status) {
  std::fprintf(stderr, "error: %s\n", status.message());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s MODULE.so [FUNCTION]\n", argv[0]);
    return 2;
  }
  // Handles release themselves in reverse order at the end of main.
  nnc::Result<nnc::Runtime> runtime = nnc::Runtime::create();
  if (!runtime.ok())
    return fail(runtime.status());
  nnc::Result<nnc::Module> module = nnc::Module::load(argv[1]);
  if (!module.ok())
    return fail(module.status());
  std::printf("module '%s': target %s, producer '%s'\n", module->path(), module->target(),
              module->producer());
  for (int32_t i = 0; i < module->functionCount(); ++i)
    printSignature(*module->function(i));

  nnc::Result<nnc::Session> session =
      nnc::Session::create(*runtime, *module, argc == 3 ? argv[2] : "main");
  if (!session.ok())
    return fail(session.status());
  nnc::Function function = session->function();
  // Inputs are bound zero-copy: the buffers must outlive the runs.
  std::vector<std::vector<unsigned char>> inputs;
  inputs.reserve(function.inputCount());
  for (int32_t i = 0; i < function.inputCount(); ++i) {
    const nnc_tensor_info_t &info = *function.input(i);
    inputs.push_back(fill(info, i));
    nnc::Status status = session->bindInput(i, nnc::viewOf(info, inputs.back().data(),
                                                           inputs.back().size()));
    if (!status.ok())
      return fail(status);
  }
  if (nnc::Status status = session->run(); !status.ok())
    return fail(status);

  std::printf("ran '%s'\n", function.name());
  for (int32_t i = 0; i < function.outputCount(); ++i) {
    nnc::Result<nnc_tensor_view_t> view = session->output(i);
    if (!view.ok())
      return fail(view.status());
    std::printf("output '%s' (%s):", function.output(i)->name,
                typeString(view->dtype, view->rank, view->shape).c_str());
    printValues(*view);
    std::printf("\n");
  }
  return 0;
}
