//===- ExactMath.h - math without libdevice that must stay exact -*- C++ -*-===//

#ifndef NNC_COMPILER_CODEGEN_CUDA_EXACTMATH_H
#define NNC_COMPILER_CODEGEN_CUDA_EXACTMATH_H

#include "mlir/IR/PatternMatch.h"

namespace nnc::cuda {

/// Expansions of |x| and copysign (by bits), the float remainder (exact),
/// f64 exp and log (to a few ulp), pow, the hyperbolic functions, integer
/// powers and bit counts into arithmetic and structured loops.
void populateExactMathPatterns(mlir::RewritePatternSet &patterns);

} // namespace nnc::cuda

#endif // NNC_COMPILER_CODEGEN_CUDA_EXACTMATH_H
