//===- Device.h - what a session runs a CUDA module on ----------*- C++ -*-===//
//
// A session of a CUDA module holds one device: a GPU through the driver
// (CudaDevice) or the host CPU emulating one (EmulatedDevice). Both keep
// every buffer a run needs from creation on and copy inputs in and outputs
// out, so the module's host code and the session behave the same on each.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_RUNTIME_SRC_DEVICE_H
#define NNC_RUNTIME_SRC_DEVICE_H

#include "nnc/runtime.h"

#include <string>

namespace nnc::runtime {

class Device {
public:
  virtual ~Device() = default;

  /// Copies the inputs from the host buffers, runs the function's kernels
  /// and copies the outputs to the host buffers.
  virtual nnc_status_t run(void *const *hostInputs, void *const *hostOutputs) = 0;

  /// For nnc_session_device.
  virtual const std::string &description() const = 0;
};

} // namespace nnc::runtime

#endif // NNC_RUNTIME_SRC_DEVICE_H
