//===- EmulatedDevice.h - a CUDA device emulated on the host CPU -*- C++ -*-===//
//
// The "cuda-emulated" device: a session of a CUDA module whose "device
// memory" is host memory and whose kernels run from the module's host image
// (nnc_abi_module_t.cuda_host_kernels) on the CPU. The module's host code
// and the session's copies are those of a GPU session, so CI machines
// without a GPU check the CUDA kernels' numerics through the same path.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_RUNTIME_SRC_EMULATEDDEVICE_H
#define NNC_RUNTIME_SRC_EMULATEDDEVICE_H

#include "runtime/src/Device.h"
#include "runtime/src/Emulator.h"
#include "runtime/src/Objects.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace nnc::runtime::emulated {

class EmulatedDevice : public Device {
public:
  /// Prepares `function` of `module` (a CUDA module with a host image):
  /// copies the constants once and allocates the workspace and a buffer per
  /// input and output, as a GPU session does. `host` is what the runtime
  /// offers compiled code on the CPU (its thread pool), on which the blocks
  /// run. With NNC_CUDA_EMULATED_CHECK set (and not "0"), every launch runs
  /// twice, in opposite orders, and must give the same bytes.
  static nnc_status_t create(const nnc_module &module, const nnc_function &function,
                             const nnc_abi_context_t &host,
                             std::unique_ptr<EmulatedDevice> &out);

  nnc_status_t run(void *const *hostInputs, void *const *hostOutputs) override;
  /// Device memory is host memory here: `address` is any host buffer.
  void bindDeviceMemory(bool isInput, size_t index, void *address) override;
  const std::string &description() const override { return summary; }

private:
  EmulatedDevice(const nnc_module &module, const nnc_function &function,
                 const nnc_abi_context_t &host);

  struct FreeDeleter {
    void operator()(void *memory) const { std::free(memory); }
  };
  using Buffer = std::unique_ptr<char, FreeDeleter>;
  /// A buffer of `bytes` (NULL for none), as cuMemAlloc would give.
  nnc_status_t allocate(size_t bytes, size_t alignment, const std::string &what, Buffer &out);

  static int32_t launch(void *device, int32_t kernel, uint32_t grid_x, uint32_t grid_y,
                        uint32_t grid_z, uint32_t block_x, uint32_t block_y, uint32_t block_z,
                        uint32_t shared_bytes, void **params);
  /// Runs a launch as the checking mode does; "" or what differed.
  std::string runChecked(const Launch &launch);

  const nnc_module *module;
  const nnc_function *function;
  Emulator emulator;
  std::string summary;
  bool checking = false;

  Buffer constants, workspace;
  std::vector<Buffer> buffers; // the inputs', then the outputs'
  std::vector<void *> inputs, outputs; // as the entry receives them
  std::vector<void *> ownInputs, ownOutputs; // the buffers above, before any binding
  std::vector<bool> inputOnDevice, outputOnDevice; // bound to the caller's device memory
  /// Checking mode: what a launch may write (workspace and outputs), with a
  /// name for messages, and room for two copies of it.
  struct Region {
    char *data;
    size_t size;
    std::string name;
  };
  std::vector<Region> writable;
  std::vector<int> outputRegion; // each output's index in writable; -1 for none
  Buffer before, after;
  void *const *runInputs = nullptr; // the caller's inputs during a run

  nnc_abi_cuda_t cuda{};
  nnc_abi_context_t callContext{};
  /// The first launch failure of the current entry call, for its status.
  std::string launchError;
  /// The first failed launch's code in the current run (0: none).
  int32_t launchCode = 0;
};

} // namespace nnc::runtime::emulated

#endif // NNC_RUNTIME_SRC_EMULATEDDEVICE_H
