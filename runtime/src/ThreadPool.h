//===- ThreadPool.h - the CPU threads behind parallel_for -------*- C++ -*-===//
//
// A fixed set of worker threads that, together with the calling thread, split
// one parallel loop at a time. Calls are not queued: a call that finds the pool
// busy (another session's loop, or a loop nested in a loop body) runs on its
// own thread. That keeps concurrent sessions correct and free of deadlock
// without oversubscribing the cores.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_RUNTIME_SRC_THREADPOOL_H
#define NNC_RUNTIME_SRC_THREADPOOL_H

#include "nnc/runtime.h"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace nnc::runtime {

class ThreadPool {
public:
  using Body = void (*)(void *arg, int64_t begin, int64_t end);

  /// Starts numThreads - 1 workers (the caller of parallelFor is the last).
  static nnc_status_t create(int32_t numThreads, std::unique_ptr<ThreadPool> &out);
  ~ThreadPool();

  int32_t numThreads() const { return static_cast<int32_t>(workers.size()) + 1; }

  /// Calls body over disjoint ranges covering [0, count) and returns when all
  /// have run. Safe to call from any number of threads at once.
  void parallelFor(int64_t count, Body body, void *arg);

private:
  ThreadPool() = default;
  struct Worker {
    ThreadPool *pool;
    int participant;
  };
  static void *workerMain(void *worker);
  void runChunks(int participant);

  std::vector<pthread_t> workers;
  std::vector<std::unique_ptr<Worker>> workerArgs;
  // Claimed by the one parallelFor call that may use the workers.
  std::atomic<bool> busy{false};

  std::mutex mutex;
  std::condition_variable wake; // a new loop or shutdown
  std::condition_variable done; // the last worker left the loop
  // Counts loops; workers wait for a change. Atomic so that workers (and the
  // caller waiting on pending) can spin briefly before sleeping: a condition
  // variable wake-up costs tens of microseconds, as much as a small kernel.
  std::atomic<uint64_t> generation{0};
  std::atomic<int> pending{0};   // workers yet to finish the current loop
  std::atomic<bool> stopping{false};

  // The current loop: written under mutex before a generation bump, read by
  // workers after seeing it, unchanged until every worker is done.
  Body body = nullptr;
  void *arg = nullptr;
  int64_t count = 0;
  int64_t chunk = 0;
  // Participant t (0 is the caller) first takes the chunks of its own share,
  // [count * t / T, count * (t + 1) / T), then what is left of the others'.
  // Kernels that split their data alike then find on each core what that
  // core wrote the kernel before, which matters where the cores are far
  // apart; stealing keeps a late or descheduled thread from holding up the
  // loop.
  struct alignas(64) Share {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };
  std::unique_ptr<Share[]> shares;
};

} // namespace nnc::runtime

#endif // NNC_RUNTIME_SRC_THREADPOOL_H
