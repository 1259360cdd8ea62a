//===- EmulatedDevice.cpp - sessions of CUDA modules on the host CPU ------===//
//
// Mirrors CudaDevice: device memory is allocated at creation (constants
// copied once, workspace, one buffer per input and output), a run copies the
// inputs in, calls the module's host code, whose launches execute here on
// the CPU as they come, and copies the outputs out. Inputs are copies, so a
// kernel writing one cannot touch the caller's buffer (except one bound as
// device memory, which is host memory here); the checking mode reports it.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/EmulatedDevice.h"

#include "runtime/src/Status.h"

#include <algorithm>
#include <cstring>

using namespace nnc::runtime;
using namespace nnc::runtime::emulated;

namespace {
/// cuMemAlloc's alignment, which the module's code may rely on.
constexpr size_t kDeviceAlignment = 256;

/// The driver's codes for what the launch hook reports, as on a GPU.
constexpr int32_t kInvalidValue = 1;   // CUDA_ERROR_INVALID_VALUE
constexpr int32_t kLaunchFailed = 719; // CUDA_ERROR_LAUNCH_FAILED

bool checkingRequested() {
  const char *value = std::getenv("NNC_CUDA_EMULATED_CHECK");
  return value && *value && std::strcmp(value, "0") != 0;
}

std::string quote(const char *kind, const nnc_tensor_info_t &info) {
  return std::string(kind) + " '" + info.name + "'";
}
} // namespace

EmulatedDevice::EmulatedDevice(const nnc_module &module, const nnc_function &function,
                               const nnc_abi_context_t &host)
    : module(&module), function(&function), emulator(host) {}

nnc_status_t EmulatedDevice::allocate(size_t bytes, size_t alignment, const std::string &what,
                                      Buffer &out) {
  out.reset();
  if (bytes == 0)
    return nullptr;
  if (bytes > SIZE_MAX - alignment)
    return makeStatus(NNC_STATUS_RESOURCE_EXHAUSTED, "device 'cuda-emulated': cannot allocate " +
                                                         std::to_string(bytes) + " bytes for " +
                                                         what);
  out.reset(static_cast<char *>(
      std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment)));
  if (!out)
    return makeStatus(NNC_STATUS_RESOURCE_EXHAUSTED, "device 'cuda-emulated': cannot allocate " +
                                                         std::to_string(bytes) + " bytes for " +
                                                         what);
  return nullptr;
}

nnc_status_t EmulatedDevice::create(const nnc_module &module, const nnc_function &function,
                                    const nnc_abi_context_t &host,
                                    std::unique_ptr<EmulatedDevice> &out) {
  const nnc_abi_module_t &abi = *module.abi;
  if (!abi.cuda_host_kernels && abi.num_cuda_kernels > 0)
    return makeStatus(NNC_STATUS_FAILED_PRECONDITION,
                      "module '" + module.path +
                          "' has no host image of its kernels, which device 'cuda-emulated' "
                          "runs (recompile it with an nnc that emits one)");
  std::unique_ptr<EmulatedDevice> self(new EmulatedDevice(module, function, host));
  self->checking = checkingRequested();

  if (nnc_status_t status = self->allocate(abi.constants_size, kDeviceAlignment,
                                           "the constants of module '" + module.path + "'",
                                           self->constants))
    return status;
  if (abi.constants_size)
    std::memcpy(self->constants.get(), abi.constants, abi.constants_size);
  std::string name = function.abi->name;
  size_t alignment = std::max<size_t>(kDeviceAlignment, function.abi->workspace_alignment);
  if (nnc_status_t status = self->allocate(function.abi->workspace_size, alignment,
                                           "the workspace of function '" + name + "'",
                                           self->workspace))
    return status;
  if (function.abi->workspace_size)
    self->writable.push_back({self->workspace.get(), size_t(function.abi->workspace_size),
                              "the workspace"});
  for (bool isInput : {true, false}) {
    const std::vector<nnc_tensor_info_t> &infos = isInput ? function.inputs : function.outputs;
    std::vector<void *> &addresses = isInput ? self->inputs : self->outputs;
    for (const nnc_tensor_info_t &info : infos) {
      Buffer buffer;
      if (nnc_status_t status = self->allocate(info.byte_size, kDeviceAlignment,
                                               quote(isInput ? "input" : "output", info), buffer))
        return status;
      addresses.push_back(buffer.get());
      if (!isInput && info.byte_size) {
        self->outputRegion.push_back(self->writable.size());
        self->writable.push_back({buffer.get(), info.byte_size, quote("output", info)});
      } else if (!isInput) {
        self->outputRegion.push_back(-1);
      }
      self->buffers.push_back(std::move(buffer));
    }
  }
  self->ownInputs = self->inputs;
  self->ownOutputs = self->outputs;
  self->inputOnDevice.assign(self->inputs.size(), false);
  self->outputOnDevice.assign(self->outputs.size(), false);
  if (self->checking) {
    size_t total = 0;
    for (const Region &region : self->writable)
      total += region.size;
    for (Buffer *copy : {&self->before, &self->after})
      if (nnc_status_t status = self->allocate(total, 64, "checking the launches", *copy))
        return status;
  }

  EmulatedDevice &device = *self;
  device.summary = "cuda-emulated (kernels on the host CPU, " +
                   std::to_string(std::max(1, host.num_threads)) + " threads" +
                   (device.checking ? ", each launch checked in reversed order" : "") + ")";
  device.cuda = {&device, device.constants.get(), launch};
  device.callContext = host;
  device.callContext.cuda = &device.cuda;
  out = std::move(self);
  return nullptr;
}

void EmulatedDevice::bindDeviceMemory(bool isInput, size_t index, void *address) {
  std::vector<void *> &addresses = isInput ? inputs : outputs;
  void *next = address ? address : (isInput ? ownInputs : ownOutputs)[index];
  (isInput ? inputOnDevice : outputOnDevice)[index] = address != nullptr;
  // The checking mode watches what kernels write wherever it is.
  if (!isInput && outputRegion[index] >= 0)
    writable[outputRegion[index]].data = static_cast<char *>(next);
  addresses[index] = next;
}

nnc_status_t EmulatedDevice::run(void *const *hostInputs, void *const *hostOutputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    size_t bytes = function->inputs[i].byte_size;
    // An input in the caller's device memory is read in place; the checking
    // mode keeps a copy in the session's own buffer to find writes to it.
    if (bytes && !inputOnDevice[i])
      std::memcpy(inputs[i], hostInputs[i], bytes);
    else if (bytes && checking)
      std::memcpy(ownInputs[i], inputs[i], bytes);
  }
  launchError.clear();
  launchCode = 0;
  runInputs = hostInputs;
  int32_t code =
      function->abi->entry(inputs.data(), outputs.data(), workspace.get(), &callContext);
  runInputs = nullptr;
  // Host code goes on enqueueing after a failed launch: the first failure
  // fails the run either way.
  if (code == 0)
    code = launchCode;
  if (code != 0)
    return makeStatus(NNC_STATUS_INTERNAL,
                      "function '" + std::string(function->abi->name) + "' of module '" +
                          module->path + "' failed with code " + std::to_string(code) +
                          (launchError.empty() ? "" : ": " + launchError));
  for (size_t i = 0; i < outputs.size(); ++i)
    if (function->outputs[i].byte_size && !outputOnDevice[i])
      std::memcpy(hostOutputs[i], outputs[i], function->outputs[i].byte_size);
  return nullptr;
}

int32_t EmulatedDevice::launch(void *opaque, int32_t kernel, uint32_t grid_x, uint32_t grid_y,
                               uint32_t grid_z, uint32_t block_x, uint32_t block_y,
                               uint32_t block_z, uint32_t shared_bytes, void **params) {
  EmulatedDevice &self = *static_cast<EmulatedDevice *>(opaque);
  const nnc_abi_module_t &abi = *self.module->abi;
  // Only the first failure is kept: it is the cause, later ones follow from it.
  auto failed = [&](int32_t code, const std::string &message) {
    if (self.launchCode == 0) {
      self.launchCode = code;
      self.launchError = message;
    }
    return code;
  };
  // After a failed launch the run's results are void: the later launches
  // would only compute from what the failed one left undone.
  if (self.launchCode != 0)
    return self.launchCode;
  if (kernel < 0 || kernel >= abi.num_cuda_kernels)
    return failed(kInvalidValue, "kernel index " + std::to_string(kernel) +
                                     " is out of range (the module has " +
                                     std::to_string(abi.num_cuda_kernels) + " kernels)");
  Launch launch{&abi.cuda_host_kernels[kernel],
                {grid_x, grid_y, grid_z},
                {block_x, block_y, block_z},
                shared_bytes,
                params};
  auto where = [&] {
    return "kernel '" + std::string(abi.cuda_kernels[kernel]) + "' (grid " +
           std::to_string(grid_x) + "x" + std::to_string(grid_y) + "x" + std::to_string(grid_z) +
           ", block " + std::to_string(block_x) + "x" + std::to_string(block_y) + "x" +
           std::to_string(block_z) + ", " + std::to_string(shared_bytes) +
           " dynamic shared bytes)";
  };
  if (std::string error = checkLaunch(launch); !error.empty())
    return failed(kInvalidValue, where() + ": " + error);
  std::string error = self.checking ? self.runChecked(launch) : self.emulator.run(launch, {});
  if (!error.empty())
    return failed(kLaunchFailed, where() + ": " + error);
  return 0;
}

// A kernel whose threads or blocks race, or that reads shared memory no
// thread wrote, gives results that depend on the order they run in: run it
// first to last with zeroed shared memory, then last to first with shared
// memory full of NaNs, from the same state, and compare every byte.
std::string EmulatedDevice::runChecked(const Launch &launch) {
  auto save = [&](char *to) {
    for (const Region &region : writable) {
      std::memcpy(to, region.data, region.size);
      to += region.size;
    }
  };
  save(before.get());
  if (std::string error = emulator.run(launch, {/*reversed=*/false, /*poison=*/false,
                                                /*serial=*/true});
      !error.empty())
    return error;
  save(after.get());
  const char *from = before.get();
  for (const Region &region : writable) {
    std::memcpy(region.data, from, region.size);
    from += region.size;
  }
  if (std::string error = emulator.run(launch, {/*reversed=*/true, /*poison=*/true,
                                                /*serial=*/true});
      !error.empty())
    return error + " (running the threads in reversed order)";
  const char *expected = after.get();
  for (const Region &region : writable) {
    for (size_t i = 0; i < region.size; ++i)
      if (region.data[i] != expected[i])
        return "the results depend on the order the threads run in: " + region.name +
               " differs at byte " + std::to_string(i) +
               " when they run in reversed order with poisoned shared memory (a race, or a "
               "read of shared memory that no thread wrote)";
    expected += region.size;
  }
  // Kernels only read the inputs and the constants.
  for (size_t i = 0; i < inputs.size(); ++i)
    if (function->inputs[i].byte_size &&
        std::memcmp(inputs[i], inputOnDevice[i] ? ownInputs[i] : runInputs[i],
                    function->inputs[i].byte_size) != 0)
      return "wrote " + quote("input", function->inputs[i]) + ", which kernels only read";
  const nnc_abi_module_t &abi = *module->abi;
  if (abi.constants_size && std::memcmp(constants.get(), abi.constants, abi.constants_size) != 0)
    return "wrote the module's constants, which kernels only read";
  return "";
}
