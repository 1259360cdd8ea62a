//===- Fiber.cpp - stacks and switches for emulated CUDA threads ----------===//
//
// ucontext: portable and simple. A switch costs a system call (the signal
// mask is saved and restored), about 200 ns; only kernels with barriers or
// warp collectives run on fibers, so this bounds the cost of those alone.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/Fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

using namespace nnc::runtime::emulated;

namespace {
/// Kernel code keeps its values in registers and small frames; this leaves
/// room for large per-thread arrays as well.
constexpr size_t kStackSize = 256 * 1024;

size_t pageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
size_t slotSize() { return kStackSize + pageSize(); }
} // namespace

size_t FiberStacks::stackSize() { return kStackSize; }

FiberStacks::~FiberStacks() {
  if (mapping)
    munmap(mapping, count * slotSize());
}

bool FiberStacks::reserve(size_t wanted) {
  if (wanted <= count)
    return true;
  // Untouched stack pages cost no memory: reserving for a whole block is cheap.
  void *memory = mmap(nullptr, wanted * slotSize(), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED)
    return false;
  char *base = static_cast<char *>(memory);
  for (size_t i = 0; i < wanted; ++i)
    mprotect(base + i * slotSize(), pageSize(), PROT_NONE); // the guard below stack i
  if (mapping)
    munmap(mapping, count * slotSize());
  mapping = base;
  count = wanted;
  return true;
}

void *FiberStacks::stack(size_t index) const { return mapping + index * slotSize() + pageSize(); }

namespace {
/// makecontext passes int arguments only: the pointers travel in halves.
void trampoline(unsigned runLow, unsigned runHigh, unsigned argLow, unsigned argHigh) {
  auto join = [](unsigned low, unsigned high) {
    return static_cast<uintptr_t>(high) << 32 | static_cast<uintptr_t>(low);
  };
  auto run = reinterpret_cast<void (*)(void *)>(join(runLow, runHigh));
  run(reinterpret_cast<void *>(join(argLow, argHigh)));
}
} // namespace

void nnc::runtime::emulated::initFiber(FiberContext &fiber, void *stack, size_t size,
                                       void (*run)(void *), void *argument) {
  getcontext(&fiber.context);
  fiber.context.uc_stack.ss_sp = stack;
  fiber.context.uc_stack.ss_size = size;
  fiber.context.uc_link = nullptr;
  auto runBits = reinterpret_cast<uintptr_t>(run);
  auto argBits = reinterpret_cast<uintptr_t>(argument);
  makecontext(&fiber.context, reinterpret_cast<void (*)()>(trampoline), 4,
              static_cast<unsigned>(runBits), static_cast<unsigned>(runBits >> 32),
              static_cast<unsigned>(argBits), static_cast<unsigned>(argBits >> 32));
}

void nnc::runtime::emulated::switchFiber(FiberContext &from, FiberContext &to) {
  swapcontext(&from.context, &to.context);
}
