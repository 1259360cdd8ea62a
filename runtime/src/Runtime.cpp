//===- Runtime.cpp - runtime creation and the thread pool's ABI face -----===//

#include "runtime/src/Objects.h"
#include "runtime/src/Status.h"

#include <sched.h>
#include <unistd.h>

#include <string>

using namespace nnc::runtime;

namespace {
/// Cores this process may run on: the affinity mask honours taskset and
/// container cpusets, which the machine-wide count does not.
int32_t availableCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    return CPU_COUNT(&set);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int32_t>(online) : 1;
}

void parallelFor(void *runtime, int64_t count, void (*body)(void *, int64_t, int64_t),
                 void *arg) {
  static_cast<ThreadPool *>(runtime)->parallelFor(count, body, arg);
}
} // namespace

void nnc_runtime_options_initialize(nnc_runtime_options_t *options) {
  options->num_threads = 0;
}

nnc_status_t nnc_runtime_create(const nnc_runtime_options_t *options,
                                nnc_runtime_t **out_runtime) {
  if (!out_runtime)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT, "nnc_runtime_create: out_runtime is NULL");
  nnc_runtime_options_t defaults;
  nnc_runtime_options_initialize(&defaults);
  if (!options)
    options = &defaults;
  int32_t threads = options->num_threads;
  if (threads < 0 || threads > NNC_RUNTIME_MAX_THREADS)
    return makeStatus(NNC_STATUS_INVALID_ARGUMENT,
                      "num_threads " + std::to_string(threads) + " is out of range [0, " +
                          std::to_string(NNC_RUNTIME_MAX_THREADS) + "] (0: one per core)");
  if (threads == 0)
    threads = availableCores();

  std::unique_ptr<ThreadPool> pool;
  if (nnc_status_t status = ThreadPool::create(threads, pool))
    return status;
  auto *runtime = new nnc_runtime();
  runtime->pool = std::move(pool);
  // Sessions add their own profile and string hooks.
  runtime->context = {runtime->pool.get(), threads, parallelFor, nullptr, nullptr,
                      nullptr,             nullptr, nullptr,     nullptr};
  *out_runtime = runtime;
  return nullptr;
}

void nnc_runtime_release(nnc_runtime_t *runtime) {
  if (runtime)
    runtime->release();
}

int32_t nnc_runtime_num_threads(const nnc_runtime_t *runtime) {
  return runtime->pool->numThreads();
}
