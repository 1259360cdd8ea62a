//===- ThreadPool.cpp - the CPU threads behind parallel_for --------------===//

#include "runtime/src/ThreadPool.h"

#include "runtime/src/Status.h"

#include <algorithm>
#include <cstring>
#include <string>

using namespace nnc::runtime;

nnc_status_t ThreadPool::create(int32_t numThreads, std::unique_ptr<ThreadPool> &out) {
  std::unique_ptr<ThreadPool> pool(new ThreadPool());
  pool->workers.reserve(numThreads - 1);
  pool->shares.reset(new Share[numThreads]);
  for (int32_t i = 1; i < numThreads; ++i) {
    pool->workerArgs.push_back(std::make_unique<Worker>(Worker{pool.get(), i}));
    pthread_t thread;
    if (int error = pthread_create(&thread, nullptr, workerMain, pool->workerArgs.back().get()))
      return makeStatus(NNC_STATUS_RESOURCE_EXHAUSTED,
                        "cannot start thread " + std::to_string(i + 1) + " of " +
                            std::to_string(numThreads) + ": " + std::strerror(error));
    pool->workers.push_back(thread);
  }
  out = std::move(pool);
  return nullptr;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping.store(true, std::memory_order_release);
  }
  wake.notify_all();
  for (pthread_t thread : workers)
    pthread_join(thread, nullptr);
}

namespace {
// About 50-100 microseconds of polling before a thread sleeps: back-to-back
// kernels of one run find the workers awake.
constexpr int kSpinIterations = 20000;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

/// Polls `ready` for a while; true if it became true.
template <typename Ready> bool spinUntil(Ready ready) {
  for (int i = 0; i < kSpinIterations; ++i) {
    if (ready())
      return true;
    cpuRelax();
  }
  return false;
}
} // namespace

void *ThreadPool::workerMain(void *opaque) {
  auto *worker = static_cast<Worker *>(opaque);
  ThreadPool *pool = worker->pool;
  // Workers start before any loop (generation 0) but may first run after the
  // first loop was posted: they must not take its generation as seen.
  uint64_t seen = 0;
  for (;;) {
    auto posted = [&] {
      return pool->stopping.load(std::memory_order_acquire) ||
             pool->generation.load(std::memory_order_acquire) != seen;
    };
    if (!spinUntil(posted)) {
      std::unique_lock<std::mutex> lock(pool->mutex);
      pool->wake.wait(lock, posted);
    }
    if (pool->stopping.load(std::memory_order_acquire))
      return nullptr;
    seen = pool->generation.load(std::memory_order_acquire);
    pool->runChunks(worker->participant);
    if (pool->pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      // Under the mutex, so the caller cannot miss it between its check and its wait.
      std::lock_guard<std::mutex> lock(pool->mutex);
      pool->done.notify_one();
    }
  }
}

void ThreadPool::runChunks(int participant) {
  int32_t threads = numThreads();
  for (int32_t i = 0; i < threads; ++i) {
    Share &share = shares[(participant + i) % threads];
    for (;;) {
      int64_t begin = share.next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= share.end)
        break;
      body(arg, begin, std::min(begin + chunk, share.end));
    }
  }
}

void ThreadPool::parallelFor(int64_t n, Body fn, void *context) {
  if (n <= 0)
    return;
  bool idle = false;
  if (workers.empty() || n == 1 || !busy.compare_exchange_strong(idle, true)) {
    fn(context, 0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    body = fn;
    arg = context;
    count = n;
    // A few chunks per thread balance uneven chunks and threads that are
    // descheduled on a shared machine, at one atomic add per chunk.
    int64_t chunks = static_cast<int64_t>(numThreads()) * 4;
    chunk = (n + chunks - 1) / chunks;
    int32_t threads = numThreads();
    for (int32_t t = 0; t < threads; ++t) {
      shares[t].next.store(n * t / threads, std::memory_order_relaxed);
      shares[t].end = n * (t + 1) / threads;
    }
    pending.store(static_cast<int>(workers.size()), std::memory_order_relaxed);
    // Publishes the loop above to workers that see the new generation.
    generation.fetch_add(1, std::memory_order_release);
  }
  wake.notify_all();
  runChunks(0);
  auto finished = [&] { return pending.load(std::memory_order_acquire) == 0; };
  if (!spinUntil(finished)) {
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, finished);
  }
  busy.store(false, std::memory_order_release);
}
