//===- Module.cpp - loading compiled modules and reading their descriptor -===//
//
// The descriptor is data from a file, so it is checked whole at load time:
// afterwards every getter and session can trust names, ranks and sizes.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/CudaDevice.h"
#include "runtime/src/Objects.h"
#include "runtime/src/Status.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>

using namespace nnc::runtime;

nnc_module::~nnc_module() {
  if (library)
    dlclose(library);
}

namespace {
/// Checks one declared tensor and fills info; returns an error text or "".
std::string readTensor(const nnc_abi_tensor_t &tensor, nnc_tensor_info_t &info) {
  if (!tensor.name)
    return "has no name";
  std::string what = "'" + std::string(tensor.name) + "'";
  if (nnc_dtype_size(tensor.dtype) == 0)
    return what + " has unknown dtype " + std::to_string(tensor.dtype);
  if (tensor.rank < 0 || (tensor.rank > 0 && !tensor.shape))
    return what + " has invalid rank " + std::to_string(tensor.rank) +
           (tensor.rank > 0 ? " with no shape" : "");
  int64_t elements = 1;
  bool dynamic = false;
  for (int32_t i = 0; i < tensor.rank; ++i) {
    int64_t dim = tensor.shape[i];
    if (dim < -1)
      return what + " has invalid dim " + std::to_string(dim);
    if (dim == -1)
      dynamic = true;
    else if (__builtin_mul_overflow(elements, dim, &elements))
      return what + " has a shape too large to address";
  }
  size_t bytes = 0;
  if (!dynamic && __builtin_mul_overflow(static_cast<uint64_t>(elements),
                                         nnc_dtype_size(tensor.dtype), &bytes))
    return what + " has a shape too large to address";
  info = {tensor.name, tensor.dtype, tensor.rank, tensor.shape,
          dynamic ? -1 : elements, bytes};
  return "";
}

/// Checks one function and its tensors; returns an error text or "".
std::string readFunction(const nnc_abi_function_t &abi, nnc_function &function) {
  if (!abi.name)
    return "has no name";
  if (!abi.entry)
    return "has no entry point";
  if (abi.workspace_alignment & (abi.workspace_alignment - 1))
    return "has workspace alignment " + std::to_string(abi.workspace_alignment) +
           ", not a power of two";
  for (bool isInput : {true, false}) {
    int32_t count = isInput ? abi.num_inputs : abi.num_outputs;
    const nnc_abi_tensor_t *tensors = isInput ? abi.inputs : abi.outputs;
    const char *kind = isInput ? "input" : "output";
    if (count < 0 || (count > 0 && !tensors))
      return std::string("has an invalid ") + kind + " list (count " + std::to_string(count) +
             ")";
    std::vector<nnc_tensor_info_t> &infos = isInput ? function.inputs : function.outputs;
    infos.resize(count);
    for (int32_t i = 0; i < count; ++i) {
      std::string error = readTensor(tensors[i], infos[i]);
      if (!error.empty())
        return kind + (" " + std::to_string(i)) + " " + error;
    }
  }
  bool dynamic = false;
  for (const auto *infos : {&function.inputs, &function.outputs})
    for (const nnc_tensor_info_t &info : *infos)
      dynamic |= info.element_count < 0;
  if (dynamic && !abi.prepare)
    return "has dynamic dims but no prepare function";
  if (abi.num_checks < 0 || (abi.num_checks > 0 && !abi.checks))
    return "has an invalid check list (count " + std::to_string(abi.num_checks) + ")";
  for (int32_t i = 0; i < abi.num_checks; ++i)
    if (!abi.checks[i])
      return "check " + std::to_string(i) + " has no message";
  if (abi.num_shape_inputs < 0 || abi.num_shape_inputs > abi.num_inputs ||
      (abi.num_shape_inputs > 0 && (!abi.shape_inputs || !abi.prepare)))
    return "has an invalid shape input list (count " + std::to_string(abi.num_shape_inputs) + ")";
  for (int32_t i = 0; i < abi.num_shape_inputs; ++i) {
    int32_t input = abi.shape_inputs[i];
    if (input < 0 || input >= abi.num_inputs || (i > 0 && input <= abi.shape_inputs[i - 1]))
      return "has an invalid shape input list (entry " + std::to_string(i) + " is " +
             std::to_string(input) + ")";
  }
  if (abi.num_data_dependent_outputs < 0 || abi.num_data_dependent_outputs > abi.num_outputs ||
      (abi.num_data_dependent_outputs > 0 && (!abi.data_dependent_outputs || !abi.prepare)))
    return "has an invalid data-dependent output list (count " +
           std::to_string(abi.num_data_dependent_outputs) + ")";
  for (int32_t i = 0; i < abi.num_data_dependent_outputs; ++i) {
    int32_t output = abi.data_dependent_outputs[i];
    if (output < 0 || output >= abi.num_outputs ||
        (i > 0 && output <= abi.data_dependent_outputs[i - 1]))
      return "has an invalid data-dependent output list (entry " + std::to_string(i) + " is " +
             std::to_string(output) + ")";
  }
  if (abi.num_kernels < 0 || (abi.num_kernels > 0 && !abi.kernels))
    return "has an invalid kernel list (count " + std::to_string(abi.num_kernels) + ")";
  function.kernels.resize(abi.num_kernels);
  for (int32_t i = 0; i < abi.num_kernels; ++i) {
    const nnc_abi_kernel_t &k = abi.kernels[i];
    if (!k.kind || !k.nodes)
      return "kernel " + std::to_string(i) + " has no kind or node list";
    function.kernels[i] = {k.kind, k.nodes, k.flops, k.bytes_read, k.bytes_written,
                           k.estimated_seconds};
  }
  function.abi = &abi;
  return "";
}

/// The instruction set extensions in `features` (NNC_CPU_* bits) this CPU
/// lacks, by name ("" when it has them all).
std::string missingCpuFeatures(uint32_t features) {
  struct Extension {
    uint32_t bit;
    const char *name;
    bool present;
  };
#if defined(__x86_64__)
  __builtin_cpu_init();
  const Extension known[] = {
      {NNC_CPU_AVX, "AVX", bool(__builtin_cpu_supports("avx"))},
      {NNC_CPU_AVX2, "AVX2", bool(__builtin_cpu_supports("avx2"))},
      {NNC_CPU_FMA, "FMA", bool(__builtin_cpu_supports("fma"))},
      {NNC_CPU_BMI2, "BMI2", bool(__builtin_cpu_supports("bmi2"))},
      {NNC_CPU_AVX512F, "AVX512F", bool(__builtin_cpu_supports("avx512f"))},
      {NNC_CPU_AVX512BW, "AVX512BW", bool(__builtin_cpu_supports("avx512bw"))},
      {NNC_CPU_AVX512DQ, "AVX512DQ", bool(__builtin_cpu_supports("avx512dq"))},
      {NNC_CPU_AVX512VL, "AVX512VL", bool(__builtin_cpu_supports("avx512vl"))},
      {NNC_CPU_AVX512VNNI, "AVX512VNNI", bool(__builtin_cpu_supports("avx512vnni"))},
      {NNC_CPU_AVX512BF16, "AVX512BF16", bool(__builtin_cpu_supports("avx512bf16"))},
  };
#else
  const Extension known[] = {{0, "", true}}; // the bits are x86's: any is missing here
#endif
  std::string missing;
  uint32_t unknown = features;
  for (const Extension &e : known) {
    unknown &= ~e.bit;
    if ((features & e.bit) && !e.present)
      missing += (missing.empty() ? "" : ", ") + std::string(e.name);
  }
  if (unknown)
    missing += (missing.empty() ? "" : ", ") + std::string("extensions this runtime does not know");
  return missing;
}

/// Checks what a CUDA module adds: constants, kernel names and PTX images;
/// returns an error text or "".
std::string readCuda(const nnc_abi_module_t &abi) {
  if (abi.constants_size > 0 && !abi.constants)
    return "has " + std::to_string(abi.constants_size) + " bytes of constants but no data";
  if (abi.num_cuda_kernels < 0 || (abi.num_cuda_kernels > 0 && !abi.cuda_kernels))
    return "invalid CUDA kernel list (count " + std::to_string(abi.num_cuda_kernels) + ")";
  for (int32_t i = 0; i < abi.num_cuda_kernels; ++i)
    if (!abi.cuda_kernels[i])
      return "CUDA kernel " + std::to_string(i) + " has no name";
  // A function of only views and copies has no kernel and needs no image.
  if (abi.num_cuda_images < 0 || (abi.num_cuda_images > 0 && !abi.cuda_images) ||
      (abi.num_cuda_images == 0 && abi.num_cuda_kernels > 0))
    return "no CUDA image (count " + std::to_string(abi.num_cuda_images) +
           ") for its kernels (count " + std::to_string(abi.num_cuda_kernels) + ")";
  for (int32_t i = 0; i < abi.num_cuda_images; ++i) {
    const nnc_abi_cuda_image_t &image = abi.cuda_images[i];
    std::string what = "CUDA image " + std::to_string(i);
    int number;
    bool specific;
    if (!image.chip)
      return what + " has no chip";
    if (!cuda::parseChip(image.chip, number, specific))
      return what + " has chip '" + image.chip + "', expected sm_<digits> or sm_<digits>a";
    // The driver reads the PTX up to its NUL.
    if (!image.ptx || image.ptx[image.ptx_size] != '\0')
      return what + " ('" + image.chip + "') has no NUL-terminated PTX of " +
             std::to_string(image.ptx_size) + " bytes";
  }
  // The host images, for the cuda-emulated device: the emulator trusts
  // these bounds when it checks launches.
  for (int32_t i = 0; abi.cuda_host_kernels && i < abi.num_cuda_kernels; ++i) {
    const nnc_abi_cuda_host_kernel_t &kernel = abi.cuda_host_kernels[i];
    std::string what = "the host image of CUDA kernel '" + std::string(abi.cuda_kernels[i]) + "'";
    if (!kernel.entry)
      return what + " has no entry";
    if (kernel.flags & ~NNC_CUDA_HOST_KERNEL_COLLECTIVES)
      return what + " has unknown flags " + std::to_string(kernel.flags);
    for (int d = 0; d < 3; ++d)
      if (kernel.block_min[d] == 0 || kernel.block_min[d] > kernel.block_max[d] ||
          kernel.grid_min[d] == 0 || kernel.grid_min[d] > kernel.grid_max[d])
        return what + " has empty launch bounds";
  }
  return "";
}

/// Checks the descriptor's module-level fields and functions; returns an
/// error text or "".
std::string readDescriptor(nnc_module &module) {
  const nnc_abi_module_t &abi = *module.abi;
  if (!abi.producer || !abi.target || !abi.target_cpu)
    return "producer, target or target_cpu is NULL";
  if (abi.num_functions < 0 || (abi.num_functions > 0 && !abi.functions))
    return "invalid function list (count " + std::to_string(abi.num_functions) + ")";
  if (abi.precision && std::strcmp(abi.precision, "f32") != 0 &&
      !((std::strcmp(abi.precision, "tf32") == 0 || std::strcmp(abi.precision, "bf16") == 0 ||
         std::strcmp(abi.precision, "f16") == 0) &&
        std::strcmp(abi.target, "cuda") == 0))
    return std::string("precision '") + abi.precision + "' is not one a " + abi.target +
           " module may have";
  if (std::strcmp(abi.target, "cuda") == 0) {
    std::string error = readCuda(abi);
    if (!error.empty())
      return error;
  }
  module.functions.resize(abi.num_functions);
  for (int32_t i = 0; i < abi.num_functions; ++i) {
    module.functions[i].module = &module;
    const nnc_abi_function_t &function = abi.functions[i];
    std::string error = readFunction(function, module.functions[i]);
    if (!error.empty())
      return (function.name ? "function '" + std::string(function.name) + "'"
                            : "function " + std::to_string(i)) +
             " " + error;
    // Sessions find functions by name: a second one would be unreachable.
    for (int32_t j = 0; j < i; ++j)
      if (std::strcmp(abi.functions[j].name, function.name) == 0)
        return "two functions are named '" + std::string(function.name) + "'";
  }
  return "";
}

nnc_status_t findTensor(const nnc_function_t *function, const char *name, bool isInput,
                        int32_t *out_index) {
  const char *kind = isInput ? "input" : "output";
  if (!function || !name || !out_index)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      std::string("nnc_function_find_") + kind +
                          ": function, name and out_index must not be NULL");
  const std::vector<nnc_tensor_info_t> &tensors = isInput ? function->inputs : function->outputs;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (std::strcmp(tensors[i].name, name) == 0) {
      *out_index = static_cast<int32_t>(i);
      return nullptr;
    }
  }
  return makeStatus(NNC_STATUS_NOT_FOUND,
                    "function '" + std::string(function->abi->name) + "' has no " + kind + " '" +
                        name + "' (" + kind + "s: " +
                        nameList(static_cast<int32_t>(tensors.size()),
                                 [&](int32_t i) { return tensors[i].name; }) +
                        ")");
}
} // namespace

nnc_status_t nnc_module_load(const char *path, nnc_module_t **out_module) {
  if (!path || !out_module)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "nnc_module_load: path and out_module must not be NULL");
  std::string where = "module '" + std::string(path) + "'";
  struct stat info;
  if (stat(path, &info) != 0) {
    int error = errno;
    return makeStatus(error == ENOENT ? NNC_STATUS_NOT_FOUND : NNC_STATUS_INVALID_ARGUMENT,
                      "cannot open " + where + ": " + std::strerror(error));
  }

  std::unique_ptr<nnc_module, void (*)(nnc_module *)> module(new nnc_module(),
                                                             [](nnc_module *m) { m->release(); });
  module->path = path;
  // dlopen searches the library path for a name without a slash; a module
  // path means a file.
  std::string file = std::strchr(path, '/') ? path : "./" + std::string(path);
  module->library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!module->library)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, "cannot load " + where + ": " + dlerror());

  dlerror(); // dlsym reports failure only through dlerror
  auto entry = reinterpret_cast<nnc_abi_module_fn>(dlsym(module->library, NNC_ABI_MODULE_SYMBOL));
  if (!entry)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "'" + std::string(path) + "' is not an nnc module: it does not export '" +
                          NNC_ABI_MODULE_SYMBOL + "'");
  module->abi = entry();
  if (!module->abi)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      where + ": " + NNC_ABI_MODULE_SYMBOL + "() returned NULL");
  if (module->abi->abi_version != NNC_ABI_VERSION)
    return makeStatus(NNC_STATUS_FAILED_PRECONDITION,
                      where + " was built for ABI version " +
                          std::to_string(module->abi->abi_version) +
                          ", this runtime supports " + std::to_string(NNC_ABI_VERSION) +
                          " (recompile it with a matching nnc)");
  std::string error = readDescriptor(*module);
  if (!error.empty())
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, where + " has a malformed descriptor: " + error);
  std::string missing = missingCpuFeatures(module->abi->cpu_features);
  if (!missing.empty())
    return makeStatus(NNC_STATUS_FAILED_PRECONDITION,
                      where + " was compiled for CPU '" + module->abi->target_cpu +
                          "' and needs " + missing +
                          ", which this CPU lacks (recompile it for this CPU: nnc without -cpu)");
  *out_module = module.release();
  return nullptr;
}

void nnc_module_release(nnc_module_t *module) {
  if (module)
    module->release();
}

const char *nnc_module_path(const nnc_module_t *module) { return module->path.c_str(); }
const char *nnc_module_producer(const nnc_module_t *module) { return module->abi->producer; }
const char *nnc_module_target(const nnc_module_t *module) { return module->abi->target; }
const char *nnc_module_target_cpu(const nnc_module_t *module) { return module->abi->target_cpu; }

const char *nnc_module_precision(const nnc_module_t *module) {
  return module->abi->precision ? module->abi->precision : "f32";
}

int32_t nnc_module_function_count(const nnc_module_t *module) {
  return static_cast<int32_t>(module->functions.size());
}

const nnc_function_t *nnc_module_function(const nnc_module_t *module, int32_t index) {
  if (index < 0 || index >= nnc_module_function_count(module))
    return nullptr;
  return &module->functions[index];
}

nnc_status_t nnc_module_find_function(const nnc_module_t *module, const char *name,
                                      const nnc_function_t **out_function) {
  if (!module || !name || !out_function)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "nnc_module_find_function: module, name and out_function must not be NULL");
  for (const nnc_function &function : module->functions) {
    if (std::strcmp(function.abi->name, name) == 0) {
      *out_function = &function;
      return nullptr;
    }
  }
  return makeStatus(NNC_STATUS_NOT_FOUND,
                    "module '" + module->path + "' has no function '" + name + "' (functions: " +
                        nameList(nnc_module_function_count(module),
                                 [&](int32_t i) { return module->functions[i].abi->name; }) +
                        ")");
}

const char *nnc_function_name(const nnc_function_t *function) { return function->abi->name; }

int32_t nnc_function_input_count(const nnc_function_t *function) {
  return static_cast<int32_t>(function->inputs.size());
}

int32_t nnc_function_output_count(const nnc_function_t *function) {
  return static_cast<int32_t>(function->outputs.size());
}

const nnc_tensor_info_t *nnc_function_input(const nnc_function_t *function, int32_t index) {
  if (index < 0 || index >= nnc_function_input_count(function))
    return nullptr;
  return &function->inputs[index];
}

const nnc_tensor_info_t *nnc_function_output(const nnc_function_t *function, int32_t index) {
  if (index < 0 || index >= nnc_function_output_count(function))
    return nullptr;
  return &function->outputs[index];
}

nnc_status_t nnc_function_find_input(const nnc_function_t *function, const char *name,
                                     int32_t *out_index) {
  return findTensor(function, name, /*isInput=*/true, out_index);
}

nnc_status_t nnc_function_find_output(const nnc_function_t *function, const char *name,
                                      int32_t *out_index) {
  return findTensor(function, name, /*isInput=*/false, out_index);
}

uint64_t nnc_function_workspace_size(const nnc_function_t *function) {
  return function->abi->workspace_size;
}

int32_t nnc_function_kernel_count(const nnc_function_t *function) {
  return static_cast<int32_t>(function->kernels.size());
}

const nnc_kernel_info_t *nnc_function_kernel(const nnc_function_t *function, int32_t index) {
  if (index < 0 || static_cast<size_t>(index) >= function->kernels.size())
    return nullptr;
  return &function->kernels[index];
}
