//===- FuzzDescriptor.cpp - fuzz the runtime's check of module descriptors -===//
//
// Input: corruptions of a valid CPU module's descriptor (FuzzBytes.h: the
// empty input is the valid module, a function `main` adding two f32[2,3]).
// Counts, ranks, dims, dtypes, names, alignments, sizes, CUDA images and
// launch bounds take arbitrary values; pointers always point to arrays as
// long as the counts next to them say, as in any file the compiler could
// have written and a disk could have corrupted.
//
// nnc_module_load must refuse the descriptor with a status, or accept it;
// then every function must run with buffers of the sizes the runtime
// reported, which the entry point below checks byte by byte (the sanitizer
// sees any access past them).
//
//===----------------------------------------------------------------------===//

#include "test/Fuzz/FuzzBytes.h"

#include "nnc/abi.h"
#include "nnc/runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using nnc::fuzz::Bytes;

namespace {
/// Sessions are made only where every buffer stays below this, so that the
/// target measures the checks, not the allocator.
constexpr uint64_t kMaxBytes = 1 << 20;

/// The function being run and its descriptor, for the entry point.
const nnc_function_t *running;
const nnc_abi_function_t *runningAbi;

void check(bool condition, const char *what) {
  if (!condition) {
    std::fprintf(stderr, "FuzzDescriptor: %s\n", what);
    std::abort();
  }
}

/// Reads every input byte and writes every output byte the runtime declared,
/// and checks the workspace's alignment.
int32_t entry(void *const *inputs, void *const *outputs, void *workspace,
              const nnc_abi_context_t *context) {
  check(context != nullptr, "no context");
  uint64_t alignment = std::max<uint64_t>(64, runningAbi->workspace_alignment);
  check(reinterpret_cast<uintptr_t>(workspace) % alignment == 0, "misaligned workspace");
  unsigned sum = 0;
  for (int32_t i = 0; i < nnc_function_input_count(running); ++i) {
    const nnc_tensor_info_t *info = nnc_function_input(running, i);
    const unsigned char *data = static_cast<const unsigned char *>(inputs[i]);
    for (size_t b = 0; b < info->byte_size; ++b)
      sum += data[b];
  }
  for (int32_t i = 0; i < nnc_function_output_count(running); ++i) {
    const nnc_tensor_info_t *info = nnc_function_output(running, i);
    std::memset(outputs[i], static_cast<int>(sum), info->byte_size);
  }
  std::memset(workspace, 0, nnc_function_workspace_size(running));
  return 0;
}

void cudaHostEntry(void **, nnc_abi_cuda_thread_t *) {}

void readTensors(Bytes &in, int32_t count, nnc_abi_tensor_t *tensors, const char *prefix) {
  for (int32_t i = 0; i < count; ++i) {
    nnc_abi_tensor_t &t = tensors[i];
    t.name = in.string(in.keep(prefix + std::to_string(i)));
    uint8_t dtype = in.byte();
    t.dtype = dtype == 0xff ? static_cast<int32_t>(in.u64()) : NNC_DTYPE_F32 ^ dtype;
    t.rank = in.near(2);
    int64_t *shape = in.byte() == 0 ? in.array<int64_t>(t.rank) : nullptr;
    for (int32_t d = 0; shape && d < t.rank; ++d)
      shape[d] = in.dim(d == 0 ? 2 : 3);
    t.shape = shape;
  }
}

void readFunction(Bytes &in, int32_t index, nnc_abi_function_t &f) {
  f.name = in.string(index == 0 ? "main" : in.keep("f" + std::to_string(index)));
  f.entry = in.byte() == 0 ? entry : nullptr;
  f.num_inputs = in.near(2);
  f.num_outputs = in.near(1);
  for (bool isInput : {true, false}) {
    int32_t count = isInput ? f.num_inputs : f.num_outputs;
    nnc_abi_tensor_t *tensors = in.byte() == 0 ? in.array<nnc_abi_tensor_t>(count) : nullptr;
    if (tensors)
      readTensors(in, count, tensors, isInput ? "x" : "y");
    (isInput ? f.inputs : f.outputs) = tensors;
  }
  uint8_t workspace = in.byte();
  f.workspace_size = workspace == 0 ? 24 : workspace == 0xff ? in.u64() : workspace;
  uint8_t alignment = in.byte();
  f.workspace_alignment = alignment == 0 ? 64 : alignment == 0xff ? in.u64() : alignment;
  // The kernel table of nnc --profile: typically none.
  f.num_kernels = in.near(0);
  auto *kernels = in.byte() == 0 ? in.array<nnc_abi_kernel_t>(f.num_kernels) : nullptr;
  for (int32_t k = 0; kernels && k < f.num_kernels; ++k)
    kernels[k] = {in.string("parallel loop"), in.string("n"), 1, 2, 3, 0};
  f.kernels = kernels;
  // The inputs whose values prepare reads: typically none.
  f.num_shape_inputs = in.near(0);
  auto *shapeInputs = in.byte() == 0 ? in.array<int32_t>(f.num_shape_inputs) : nullptr;
  for (int32_t k = 0; shapeInputs && k < f.num_shape_inputs; ++k)
    shapeInputs[k] = in.near(k);
  f.shape_inputs = shapeInputs;
  // The outputs whose dims the run computes: typically none.
  f.num_data_dependent_outputs = in.near(0);
  auto *dependent = in.byte() == 0 ? in.array<int32_t>(f.num_data_dependent_outputs) : nullptr;
  for (int32_t k = 0; dependent && k < f.num_data_dependent_outputs; ++k)
    dependent[k] = in.near(k);
  f.data_dependent_outputs = dependent;
}

/// A CUDA module's additions, typical: one kernel, one sm_80 image, host images.
void readCuda(Bytes &in, nnc_abi_module_t &m) {
  uint8_t constants = in.byte();
  m.constants_size = constants == 0xff ? in.u64() : constants;
  m.constants = in.byte() == 0 ? in.array<char>(static_cast<int64_t>(
                                     std::min<uint64_t>(m.constants_size, kMaxBytes)))
                               : nullptr;
  if (m.constants_size > kMaxBytes)
    m.constants_size = 0; // the pointer's block must be as long as declared
  m.num_cuda_kernels = in.near(1);
  const char **kernels = in.byte() == 0 ? in.array<const char *>(m.num_cuda_kernels) : nullptr;
  for (int32_t i = 0; kernels && i < m.num_cuda_kernels; ++i)
    kernels[i] = in.string("k");
  m.cuda_kernels = kernels;
  m.num_cuda_images = in.near(1);
  auto *images = in.byte() == 0 ? in.array<nnc_abi_cuda_image_t>(m.num_cuda_images) : nullptr;
  for (int32_t i = 0; images && i < m.num_cuda_images; ++i) {
    images[i].chip = in.string("sm_80");
    uint64_t size = in.byte();
    char *ptx = in.array<char>(static_cast<int64_t>(size) + 1);
    for (uint64_t b = 0; b <= size; ++b)
      ptx[b] = static_cast<char>(b == size ? in.byte() : 'x' ^ in.byte());
    images[i].ptx = in.byte() == 0 ? ptx : nullptr;
    images[i].ptx_size = size;
  }
  m.cuda_images = images;
  auto *host = in.byte() == 0 ? in.array<nnc_abi_cuda_host_kernel_t>(m.num_cuda_kernels)
                              : nullptr;
  for (int32_t i = 0; host && i < m.num_cuda_kernels; ++i) {
    host[i].entry = in.byte() == 0 ? cudaHostEntry : nullptr;
    host[i].flags = in.byte();
    host[i].shared_size = in.byte();
    for (int d = 0; d < 3; ++d) {
      host[i].block_min[d] = 1 ^ in.byte();
      host[i].block_max[d] = 1024 ^ in.byte();
      host[i].grid_min[d] = 1 ^ in.byte();
      host[i].grid_max[d] = 65535 ^ in.byte();
    }
  }
  m.cuda_host_kernels = host;
}

/// Runs every function of an accepted CPU module whose buffers are small.
void runFunctions(nnc_module_t *module, const nnc_abi_function_t *abi) {
  nnc_runtime_options_t options;
  nnc_runtime_options_initialize(&options);
  options.num_threads = 1;
  nnc_runtime_t *runtime = nullptr;
  check(nnc_runtime_create(&options, &runtime) == nullptr, "runtime");
  for (int32_t f = 0; f < nnc_module_function_count(module); ++f) {
    const nnc_function_t *function = nnc_module_function(module, f);
    bool small = nnc_function_workspace_size(function) <= kMaxBytes &&
                 abi[f].workspace_alignment <= kMaxBytes;
    for (int32_t i = 0; i < nnc_function_input_count(function); ++i)
      small = small && nnc_function_input(function, i)->byte_size <= kMaxBytes;
    for (int32_t i = 0; i < nnc_function_output_count(function); ++i)
      small = small && nnc_function_output(function, i)->byte_size <= kMaxBytes;
    if (!small)
      continue;
    nnc_session_options_t sessionOptions;
    nnc_session_options_initialize(&sessionOptions);
    sessionOptions.function = nnc_function_name(function);
    nnc_session_t *session = nullptr;
    if (nnc_status_t status = nnc_session_create(runtime, module, &sessionOptions, &session)) {
      nnc_status_free(status);
      continue;
    }
    std::vector<std::vector<unsigned char>> inputs;
    for (int32_t i = 0; i < nnc_function_input_count(function); ++i) {
      const nnc_tensor_info_t *info = nnc_function_input(function, i);
      inputs.emplace_back(info->byte_size, 1);
      nnc_tensor_view_t view = {inputs.back().data(), info->byte_size, info->dtype, info->rank,
                                info->shape};
      if (nnc_status_t status = nnc_session_bind_input(session, i, &view)) {
        std::fprintf(stderr, "FuzzDescriptor: %s\n", nnc_status_message(status));
        check(false, "binding an input as its info describes it failed");
      }
    }
    running = nnc_session_function(session);
    runningAbi = &abi[f];
    check(running == function, "the session runs another function than the one named");
    check(nnc_session_run(session) == nullptr, "a run with every input bound failed");
    nnc_session_release(session);
  }
  nnc_runtime_release(runtime);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static void (*setDescriptor)(const nnc_abi_module_t *) = [] {
    // Held open for the process: each load below only takes a reference.
    void *library = dlopen(NNC_FUZZ_MODULE, RTLD_NOW | RTLD_LOCAL);
    check(library != nullptr, "cannot load " NNC_FUZZ_MODULE);
    return reinterpret_cast<void (*)(const nnc_abi_module_t *)>(
        dlsym(library, "nnc_fuzz_set_descriptor"));
  }();

  Bytes in(data, size);
  nnc_abi_module_t m = {};
  m.abi_version = NNC_ABI_VERSION ^ in.byte();
  m.cpu_features = in.byte() == 0 ? 0 : static_cast<uint32_t>(in.u64());
  m.producer = in.string("nnc fuzz");
  uint8_t target = in.byte();
  m.target = target == 0 ? "cpu" : target == 1 ? "cuda" : in.string("cpu");
  m.target_cpu = in.string("x86-64");
  m.num_functions = in.near(1);
  nnc_abi_function_t *functions =
      in.byte() == 0 ? in.array<nnc_abi_function_t>(m.num_functions) : nullptr;
  for (int32_t i = 0; functions && i < m.num_functions; ++i)
    readFunction(in, i, functions[i]);
  m.functions = functions;
  if (m.target && std::strcmp(m.target, "cuda") == 0)
    readCuda(in, m);

  setDescriptor(&m);
  nnc_module_t *module = nullptr;
  nnc_status_t status = nnc_module_load(NNC_FUZZ_MODULE, &module);
  setDescriptor(nullptr);
  if (status) {
    check(nnc_status_message(status)[0] != '\0', "a refusal must say why");
    nnc_status_free(status);
    return 0;
  }
  if (std::strcmp(nnc_module_target(module), "cpu") == 0)
    runFunctions(module, functions);
  nnc_module_release(module);
  return 0;
}
