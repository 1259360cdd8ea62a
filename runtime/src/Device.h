//===- Device.h - what a session runs a CUDA module on ----------*- C++ -*-===//
//
// A session of a CUDA module holds one device: a GPU through the driver
// (CudaDevice) or the host CPU emulating one (EmulatedDevice). Both keep
// every buffer a run needs from creation on and copy inputs in and outputs
// out (except those bound to the caller's device memory), so the module's
// host code and the session behave the same on each.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_RUNTIME_SRC_DEVICE_H
#define NNC_RUNTIME_SRC_DEVICE_H

#include "nnc/runtime.h"

#include <string>
#include <vector>

namespace nnc::runtime {

class Device {
public:
  virtual ~Device() = default;

  /// Copies the inputs from the host buffers, runs the function's kernels
  /// and copies the outputs to the host buffers.
  virtual nnc_status_t run(void *const *hostInputs, void *const *hostOutputs) = 0;
  /// Makes runs use `address`, in the device's memory, as input (or output)
  /// `index` directly, with no copy from (or to) the host; a null address
  /// returns the tensor to the device's own buffer and its copy. The session
  /// has checked the index and the view.
  virtual void bindDeviceMemory(bool isInput, size_t index, void *address) = 0;

  /// The last run's kernel times where the device measures them itself (a
  /// GPU's events); null where the session's host clock does.
  virtual const std::vector<double> *kernelSeconds() const { return nullptr; }
  /// For nnc_session_device.
  virtual const std::string &description() const = 0;
};

} // namespace nnc::runtime

#endif // NNC_RUNTIME_SRC_DEVICE_H
