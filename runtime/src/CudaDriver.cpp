//===- CudaDriver.cpp - loading the CUDA driver and naming its errors -----===//

#include "runtime/src/CudaDriver.h"
#include "runtime/src/Status.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

using namespace nnc::runtime;
using namespace nnc::runtime::cuda;

bool Driver::hasGraphs() const {
  return cuStreamBeginCapture_v2 && cuStreamEndCapture && cuGraphInstantiateWithFlags &&
         cuGraphLaunch && cuGraphExecDestroy && cuGraphDestroy;
}

bool Driver::hasEvents() const {
  return cuEventCreate && cuEventDestroy_v2 && cuEventRecord &&
         (cuEventElapsedTime_v2 || cuEventElapsedTime);
}

CUresult Driver::elapsedTime(float *milliseconds, CUevent start, CUevent end) const {
  return cuEventElapsedTime_v2 ? cuEventElapsedTime_v2(milliseconds, start, end)
                               : cuEventElapsedTime(milliseconds, start, end);
}

std::string Driver::errorText(CUresult result) const {
  // Both calls leave the string NULL for a code the driver does not know.
  const char *name = nullptr, *description = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &description);
  std::string text = name ? name : "CUDA error " + std::to_string(result);
  if (description)
    text += " (" + std::string(description) + ")";
  return text;
}

nnc_status_t Driver::failure(const std::string &what, const char *call, CUresult result,
                             const std::string &details) const {
  nnc_status_code_t code;
  switch (result) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    code = NNC_STATUS_RESOURCE_EXHAUSTED;
    break;
  // The machine cannot provide the device: no GPU, a driver too old for the
  // machine or its libraries, a device another process holds exclusively.
  case CUDA_ERROR_NOT_INITIALIZED:
  case CUDA_ERROR_DEINITIALIZED:
  case CUDA_ERROR_STUB_LIBRARY:
  case CUDA_ERROR_INSUFFICIENT_DRIVER:
  case CUDA_ERROR_DEVICE_UNAVAILABLE:
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_DEVICE:
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
  case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    code = NNC_STATUS_UNAVAILABLE;
    break;
  // The module's code does not suit this driver or device: like a CPU module
  // needing extensions the CPU lacks.
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
  case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    code = NNC_STATUS_FAILED_PRECONDITION;
    break;
  // The module itself is broken: PTX that does not compile, a kernel its
  // image does not define.
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_NOT_FOUND:
    code = NNC_STATUS_INVALID_ARGUMENT;
    break;
  default:
    code = NNC_STATUS_INTERNAL;
    break;
  }
  return makeStatus(code, what + ": " + call + " failed: " + errorText(result) + details);
}

namespace {
/// Fills driver's entry points from library; returns the first required
/// symbol missing, or "".
std::string resolve(void *library, Driver &driver) {
  std::string missing;
#define NNC_CUDA_REQUIRED(name, ...)                                                          \
  driver.name = reinterpret_cast<decltype(driver.name)>(dlsym(library, #name));              \
  if (!driver.name && missing.empty())                                                       \
    missing = #name;
#define NNC_CUDA_OPTIONAL(name, ...)                                                          \
  driver.name = reinterpret_cast<decltype(driver.name)>(dlsym(library, #name));
  NNC_CUDA_DRIVER_SYMBOLS(NNC_CUDA_REQUIRED, NNC_CUDA_OPTIONAL)
#undef NNC_CUDA_REQUIRED
#undef NNC_CUDA_OPTIONAL
  return missing;
}
} // namespace

nnc_status_t nnc::runtime::cuda::loadDriver(const std::string &device, const Driver *&out) {
  const char *override = std::getenv("NNC_CUDA_DRIVER");
  std::string path = override && *override ? override : "libcuda.so.1";
  std::string what = "device '" + device + "'";

  // Keyed by path so that each library is initialized once; only successes
  // are kept, so a driver installed or fixed later is picked up.
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Driver>> drivers;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = drivers.find(path);
  if (found != drivers.end()) {
    out = found->second.get();
    return nullptr;
  }

  // RTLD_LOCAL: the driver's symbols stay out of the process's namespace.
  // A failed load is not closed: unloading a driver that has started
  // initializing is not something drivers promise to survive.
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library)
    return makeStatus(NNC_STATUS_UNAVAILABLE,
                      what + ": cannot load the CUDA driver " + path + ": " + dlerror());
  auto driver = std::make_unique<Driver>();
  driver->path = path;
  std::string missing = resolve(library, *driver);
  if (!missing.empty())
    return makeStatus(NNC_STATUS_UNAVAILABLE, what + ": the CUDA driver " + path +
                                                  " does not export '" + missing +
                                                  "' (this runtime needs a driver for CUDA 11 or newer)");
  if (CUresult result = driver->cuInit(0)) {
    nnc_status_t status = driver->failure(what, "cuInit", result);
    // Whatever the driver says, a device that cannot initialize is one this
    // machine cannot provide.
    nnc_status_t unavailable = makeStatus(NNC_STATUS_UNAVAILABLE, nnc_status_message(status));
    nnc_status_free(status);
    return unavailable;
  }
  if (CUresult result = driver->cuDriverGetVersion(&driver->version))
    return driver->failure(what, "cuDriverGetVersion", result);
  out = driver.get();
  drivers.emplace(path, std::move(driver));
  return nullptr;
}

ContextScope::ContextScope(const Driver &driver, CUcontext context)
    : driver(driver), pushed(driver.cuCtxPushCurrent_v2(context)) {}

ContextScope::~ContextScope() {
  if (pushed == CUDA_SUCCESS) {
    CUcontext popped;
    driver.cuCtxPopCurrent_v2(&popped);
  }
}
