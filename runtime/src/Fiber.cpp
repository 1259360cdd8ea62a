//===- Fiber.cpp - stacks and switches for emulated CUDA threads ----------===//
//
// On x86-64 a switch saves the callee-saved registers and the floating-point
// control words on the stack and swaps stack pointers: a few nanoseconds,
// where ucontext's swapcontext makes a system call for the signal mask
// (about 200 ns), paid twice per thread at every barrier. Elsewhere,
// ucontext.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/Fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

// Sanitized builds tell ASan and TSan about every switch, or they would take
// a fiber's stack for a corrupted one of the thread's.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NNC_FIBER_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define NNC_FIBER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define NNC_FIBER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define NNC_FIBER_TSAN 1
#endif
#if defined(NNC_FIBER_ASAN)
#include <pthread.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(NNC_FIBER_TSAN)
#include <sanitizer/tsan_interface.h>
#endif
// The functions around a switch keep their frames on the real stack: ASan's
// fake frames belong to the stack being left, and a fiber's go when it exits.
#if defined(NNC_FIBER_ASAN)
#define NNC_SWITCHES __attribute__((no_sanitize("address")))
#else
#define NNC_SWITCHES
#endif

using namespace nnc::runtime::emulated;

namespace {
/// Announces that the running context `from` switches to `to`; `leaving`:
/// `from` is never resumed, so its fake stack can go.
NNC_SWITCHES void beforeSwitch(FiberContext &from, FiberContext &to, bool leaving) {
  (void)from, (void)to, (void)leaving;
#if defined(NNC_FIBER_ASAN)
  if (!from.run) {
    // A thread's own stack: its extent, once per thread (a scheduler context
    // may serve different threads over time).
    thread_local void *bottom = nullptr;
    thread_local size_t size = 0;
    if (!bottom) {
      pthread_attr_t attributes;
      pthread_getattr_np(pthread_self(), &attributes);
      pthread_attr_getstack(&attributes, &bottom, &size);
      pthread_attr_destroy(&attributes);
    }
    from.stackBottom = bottom;
    from.stackSize = size;
  }
  __sanitizer_start_switch_fiber(leaving ? nullptr : &from.fakeStack, to.stackBottom,
                                 to.stackSize);
#endif
#if defined(NNC_FIBER_TSAN)
  if (!from.run)
    from.tsanFiber = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(to.tsanFiber, 0);
#endif
}

/// Completes a switch, on the stack of `current`.
NNC_SWITCHES void afterSwitch(FiberContext &current) {
  (void)current;
#if defined(NNC_FIBER_ASAN)
  __sanitizer_finish_switch_fiber(current.fakeStack, nullptr, nullptr);
#endif
}

/// Where every fiber starts: its body, which ends with exitFiber.
NNC_SWITCHES void startFiber(void *context) {
  FiberContext &fiber = *static_cast<FiberContext *>(context);
  afterSwitch(fiber);
  fiber.run(fiber.argument);
  std::abort();
}

/// What initFiber does on every platform before making the first frame.
void prepareFiber(FiberContext &fiber, void *stack, size_t size, void (*run)(void *),
                  void *argument) {
  fiber.run = run;
  fiber.argument = argument;
  fiber.stackBottom = stack;
  fiber.stackSize = size;
  fiber.fakeStack = nullptr;
#if defined(NNC_FIBER_TSAN)
  if (fiber.tsanFiber)
    __tsan_destroy_fiber(fiber.tsanFiber);
  fiber.tsanFiber = __tsan_create_fiber(0);
#endif
}
} // namespace

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

#if defined(__x86_64__)
// nnc_fiber_switch(void **save, void *load): pushes rbp, rbx, r12-r15 and
// an 8-byte slot holding MXCSR and the x87 control word, stores rsp in
// *save, then does the reverse from `load`. nnc_fiber_start is where a new
// fiber's first switch returns to: r12 holds run, r13 its argument.
extern "C" void nnc_fiber_switch(void **save, void *load);
extern "C" void nnc_fiber_start();
asm(R"(
  .text
  .p2align 4
  .hidden nnc_fiber_switch
  .globl nnc_fiber_switch
  .type nnc_fiber_switch,@function
nnc_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size nnc_fiber_switch, .-nnc_fiber_switch

  .p2align 4
  .hidden nnc_fiber_start
  .globl nnc_fiber_start
  .type nnc_fiber_start,@function
nnc_fiber_start:
  movq %r13, %rdi
  callq *%r12
  ud2
  .size nnc_fiber_start, .-nnc_fiber_start
)");

void nnc::runtime::emulated::initFiber(FiberContext &fiber, void *stack, size_t size,
                                       void (*run)(void *), void *argument) {
  prepareFiber(fiber, stack, size, run, argument);
  // What nnc_fiber_switch pops, from the lowest address: the control words,
  // r15, r14, r13 (argument), r12 (run), rbx, rbp, the return address. The
  // top stays 16-byte aligned, as the call in nnc_fiber_start needs.
  auto top = (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t(15);
  auto *frame = reinterpret_cast<uint64_t *>(top) - 8;
  uint32_t mxcsr = 0x1f80;  // the default: all exceptions masked, round to nearest
  uint16_t x87 = 0x037f;    // the default control word
  frame[0] = uint64_t(mxcsr) | uint64_t(x87) << 32;
  frame[1] = frame[2] = 0;                            // r15, r14
  frame[3] = reinterpret_cast<uintptr_t>(&fiber);     // r13
  frame[4] = reinterpret_cast<uintptr_t>(startFiber); // r12
  frame[5] = frame[6] = 0;                            // rbx, rbp
  frame[7] = reinterpret_cast<uintptr_t>(nnc_fiber_start);
  fiber.stackPointer = frame;
}

NNC_SWITCHES static void switchStacks(FiberContext &from, FiberContext &to) {
  nnc_fiber_switch(&from.stackPointer, to.stackPointer);
}
#else
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
  prepareFiber(fiber, stack, size, run, argument);
  getcontext(&fiber.context);
  fiber.context.uc_stack.ss_sp = stack;
  fiber.context.uc_stack.ss_size = size;
  fiber.context.uc_link = nullptr;
  auto runBits = reinterpret_cast<uintptr_t>(startFiber);
  auto argBits = reinterpret_cast<uintptr_t>(&fiber);
  makecontext(&fiber.context, reinterpret_cast<void (*)()>(trampoline), 4,
              static_cast<unsigned>(runBits), static_cast<unsigned>(runBits >> 32),
              static_cast<unsigned>(argBits), static_cast<unsigned>(argBits >> 32));
}

NNC_SWITCHES static void switchStacks(FiberContext &from, FiberContext &to) {
  swapcontext(&from.context, &to.context);
}
#endif

NNC_SWITCHES void nnc::runtime::emulated::switchFiber(FiberContext &from, FiberContext &to) {
  beforeSwitch(from, to, /*leaving=*/false);
  switchStacks(from, to);
  afterSwitch(from);
}

NNC_SWITCHES void nnc::runtime::emulated::exitFiber(FiberContext &from, FiberContext &to) {
  beforeSwitch(from, to, /*leaving=*/true);
  switchStacks(from, to);
  std::abort(); // never resumed
}
