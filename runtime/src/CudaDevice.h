//===- CudaDevice.h - a CUDA GPU as one session holds it --------*- C++ -*-===//
//
// The device side of a session running a CUDA module: the primary context,
// a stream, the module's kernels JIT-compiled from the PTX image that suits
// the GPU, and every device buffer a run uses, all made at creation.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_RUNTIME_SRC_CUDADEVICE_H
#define NNC_RUNTIME_SRC_CUDADEVICE_H

#include "runtime/src/CudaDriver.h"
#include "runtime/src/Device.h"
#include "runtime/src/Objects.h"

#include <memory>
#include <string>
#include <vector>

namespace nnc::runtime::cuda {

/// Reads a CUDA image's chip name: "sm_<digits>", or "sm_<digits>a" for the
/// architecture-specific features of exactly that chip (sm_90a's wgmma).
/// False for anything else.
bool parseChip(const char *chip, int &number, bool &specific);

class CudaDevice : public Device {
public:
  /// Opens GPU `ordinal` for `function` of `module` (a CUDA module): loads the
  /// driver, retains the device's primary context, creates a stream, loads the
  /// newest PTX image the device runs and its kernels, uploads the module's
  /// constants, and allocates the workspace and a device buffer per input and
  /// output. `device` is the session option's text, for messages; `host` is
  /// what the runtime offers compiled code on the CPU (its thread pool).
  /// With `profile`, each kernel the function marks (nnc --profile) is timed
  /// by events on the stream, and runs launch one by one.
  static nnc_status_t create(const std::string &device, int ordinal, const nnc_module &module,
                             const nnc_function &function, const nnc_abi_context_t &host,
                             bool profile, std::unique_ptr<CudaDevice> &out);

  /// Frees everything create made, in reverse dependency order.
  ~CudaDevice() override;

  /// Copies the inputs from the host, runs the function's kernels, copies
  /// the outputs to the host and waits for all of it. From the second run on
  /// the kernels replay as a CUDA graph captured from the entry function,
  /// where the driver supports capture.
  nnc_status_t run(void *const *hostInputs, void *const *hostOutputs) override;

  /// `address` is a device address in the session's context. A new address
  /// drops the recorded graph (its launches hold the old one); the next run
  /// records a new one.
  void bindDeviceMemory(bool isInput, size_t index, void *address) override;

  /// "cuda:0 'NVIDIA H100 80GB HBM3' (compute capability 9.0, image sm_90a,
  /// driver 13.0)".
  const std::string &description() const override { return summary; }
  const std::vector<double> *kernelSeconds() const override {
    return events.empty() ? nullptr : &seconds;
  }

private:
  CudaDevice() = default;
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  nnc_status_t open(int ordinal, const nnc_abi_context_t &host);
  nnc_status_t loadKernels(int image);
  nnc_status_t allocate(size_t bytes, size_t alignment, const std::string &what,
                        CUdeviceptr &out);
  nnc_status_t enqueue(void *const *hostInputs, void *const *hostOutputs);
  nnc_status_t enqueueKernels();
  nnc_status_t capture();
  int32_t callEntry();
  nnc_status_t entryFailure(int32_t code) const;
  nnc_status_t fail(const std::string &what, const char *call, CUresult result) const;
  nnc_status_t startProfiling();
  /// The profile hook: records kernel k's start event.
  static void mark(void *state, int32_t kernel);
  /// The finished run's kernel times, from its events.
  nnc_status_t readProfile();

  static int32_t launch(void *device, int32_t kernel, uint32_t grid_x, uint32_t grid_y,
                        uint32_t grid_z, uint32_t block_x, uint32_t block_y, uint32_t block_z,
                        uint32_t shared_bytes, void **params);

  const Driver *driver = nullptr;
  std::string name; // "cuda:0"
  std::string summary;
  const nnc_module *module = nullptr;
  const nnc_function *function = nullptr;

  CUdevice device = 0;
  CUcontext context = nullptr; // the primary context, retained when set
  CUstream stream = nullptr;
  CUmodule kernelModule = nullptr;
  std::vector<CUfunction> kernels; // by index into the module's cuda_kernels
  /// Dynamic shared memory each kernel was allowed beyond the default 48 KiB.
  std::vector<uint32_t> sharedOptIn;

  std::vector<CUdeviceptr> allocations; // everything cuMemAlloc gave, freed at release
  CUdeviceptr constants = 0, workspace = 0;
  std::vector<void *> inputs, outputs; // device addresses, as the entry receives them
  std::vector<void *> ownInputs, ownOutputs; // the session's buffers among them
  std::vector<bool> inputOnDevice, outputOnDevice; // bound to the caller's device memory

  nnc_abi_cuda_t cuda{}; // callContext.cuda
  nnc_abi_context_t callContext{}; // what the entry function receives

  /// Runs go eager until one succeeds, then the next one captures the
  /// entry's launches into a graph that later runs replay.
  enum class Graph { Eager, Capture, Replay, Unsupported } graphState = Graph::Eager;
  CUgraphExec graph = nullptr;

  /// Profiling: an event per mark, which of them this run recorded, the
  /// first failed record, and the last run's kernel times.
  std::vector<CUevent> events;
  std::vector<bool> marked;
  CUresult profileResult = CUDA_SUCCESS;
  std::vector<double> seconds;

  /// The first launch failure of the current entry call, for its status.
  std::string launchError;
  CUresult launchResult = CUDA_SUCCESS;
};

} // namespace nnc::runtime::cuda

#endif // NNC_RUNTIME_SRC_CUDADEVICE_H
