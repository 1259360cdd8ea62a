//===- Emulator.h - CUDA kernel launches executed on the CPU ----*- C++ -*-===//
//
// Runs a kernel's host image (nnc_abi_cuda_host_kernel_t, abi.h) as the GPU
// would run the kernel: every block, every thread of it, with the block's
// shared memory, barriers and warp collectives. Blocks are independent and
// spread over the runtime's thread pool. Threads of a kernel without
// collectives run one after the other; otherwise each runs on a fiber, and
// the block's scheduler releases a barrier or a collective when every
// thread it concerns waits at it. What CUDA leaves undefined and a GPU
// would get wrong quietly (divergent barriers, partial warps at a shuffle,
// launches outside the bounds the code was compiled for) is an error.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_RUNTIME_SRC_EMULATOR_H
#define NNC_RUNTIME_SRC_EMULATOR_H

#include "nnc/abi.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nnc::runtime::emulated {

/// One kernel launch as the module's host code asked for it.
struct Launch {
  const nnc_abi_cuda_host_kernel_t *kernel;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t sharedBytes; // dynamic shared memory
  void **params;
};

/// How a launch's blocks and threads are run.
struct Order {
  bool reversed = false; // blocks and the threads of each block last to first
  bool poison = false;   // shared memory starts as 0xff bytes (NaN) rather than zeros
  bool serial = false;   // on the calling thread only
};

/// Shared memory a block may have, static and dynamic together (sm_90's).
constexpr uint64_t kMaxSharedBytes = 227 * 1024;

/// "" when `launch` is one the kernel's code may run, else why not.
std::string checkLaunch(const Launch &launch);

class Emulator {
public:
  /// `host` is what the runtime offers compiled code on the CPU: its pool.
  explicit Emulator(const nnc_abi_context_t &host);
  ~Emulator();
  Emulator(const Emulator &) = delete;
  Emulator &operator=(const Emulator &) = delete;

  /// Runs every block of a launch that passed checkLaunch. Returns "" or the
  /// first error, naming the block and thread.
  std::string run(const Launch &launch, const Order &order);

  struct Worker; // runs one block at a time: its shared memory and fibers

private:
  Worker *acquire();
  void release(Worker *worker);

  nnc_abi_context_t host;
  std::mutex mutex;
  std::vector<std::unique_ptr<Worker>> workers; // every one made, kept for later launches
  std::vector<Worker *> idle;
};

} // namespace nnc::runtime::emulated

#endif // NNC_RUNTIME_SRC_EMULATOR_H
