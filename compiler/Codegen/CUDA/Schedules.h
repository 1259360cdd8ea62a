//===- Schedules.h - GPU schedules of nnc-cuda-map-to-gpu -------*- C++ -*-===//
//
// The schedules nnc-cuda-map-to-gpu gives linalg ops with reductions, and the
// IR-building helpers they share. Each schedule either builds its gpu.launch
// and erases the op, or fails without touching the IR, so the pass falls back
// to one thread per output.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_CODEGEN_CUDA_SCHEDULES_H
#define NNC_COMPILER_CODEGEN_CUDA_SCHEDULES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace nnc::cuda {

/// A launch of `grid` x `block` (x only; grid z optional), with the builder
/// at the start of its body. `workgroup` are shared memory buffers.
mlir::gpu::LaunchOp createLaunch(mlir::OpBuilder &b, mlir::Location loc, mlir::Value gridX,
                                 mlir::Value blockX, mlir::Value gridY = nullptr,
                                 mlir::Value gridZ = nullptr,
                                 mlir::TypeRange workgroup = {});

/// `index` split into coordinates of `sizes` (row-major, last fastest).
llvm::SmallVector<mlir::Value> delinearize(mlir::OpBuilder &b, mlir::Location loc,
                                           mlir::Value index, llvm::ArrayRef<int64_t> sizes);

/// The element of `operand` that `map` reads at loop indices `ivs`.
mlir::Value loadAt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value operand,
                   mlir::AffineMap map, mlir::ValueRange ivs);
/// The indices `map` gives at loop indices `ivs`.
llvm::SmallVector<mlir::Value> indicesAt(mlir::OpBuilder &b, mlir::Location loc,
                                         mlir::AffineMap map, mlir::ValueRange ivs);

/// Clones `op`'s body at loop indices `ivs` with block arguments bound to
/// `args` (inputs then output); returns the yielded value.
mlir::Value cloneBody(mlir::OpBuilder &b, mlir::linalg::GenericOp op, mlir::ValueRange args,
                      mlir::ValueRange ivs);

/// The op of a single-output reduction's body that combines the output's
/// previous value with what the inputs give (out = combiner(out, f(ins))),
/// when it is an associative and commutative arith op with a neutral
/// element; null otherwise.
mlir::Operation *matchCombiner(mlir::linalg::GenericOp op);
/// Lets an f32 reduction that sums products (out = out + a * b: matmuls,
/// convolutions, dot products) compute each term as one fused multiply-add,
/// rounded once, as the CPU target's vectorized matmuls and convolutions and
/// CUDA's own compiler do: marks the multiply and the add `contract`. Other
/// bodies are left alone (ExactMath's exact sequences rely on two roundings).
void allowFusedMultiplyAdd(mlir::linalg::GenericOp op);
/// Where partial results of `combiner` start: its neutral element, and -0.0
/// for a float sum, the true neutral element (so that a sum of negative zeros
/// stays one).
mlir::TypedAttr neutralElement(mlir::Operation *combiner);

/// A generic whose loops are parallel then reduction (nnc-cuda-map-to-gpu
/// orders them so), with static loop ranges; null sizes otherwise.
struct LoopShape {
  int64_t numParallel = 0;
  llvm::SmallVector<int64_t> ranges;
  int64_t parallelCount() const;
  int64_t reductionCount() const;
  llvm::ArrayRef<int64_t> parallelRanges() const {
    return llvm::ArrayRef(ranges).take_front(numParallel);
  }
  llvm::ArrayRef<int64_t> reductionRanges() const {
    return llvm::ArrayRef(ranges).drop_front(numParallel);
  }
};
std::optional<LoopShape> getLoopShape(mlir::linalg::GenericOp op);

/// The loop dims of a contraction of a "left" and a "right" operand, by
/// role, each in loop order: batch (read by both), M (left only), N (right
/// only), K (the reduction dims).
struct ContractionRoles {
  llvm::SmallVector<unsigned> batch, m, n, k;
  /// The products of the static loop ranges of each role.
  int64_t batchSize = 1, sizeM = 1, sizeN = 1, sizeK = 1;
};
/// The roles of `op`'s dims where it is a contraction the tiled matmul
/// schedule computes (two f32 inputs, one f32 output, static ranges, every
/// parallel dim read by an input, no linalg.index); nullopt otherwise.
/// Works on tensors and on buffers.
std::optional<ContractionRoles> classifyContraction(mlir::linalg::GenericOp op);

/// A block's tile of outputs along M and N in the tiled matmul.
struct MatmulTile {
  int64_t tileM, tileN;
};
/// The tile the tiled matmul takes for these sizes, or nullopt where it
/// leaves them to the split reduction.
std::optional<MatmulTile> tiledMatmulTile(const ContractionRoles &roles);
/// Blocks of the tiled matmul with `tile`.
int64_t tiledMatmulBlocks(const ContractionRoles &roles, MatmulTile tile);
/// An H100's SMs: fewer blocks than this leave SMs idle.
constexpr int64_t kGpuSMs = 132;

/// Reductions split across the threads of a warp or a block (SplitReduction.cpp).
mlir::LogicalResult scheduleSplitReduction(mlir::RewriterBase &rewriter,
                                           mlir::linalg::GenericOp op);

/// What contractions may compute their products in (nnc --precision): f32
/// on the SIMT cores, exactly as written; or the tensor cores' mma.sync on
/// operands rounded to tf32, bf16 or f16, accumulating in f32.
enum class Precision { F32, TF32, BF16, F16 };
std::optional<Precision> parsePrecision(llvm::StringRef name);

/// Block-tiled contraction through shared memory (TiledMatmul.cpp). With a
/// precision other than f32, a body that is a plain sum of products
/// (out + a * b) runs on the tensor cores.
mlir::LogicalResult scheduleTiledMatmul(mlir::RewriterBase &rewriter, mlir::linalg::GenericOp op,
                                        Precision precision = Precision::F32);

} // namespace nnc::cuda

#endif // NNC_COMPILER_CODEGEN_CUDA_SCHEDULES_H
