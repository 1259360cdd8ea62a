//===- Fiber.h - stacks the emulated CUDA threads switch between -*- C++ -*-===//
//
// The cuda-emulated device runs each thread of a block that can wait for
// the others (at a barrier, a warp shuffle) on a stack of its own, switching
// to the block's scheduler when it waits. Stacks are reserved once and kept:
// a guard page below each turns an overflow into a fault rather than
// corruption of the neighbouring thread's stack.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_RUNTIME_SRC_FIBER_H
#define NNC_RUNTIME_SRC_FIBER_H

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <cstddef>

namespace nnc::runtime::emulated {

/// An execution context: a fiber, or the thread that schedules fibers.
struct FiberContext {
#if defined(__x86_64__)
  void *stackPointer = nullptr; // where its registers were saved
#else
  ucontext_t context;
#endif
};

/// `count` stacks of a fixed size with guard pages, in one mapping.
class FiberStacks {
public:
  FiberStacks() = default;
  ~FiberStacks();
  FiberStacks(const FiberStacks &) = delete;
  FiberStacks &operator=(const FiberStacks &) = delete;

  /// Makes sure there are at least `count` stacks; false when the memory
  /// cannot be mapped.
  bool reserve(size_t count);
  void *stack(size_t index) const;
  static size_t stackSize();

private:
  char *mapping = nullptr;
  size_t count = 0;
};

/// Prepares `fiber` to call `run(argument)` on `stack` when first switched to.
/// `run` must not return: it ends by switching away for good.
void initFiber(FiberContext &fiber, void *stack, size_t size, void (*run)(void *),
               void *argument);

/// Saves the current context in `from` and continues `to`.
void switchFiber(FiberContext &from, FiberContext &to);

} // namespace nnc::runtime::emulated

#endif // NNC_RUNTIME_SRC_FIBER_H
