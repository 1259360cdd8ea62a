//===- CudaDriver.h - the CUDA driver API, loaded with dlopen ---*- C++ -*-===//
//
// Nothing links against CUDA and no CUDA header is needed to build: the few
// driver types and enum values the runtime uses are declared here with the
// real ABI's values, and the entry points come from a symbol table filled by
// dlsym from libcuda.so.1 (or the library NNC_CUDA_DRIVER names).
//
//===----------------------------------------------------------------------===//

#ifndef NNC_RUNTIME_SRC_CUDADRIVER_H
#define NNC_RUNTIME_SRC_CUDADRIVER_H

#include "nnc/runtime.h"

#include <cstddef>
#include <string>

namespace nnc::runtime::cuda {

// The driver's handle types (cuda.h): opaque pointers, an int device ordinal
// and a 64-bit device address.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;
using CUevent = struct CUevent_st *;

// Enums are int-sized in the C ABI; only the values used are listed.
enum CUresultValue : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
  CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
  CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
};

enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
};

enum CUjit_option : int {
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

enum CUfunction_attribute : int {
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

enum CUstreamCaptureMode : int {
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
};

enum CUstreamFlags : unsigned {
  CU_STREAM_NON_BLOCKING = 1,
};

// The entry points, by the names the driver exports: the _v2 ones where
// cuda.h maps the plain name to them (64-bit sizes, the primary context
// release that keeps the context's state). Every one returns CUresult.
// REQUIRED(name, parameter types...) must resolve or the driver is refused;
// OPTIONAL ones (CUDA graphs, events) may be missing from an old driver, and
// are then NULL and their feature is skipped or refused. (cuda.h 13 maps
// cuEventElapsedTime to _v2; older drivers export the plain name only.)
#define NNC_CUDA_DRIVER_SYMBOLS(REQUIRED, OPTIONAL)                                          \
  REQUIRED(cuInit, unsigned)                                                                  \
  REQUIRED(cuDriverGetVersion, int *)                                                         \
  REQUIRED(cuGetErrorName, CUresult, const char **)                                           \
  REQUIRED(cuGetErrorString, CUresult, const char **)                                         \
  REQUIRED(cuDeviceGetCount, int *)                                                           \
  REQUIRED(cuDeviceGet, CUdevice *, int)                                                      \
  REQUIRED(cuDeviceGetAttribute, int *, CUdevice_attribute, CUdevice)                         \
  REQUIRED(cuDeviceGetName, char *, int, CUdevice)                                            \
  REQUIRED(cuDevicePrimaryCtxRetain, CUcontext *, CUdevice)                                   \
  REQUIRED(cuDevicePrimaryCtxRelease_v2, CUdevice)                                            \
  REQUIRED(cuCtxPushCurrent_v2, CUcontext)                                                    \
  REQUIRED(cuCtxPopCurrent_v2, CUcontext *)                                                   \
  REQUIRED(cuStreamCreate, CUstream *, unsigned)                                              \
  REQUIRED(cuStreamDestroy_v2, CUstream)                                                      \
  REQUIRED(cuStreamSynchronize, CUstream)                                                     \
  REQUIRED(cuMemAlloc_v2, CUdeviceptr *, size_t)                                              \
  REQUIRED(cuMemFree_v2, CUdeviceptr)                                                         \
  REQUIRED(cuMemcpyHtoDAsync_v2, CUdeviceptr, const void *, size_t, CUstream)                 \
  REQUIRED(cuMemcpyDtoHAsync_v2, void *, CUdeviceptr, size_t, CUstream)                       \
  REQUIRED(cuModuleLoadDataEx, CUmodule *, const void *, unsigned, CUjit_option *, void **)   \
  REQUIRED(cuModuleGetFunction, CUfunction *, CUmodule, const char *)                         \
  REQUIRED(cuModuleUnload, CUmodule)                                                          \
  REQUIRED(cuFuncSetAttribute, CUfunction, CUfunction_attribute, int)                         \
  REQUIRED(cuLaunchKernel, CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,      \
           unsigned, unsigned, CUstream, void **, void **)                                    \
  OPTIONAL(cuStreamBeginCapture_v2, CUstream, CUstreamCaptureMode)                            \
  OPTIONAL(cuStreamEndCapture, CUstream, CUgraph *)                                           \
  OPTIONAL(cuGraphInstantiateWithFlags, CUgraphExec *, CUgraph, unsigned long long)           \
  OPTIONAL(cuGraphLaunch, CUgraphExec, CUstream)                                              \
  OPTIONAL(cuGraphExecDestroy, CUgraphExec)                                                   \
  OPTIONAL(cuGraphDestroy, CUgraph)                                                           \
  OPTIONAL(cuEventCreate, CUevent *, unsigned)                                                \
  OPTIONAL(cuEventDestroy_v2, CUevent)                                                        \
  OPTIONAL(cuEventRecord, CUevent, CUstream)                                                  \
  OPTIONAL(cuEventElapsedTime_v2, float *, CUevent, CUevent)                                  \
  OPTIONAL(cuEventElapsedTime, float *, CUevent, CUevent)

/// A loaded driver: the library and its entry points. Loaded once per path
/// and process and never unloaded (the driver keeps threads and state for
/// the process's lifetime), so a pointer to it stays valid.
struct Driver {
#define NNC_CUDA_DECLARE(name, ...) CUresult (*name)(__VA_ARGS__) = nullptr;
  NNC_CUDA_DRIVER_SYMBOLS(NNC_CUDA_DECLARE, NNC_CUDA_DECLARE)
#undef NNC_CUDA_DECLARE

  std::string path; // as given to dlopen
  int version = 0;  // cuDriverGetVersion: 1000 * major + 10 * minor

  /// True when every symbol CUDA graphs need was found.
  bool hasGraphs() const;
  /// True when events can time work on a stream.
  bool hasEvents() const;
  /// cuEventElapsedTime_v2, or the plain one of an older driver.
  CUresult elapsedTime(float *milliseconds, CUevent start, CUevent end) const;

  /// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)", or the number when the
  /// driver does not know the code.
  std::string errorText(CUresult result) const;

  /// A status for a failed driver call: "<what>: <call> failed: <errorText>",
  /// with a code chosen from the kind of error (resources, availability,
  /// a module the driver cannot use, anything else internal).
  nnc_status_t failure(const std::string &what, const char *call, CUresult result,
                       const std::string &details = "") const;
};

/// Loads the driver (the library NNC_CUDA_DRIVER names, else libcuda.so.1)
/// and initializes it with cuInit, once per process; a failure is
/// NNC_STATUS_UNAVAILABLE naming `device` and is retried by the next call.
/// Thread-safe.
nnc_status_t loadDriver(const std::string &device, const Driver *&out);

/// Makes a context current on the calling thread for a scope and restores
/// the previous one after, so the runtime coexists with other CUDA users of
/// the thread.
class ContextScope {
public:
  ContextScope(const Driver &driver, CUcontext context);
  ~ContextScope();
  /// The result of pushing the context; nothing is popped if it failed.
  CUresult result() const { return pushed; }

private:
  const Driver &driver;
  CUresult pushed;
};

} // namespace nnc::runtime::cuda

#endif // NNC_RUNTIME_SRC_CUDADRIVER_H
