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
  // What nnc_fiber_switch pops, from the lowest address: the control words,
  // r15, r14, r13 (argument), r12 (run), rbx, rbp, the return address. The
  // top stays 16-byte aligned, as the call in nnc_fiber_start needs.
  auto top = (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t(15);
  auto *frame = reinterpret_cast<uint64_t *>(top) - 8;
  uint32_t mxcsr = 0x1f80;  // the default: all exceptions masked, round to nearest
  uint16_t x87 = 0x037f;    // the default control word
  frame[0] = uint64_t(mxcsr) | uint64_t(x87) << 32;
  frame[1] = frame[2] = 0;                            // r15, r14
  frame[3] = reinterpret_cast<uintptr_t>(argument);   // r13
  frame[4] = reinterpret_cast<uintptr_t>(run);        // r12
  frame[5] = frame[6] = 0;                            // rbx, rbp
  frame[7] = reinterpret_cast<uintptr_t>(nnc_fiber_start);
  fiber.stackPointer = frame;
}

void nnc::runtime::emulated::switchFiber(FiberContext &from, FiberContext &to) {
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
#endif
