/*===- fuzz_module.c - a module whose descriptor the fuzz target supplies --===*
 *
 * FuzzDescriptor.cpp loads this library through nnc_module_load like any
 * module; its NNC_ABI_MODULE_SYMBOL returns whatever descriptor the target
 * set last, so every load reads a freshly corrupted one.
 *
 *===----------------------------------------------------------------------===*/

#include "nnc/abi.h"

static const nnc_abi_module_t *current;

__attribute__((visibility("default"))) void nnc_fuzz_set_descriptor(const nnc_abi_module_t *d) {
  current = d;
}

__attribute__((visibility("default"))) const nnc_abi_module_t *nnc_module_v1(void) {
  return current;
}
