//===- Session.cpp - binding buffers and running one function ------------===//
//
// Everything a run needs is allocated at creation (workspace, owned outputs,
// the pointer arrays handed to the entry point, and on a GPU every device
// buffer), so a run allocates nothing and memory stays flat however many
// times a session runs.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/CudaDevice.h"
#include "runtime/src/EmulatedDevice.h"
#include "runtime/src/Objects.h"
#include "runtime/src/Status.h"
#include "runtime/src/Strings.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

using namespace nnc::runtime;

namespace {
struct FreeDeleter {
  void operator()(void *memory) const { std::free(memory); }
};
using Buffer = std::unique_ptr<void, FreeDeleter>;

/// Owned outputs and the workspace start on a cache line at least, so that
/// compiled code may use aligned vector accesses on them.
constexpr size_t kMinAlignment = 64;

nnc_status_t allocate(size_t bytes, size_t alignment, const std::string &what, Buffer &out) {
  // aligned_alloc wants a multiple of the alignment; one block even for zero
  // bytes keeps every pointer valid and distinct.
  if (bytes > SIZE_MAX - alignment)
    return makeStatus(NNC_STATUS_RESOURCE_EXHAUSTED,
                      "cannot allocate " + std::to_string(bytes) + " bytes for " + what);
  size_t rounded = bytes == 0 ? alignment : (bytes + alignment - 1) / alignment * alignment;
  out.reset(std::aligned_alloc(alignment, rounded));
  if (!out)
    return makeStatus(NNC_STATUS_RESOURCE_EXHAUSTED,
                      "cannot allocate " + std::to_string(bytes) + " bytes for " + what);
  return nullptr;
}

/// Bytes of physical memory, 0 when unknown.
uint64_t physicalMemory() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) : 0;
}

std::string quote(const char *kind, const nnc_tensor_info_t &info) {
  return std::string(kind) + " '" + info.name + "'";
}

/// What a session's device option names.
struct DeviceChoice {
  std::string target; // the module target it runs: "cpu" or "cuda"
  int ordinal = 0;     // which GPU, for "cuda:N"
  bool emulated = false; // "cuda-emulated": the host CPU runs the kernels
};

nnc_status_t parseDevice(const std::string &text, DeviceChoice &out) {
  if (text == "cpu") {
    out = {"cpu", 0, false};
    return nullptr;
  }
  if (text == "cuda") {
    out = {"cuda", 0, false};
    return nullptr;
  }
  if (text == "cuda-emulated") {
    out = {"cuda", 0, true};
    return nullptr;
  }
  if (text.compare(0, 5, "cuda:") == 0) {
    std::string digits = text.substr(5);
    bool number = !digits.empty() && digits.size() <= 6 &&
                  digits.find_first_not_of("0123456789") == std::string::npos;
    if (!number)
      return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                        "device '" + text + "': expected 'cuda:' followed by a device ordinal");
    out = {"cuda", std::stoi(digits), false};
    return nullptr;
  }
  return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                    "unknown device '" + text +
                        "' (devices: 'cpu', 'cuda', 'cuda:<ordinal>', 'cuda-emulated')");
}
} // namespace

namespace {
/// A profiling session's kernel clock: the hook compiled code calls as each
/// kernel starts (abi.h), and the last successful run's kernel times.
struct Profile {
  std::vector<double> marks;   // the clock at each mark; kernel count + 1
  std::vector<double> seconds; // empty until a run succeeds
  static void mark(void *state, int32_t kernel) {
    auto *self = static_cast<Profile *>(state);
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (kernel >= 0 && static_cast<size_t>(kernel) < self->marks.size())
      self->marks[kernel] = now.tv_sec + now.tv_nsec * 1e-9;
  }
  void start() {
    std::fill(marks.begin(), marks.end(), -1.0);
    seconds.clear();
  }
  /// The kernel times of the run just done; false when a mark is missing
  /// or came out of order.
  bool finish() {
    for (size_t k = 0; k < marks.size(); ++k)
      if (marks[k] < 0 || (k > 0 && marks[k] < marks[k - 1]))
        return false;
    seconds.resize(marks.size() - 1);
    for (size_t k = 0; k + 1 < marks.size(); ++k)
      seconds[k] = marks[k + 1] - marks[k];
    return true;
  }
};
} // namespace

struct nnc_session {
  ~nnc_session() {
    device.reset(); // first: its kernels and buffers belong to the module
    module->release();
    runtime->release();
  }
  nnc_runtime *runtime;
  nnc_module *module;
  const nnc_function *function;
  Buffer workspace;
  std::vector<Buffer> ownedOutputs;
  std::vector<void *> inputs;  // NULL until bound (and for empty tensors)
  std::vector<void *> outputs; // owned or bound buffers
  bool hasResults = false;     // the outputs hold the last successful run's values
  std::vector<bool> inputBound;
  std::unique_ptr<nnc::runtime::Device> device; // set for CUDA modules
  std::string deviceName;                         // nnc_session_device
  std::unique_ptr<Profile> profile;               // set when profiling
  nnc_abi_context_t context; // the runtime's, with the profile and string hooks
  // CPU sessions: the strings the hooks return (abi.h's nnc_abi_strings_t),
  // and the inputs whose elements are strings, checked before each run.
  std::unique_ptr<nnc::runtime::StringStore> strings;
  std::vector<size_t> stringInputs;

  // Dynamic dims (function->abi->prepare set): the shapes of the bound
  // inputs and of the outputs the last prepare computed, the buffers sized
  // for the largest seen (never shrunk, so a repeated shape allocates
  // nothing), and the dims array handed to the entry (abi.h).
  std::vector<std::vector<int64_t>> inputShapes, outputShapes;
  std::vector<size_t> inputBytes, outputBytes; // of the current shapes
  std::vector<size_t> ownedCapacity;
  std::vector<bool> outputBound;
  std::vector<std::vector<int64_t>> boundOutputShapes;
  size_t workspaceCapacity = 0;
  std::vector<int64_t> preparedFor; // the input dims of the last prepare
  // The shape inputs' bytes at the last prepare (abi.h's shape_inputs).
  std::vector<std::vector<unsigned char>> preparedValues;
  std::vector<int64_t> dims;
  // Data-dependent outputs (abi.h): the dims the last run wrote, every
  // output's, and each output's shape as that run left it.
  std::vector<int64_t> runOutputDims;
  std::vector<std::vector<int64_t>> resultShapes;
};

namespace {
/// The bytes of a tensor of `shape`; false when they overflow.
bool tensorBytes(int32_t dtype, int32_t rank, const int64_t *shape, size_t &bytes) {
  // A zero dim makes the tensor empty however large the others are (as the
  // module's own shapes are read).
  bool empty = false;
  for (int32_t i = 0; i < rank; ++i) {
    if (shape[i] < 0)
      return false;
    empty |= shape[i] == 0;
  }
  if (empty) {
    bytes = 0;
    return true;
  }
  uint64_t n = nnc_dtype_size(dtype);
  for (int32_t i = 0; i < rank; ++i)
    if (shape[i] < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(shape[i]), &n))
      return false;
  if (n > SIZE_MAX)
    return false;
  bytes = n;
  return true;
}

/// Checks that view describes exactly the tensor info declares, any size
/// where a dim is dynamic; the tensor's bytes go to bytes. Allocates nothing:
/// a session rebinds on every run.
nnc_status_t checkView(const char *kind, const nnc_tensor_info_t &info,
                       const nnc_tensor_view_t *view, size_t &bytes) {
  std::string what = quote(kind, info);
  if (!view)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, what + ": view is NULL");
  if (view->dtype != info.dtype)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, what + ": expected dtype " +
                                                       nnc_dtype_name(info.dtype) + " (got " +
                                                       nnc_dtype_name(view->dtype) + ")");
  if (view->rank > 0 && !view->shape)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, what + ": shape is NULL for rank " +
                                                       std::to_string(view->rank));
  bool same = view->rank == info.rank;
  for (int32_t i = 0; same && i < info.rank; ++i)
    same = info.shape[i] == -1 ? view->shape[i] >= 0 : view->shape[i] == info.shape[i];
  if (!same) {
    // The view's dims as given: a negative one is not "dynamic" there.
    std::string got = view->rank < 0 ? "rank " + std::to_string(view->rank) : "";
    for (int32_t i = 0; i < view->rank; ++i)
      got += (i ? "x" : "") + std::to_string(view->shape[i]);
    if (view->rank == 0)
      got = "scalar";
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, what + ": expected shape " +
                                                       shapeString(info.rank, info.shape) +
                                                       " (got " + got + ")");
  }
  if (!tensorBytes(info.dtype, view->rank, view->shape, bytes))
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      what + ": shape " + shapeString(view->rank, view->shape) +
                          " is too large to address");
  // An empty tensor has no bytes to point to.
  if (!view->data && bytes != 0)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, what + ": data is NULL");
  if (view->byte_size < bytes)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      what + ": buffer of " + std::to_string(view->byte_size) +
                          " bytes is smaller than the tensor (" + std::to_string(bytes) +
                          " bytes)");
  return nullptr;
}

/// Binds the caller's buffer, in host memory or (onDevice) in the session's
/// device memory, as input or output index.
nnc_status_t bind(nnc_session_t *session, int32_t index, const nnc_tensor_view_t *view,
                  bool isInput, bool onDevice = false) {
  const char *kind = isInput ? "input" : "output";
  std::string api = std::string("nnc_session_bind_") + (onDevice ? "device_" : "") + kind;
  if (!session)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, api + ": session is NULL");
  const std::vector<nnc_tensor_info_t> &infos =
      isInput ? session->function->inputs : session->function->outputs;
  if (index < 0 || static_cast<size_t>(index) >= infos.size())
    return makeStatus(NNC_STATUS_OUT_OF_RANGE,
                      std::string(kind) + " index " + std::to_string(index) +
                          " is out of range (function '" + session->function->abi->name +
                          "' has " + std::to_string(infos.size()) + " " + kind + "s)");
  if (onDevice && !session->device)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      api + ": device memory binds only in a session on a CUDA device; this "
                            "one runs on '" + session->deviceName + "'");
  // A NULL device input view unbinds the input.
  if (isInput && onDevice && !view) {
    session->inputBound[index] = false;
    session->inputs[index] = nullptr;
    session->inputBytes[index] = 0;
    session->device->bindDeviceMemory(true, index, nullptr);
    return nullptr;
  }
  // An output whose dims only the run knows has no shape to bind for.
  if (!isInput && view &&
      std::count(session->function->abi->data_dependent_outputs,
                 session->function->abi->data_dependent_outputs +
                     session->function->abi->num_data_dependent_outputs,
                 index))
    return makeStatus(NNC_STATUS_FAILED_PRECONDITION,
                      api + ": " + quote("output", infos[index]) +
                          " has dims only the run computes; read it with nnc_session_output");
  // A NULL output view returns the output to the session's own buffer.
  if (!isInput && !view) {
    if (session->device)
      session->device->bindDeviceMemory(false, index, nullptr);
    session->outputBound[index] = false;
    session->outputs[index] = session->ownedOutputs[index].get();
    if (!session->function->abi->prepare)
      session->outputBytes[index] = infos[index].byte_size;
    session->hasResults = false;
    return nullptr;
  }
  size_t bytes;
  if (nnc_status_t status = checkView(kind, infos[index], view, bytes))
    return status;
  // A host buffer takes the tensor back from device memory bound before.
  if (session->device)
    session->device->bindDeviceMemory(isInput, index, onDevice ? view->data : nullptr);
  // assign() reuses the vectors' storage: rebinding the same rank allocates
  // nothing.
  if (isInput) {
    session->inputs[index] = view->data;
    session->inputBound[index] = true;
    session->inputShapes[index].assign(view->shape, view->shape + view->rank);
    session->inputBytes[index] = bytes;
  } else {
    session->outputs[index] = view->data;
    session->hasResults = false;
    // A dynamic output's shape is checked against the computed one at run.
    session->boundOutputShapes[index].assign(view->shape, view->shape + view->rank);
    session->outputBound[index] = true;
    if (!session->function->abi->prepare)
      session->outputBytes[index] = bytes;
  }
  return nullptr;
}

/// Whether two buffers share a byte. Differences, not ends: an end may wrap
/// around the address space.
bool overlaps(const void *a, size_t aBytes, const void *b, size_t bBytes) {
  auto begin = reinterpret_cast<uintptr_t>(a), other = reinterpret_cast<uintptr_t>(b);
  return aBytes && bBytes && (other - begin < aBytes || begin - other < bBytes);
}

/// No output may share a byte with an input or another output: compiled code
/// writes outputs while it still reads inputs (and promises never to write an
/// input), so an aliased buffer would silently give wrong results. Owned
/// outputs count too: a caller may bind one as an input of the next run.
nnc_status_t checkAliasing(const nnc_session &session) {
  const nnc_function &function = *session.function;
  for (size_t o = 0; o < session.outputs.size(); ++o) {
    const nnc_tensor_info_t &output = function.outputs[o];
    for (size_t i = 0; i < session.inputs.size(); ++i)
      if (overlaps(session.outputs[o], session.outputBytes[o], session.inputs[i],
                   session.inputBytes[i]))
        return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                          quote("output", output) + "'s buffer overlaps " +
                              quote("input", function.inputs[i]) + "'s");
    for (size_t p = o + 1; p < session.outputs.size(); ++p)
      if (overlaps(session.outputs[o], session.outputBytes[o], session.outputs[p],
                   session.outputBytes[p]))
        return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                          quote("output", output) + "'s buffer overlaps " +
                              quote("output", function.outputs[p]) + "'s");
  }
  return nullptr;
}

nnc_status_t bindByName(nnc_session_t *session, const char *name, const nnc_tensor_view_t *view,
                        bool isInput) {
  if (!session || !name)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      std::string("nnc_session_bind_") + (isInput ? "input" : "output") +
                          "_by_name: session and name must not be NULL");
  int32_t index;
  nnc_status_t status = isInput ? nnc_function_find_input(session->function, name, &index)
                                : nnc_function_find_output(session->function, name, &index);
  return status ? status : bind(session, index, view, isInput);
}
} // namespace

void nnc_session_options_initialize(nnc_session_options_t *options) {
  options->function = "main";
  options->device = "cpu";
  options->profile = 0;
}

nnc_status_t nnc_session_create(nnc_runtime_t *runtime, nnc_module_t *module,
                                const nnc_session_options_t *options,
                                nnc_session_t **out_session) {
  if (!runtime || !module || !out_session)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "nnc_session_create: runtime, module and out_session must not be NULL");
  nnc_session_options_t defaults;
  nnc_session_options_initialize(&defaults);
  if (!options)
    options = &defaults;
  if (!options->function || !options->device)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "nnc_session_create: options.function and options.device must not be NULL");

  std::string deviceName = options->device;
  DeviceChoice device;
  if (nnc_status_t status = parseDevice(deviceName, device))
    return status;
  // Never a silent fallback: a module runs on the device family it was
  // compiled for, or not at all.
  if (device.target != module->abi->target)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "module '" + module->path + "' was compiled for target '" +
                          module->abi->target + "' and cannot run on device '" + deviceName +
                          "'");

  const nnc_function_t *function;
  if (nnc_status_t status = nnc_module_find_function(module, options->function, &function))
    return status;
  // Dynamic dims run on the CPU only so far (the compiler refuses them for
  // CUDA; this guards a hand-made module).
  if (function->abi->prepare && device.target != "cpu")
    return makeStatus(NNC_STATUS_UNIMPLEMENTED,
                      "function '" + std::string(function->abi->name) +
                          "' has dynamic dims, which run on the CPU only");

  // The string hooks run on the host, and a GPU session has only device
  // buffers for the compiled code (abi.h: strings are NULL there).
  for (bool isInput : {true, false}) {
    const char *kind = isInput ? "input" : "output";
    for (const nnc_tensor_info_t &info : isInput ? function->inputs : function->outputs)
      if (info.dtype == NNC_DTYPE_STRING && device.target != "cpu")
        return makeStatus(NNC_STATUS_UNIMPLEMENTED,
                          "function '" + std::string(function->abi->name) + "' of module '" +
                              module->path + "' has string " + quote(kind, info) +
                              ", and string tensors run on the CPU only (device '" + deviceName +
                              "')");
  }

  // Kernel timing needs the marks of nnc --profile: host clocks read at each
  // on the CPU and cuda-emulated (where a launch ends before the host goes
  // on), events recorded on the stream on a GPU.
  std::unique_ptr<Profile> profile;
  nnc_abi_context_t context = runtime->context;
  if (options->profile) {
    if (function->kernels.empty())
      return makeStatus(NNC_STATUS_FAILED_PRECONDITION,
                        "function '" + std::string(function->abi->name) + "' of module '" +
                            module->path +
                            "' was compiled without kernel marks (compile it with nnc --profile)");
    profile = std::make_unique<Profile>();
    profile->marks.assign(function->kernels.size() + 1, -1.0);
    context.profile = &Profile::mark;
    context.profile_state = profile.get();
  }

  Buffer workspace;
  std::string name = function->abi->name;
  if (function->abi->workspace_size > SIZE_MAX)
    return makeStatus(NNC_STATUS_RESOURCE_EXHAUSTED,
                      "workspace of " + std::to_string(function->abi->workspace_size) +
                          " bytes for function '" + name + "' exceeds the address space");
  // Host memory beyond what the machine has is refused before allocating:
  // the system might grant it and then kill the process on first touch.
  if (device.target == "cpu" || device.emulated) {
    uint64_t needed = function->abi->workspace_size;
    bool overflow = false;
    for (const nnc_tensor_info_t &info : function->outputs)
      overflow |= __builtin_add_overflow(needed, info.byte_size, &needed);
    uint64_t memory = physicalMemory();
    if (memory && (overflow || needed > memory))
      return makeStatus(NNC_STATUS_RESOURCE_EXHAUSTED,
                        "function '" + name + "' needs " +
                            (overflow ? "more than 2^64" : std::to_string(needed)) +
                            " bytes of host memory (workspace " +
                            std::to_string(function->abi->workspace_size) +
                            " and outputs), more than this machine's " + std::to_string(memory));
  }
  // On a GPU the workspace is device memory, and the host keeps only the
  // buffers the outputs are copied back into.
  std::unique_ptr<nnc::runtime::Device> cuda;
  if (device.emulated) {
    std::unique_ptr<nnc::runtime::emulated::EmulatedDevice> emulated;
    if (nnc_status_t status = nnc::runtime::emulated::EmulatedDevice::create(
            *module, *function, context, emulated))
      return status;
    cuda = std::move(emulated);
  } else if (device.target == "cuda") {
    std::unique_ptr<nnc::runtime::cuda::CudaDevice> gpu;
    if (nnc_status_t status = nnc::runtime::cuda::CudaDevice::create(
            deviceName, device.ordinal, *module, *function, runtime->context,
            /*profile=*/profile != nullptr, gpu))
      return status;
    cuda = std::move(gpu);
  } else {
    size_t alignment = std::max<size_t>(kMinAlignment, function->abi->workspace_alignment);
    if (nnc_status_t status = allocate(function->abi->workspace_size, alignment,
                                       "the workspace of function '" + name + "'", workspace))
      return status;
  }
  std::vector<Buffer> ownedOutputs(function->outputs.size());
  std::vector<void *> outputs(function->outputs.size());
  for (size_t i = 0; i < outputs.size() && !function->abi->prepare; ++i) {
    if (nnc_status_t status = allocate(function->outputs[i].byte_size, kMinAlignment,
                                       quote("output", function->outputs[i]), ownedOutputs[i]))
      return status;
    outputs[i] = ownedOutputs[i].get();
  }

  runtime->retain();
  module->retain();
  std::string description = cuda ? cuda->description() : "cpu";
  *out_session = new nnc_session{runtime,
                                 module,
                                 function,
                                 std::move(workspace),
                                 std::move(ownedOutputs),
                                 std::vector<void *>(function->inputs.size()),
                                 std::move(outputs),
                                 /*hasResults=*/false,
                                 std::vector<bool>(function->inputs.size(), false),
                                 std::move(cuda),
                                 std::move(description),
                                 std::move(profile),
                                 context};
  nnc_session &created = **out_session;
  size_t numInputs = function->inputs.size(), numOutputs = function->outputs.size();
  created.inputShapes.resize(numInputs);
  created.inputBytes.resize(numInputs);
  for (size_t i = 0; i < numInputs; ++i)
    created.inputBytes[i] = function->inputs[i].byte_size;
  created.outputShapes.resize(numOutputs);
  created.outputBytes.resize(numOutputs);
  for (size_t i = 0; i < numOutputs; ++i) {
    const nnc_tensor_info_t &info = function->outputs[i];
    created.outputShapes[i].assign(info.shape, info.shape + info.rank);
    created.outputBytes[i] = info.byte_size;
  }
  created.ownedCapacity.assign(numOutputs, 0);
  created.outputBound.assign(numOutputs, false);
  created.boundOutputShapes.resize(numOutputs);
  if (!created.device) {
    created.strings = std::make_unique<nnc::runtime::StringStore>();
    created.context.strings = created.strings->hooks();
    for (size_t i = 0; i < numInputs; ++i)
      if (function->inputs[i].dtype == NNC_DTYPE_STRING)
        created.stringInputs.push_back(i);
  }
  return nullptr;
}

void nnc_session_release(nnc_session_t *session) { delete session; }

const nnc_function_t *nnc_session_function(const nnc_session_t *session) {
  return session->function;
}

const char *nnc_session_device(const nnc_session_t *session) {
  return session->deviceName.c_str();
}

nnc_status_t nnc_session_bind_input(nnc_session_t *session, int32_t index,
                                    const nnc_tensor_view_t *view) {
  return bind(session, index, view, /*isInput=*/true);
}

nnc_status_t nnc_session_bind_device_input(nnc_session_t *session, int32_t index,
                                           const nnc_tensor_view_t *view) {
  return bind(session, index, view, /*isInput=*/true, /*onDevice=*/true);
}

nnc_status_t nnc_session_bind_device_output(nnc_session_t *session, int32_t index,
                                            const nnc_tensor_view_t *view) {
  return bind(session, index, view, /*isInput=*/false, /*onDevice=*/true);
}

nnc_status_t nnc_session_bind_input_by_name(nnc_session_t *session, const char *name,
                                            const nnc_tensor_view_t *view) {
  return bindByName(session, name, view, /*isInput=*/true);
}

nnc_status_t nnc_session_bind_output(nnc_session_t *session, int32_t index,
                                     const nnc_tensor_view_t *view) {
  return bind(session, index, view, /*isInput=*/false);
}

nnc_status_t nnc_session_bind_output_by_name(nnc_session_t *session, const char *name,
                                             const nnc_tensor_view_t *view) {
  return bindByName(session, name, view, /*isInput=*/false);
}

namespace {
/// " = [v, ...]" for a small integer tensor (the shape inputs named in a
/// refused run's message); "" for others.
std::string valuesString(int32_t dtype, const void *data, size_t bytes) {
  size_t width = dtype == NNC_DTYPE_I64 ? 8 : dtype == NNC_DTYPE_I32 ? 4 : 0;
  if (!width || bytes > 16 * width || (bytes && !data))
    return "";
  std::string text = " = [";
  for (size_t at = 0; at < bytes; at += width) {
    int64_t v;
    if (width == 8) {
      std::memcpy(&v, static_cast<const char *>(data) + at, 8);
    } else {
      int32_t v32;
      std::memcpy(&v32, static_cast<const char *>(data) + at, 4);
      v = v32;
    }
    text += (at ? ", " : "") + std::to_string(v);
  }
  return text + "]";
}

/// For the bound inputs' dims: the outputs' dims and the workspace size from
/// the function's prepare, buffers large enough, and the entry's dims array.
/// Skipped while the input dims, and the shape inputs' values, repeat.
nnc_status_t prepare(nnc_session &session) {
  const nnc_function &function = *session.function;
  // The same dims as the last run: nothing to compute or allocate.
  bool same = !session.dims.empty();
  size_t at = 0;
  for (const std::vector<int64_t> &shape : session.inputShapes)
    for (size_t d = 0; same && d < shape.size(); ++d, ++at)
      same = at < session.preparedFor.size() && session.preparedFor[at] == shape[d];
  same = same && at == session.preparedFor.size();
  const nnc_abi_function_t &abi = *function.abi;
  for (int32_t k = 0; same && k < abi.num_shape_inputs; ++k) {
    int32_t i = abi.shape_inputs[k];
    const std::vector<unsigned char> &seen = session.preparedValues[k];
    same = seen.size() == session.inputBytes[i] &&
           (seen.empty() || std::memcmp(seen.data(), session.inputs[i], seen.size()) == 0);
  }
  if (!same) {
    std::string name = std::string("function '") + function.abi->name + "'";
    std::vector<int64_t> inputDims;
    for (const std::vector<int64_t> &shape : session.inputShapes)
      inputDims.insert(inputDims.end(), shape.begin(), shape.end());
    // Nothing of the session changes until every step has succeeded: a
    // refused run leaves it as the last good one left it, and the next run
    // prepares again.
    session.preparedFor.clear();
    session.dims.clear();
    size_t outputDimCount = 0;
    for (const nnc_tensor_info_t &info : function.outputs)
      outputDimCount += info.rank;
    uint64_t workspace = 0;
    // The shape function's arrays have at least one element.
    std::vector<int64_t> in = inputDims, out(std::max<size_t>(outputDimCount, 1), 0);
    in.resize(std::max<size_t>(in.size(), 1));
    int32_t failed = abi.prepare(in.data(), session.inputs.data(), out.data(), &workspace);
    if (failed != 0) {
      std::string shapes;
      for (size_t i = 0; i < function.inputs.size(); ++i) {
        const std::vector<int64_t> &shape = session.inputShapes[i];
        shapes += (i ? ", " : "") + quote("input", function.inputs[i]) + " " +
                  shapeString(static_cast<int32_t>(shape.size()), shape.data());
        if (std::count(abi.shape_inputs, abi.shape_inputs + abi.num_shape_inputs, (int32_t)i))
          shapes += valuesString(function.inputs[i].dtype, session.inputs[i], session.inputBytes[i]);
      }
      if (failed == -1)
        return makeStatus(NNC_STATUS_RESOURCE_EXHAUSTED,
                          name + " needs more than 2^62 bytes of workspace for these input "
                                 "shapes (" + shapes + ")");
      std::string check = failed > 0 && failed <= function.abi->num_checks
                              ? function.abi->checks[failed - 1]
                              : "check " + std::to_string(failed);
      return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                        name + " cannot run on these input " +
                            (abi.num_shape_inputs ? "values" : "shapes") + " (" + shapes + "): " + check);
    }
    std::vector<std::vector<int64_t>> outputShapes(function.outputs.size());
    std::vector<size_t> outputBytes(function.outputs.size());
    at = 0;
    for (size_t o = 0; o < function.outputs.size(); ++o) {
      const nnc_tensor_info_t &info = function.outputs[o];
      outputShapes[o].assign(out.begin() + at, out.begin() + at + info.rank);
      at += info.rank;
      if (!tensorBytes(info.dtype, info.rank, outputShapes[o].data(), outputBytes[o]))
        return makeStatus(NNC_STATUS_RESOURCE_EXHAUSTED,
                          quote("output", info) + " would have shape " +
                              shapeString(info.rank, outputShapes[o].data()) +
                              ", too large to address");
    }
    // Host memory beyond what the machine has is refused before allocating
    // (the outputs the session would own, and the workspace).
    uint64_t needed = workspace;
    bool overflow = false;
    for (size_t o = 0; o < outputBytes.size(); ++o)
      if (!session.outputBound[o])
        overflow |= __builtin_add_overflow(needed, outputBytes[o], &needed);
    uint64_t memory = physicalMemory();
    if (overflow || workspace > SIZE_MAX || (memory && needed > memory))
      return makeStatus(NNC_STATUS_RESOURCE_EXHAUSTED,
                        name + " needs " + (overflow ? "more than 2^64" : std::to_string(needed)) +
                            " bytes of host memory for these input shapes (workspace " +
                            std::to_string(workspace) + " and outputs)" +
                            (memory ? ", more than this machine's " + std::to_string(memory) : ""));
    if (workspace > session.workspaceCapacity || !session.workspace) {
      size_t alignment = std::max<size_t>(kMinAlignment, function.abi->workspace_alignment);
      Buffer grown;
      if (nnc_status_t status = allocate(workspace, alignment, "the workspace of " + name, grown))
        return status;
      session.workspace = std::move(grown);
      session.workspaceCapacity = workspace;
    }
    session.outputShapes = std::move(outputShapes);
    session.outputBytes = std::move(outputBytes);
    session.dims = inputDims;
    session.dims.insert(session.dims.end(), out.begin(), out.begin() + outputDimCount);
    session.dims.push_back(static_cast<int64_t>(workspace));
    session.preparedFor = std::move(inputDims);
    session.preparedValues.resize(abi.num_shape_inputs);
    for (int32_t k = 0; k < abi.num_shape_inputs; ++k) {
      int32_t i = abi.shape_inputs[k];
      const auto *bytes = static_cast<const unsigned char *>(session.inputs[i]);
      session.preparedValues[k].assign(bytes, bytes + session.inputBytes[i]);
    }
  }
  // Outputs: the caller's buffer must fit the computed shape; an owned one
  // grows to the largest seen.
  for (size_t o = 0; o < function.outputs.size(); ++o) {
    const nnc_tensor_info_t &info = function.outputs[o];
    const std::vector<int64_t> &shape = session.outputShapes[o];
    if (session.outputBound[o]) {
      if (session.boundOutputShapes[o] != shape)
        return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                          quote("output", info) + ": the bound buffer has shape " +
                              shapeString(static_cast<int32_t>(session.boundOutputShapes[o].size()),
                                          session.boundOutputShapes[o].data()) +
                              " but these inputs give shape " +
                              shapeString(info.rank, shape.data()));
      continue;
    }
    if (session.outputBytes[o] > session.ownedCapacity[o] || !session.ownedOutputs[o]) {
      // An input bound over the buffer about to be freed is the caller's
      // error (runtime.h), reported before it could be read after the free.
      const void *old = session.ownedOutputs[o].get();
      for (size_t i = 0; old && i < session.inputs.size(); ++i) {
        if (overlaps(old, session.ownedCapacity[o], session.inputs[i], session.inputBytes[i]))
          return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                            quote("output", info) + "'s buffer overlaps " +
                                quote("input", function.inputs[i]) + "'s");
      }
      Buffer grown;
      if (nnc_status_t status =
              allocate(session.outputBytes[o], kMinAlignment, quote("output", info), grown))
        return status;
      session.ownedOutputs[o] = std::move(grown);
      session.ownedCapacity[o] = session.outputBytes[o];
      session.outputs[o] = session.ownedOutputs[o].get();
    }
  }
  session.context.dims = session.dims.data();
  if (abi.num_data_dependent_outputs) {
    session.runOutputDims.resize(std::max<size_t>(session.dims.size(), 1));
    session.context.output_dims = session.runOutputDims.data();
  }
  return nullptr;
}

/// After a run: the shapes of the outputs, data-dependent ones as the run
/// wrote them (within the bounds prepare gave, or the run is refused).
nnc_status_t takeResultShapes(nnc_session &session) {
  const nnc_abi_function_t &abi = *session.function->abi;
  session.resultShapes = session.outputShapes;
  if (!abi.num_data_dependent_outputs)
    return nullptr;
  size_t at = 0;
  for (size_t o = 0; o < session.resultShapes.size(); ++o) {
    std::vector<int64_t> &shape = session.resultShapes[o];
    bool dependent = std::count(abi.data_dependent_outputs,
                                abi.data_dependent_outputs + abi.num_data_dependent_outputs, (int32_t)o);
    for (size_t d = 0; d < shape.size(); ++d, ++at) {
      int64_t actual = session.runOutputDims[at];
      if (!dependent)
        continue;
      if (actual < 0 || actual > session.outputShapes[o][d])
        return makeStatus(NNC_STATUS_INTERNAL,
                          quote("output", session.function->outputs[o]) + ": the run gave dim " +
                              std::to_string(d) + " size " + std::to_string(actual) +
                              ", beyond its bound " + std::to_string(session.outputShapes[o][d]));
      shape[d] = actual;
    }
  }
  return nullptr;
}

/// Every element of every string input points to a string: not NULL, and
/// not into the strings of the last run, which this run frees as it starts
/// (runtime.h). Caller buffers may be unaligned, so pointers are copied out.
nnc_status_t checkStringInputs(const nnc_session &session) {
  for (size_t i : session.stringInputs) {
    const auto *data = static_cast<const unsigned char *>(session.inputs[i]);
    size_t count = session.inputBytes[i] / sizeof(const char *);
    for (size_t e = 0; e < count; ++e) {
      const char *text;
      std::memcpy(&text, data + e * sizeof(text), sizeof(text));
      if (!text)
        return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                          quote("input", session.function->inputs[i]) + ": string element " +
                              std::to_string(e) + " is NULL");
      if (session.strings->owns(text))
        return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                          quote("input", session.function->inputs[i]) + ": string element " +
                              std::to_string(e) +
                              " is one this session's last run returned, which a new run frees "
                              "(copy the string first)");
    }
  }
  return nullptr;
}
} // namespace

nnc_status_t nnc_session_run(nnc_session_t *session) {
  if (!session)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, "nnc_session_run: session is NULL");
  const nnc_function &function = *session->function;
  for (size_t i = 0; i < session->inputs.size(); ++i) {
    if (!session->inputBound[i])
      return makeStatus(NNC_STATUS_FAILED_PRECONDITION,
                        quote("input", function.inputs[i]) + " (index " + std::to_string(i) +
                            ") of function '" + function.abi->name + "' is not bound");
  }
  session->hasResults = false;
  if (function.abi->prepare)
    if (nnc_status_t status = prepare(*session))
      return status;
  if (nnc_status_t status = checkAliasing(*session))
    return status;
  if (session->strings) {
    if (nnc_status_t status = checkStringInputs(*session))
      return status;
    session->strings->startRun();
  }
  if (session->profile)
    session->profile->start();
  if (session->device) {
    if (nnc_status_t status =
            session->device->run(session->inputs.data(), session->outputs.data()))
      return status;
  } else {
    int32_t result = function.abi->entry(session->inputs.data(), session->outputs.data(),
                                         session->workspace.get(), &session->context);
    // A hook's failure says why; the code may have gone on or returned
    // nonzero because of it (abi.h).
    if (!session->strings->failure().empty())
      return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                        "function '" + std::string(function.abi->name) + "' of module '" +
                            session->module->path + "': " + session->strings->failure());
    if (result != 0)
      return makeStatus(NNC_STATUS_INTERNAL, "function '" + std::string(function.abi->name) +
                                                 "' of module '" + session->module->path +
                                                 "' failed with code " + std::to_string(result));
  }
  // A GPU times its kernels with its own events; elsewhere the host's marks do.
  const std::vector<double> *deviceSeconds =
      session->device ? session->device->kernelSeconds() : nullptr;
  if (session->profile && deviceSeconds)
    session->profile->seconds = *deviceSeconds;
  else if (session->profile && !session->profile->finish())
    return makeStatus(NNC_STATUS_INTERNAL, "function '" + std::string(function.abi->name) +
                                               "' of module '" + session->module->path +
                                               "' did not mark every kernel it describes, in order");
  if (nnc_status_t status = takeResultShapes(*session))
    return status;
  session->hasResults = true;
  return nullptr;
}

nnc_status_t nnc_session_kernel_seconds(const nnc_session_t *session, double *out_seconds,
                                        int32_t count) {
  if (!session || (count > 0 && !out_seconds))
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "nnc_session_kernel_seconds: session and out_seconds must not be NULL");
  if (!session->profile)
    return makeStatus(NNC_STATUS_FAILED_PRECONDITION,
                      "the session was created without options.profile");
  if (session->profile->seconds.empty())
    return makeStatus(NNC_STATUS_FAILED_PRECONDITION, "no successful run to report");
  if (count < 0 || static_cast<size_t>(count) != session->profile->seconds.size())
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "nnc_session_kernel_seconds: count " + std::to_string(count) +
                          " is not the function's " +
                          std::to_string(session->profile->seconds.size()) + " kernels");
  std::copy(session->profile->seconds.begin(), session->profile->seconds.end(), out_seconds);
  return nullptr;
}

nnc_status_t nnc_session_output(const nnc_session_t *session, int32_t index,
                                nnc_tensor_view_t *out_view) {
  if (!session || !out_view)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "nnc_session_output: session and out_view must not be NULL");
  const std::vector<nnc_tensor_info_t> &infos = session->function->outputs;
  if (index < 0 || static_cast<size_t>(index) >= infos.size())
    return makeStatus(NNC_STATUS_OUT_OF_RANGE,
                      "output index " + std::to_string(index) + " is out of range (function '" +
                          session->function->abi->name + "' has " + std::to_string(infos.size()) +
                          " outputs)");
  const nnc_tensor_info_t &info = infos[index];
  if (!session->hasResults)
    return makeStatus(NNC_STATUS_FAILED_PRECONDITION,
                      quote("output", info) +
                          " has no value: no successful run since the session was created, an "
                          "output was bound or a run failed");
  *out_view = {session->outputs[index], session->outputBytes[index], info.dtype, info.rank,
               session->resultShapes[index].data()};
  return nullptr;
}
