//===- Objects.h - the structs behind the runtime's opaque handles -*- C++ -*-===//
//
// Runtimes and modules are reference counted so that sessions can keep them
// alive; the public API exposes only _release (a create or load hands the
// caller one reference).
//
//===----------------------------------------------------------------------===//

#ifndef NNC_RUNTIME_SRC_OBJECTS_H
#define NNC_RUNTIME_SRC_OBJECTS_H

#include "nnc/runtime.h"
#include "runtime/src/ThreadPool.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

/// Intrusive reference count: the object deletes itself at zero.
template <typename Derived>
struct RefCounted {
  std::atomic<int> references{1};
  void retain() { references.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (references.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete static_cast<Derived *>(this);
  }
};

struct nnc_runtime : RefCounted<nnc_runtime> {
  std::unique_ptr<nnc::runtime::ThreadPool> pool;
  nnc_abi_context_t context; // what compiled code sees of the pool
};

struct nnc_function {
  const nnc_abi_function_t *abi;
  const nnc_module *module;
  std::vector<nnc_tensor_info_t> inputs;
  std::vector<nnc_tensor_info_t> outputs;
  std::vector<nnc_kernel_info_t> kernels; // set for functions compiled with --profile
};

struct nnc_module : RefCounted<nnc_module> {
  ~nnc_module();
  std::string path;
  void *library = nullptr; // dlopen handle
  const nnc_abi_module_t *abi = nullptr;
  std::vector<nnc_function> functions;
};

#endif // NNC_RUNTIME_SRC_OBJECTS_H
