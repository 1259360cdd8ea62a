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
/// A context to switch to: a fiber (initFiber) or a thread's own stack (any
/// other, filled when the thread first switches away from it).
struct FiberContext {
#if defined(__x86_64__)
  void *stackPointer = nullptr; // where its registers were saved
#else
  ucontext_t context;
#endif
  void (*run)(void *) = nullptr; // a fiber's body and its argument
  void *argument = nullptr;
  // What the sanitizers need to follow a switch (Fiber.cpp): the stack's
  // extent and ASan's fake stack, TSan's fiber.
  const void *stackBottom = nullptr;
  size_t stackSize = 0;
  void *fakeStack = nullptr;
  void *tsanFiber = nullptr;
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
/// Saves the running context in `from` and resumes `to`; returns when
/// something switches back to `from`.
void switchFiber(FiberContext &from, FiberContext &to);

/// The last switch of a fiber whose body has returned: `from` is never
/// resumed (initFiber may start it again).
[[noreturn]] void exitFiber(FiberContext &from, FiberContext &to);

} // namespace nnc::runtime::emulated

#endif // NNC_RUNTIME_SRC_FIBER_H
