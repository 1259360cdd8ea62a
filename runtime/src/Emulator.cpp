//===- Emulator.cpp - CUDA kernel launches executed on the CPU ------------===//
//
// Semantics follow PTX: a CTA barrier completes when every thread of the
// block that has not exited waits at it (exited threads do not hold it up);
// the .aligned form that __syncthreads compiles to also requires every
// thread of a warp to execute it. A warp collective (shfl.sync, vote.sync,
// bar.warp.sync) completes when every non-exited lane of its member mask
// waits at one with the same operation and mask. Threads waiting at
// different barriers, a collective that can never complete, and a shuffle
// reading a lane outside its mask are errors: CUDA leaves them undefined.
// mma.sync.aligned is a collective of the whole warp: a lane that exited
// before it, or a block whose last warp is partial, is an error too.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/Emulator.h"

#include "runtime/src/Fiber.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace nnc::runtime::emulated;

namespace {
std::string dims(const uint32_t d[3]) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

/// Index `linear` of a box of `size` as (x, y, z), x fastest.
void unlinearize(uint64_t linear, const uint32_t size[3], uint32_t out[3]) {
  out[0] = static_cast<uint32_t>(linear % size[0]);
  linear /= size[0];
  out[1] = static_cast<uint32_t>(linear % size[1]);
  out[2] = static_cast<uint32_t>(linear / size[1]);
}

std::string coordinates(uint64_t linear, const uint32_t size[3]) {
  uint32_t c[3];
  unlinearize(linear, size, c);
  return "(" + std::to_string(c[0]) + "," + std::to_string(c[1]) + "," + std::to_string(c[2]) +
         ")";
}

/// A fiber waiting at mma.sync waits at this warp operation, its kind in `a`.
constexpr int32_t kMmaOp = NNC_CUDA_WARP_SYNC + 1;

const char *warpOpName(int32_t op) {
  static const char *const names[] = {"shfl.sync.up",   "shfl.sync.down",  "shfl.sync.bfly",
                                      "shfl.sync.idx",  "vote.sync.all",   "vote.sync.any",
                                      "vote.sync.uni",  "vote.sync.ballot", "bar.warp.sync",
                                      "mma.sync"};
  return op >= 0 && op <= kMmaOp ? names[op] : "an unknown warp operation";
}

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exponent = (h >> 10) & 31, mantissa = h & 1023;
  uint32_t bits;
  if (exponent == 31) {
    bits = sign | 0x7f800000u | mantissa << 13;
  } else if (exponent) {
    bits = sign | (exponent + 112) << 23 | mantissa << 13;
  } else {
    float magnitude = std::ldexp(float(mantissa), -24); // subnormal: exact
    std::memcpy(&bits, &magnitude, 4);
    bits |= sign;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// One mma.sync of `kind` over the fragments of the warp's 32 lanes, as the
/// PTX ISA lays them out ("Matrix Fragments for mma.m16n8k8/k16"): lane l
/// holds rows l / 4 (+ 8) and columns (l % 4) (* 2, + 4 or 8) of each
/// operand. Products are exact and the sum is rounded once, to f32; a GPU
/// rounds at points of its own, within the tolerance the precision allows.
void multiplyAccumulate(int32_t kind, const uint32_t *const a[32], const uint32_t *const b[32],
                        const float *const c[32], float *const d[32]) {
  constexpr int M = 16, N = 8;
  int K = kind == NNC_CUDA_MMA_M16N8K8_TF32 ? 8 : 16;
  double A[M][16] = {}, B[16][N] = {}, C[M][N];
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    if (kind == NNC_CUDA_MMA_M16N8K8_TF32) {
      // tf32 is f32's sign, exponent and top 10 mantissa bits; the
      // tensor cores ignore the other 13 (a NaN stays one).
      auto tf32 = [](uint32_t r) {
        bool nan = (r & 0x7fffffffu) > 0x7f800000u;
        return double(bitsToFloat(nan ? 0x7fffffffu : r & 0xffffe000u));
      };
      for (int r = 0; r < 4; ++r)
        A[g + 8 * (r & 1)][t + 4 * (r >> 1)] = tf32(a[lane][r]);
      for (int r = 0; r < 2; ++r)
        B[t + 4 * r][g] = tf32(b[lane][r]);
    } else {
      bool bf16 = kind == NNC_CUDA_MMA_M16N8K16_BF16;
      auto element = [&](uint32_t r, int i) {
        uint16_t h = uint16_t(r >> (16 * i));
        return double(bf16 ? bitsToFloat(uint32_t(h) << 16) : halfToFloat(h));
      };
      for (int r = 0; r < 4; ++r)
        for (int i = 0; i < 2; ++i)
          A[g + 8 * (r & 1)][2 * t + 8 * (r >> 1) + i] = element(a[lane][r], i);
      for (int r = 0; r < 2; ++r)
        for (int i = 0; i < 2; ++i)
          B[2 * t + 8 * r + i][g] = element(b[lane][r], i);
    }
    for (int r = 0; r < 4; ++r)
      C[g + 8 * (r >> 1)][2 * t + (r & 1)] = c[lane][r];
  }
  float D[M][N];
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double sum = C[m][n];
      for (int k = 0; k < K; ++k)
        sum += A[m][k] * B[k][n];
      D[m][n] = float(sum);
    }
  for (int lane = 0; lane < 32; ++lane) {
    int g = lane / 4, t = lane % 4;
    for (int r = 0; r < 4; ++r)
      d[lane][r] = D[g + 8 * (r >> 1)][2 * t + (r & 1)];
  }
}

std::string hex(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08x", value);
  return text;
}

struct FreeDeleter {
  void operator()(void *memory) const { std::free(memory); }
};
} // namespace

std::string nnc::runtime::emulated::checkLaunch(const Launch &launch) {
  const nnc_abi_cuda_host_kernel_t &k = *launch.kernel;
  for (int d = 0; d < 3; ++d) {
    if (launch.block[d] < k.block_min[d] || launch.block[d] > k.block_max[d])
      return "block " + dims(launch.block) +
             " is outside the launch bounds the kernel's code was compiled for (block " +
             dims(k.block_min) + " to " + dims(k.block_max) + ")";
    if (launch.grid[d] < k.grid_min[d] || launch.grid[d] > k.grid_max[d])
      return "grid " + dims(launch.grid) +
             " is outside the launch bounds the kernel's code was compiled for (grid " +
             dims(k.grid_min) + " to " + dims(k.grid_max) + ")";
  }
  uint64_t threads = uint64_t(launch.block[0]) * launch.block[1] * launch.block[2];
  if (threads > 1024)
    return "a block of " + std::to_string(threads) + " threads is more than CUDA's 1024";
  uint64_t shared = uint64_t(k.shared_size) + launch.sharedBytes;
  if (shared > kMaxSharedBytes)
    return std::to_string(shared) + " bytes of shared memory (" + std::to_string(k.shared_size) +
           " static) are more than a block can have (" + std::to_string(kMaxSharedBytes) + ")";
  return "";
}

namespace {
struct Fiber {
  nnc_abi_cuda_thread_t thread;
  FiberContext context;
  Emulator::Worker *worker;
  enum State { Ready, AtBarrier, AtWarp, Exited } state = Ready;
  // What it waits at: a barrier (id, site, aligned) or a warp collective
  // (op, site, mask and operands), and the collective's result.
  int32_t id = 0, site = 0, aligned = 0, op = 0;
  uint32_t mask = 0, a = 0, b = 0, c = 0;
  uint64_t result = 0;
  // mma.sync: the lane's fragments, on its stack while it waits.
  const uint32_t *fragA = nullptr, *fragB = nullptr;
  const float *fragC = nullptr;
  float *fragD = nullptr;
};
} // namespace

struct Emulator::Worker {
  std::unique_ptr<char, FreeDeleter> shared;
  size_t sharedCapacity = 0;
  std::vector<Fiber> fibers;
  FiberStacks stacks;
  FiberContext scheduler;
  const Launch *launch = nullptr;
  uint32_t threads = 0;
  std::string loopError; // a collective reached without fibers

  std::string runBlock(const Launch &launch, uint64_t block, const Order &order);

private:
  void initThread(nnc_abi_cuda_thread_t &thread, uint64_t block);
  std::string runLoop(const Order &order, nnc_abi_cuda_thread_t &thread);
  std::string runFibers(const Order &order, const nnc_abi_cuda_thread_t &base);
  std::string resolveWarp(uint32_t warp, bool &released);
  std::string releaseBarrier(bool &released);
  std::string deadlock();
  std::string who(uint32_t thread) const { return "thread " + coordinates(thread, launch->block); }

  static void loopBarrier(nnc_abi_cuda_thread_t *thread, int32_t, int32_t, int32_t);
  static uint64_t loopWarp(nnc_abi_cuda_thread_t *thread, int32_t, int32_t, uint32_t, uint32_t,
                           uint32_t, uint32_t);
  static void loopMma(nnc_abi_cuda_thread_t *thread, int32_t, int32_t, const uint32_t *,
                      const uint32_t *, const float *, float *);
  static void fiberBarrier(nnc_abi_cuda_thread_t *thread, int32_t id, int32_t site,
                           int32_t aligned);
  static void fiberMma(nnc_abi_cuda_thread_t *thread, int32_t kind, int32_t site,
                       const uint32_t *a, const uint32_t *b, const float *c, float *d);
  std::string resolveMma(uint32_t warp);
  static uint64_t fiberWarp(nnc_abi_cuda_thread_t *thread, int32_t op, int32_t site,
                            uint32_t mask, uint32_t a, uint32_t b, uint32_t c);
  static void fiberMain(void *fiber);
};

void Emulator::Worker::initThread(nnc_abi_cuda_thread_t &thread, uint64_t block) {
  thread = {};
  std::memcpy(thread.ntid, launch->block, sizeof(thread.ntid));
  std::memcpy(thread.nctaid, launch->grid, sizeof(thread.nctaid));
  unlinearize(block, launch->grid, thread.ctaid);
  thread.shared = shared.get();
}

std::string Emulator::Worker::runBlock(const Launch &l, uint64_t block, const Order &order) {
  launch = &l;
  threads = l.block[0] * l.block[1] * l.block[2];
  // Shared memory: sized for the largest launch so far, 16-byte aligned as
  // CUDA's, zeroed (or poisoned) for each block.
  size_t bytes = size_t(l.kernel->shared_size) + l.sharedBytes;
  if (bytes > sharedCapacity) {
    size_t rounded = (bytes + 63) / 64 * 64;
    shared.reset(static_cast<char *>(std::aligned_alloc(64, rounded)));
    sharedCapacity = shared ? rounded : 0;
    if (!shared)
      return "cannot allocate " + std::to_string(bytes) + " bytes of shared memory";
  }
  if (bytes)
    std::memset(shared.get(), order.poison ? 0xff : 0, bytes);
  nnc_abi_cuda_thread_t thread;
  initThread(thread, block);
  std::string error = l.kernel->flags & NNC_CUDA_HOST_KERNEL_COLLECTIVES
                          ? runFibers(order, thread)
                          : runLoop(order, thread);
  return error.empty() ? "" : "block " + coordinates(block, l.grid) + ", " + error;
}

// A kernel without collectives: the threads run to completion one by one.
std::string Emulator::Worker::runLoop(const Order &order, nnc_abi_cuda_thread_t &thread) {
  thread.emulator = this;
  thread.barrier = loopBarrier;
  thread.warp = loopWarp;
  thread.mma = loopMma;
  loopError.clear();
  for (uint32_t k = 0; k < threads && loopError.empty(); ++k) {
    uint32_t i = order.reversed ? threads - 1 - k : k;
    unlinearize(i, launch->block, thread.tid);
    thread.laneid = i % 32;
    launch->kernel->entry(launch->params, &thread);
  }
  return loopError;
}

// The compiler marks every kernel that reaches a collective: getting here
// means a host image that contradicts itself.
void Emulator::Worker::loopBarrier(nnc_abi_cuda_thread_t *thread, int32_t, int32_t, int32_t) {
  auto &self = *static_cast<Worker *>(thread->emulator);
  if (self.loopError.empty())
    self.loopError = "a barrier in a kernel whose host image declares no collectives";
}

uint64_t Emulator::Worker::loopWarp(nnc_abi_cuda_thread_t *thread, int32_t op, int32_t,
                                    uint32_t, uint32_t, uint32_t, uint32_t) {
  auto &self = *static_cast<Worker *>(thread->emulator);
  if (self.loopError.empty())
    self.loopError = std::string(warpOpName(op)) +
                     " in a kernel whose host image declares no collectives";
  return 0;
}

void Emulator::Worker::loopMma(nnc_abi_cuda_thread_t *thread, int32_t, int32_t,
                               const uint32_t *, const uint32_t *, const float *, float *) {
  auto &self = *static_cast<Worker *>(thread->emulator);
  if (self.loopError.empty())
    self.loopError = "mma.sync in a kernel whose host image declares no collectives";
}

void Emulator::Worker::fiberBarrier(nnc_abi_cuda_thread_t *thread, int32_t id, int32_t site,
                                    int32_t aligned) {
  Fiber &fiber = *static_cast<Fiber *>(thread->emulator);
  fiber.state = Fiber::AtBarrier;
  fiber.id = id;
  fiber.site = site;
  fiber.aligned = aligned;
  switchFiber(fiber.context, fiber.worker->scheduler);
}

uint64_t Emulator::Worker::fiberWarp(nnc_abi_cuda_thread_t *thread, int32_t op, int32_t site,
                                     uint32_t mask, uint32_t a, uint32_t b, uint32_t c) {
  Fiber &fiber = *static_cast<Fiber *>(thread->emulator);
  fiber.state = Fiber::AtWarp;
  fiber.op = op;
  fiber.site = site;
  fiber.mask = mask;
  fiber.a = a;
  fiber.b = b;
  fiber.c = c;
  switchFiber(fiber.context, fiber.worker->scheduler);
  return fiber.result;
}

void Emulator::Worker::fiberMma(nnc_abi_cuda_thread_t *thread, int32_t kind, int32_t site,
                                const uint32_t *a, const uint32_t *b, const float *c,
                                float *d) {
  Fiber &fiber = *static_cast<Fiber *>(thread->emulator);
  fiber.state = Fiber::AtWarp;
  fiber.op = kMmaOp;
  fiber.site = site;
  fiber.mask = 0xffffffffu; // .aligned: the whole warp
  fiber.a = static_cast<uint32_t>(kind);
  fiber.fragA = a;
  fiber.fragB = b;
  fiber.fragC = c;
  fiber.fragD = d;
  switchFiber(fiber.context, fiber.worker->scheduler);
}

void Emulator::Worker::fiberMain(void *argument) {
  Fiber &fiber = *static_cast<Fiber *>(argument);
  const Launch &launch = *fiber.worker->launch;
  launch.kernel->entry(launch.params, &fiber.thread);
  fiber.state = Fiber::Exited;
  // Never resumed: the next block gives this stack a new context.
  exitFiber(fiber.context, fiber.worker->scheduler);
}

std::string Emulator::Worker::runFibers(const Order &order, const nnc_abi_cuda_thread_t &base) {
  if (!stacks.reserve(threads))
    return "cannot map stacks for " + std::to_string(threads) + " threads";
  if (fibers.size() < threads)
    fibers.resize(threads);
  for (uint32_t i = 0; i < threads; ++i) {
    Fiber &fiber = fibers[i];
    fiber.thread = base;
    unlinearize(i, launch->block, fiber.thread.tid);
    fiber.thread.laneid = i % 32;
    fiber.thread.emulator = &fiber;
    fiber.thread.barrier = fiberBarrier;
    fiber.thread.warp = fiberWarp;
    fiber.thread.mma = fiberMma;
    fiber.worker = this;
    fiber.state = Fiber::Ready;
    initFiber(fiber.context, stacks.stack(i), FiberStacks::stackSize(), fiberMain, &fiber);
  }
  for (;;) {
    // Every thread runs until it waits or exits...
    for (uint32_t k = 0; k < threads; ++k) {
      Fiber &fiber = fibers[order.reversed ? threads - 1 - k : k];
      if (fiber.state == Fiber::Ready)
        switchFiber(scheduler, fiber.context);
    }
    // ...then whatever is complete is released: warp collectives first,
    // since a barrier needs the threads that wait at them.
    bool released = false;
    for (uint32_t warp = 0; warp * 32 < threads; ++warp)
      if (std::string error = resolveWarp(warp, released); !error.empty())
        return error;
    if (released)
      continue;
    if (std::all_of(fibers.begin(), fibers.begin() + threads,
                    [](const Fiber &f) { return f.state == Fiber::Exited; }))
      return "";
    if (std::string error = releaseBarrier(released); !error.empty())
      return error;
    if (!released)
      return deadlock();
  }
}

std::string Emulator::Worker::resolveWarp(uint32_t warp, bool &released) {
  uint32_t first = warp * 32, lanes = std::min(32u, threads - first);
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    Fiber &f = fibers[first + lane];
    if (f.state != Fiber::AtWarp)
      continue;
    // Messages are only formatted on failure: this runs at every wait.
    auto what = [&] {
      return who(first + lane) + " at " + warpOpName(f.op) + " (member mask " + hex(f.mask) +
             ")";
    };
    if (f.op < 0 || f.op > kMmaOp)
      return who(first + lane) + " calls " + warpOpName(f.op) + " " + std::to_string(f.op);
    if (f.op == kMmaOp && f.a > NNC_CUDA_MMA_M16N8K16_F16)
      return who(first + lane) + " calls mma.sync of unknown kind " + std::to_string(f.a);
    if (f.op == kMmaOp && lanes < 32)
      return who(first + lane) + " at mma.sync: the instruction needs a whole warp, and warp " +
             std::to_string(warp) + " of the block has " + std::to_string(lanes) + " threads";
    if (!(f.mask >> lane & 1))
      return what() + ": the mask leaves out the thread's own lane " + std::to_string(lane);
    if (lanes < 32 && f.mask >> lanes)
      return what() + ": the mask names lanes that warp " + std::to_string(warp) +
             " does not have (the block's last warp has " + std::to_string(lanes) + " threads)";
    bool complete = true;
    for (uint32_t j = 0; j < lanes && complete; ++j) {
      const Fiber &g = fibers[first + j];
      if (f.mask >> j & 1 && g.state != Fiber::Exited)
        complete = g.state == Fiber::AtWarp && g.op == f.op && g.mask == f.mask &&
                   (f.op != kMmaOp || g.a == f.a);
    }
    if (!complete)
      continue;
    if (f.op == kMmaOp) {
      if (std::string error = resolveMma(warp); !error.empty())
        return error;
      released = true;
      continue;
    }
    // Each lane's result, from the operands of all (PTX's definitions).
    bool all = true, any = false;
    uint32_t ballot = 0, firstPredicate = 2;
    bool uniform = true;
    for (uint32_t j = 0; j < lanes; ++j) {
      const Fiber &g = fibers[first + j];
      if (!(f.mask >> j & 1) || g.state == Fiber::Exited)
        continue;
      bool p = g.a != 0;
      all &= p;
      any |= p;
      ballot |= uint32_t(p) << j;
      if (firstPredicate == 2)
        firstPredicate = p;
      uniform &= p == (firstPredicate == 1);
    }
    for (uint32_t i = 0; i < lanes; ++i) {
      Fiber &g = fibers[first + i];
      if (!(f.mask >> i & 1) || g.state == Fiber::Exited)
        continue;
      switch (f.op) {
      case NNC_CUDA_WARP_VOTE_ALL: g.result = all; break;
      case NNC_CUDA_WARP_VOTE_ANY: g.result = any; break;
      case NNC_CUDA_WARP_VOTE_UNI: g.result = uniform; break;
      case NNC_CUDA_WARP_VOTE_BALLOT: g.result = ballot; break;
      case NNC_CUDA_WARP_SYNC: g.result = 0; break;
      default: {
        // shfl.sync: c packs the segment mask (bits 8-12) and the clamp.
        uint32_t lane = i, b = g.b & 31, clamp = g.c & 31, segment = (g.c >> 8) & 31;
        uint32_t maxLane = (lane & segment) | (clamp & ~segment), minLane = lane & segment;
        int64_t j = lane;
        bool inRange = false;
        switch (f.op) {
        case NNC_CUDA_WARP_SHFL_UP: j = int64_t(lane) - b; inRange = j >= int64_t(maxLane); break;
        case NNC_CUDA_WARP_SHFL_DOWN: j = lane + b; inRange = j <= maxLane; break;
        case NNC_CUDA_WARP_SHFL_BFLY: j = lane ^ b; inRange = j <= maxLane; break;
        default: j = minLane | (b & ~segment); inRange = j <= maxLane; break;
        }
        if (!inRange)
          j = lane;
        if (j >= lanes || !(f.mask >> j & 1) || fibers[first + j].state == Fiber::Exited)
          return who(first + i) + " at " + warpOpName(f.op) + " (member mask " + hex(f.mask) +
                 ") reads lane " + std::to_string(j) +
                 (j >= lanes || !(f.mask >> j & 1) ? ", which is not in the mask"
                                                   : ", which has exited");
        g.result = fibers[first + j].a | uint64_t(inRange) << 32;
      }
      }
    }
    for (uint32_t i = 0; i < lanes; ++i) {
      Fiber &g = fibers[first + i];
      if (f.mask >> i & 1 && g.state == Fiber::AtWarp)
        g.state = Fiber::Ready;
    }
    released = true;
  }
  return "";
}

// Every lane of the warp waits at mma.sync of one kind, or has exited.
std::string Emulator::Worker::resolveMma(uint32_t warp) {
  uint32_t first = warp * 32;
  const uint32_t *a[32], *b[32];
  const float *c[32];
  float *d[32];
  uint32_t waiting = first;
  while (fibers[waiting].state != Fiber::AtWarp)
    ++waiting;
  for (uint32_t j = 0; j < 32; ++j) {
    const Fiber &g = fibers[first + j];
    if (g.state == Fiber::Exited)
      return who(waiting) + " at mma.sync: " + who(first + j) +
             " of the same warp exited without reaching it (every lane must execute it)";
    if (g.site != fibers[waiting].site)
      return who(waiting) + " at mma.sync (call site " + std::to_string(fibers[waiting].site) +
             ") while " + who(first + j) + " is at another (call site " +
             std::to_string(g.site) + "): every lane must execute the same one";
    a[j] = g.fragA;
    b[j] = g.fragB;
    c[j] = g.fragC;
    d[j] = g.fragD;
  }
  multiplyAccumulate(static_cast<int32_t>(fibers[first].a), a, b, c, d);
  for (uint32_t j = 0; j < 32; ++j)
    fibers[first + j].state = Fiber::Ready;
  return "";
}

std::string Emulator::Worker::releaseBarrier(bool &released) {
  const Fiber *first = nullptr;
  uint32_t firstIndex = 0;
  for (uint32_t i = 0; i < threads; ++i) {
    const Fiber &f = fibers[i];
    if (f.state == Fiber::AtWarp)
      return ""; // a collective that cannot complete: deadlock() says which
    if (f.state == Fiber::AtBarrier && !first) {
      first = &f;
      firstIndex = i;
    }
  }
  if (!first)
    return "";
  for (uint32_t i = 0; i < threads; ++i) {
    const Fiber &f = fibers[i];
    if (f.state == Fiber::AtBarrier && (f.site != first->site || f.id != first->id))
      return "barrier divergence: " + who(firstIndex) + " waits at barrier " +
             std::to_string(first->id) + " (call site " + std::to_string(first->site) +
             ") while " + who(i) + " waits at barrier " + std::to_string(f.id) +
             " (call site " + std::to_string(f.site) + ")";
  }
  if (first->aligned) {
    for (uint32_t i = 0; i < threads; ++i) {
      if (fibers[i].state != Fiber::Exited)
        continue;
      uint32_t warp = i / 32;
      for (uint32_t j = warp * 32; j < std::min(threads, warp * 32 + 32); ++j)
        if (fibers[j].state == Fiber::AtBarrier)
          return "barrier divergence: " + who(j) + " waits at barrier " +
                 std::to_string(first->id) + " (call site " + std::to_string(first->site) +
                 "), which " + who(i) +
                 " of the same warp exited without reaching (__syncthreads must be reached "
                 "by every thread of a warp)";
    }
  }
  for (uint32_t i = 0; i < threads; ++i)
    if (fibers[i].state == Fiber::AtBarrier)
      fibers[i].state = Fiber::Ready;
  released = true;
  return "";
}

// Nothing can proceed: a warp collective waits for a lane that is elsewhere.
std::string Emulator::Worker::deadlock() {
  for (uint32_t i = 0; i < threads; ++i) {
    const Fiber &f = fibers[i];
    if (f.state != Fiber::AtWarp)
      continue;
    uint32_t first = i / 32 * 32;
    for (uint32_t j = 0; j < 32 && first + j < threads; ++j) {
      const Fiber &g = fibers[first + j];
      if (!(f.mask >> j & 1) || g.state == Fiber::Exited ||
          (g.state == Fiber::AtWarp && g.op == f.op && g.mask == f.mask))
        continue;
      std::string where = g.state == Fiber::AtBarrier
                              ? "waits at barrier " + std::to_string(g.id)
                              : std::string("waits at ") + warpOpName(g.op) + " (member mask " +
                                    hex(g.mask) + ")";
      return "warp divergence: " + who(i) + " waits at " + warpOpName(f.op) + " (member mask " +
             hex(f.mask) + ") for " + who(first + j) + ", which " + where;
    }
  }
  return "the block's threads wait for each other forever";
}

Emulator::Emulator(const nnc_abi_context_t &host) : host(host) {}

Emulator::~Emulator() = default;

Emulator::Worker *Emulator::acquire() {
  std::lock_guard<std::mutex> lock(mutex);
  if (idle.empty()) {
    workers.push_back(std::make_unique<Worker>());
    return workers.back().get();
  }
  Worker *worker = idle.back();
  idle.pop_back();
  return worker;
}

void Emulator::release(Worker *worker) {
  std::lock_guard<std::mutex> lock(mutex);
  idle.push_back(worker);
}

std::string Emulator::run(const Launch &launch, const Order &order) {
  struct Job {
    Emulator *self;
    const Launch *launch;
    const Order *order;
    uint64_t blocks;
    std::atomic<bool> failed{false};
    std::mutex mutex;
    std::string error;
  } job;
  job.self = this;
  job.launch = &launch;
  job.order = &order;
  job.blocks = uint64_t(launch.grid[0]) * launch.grid[1] * launch.grid[2];
  auto body = [](void *arg, int64_t begin, int64_t end) {
    Job &job = *static_cast<Job *>(arg);
    Worker *worker = job.self->acquire();
    for (int64_t b = begin; b < end && !job.failed.load(std::memory_order_relaxed); ++b) {
      uint64_t block = job.order->reversed ? job.blocks - 1 - b : b;
      std::string error = worker->runBlock(*job.launch, block, *job.order);
      if (!error.empty()) {
        std::lock_guard<std::mutex> lock(job.mutex);
        if (job.error.empty())
          job.error = error;
        job.failed = true;
      }
    }
    job.self->release(worker);
  };
  if (order.serial || host.num_threads <= 1 || !host.parallel_for || job.blocks <= 1)
    body(&job, 0, static_cast<int64_t>(job.blocks));
  else
    host.parallel_for(host.runtime, static_cast<int64_t>(job.blocks), body, &job);
  return job.error;
}
