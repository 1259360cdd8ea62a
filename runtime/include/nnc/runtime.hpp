//===- runtime.hpp - a thin C++ wrapper over the nnc runtime C API -*- C++ -*-===//
//
// RAII handles over runtime.h, header-only and free of exceptions: fallible
// calls return nnc::Status or nnc::Result<T>. Handles are move-only and may be
// empty (default-constructed or moved-from). Ownership and thread-safety are
// those of the C functions each method calls (see runtime.h).
//
//   auto runtime = nnc::Runtime::create();
//   auto module = nnc::Module::load("model.so");
//   auto session = nnc::Session::create(*runtime, *module);
//   session->bindInput("x", nnc::viewOf(*session->function().input(0), x.data(), bytes));
//   if (nnc::Status status = session->run(); !status.ok()) puts(status.message());
//
//===----------------------------------------------------------------------===//

#ifndef NNC_RUNTIME_HPP
#define NNC_RUNTIME_HPP

#include "nnc/runtime.h"

#include <cassert>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace nnc {

/// Owns an nnc_status_t; ok() when it holds none.
class Status {
public:
  Status() = default;
  explicit Status(nnc_status_t status) : status(status) {}
  Status(Status &&other) noexcept : status(std::exchange(other.status, nullptr)) {}
  Status &operator=(Status &&other) noexcept {
    std::swap(status, other.status);
    return *this;
  }
  ~Status() { nnc_status_free(status); }

  bool ok() const { return status == nullptr; }
  nnc_status_code_t code() const { return nnc_status_code(status); }
  const char *message() const { return nnc_status_message(status); }

private:
  nnc_status_t status = nullptr;
};

/// A value, or the status saying why there is none.
template <typename T>
class Result {
public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status status) : status_(std::move(status)) { assert(!status_.ok()); }

  bool ok() const { return status_.ok(); }
  const Status &status() const { return status_; }
  /// Requires ok().
  T &value() {
    assert(ok());
    return *value_;
  }
  T &operator*() { return value(); }
  T *operator->() { return &value(); }

private:
  Status status_;
  std::optional<T> value_;
};

namespace detail {
template <typename T, void (*Release)(T *)>
struct Releaser {
  void operator()(T *object) const { Release(object); }
};
} // namespace detail

/// A view over caller memory shaped like a declared input or output.
inline nnc_tensor_view_t viewOf(const nnc_tensor_info_t &info, void *data, size_t byteSize) {
  return {data, byteSize, info.dtype, info.rank, info.shape};
}

class Runtime {
public:
  Runtime() = default;
  static Result<Runtime> create(int32_t numThreads = 0) {
    nnc_runtime_options_t options;
    nnc_runtime_options_initialize(&options);
    options.num_threads = numThreads;
    nnc_runtime_t *runtime = nullptr;
    if (nnc_status_t status = nnc_runtime_create(&options, &runtime))
      return Status(status);
    return Runtime(runtime);
  }

  int32_t numThreads() const { return nnc_runtime_num_threads(get()); }
  nnc_runtime_t *get() const { return handle.get(); }

private:
  explicit Runtime(nnc_runtime_t *runtime) : handle(runtime) {}
  std::unique_ptr<nnc_runtime_t, detail::Releaser<nnc_runtime_t, nnc_runtime_release>> handle;
};

/// A function of a module (non-owning: valid while the module is alive).
class Function {
public:
  explicit Function(const nnc_function_t *function) : function(function) {}

  const char *name() const { return nnc_function_name(function); }
  int32_t inputCount() const { return nnc_function_input_count(function); }
  int32_t outputCount() const { return nnc_function_output_count(function); }
  /// nullptr when index is out of range.
  const nnc_tensor_info_t *input(int32_t index) const { return nnc_function_input(function, index); }
  const nnc_tensor_info_t *output(int32_t index) const {
    return nnc_function_output(function, index);
  }
  Result<int32_t> findInput(const char *name) const {
    int32_t index = -1;
    if (nnc_status_t status = nnc_function_find_input(function, name, &index))
      return Status(status);
    return index;
  }
  Result<int32_t> findOutput(const char *name) const {
    int32_t index = -1;
    if (nnc_status_t status = nnc_function_find_output(function, name, &index))
      return Status(status);
    return index;
  }
  uint64_t workspaceSize() const { return nnc_function_workspace_size(function); }
  /// The kernels described with nnc --profile (none otherwise).
  int32_t kernelCount() const { return nnc_function_kernel_count(function); }
  const nnc_kernel_info_t *kernel(int32_t index) const {
    return nnc_function_kernel(function, index);
  }
  const nnc_function_t *get() const { return function; }

private:
  const nnc_function_t *function;
};

class Module {
public:
  Module() = default;
  static Result<Module> load(const char *path) {
    nnc_module_t *module = nullptr;
    if (nnc_status_t status = nnc_module_load(path, &module))
      return Status(status);
    return Module(module);
  }

  const char *path() const { return nnc_module_path(get()); }
  const char *producer() const { return nnc_module_producer(get()); }
  const char *target() const { return nnc_module_target(get()); }
  const char *targetCpu() const { return nnc_module_target_cpu(get()); }
  const char *precision() const { return nnc_module_precision(get()); }
  int32_t functionCount() const { return nnc_module_function_count(get()); }
  std::optional<Function> function(int32_t index) const {
    if (const nnc_function_t *function = nnc_module_function(get(), index))
      return Function(function);
    return std::nullopt;
  }
  Result<Function> findFunction(const char *name) const {
    const nnc_function_t *function = nullptr;
    if (nnc_status_t status = nnc_module_find_function(get(), name, &function))
      return Status(status);
    return Function(function);
  }
  nnc_module_t *get() const { return handle.get(); }

private:
  explicit Module(nnc_module_t *module) : handle(module) {}
  std::unique_ptr<nnc_module_t, detail::Releaser<nnc_module_t, nnc_module_release>> handle;
};

/// One function ready to run; used by one thread at a time.
class Session {
public:
  Session() = default;
  static Result<Session> create(const Runtime &runtime, const Module &module,
                                const char *function = "main", const char *device = "cpu",
                                bool profile = false) {
    nnc_session_options_t options;
    nnc_session_options_initialize(&options);
    options.function = function;
    options.device = device;
    options.profile = profile;
    nnc_session_t *session = nullptr;
    if (nnc_status_t status =
            nnc_session_create(runtime.get(), module.get(), &options, &session))
      return Status(status);
    return Session(session);
  }

  Function function() const { return Function(nnc_session_function(get())); }
  /// What the session runs on: "cpu", or the GPU and the image loaded.
  const char *device() const { return nnc_session_device(get()); }
  Status bindInput(int32_t index, const nnc_tensor_view_t &view) {
    return Status(nnc_session_bind_input(get(), index, &view));
  }
  Status bindInput(const char *name, const nnc_tensor_view_t &view) {
    return Status(nnc_session_bind_input_by_name(get(), name, &view));
  }
  Status bindOutput(int32_t index, const nnc_tensor_view_t &view) {
    return Status(nnc_session_bind_output(get(), index, &view));
  }
  Status bindOutput(const char *name, const nnc_tensor_view_t &view) {
    return Status(nnc_session_bind_output_by_name(get(), name, &view));
  }
  /// Runs write output `index` into the session's own buffer again.
  Status unbindOutput(int32_t index) {
    return Status(nnc_session_bind_output(get(), index, nullptr));
  }
  /// Device memory (nnc_session_bind_device_input/output): view.data is a
  /// device address on "cuda", a host pointer on "cuda-emulated".
  Status bindDeviceInput(int32_t index, const nnc_tensor_view_t &view) {
    return Status(nnc_session_bind_device_input(get(), index, &view));
  }
  Status bindDeviceOutput(int32_t index, const nnc_tensor_view_t &view) {
    return Status(nnc_session_bind_device_output(get(), index, &view));
  }
  Status run() { return Status(nnc_session_run(get())); }
  Result<nnc_tensor_view_t> output(int32_t index) const {
    nnc_tensor_view_t view{};
    if (nnc_status_t status = nnc_session_output(get(), index, &view))
      return Status(status);
    return view;
  }
  /// The last run's seconds per kernel (a session created with profile).
  Result<std::vector<double>> kernelSeconds() const {
    std::vector<double> seconds(function().kernelCount());
    if (nnc_status_t status = nnc_session_kernel_seconds(get(), seconds.data(),
                                                         static_cast<int32_t>(seconds.size())))
      return Status(status);
    return seconds;
  }
  nnc_session_t *get() const { return handle.get(); }

private:
  explicit Session(nnc_session_t *session) : handle(session) {}
  std::unique_ptr<nnc_session_t, detail::Releaser<nnc_session_t, nnc_session_release>> handle;
};

/// The training functions of a module and the parameters they update
/// (docs/training.md); used by one thread at a time. Parameter names go
/// without the "param:" prefix.
///
///   auto trainer = nnc::Trainer::create(*runtime, *module);
///   nnc_tensor_view_t batch[] = {x, labels};
///   nnc::Result<float> loss = trainer->step(batch, 2);
class Trainer {
public:
  Trainer() = default;
  static Result<Trainer> create(const Runtime &runtime, const Module &module,
                                const char *device = "cpu") {
    nnc_session_options_t options;
    nnc_session_options_initialize(&options);
    options.device = device;
    nnc_trainer_t *trainer = nullptr;
    if (nnc_status_t status = nnc_trainer_create(runtime.get(), module.get(), &options, &trainer))
      return Status(status);
    return Trainer(trainer);
  }

  const char *device() const { return nnc_trainer_device(get()); }
  /// The model's inputs, then the labels (when hasLabels()); nullptr when
  /// index is out of range.
  int32_t inputCount() const { return nnc_trainer_input_count(get()); }
  bool hasLabels() const { return nnc_trainer_has_labels(get()) != 0; }
  const nnc_tensor_info_t *input(int32_t index) const { return nnc_trainer_input(get(), index); }
  int32_t parameterCount() const { return nnc_trainer_parameter_count(get()); }
  const nnc_tensor_info_t *parameter(int32_t index) const {
    return nnc_trainer_parameter(get(), index);
  }
  Status readParameter(const char *name, void *data, size_t bytes) const {
    return Status(nnc_trainer_read_parameter(get(), name, data, bytes));
  }
  Status writeParameter(const char *name, const void *data, size_t bytes) {
    return Status(nnc_trainer_write_parameter(get(), name, data, bytes));
  }
  int64_t steps() const { return nnc_trainer_steps(get()); }
  /// One optimizer step; the batch's loss.
  Result<float> step(const nnc_tensor_view_t *inputs, int32_t count) {
    float loss = 0;
    if (nnc_status_t status = nnc_trainer_step(get(), inputs, count, &loss))
      return Status(status);
    return loss;
  }
  /// The loss; the gradients are read with readGradient.
  Result<float> lossAndGradients(const nnc_tensor_view_t *inputs, int32_t count) {
    float loss = 0;
    if (nnc_status_t status = nnc_trainer_loss_and_gradients(get(), inputs, count, &loss))
      return Status(status);
    return loss;
  }
  Status readGradient(const char *name, void *data, size_t bytes) const {
    return Status(nnc_trainer_read_gradient(get(), name, data, bytes));
  }
  Status eval(const nnc_tensor_view_t *inputs, int32_t count) {
    return Status(nnc_trainer_eval(get(), inputs, count));
  }
  Result<nnc_tensor_view_t> evalOutput(int32_t index) const {
    nnc_tensor_view_t view{};
    if (nnc_status_t status = nnc_trainer_eval_output(get(), index, &view))
      return Status(status);
    return view;
  }
  Status saveCheckpoint(const char *path) const {
    return Status(nnc_trainer_save_checkpoint(get(), path));
  }
  Status loadCheckpoint(const char *path) {
    return Status(nnc_trainer_load_checkpoint(get(), path));
  }
  nnc_trainer_t *get() const { return handle.get(); }

private:
  explicit Trainer(nnc_trainer_t *trainer) : handle(trainer) {}
  std::unique_ptr<nnc_trainer_t, detail::Releaser<nnc_trainer_t, nnc_trainer_release>> handle;
};

} // namespace nnc

#endif // NNC_RUNTIME_HPP
