//===- CudaDevice.cpp - sessions of CUDA modules on a GPU -----------------===//
//
// Everything a run needs is made at creation, as on the CPU: a run copies
// inputs in, enqueues the kernels and copies outputs out on the session's
// stream, and allocates nothing. The host code of the module runs on the
// calling thread and only enqueues launches, through CudaDevice::launch.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/CudaDevice.h"
#include "runtime/src/Status.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

using namespace nnc::runtime;
using namespace nnc::runtime::cuda;

namespace {
/// Kernels may use this much dynamic shared memory without opting in
/// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), on every chip since sm_20.
constexpr uint32_t kDefaultSharedLimit = 48 * 1024;

/// cuMemAlloc's guaranteed alignment.
constexpr size_t kDriverAlignment = 256;

/// JIT error logs longer than this are cut; the first errors are the useful ones.
constexpr size_t kJitLogBytes = 16 * 1024;

/// The image for a device of compute capability `capability` (10 * major +
/// minor): "sm_XYa" only on X.Y exactly, preferred there; otherwise the
/// newest "sm_XY" with XY <= capability, whose PTX the driver compiles for
/// the device. -1 when none fits.
int chooseImage(const nnc_abi_module_t &abi, int capability) {
  int best = -1, bestNumber = -1;
  for (int i = 0; i < abi.num_cuda_images; ++i) {
    int number;
    bool specific;
    if (!parseChip(abi.cuda_images[i].chip, number, specific))
      continue; // refused at load; kept here so this never reads past a bad name
    if (specific && number == capability)
      return i;
    if (!specific && number <= capability && number > bestNumber) {
      best = i;
      bestNumber = number;
    }
  }
  return best;
}

std::string versionString(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

/// The JIT's log without trailing blank lines, or "" when it wrote none.
std::string trimLog(const char *log) {
  std::string text = log;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r'))
    text.pop_back();
  return text;
}

bool captureUnsupported(CUresult result) {
  return result == CUDA_ERROR_NOT_SUPPORTED || result == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

std::string quote(const char *kind, const nnc_tensor_info_t &info) {
  return std::string(kind) + " '" + info.name + "'";
}
} // namespace

bool nnc::runtime::cuda::parseChip(const char *chip, int &number, bool &specific) {
  if (std::strncmp(chip, "sm_", 3) != 0)
    return false;
  const char *digits = chip + 3, *end = digits;
  number = 0;
  while (*end >= '0' && *end <= '9' && end - digits < 4)
    number = number * 10 + (*end++ - '0');
  specific = *end == 'a';
  return end != digits && end[specific ? 1 : 0] == '\0';
}

nnc_status_t CudaDevice::fail(const std::string &what, const char *call, CUresult result) const {
  return driver->failure("device '" + name + "'" + (what.empty() ? "" : ", " + what), call,
                         result);
}

nnc_status_t CudaDevice::create(const std::string &device, int ordinal, const nnc_module &module,
                                const nnc_function &function, const nnc_abi_context_t &host,
                                bool profile, std::unique_ptr<CudaDevice> &out) {
  // Built up step by step: on a failure the destructor releases what exists.
  std::unique_ptr<CudaDevice> self(new CudaDevice());
  self->name = device;
  self->module = &module;
  self->function = &function;
  if (nnc_status_t status = loadDriver(device, self->driver))
    return status;
  if (nnc_status_t status = self->open(ordinal, host))
    return status;
  if (profile)
    if (nnc_status_t status = self->startProfiling())
      return status;
  out = std::move(self);
  return nullptr;
}

nnc_status_t CudaDevice::open(int ordinal, const nnc_abi_context_t &host) {
  const nnc_abi_module_t &abi = *module->abi;
  int count = 0;
  if (CUresult result = driver->cuDeviceGetCount(&count))
    return fail("", "cuDeviceGetCount", result);
  if (count == 0)
    return makeStatus(NNC_STATUS_UNAVAILABLE,
                      "device '" + name + "': no CUDA device found (driver " + driver->path + ")");
  if (ordinal >= count)
    return makeStatus(NNC_STATUS_UNAVAILABLE,
                      "device '" + name + "': there is no CUDA device " + std::to_string(ordinal) +
                          " (this machine has " + std::to_string(count) + ")");
  if (CUresult result = driver->cuDeviceGet(&device, ordinal))
    return fail("", "cuDeviceGet", result);
  int major = 0, minor = 0;
  char deviceName[256] = "";
  if (CUresult result = driver->cuDeviceGetAttribute(
          &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device))
    return fail("", "cuDeviceGetAttribute", result);
  if (CUresult result = driver->cuDeviceGetAttribute(
          &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device))
    return fail("", "cuDeviceGetAttribute", result);
  if (CUresult result = driver->cuDeviceGetName(deviceName, sizeof(deviceName) - 1, device))
    return fail("", "cuDeviceGetName", result);
  std::string capability = std::to_string(major) + "." + std::to_string(minor);

  // Chosen before any resource is taken: a module without code for this GPU
  // is the likeliest failure and needs no cleanup.
  bool hasKernels = abi.num_cuda_kernels > 0;
  int image = hasKernels ? chooseImage(abi, major * 10 + minor) : -1;
  if (hasKernels && image < 0)
    return makeStatus(NNC_STATUS_FAILED_PRECONDITION,
                      "module '" + module->path + "' has no CUDA image for device '" + name +
                          "' ('" + deviceName + "', compute capability " + capability +
                          "): its images are for " +
                          nameList(abi.num_cuda_images,
                                   [&](int32_t i) { return abi.cuda_images[i].chip; }) +
                          " (recompile it for this GPU's chip)");
  summary = name + " '" + deviceName + "' (compute capability " + capability + ", " +
            (hasKernels ? "image " + std::string(abi.cuda_images[image].chip) : "no kernels") +
            ", driver " + versionString(driver->version) + ")";

  // The primary context is the one the CUDA runtime and other libraries in
  // the process share, so buffers and streams interoperate with theirs.
  if (CUresult result = driver->cuDevicePrimaryCtxRetain(&context, device)) {
    context = nullptr;
    return fail("", "cuDevicePrimaryCtxRetain", result);
  }
  ContextScope scope(*driver, context);
  if (CUresult result = scope.result())
    return fail("", "cuCtxPushCurrent_v2", result);
  // Non-blocking: the stream does not wait for other users' work on the
  // legacy default stream, and it can be captured into a graph.
  if (CUresult result = driver->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING)) {
    stream = nullptr;
    return fail("", "cuStreamCreate", result);
  }
  if (hasKernels) {
    if (nnc_status_t status = loadKernels(image))
      return status;
  } else {
    graphState = Graph::Unsupported; // nothing to record
  }

  // Device memory: the constants (uploaded once), the workspace, and a
  // buffer per input and output. Tensors of no bytes get no buffer (NULL).
  std::string functionName = function->abi->name;
  if (nnc_status_t status = allocate(abi.constants_size, kDriverAlignment,
                                     "the constants of module '" + module->path + "'", constants))
    return status;
  if (nnc_status_t status =
          allocate(function->abi->workspace_size, function->abi->workspace_alignment,
                   "the workspace of function '" + functionName + "'", workspace))
    return status;
  for (bool isInput : {true, false}) {
    const std::vector<nnc_tensor_info_t> &infos = isInput ? function->inputs : function->outputs;
    std::vector<void *> &addresses = isInput ? inputs : outputs;
    addresses.assign(infos.size(), nullptr);
    for (size_t i = 0; i < infos.size(); ++i) {
      CUdeviceptr address = 0;
      if (nnc_status_t status = allocate(infos[i].byte_size, kDriverAlignment,
                                         quote(isInput ? "input" : "output", infos[i]), address))
        return status;
      addresses[i] = reinterpret_cast<void *>(static_cast<uintptr_t>(address));
    }
  }
  ownInputs = inputs;
  ownOutputs = outputs;
  inputOnDevice.assign(inputs.size(), false);
  outputOnDevice.assign(outputs.size(), false);
  if (abi.constants_size) {
    if (CUresult result =
            driver->cuMemcpyHtoDAsync_v2(constants, abi.constants, abi.constants_size, stream))
      return fail("uploading the constants", "cuMemcpyHtoDAsync_v2", result);
    if (CUresult result = driver->cuStreamSynchronize(stream))
      return fail("uploading the constants", "cuStreamSynchronize", result);
  }

  cuda = {this, reinterpret_cast<const void *>(static_cast<uintptr_t>(constants)), launch};
  callContext = host;
  callContext.cuda = &cuda;
  return nullptr;
}

nnc_status_t CudaDevice::loadKernels(int image) {
  const nnc_abi_module_t &abi = *module->abi;
  const nnc_abi_cuda_image_t &chosen = abi.cuda_images[image];
  // The driver JIT-compiles the PTX for this GPU; its error log is what
  // explains a failure, so it is asked for and reported.
  char log[kJitLogBytes] = "";
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, reinterpret_cast<void *>(static_cast<uintptr_t>(sizeof(log) - 1))};
  if (CUresult result =
          driver->cuModuleLoadDataEx(&kernelModule, chosen.ptx, 2, options, values)) {
    kernelModule = nullptr;
    log[sizeof(log) - 1] = '\0';
    std::string text = trimLog(log);
    return driver->failure("device '" + name + "', module '" + module->path + "', image " +
                               chosen.chip,
                           "cuModuleLoadDataEx", result,
                           text.empty() ? " (no JIT log)" : "; JIT log:\n" + text);
  }
  kernels.assign(abi.num_cuda_kernels, nullptr);
  sharedOptIn.assign(abi.num_cuda_kernels, kDefaultSharedLimit);
  for (int32_t i = 0; i < abi.num_cuda_kernels; ++i) {
    if (CUresult result =
            driver->cuModuleGetFunction(&kernels[i], kernelModule, abi.cuda_kernels[i]))
      return fail("module '" + module->path + "', image " + chosen.chip + ", kernel '" +
                      abi.cuda_kernels[i] + "'",
                  "cuModuleGetFunction", result);
  }
  return nullptr;
}

nnc_status_t CudaDevice::allocate(size_t bytes, size_t alignment, const std::string &what,
                                  CUdeviceptr &out) {
  out = 0;
  if (bytes == 0)
    return nullptr;
  // The driver aligns to 256 bytes; a larger alignment takes a larger block.
  size_t extra = alignment > kDriverAlignment ? alignment - kDriverAlignment : 0;
  if (bytes > SIZE_MAX - extra)
    return makeStatus(NNC_STATUS_RESOURCE_EXHAUSTED, "device '" + name + "': cannot allocate " +
                                                         std::to_string(bytes) + " bytes for " +
                                                         what);
  CUdeviceptr block = 0;
  if (CUresult result = driver->cuMemAlloc_v2(&block, bytes + extra))
    return driver->failure("device '" + name + "': cannot allocate " + std::to_string(bytes) +
                               " bytes for " + what,
                           "cuMemAlloc_v2", result);
  allocations.push_back(block);
  out = extra ? (block + alignment - 1) / alignment * alignment : block;
  return nullptr;
}

CudaDevice::~CudaDevice() {
  if (!context)
    return; // nothing on the device was made
  {
    ContextScope scope(*driver, context);
    // Runs end with the stream drained, so nothing in flight uses what is
    // freed here; errors are ignored: release cannot report, and each step
    // must run regardless.
    if (graph)
      driver->cuGraphExecDestroy(graph);
    for (CUevent event : events)
      driver->cuEventDestroy_v2(event);
    if (kernelModule)
      driver->cuModuleUnload(kernelModule);
    for (CUdeviceptr allocation : allocations)
      driver->cuMemFree_v2(allocation);
    if (stream)
      driver->cuStreamDestroy_v2(stream);
  }
  driver->cuDevicePrimaryCtxRelease_v2(device);
}

nnc_status_t CudaDevice::run(void *const *hostInputs, void *const *hostOutputs) {
  ContextScope scope(*driver, context);
  if (CUresult result = scope.result())
    return fail("", "cuCtxPushCurrent_v2", result);
  // Each run records its own events: a failed run's marks do not count.
  std::fill(marked.begin(), marked.end(), false);
  profileResult = CUDA_SUCCESS;
  nnc_status_t status = enqueue(hostInputs, hostOutputs);
  // Drained even after a failure, so that no copy into the caller's buffers
  // is still pending when the run returns.
  CUresult synced = driver->cuStreamSynchronize(stream);
  if (!status && synced)
    status = fail("function '" + std::string(function->abi->name) + "'", "cuStreamSynchronize",
                  synced);
  if (!status && graphState == Graph::Eager)
    graphState = driver->hasGraphs() ? Graph::Capture : Graph::Unsupported;
  if (!status && !events.empty())
    status = readProfile();
  return status;
}

nnc_status_t CudaDevice::startProfiling() {
  std::string what = "profiling function '" + std::string(function->abi->name) + "'";
  if (!driver->hasEvents())
    return makeStatus(NNC_STATUS_UNIMPLEMENTED,
                      "device '" + name + "': " + what + ": the driver " + driver->path +
                          " lacks the event calls that time kernels");
  ContextScope scope(*driver, context);
  if (CUresult result = scope.result())
    return fail(what, "cuCtxPushCurrent_v2", result);
  // One event per kernel start, and one for the end of the last kernel.
  for (size_t k = 0; k <= function->kernels.size(); ++k) {
    CUevent event = nullptr;
    if (CUresult result = driver->cuEventCreate(&event, 0))
      return fail(what, "cuEventCreate", result);
    events.push_back(event);
  }
  marked.assign(events.size(), false);
  callContext.profile = &CudaDevice::mark;
  callContext.profile_state = this;
  // Event records between the launches time each one; a replayed graph
  // would hide them, so a profiled session launches one by one.
  graphState = Graph::Unsupported;
  return nullptr;
}

void CudaDevice::mark(void *state, int32_t kernel) {
  CudaDevice &self = *static_cast<CudaDevice *>(state);
  if (kernel < 0 || static_cast<size_t>(kernel) >= self.events.size() || self.marked[kernel])
    return; // the run's check reports the marks that are missing
  CUresult result = self.driver->cuEventRecord(self.events[kernel], self.stream);
  self.marked[kernel] = result == CUDA_SUCCESS;
  if (result && !self.profileResult)
    self.profileResult = result;
}

nnc_status_t CudaDevice::readProfile() {
  std::string what = "profiling function '" + std::string(function->abi->name) + "'";
  bool complete = std::all_of(marked.begin(), marked.end(), [](bool m) { return m; });
  if (profileResult)
    return fail(what, "cuEventRecord", profileResult);
  if (!complete)
    return makeStatus(NNC_STATUS_INTERNAL, "function '" + std::string(function->abi->name) +
                                               "' of module '" + module->path +
                                               "' did not mark every kernel it describes");
  seconds.resize(events.size() - 1);
  for (size_t k = 0; k + 1 < events.size(); ++k) {
    float milliseconds = 0;
    if (CUresult result = driver->elapsedTime(&milliseconds, events[k], events[k + 1]))
      return fail(what, "cuEventElapsedTime", result);
    seconds[k] = milliseconds * 1e-3;
  }
  return nullptr;
}

void CudaDevice::bindDeviceMemory(bool isInput, size_t index, void *address) {
  std::vector<void *> &addresses = isInput ? inputs : outputs;
  void *next = address ? address : (isInput ? ownInputs : ownOutputs)[index];
  (isInput ? inputOnDevice : outputOnDevice)[index] = address != nullptr;
  if (addresses[index] == next)
    return;
  addresses[index] = next;
  if (graphState == Graph::Replay) {
    // The launches were good; the next run records them with the new address.
    ContextScope scope(*driver, context);
    driver->cuGraphExecDestroy(graph);
    graph = nullptr;
    graphState = Graph::Capture;
  }
}

nnc_status_t CudaDevice::enqueue(void *const *hostInputs, void *const *hostOutputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const nnc_tensor_info_t &info = function->inputs[i];
    if (info.byte_size == 0 || inputOnDevice[i])
      continue;
    if (CUresult result = driver->cuMemcpyHtoDAsync_v2(
            reinterpret_cast<uintptr_t>(inputs[i]), hostInputs[i], info.byte_size, stream))
      return fail(quote("input", info), "cuMemcpyHtoDAsync_v2", result);
  }
  if (nnc_status_t status = enqueueKernels())
    return status;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const nnc_tensor_info_t &info = function->outputs[i];
    if (info.byte_size == 0 || outputOnDevice[i])
      continue;
    if (CUresult result = driver->cuMemcpyDtoHAsync_v2(
            hostOutputs[i], reinterpret_cast<uintptr_t>(outputs[i]), info.byte_size, stream))
      return fail(quote("output", info), "cuMemcpyDtoHAsync_v2", result);
  }
  return nullptr;
}

nnc_status_t CudaDevice::enqueueKernels() {
  if (graphState == Graph::Capture)
    if (nnc_status_t status = capture())
      return status;
  if (graphState == Graph::Replay) {
    if (CUresult result = driver->cuGraphLaunch(graph, stream))
      return fail("function '" + std::string(function->abi->name) + "'", "cuGraphLaunch",
                  result);
    return nullptr;
  }
  if (int32_t code = callEntry())
    return entryFailure(code);
  return nullptr;
}

nnc_status_t CudaDevice::capture() {
  std::string what = "function '" + std::string(function->abi->name) + "', capturing a graph";
  // Thread-local: other threads' CUDA calls cannot invalidate the capture,
  // and this thread makes only launches until it ends.
  CUresult begun = driver->cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  if (captureUnsupported(begun)) {
    graphState = Graph::Unsupported;
    return nullptr;
  }
  if (begun)
    return fail(what, "cuStreamBeginCapture_v2", begun);
  int32_t code = callEntry();
  // Capture always ends, even after a failed launch: the stream must leave
  // capture mode to be usable again.
  CUgraph captured = nullptr;
  CUresult ended = driver->cuStreamEndCapture(stream, &captured);
  struct GraphGuard {
    const Driver &driver;
    CUgraph graph;
    ~GraphGuard() {
      if (graph)
        driver.cuGraphDestroy(graph);
    }
  } guard{*driver, ended == CUDA_SUCCESS ? captured : nullptr};

  // Capture of something the entry launches is not supported: the run goes
  // on (and later runs stay) without a graph.
  if (captureUnsupported(ended) || (code != 0 && captureUnsupported(launchResult))) {
    graphState = Graph::Unsupported;
    return nullptr;
  }
  if (code != 0)
    return entryFailure(code);
  if (ended)
    return fail(what, "cuStreamEndCapture", ended);
  CUgraphExec instantiated = nullptr;
  CUresult result = driver->cuGraphInstantiateWithFlags(&instantiated, captured, 0);
  if (captureUnsupported(result)) {
    graphState = Graph::Unsupported;
    return nullptr;
  }
  if (result)
    return fail(what, "cuGraphInstantiateWithFlags", result);
  graph = instantiated;
  graphState = Graph::Replay;
  return nullptr;
}

int32_t CudaDevice::callEntry() {
  launchError.clear();
  launchResult = CUDA_SUCCESS;
  int32_t code = function->abi->entry(inputs.data(), outputs.data(),
                                      reinterpret_cast<void *>(static_cast<uintptr_t>(workspace)),
                                      &callContext);
  // Host code need not stop at a failed launch (nnc's goes on enqueueing):
  // the first failure fails the run either way.
  return code != 0 ? code : static_cast<int32_t>(launchResult);
}

nnc_status_t CudaDevice::entryFailure(int32_t code) const {
  return makeStatus(NNC_STATUS_INTERNAL,
                    "function '" + std::string(function->abi->name) + "' of module '" +
                        module->path + "' failed with code " + std::to_string(code) +
                        (launchError.empty() ? "" : ": " + launchError));
}

int32_t CudaDevice::launch(void *opaque, int32_t kernel, uint32_t grid_x, uint32_t grid_y,
                           uint32_t grid_z, uint32_t block_x, uint32_t block_y, uint32_t block_z,
                           uint32_t shared_bytes, void **params) {
  CudaDevice &self = *static_cast<CudaDevice *>(opaque);
  // Only the first failure is kept: it is the cause, later ones follow from it.
  auto failed = [&](CUresult result, const std::string &message) -> int32_t {
    if (self.launchResult == CUDA_SUCCESS) {
      self.launchResult = result;
      self.launchError = message;
    }
    return result;
  };
  int32_t count = static_cast<int32_t>(self.kernels.size());
  if (kernel < 0 || kernel >= count)
    return failed(CUDA_ERROR_INVALID_VALUE,
                  "kernel index " + std::to_string(kernel) + " is out of range (the module has " +
                      std::to_string(count) + " kernels)");
  // Formatted only on failure: a run allocates nothing on its way.
  auto describe = [&](const char *call, CUresult result) {
    return std::string(call) + " failed for kernel '" + self.module->abi->cuda_kernels[kernel] +
           "' (grid " + std::to_string(grid_x) + "x" + std::to_string(grid_y) + "x" +
           std::to_string(grid_z) + ", block " + std::to_string(block_x) + "x" +
           std::to_string(block_y) + "x" + std::to_string(block_z) + ", " +
           std::to_string(shared_bytes) + " dynamic shared bytes): " +
           self.driver->errorText(result);
  };
  const Driver &driver = *self.driver;
  // More than 48 KiB of dynamic shared memory needs the kernel's opt-in,
  // once per size reached (the first run does it, before any capture).
  if (shared_bytes > self.sharedOptIn[kernel]) {
    if (CUresult result = driver.cuFuncSetAttribute(
            self.kernels[kernel], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            static_cast<int>(shared_bytes)))
      return failed(result, describe("cuFuncSetAttribute", result));
    self.sharedOptIn[kernel] = shared_bytes;
  }
  if (CUresult result =
          driver.cuLaunchKernel(self.kernels[kernel], grid_x, grid_y, grid_z, block_x, block_y,
                                block_z, shared_bytes, self.stream, params, nullptr))
    return failed(result, describe("cuLaunchKernel", result));
  return 0;
}
