//===- SaturatingMath.h - products of loop ranges that cannot wrap -*- C++ -*-===//
//
// Schedules weigh work as products of static loop ranges; a hostile model's
// ranges (a 2^32 x 2^32 pooling window) overflow int64. Saturating keeps the
// comparisons meaningful (such an op is simply "large") and the arithmetic
// defined.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_CODEGEN_COMMON_SATURATINGMATH_H
#define NNC_COMPILER_CODEGEN_COMMON_SATURATINGMATH_H

#include <cstdint>
#include <limits>

namespace nnc {

/// a * b for non-negative a and b, or INT64_MAX when that overflows.
inline int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t product;
  return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<int64_t>::max() : product;
}

} // namespace nnc

#endif // NNC_COMPILER_CODEGEN_COMMON_SATURATINGMATH_H
