//===- Lowering.h - shared helpers of the nn -> linalg conversion -*- C++ -*-===//
//
// Lowering works on static shapes, except for the ops the conversion lets
// through with dynamic dims (NNToLinalg.cpp), and on signless integers: unsigned nn element types become signless here, and each
// pattern reads signedness from the original nn op.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_CONVERSION_NNTOLINALG_LOWERING_H
#define NNC_COMPILER_CONVERSION_NNTOLINALG_LOWERING_H

#include "dialects/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace nnc::lowering {

/// Converts unsigned integer tensors to signless ones; everything else stays.
class NNTypeConverter : public mlir::TypeConverter {
public:
  NNTypeConverter();
};

void populateElementwisePatterns(NNTypeConverter &converter, mlir::RewritePatternSet &patterns);
/// `maxTapSum`: the most taps of a depthwise convolution lowered as one sum
/// over taps (ConvertNNToLinalg's max-tap-sum).
void populateContractionPatterns(NNTypeConverter &converter, mlir::RewritePatternSet &patterns,
                                 int64_t maxTapSum);
void populateReductionPatterns(NNTypeConverter &converter, mlir::RewritePatternSet &patterns);
void populateDataMovementPatterns(NNTypeConverter &converter, mlir::RewritePatternSet &patterns);

void populateValueShapePatterns(NNTypeConverter &converter, mlir::RewritePatternSet &patterns);
void populateTopKPatterns(NNTypeConverter &converter, mlir::RewritePatternSet &patterns);
void populateDataDependentPatterns(NNTypeConverter &converter, mlir::RewritePatternSet &patterns);
/// Cast to and from text, StringNormalizer (Strings.cpp).
void populateStringPatterns(NNTypeConverter &converter, mlir::RewritePatternSet &patterns);

/// Why `op` cannot take the string tensors among its operands or results
/// (only Cast, StringNormalizer and ops that move elements can, and none
/// unless `allowed`: the target runs them); nothing when it has none or can.
std::optional<std::string> stringRefusal(mlir::Operation *op, bool allowed);

/// Whether `op` works on each sample of a dynamic batch alone, so that
/// formBatchLoops may put it in a loop over the batch (DynamicBatch.cpp).
bool isBatchLoop(mlir::Operation *op);

/// Each run of isBatchLoop ops in `func` as one scf.for over the batch of
/// the same ops on one sample (`nnc.batch_loop`), before the patterns run.
void formBatchLoops(mlir::func::FuncOp func);

/// Whether `op` takes its result's shape from operands of static length
/// whose values may be known only at run time (a Reshape's shape, a Slice's
/// bounds): with dynamic dims it lowers by ValueShapes.cpp's rules.
bool isValueShaped(mlir::Operation *op);

/// Whether `op` is a batched product with dynamic dims that lowers as one
/// linalg.batch_matmul: both operands of rank >= 3 with the same batch dims,
/// at most one of them dynamic on both sides.
bool isDynamicBatchedMatmul(nn::MatMulOp op);

/// ONNX's integer Div of scalars: truncating, 0 for a divisor of 0, and a
/// wrapping -x for -1; never a trap (the shape function evaluates it with
/// any values).
mlir::Value integerDivide(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y,
                          bool isUnsigned);

/// Whether `op` is one of the elementwise ops (a scalar body over broadcast operands).
bool isElementwise(mlir::Operation *op);

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

mlir::RankedTensorType tensorType(mlir::Value v);
/// Whether `type` (or its element type) is an unsigned integer.
bool isUnsignedType(mlir::Type type);
/// The signless counterpart of `type`'s element type.
mlir::Type signlessElement(mlir::Type type);

/// An uninitialized tensor of `type`, whose dynamic dims are `dynamicSizes`.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                        mlir::ValueRange dynamicSizes = {});
/// A tensor of `type` filled with `value`.
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                         mlir::Value value, mlir::ValueRange dynamicSizes = {});
/// The size of `tensor`'s dim `d`.
mlir::Value dimOf(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tensor, int64_t d);
/// The first k of a slice (`read(i)` its element i of n, for i < n) in
/// order, written to `values` and `indices` (i64 positions) at `place(r)`
/// for r = 0..k, which also hold the heap of the k best seen so far, its
/// worst at the root, and then sort in place (heapsort): O(n log k)
/// compares, where k scans of the slice take O(k n) (a detector's top 1000
/// of a million candidates). Returns the two results.
llvm::SmallVector<mlir::Value>
heapSelect(mlir::OpBuilder &b, mlir::Location loc, mlir::Value n, mlir::Value k,
           llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::Value)> read,
           llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::OpBuilder &, mlir::Location, mlir::Value)> place,
           mlir::Value values, mlir::Value indices, bool largest, bool isUnsigned);

/// Marks a Slice or TopK whose operands' dims are counts the data gives
/// (NonZero's, NonMaxSuppression's), set before the lowering.
inline constexpr char kCountSized[] = "nnc.count_sized";
/// `size`, a dim of `op`'s result computed from its operands' values: for an
/// op marked kCountSized, a bounded extent of `bound`, the operand's dim it
/// never exceeds (a slice of a count is at most the count, whatever its
/// starts: the memory plan takes the bound, docs/dynamic-shapes.md).
mlir::Value boundByOperand(mlir::OpBuilder &b, mlir::Location loc, mlir::Operation *op,
                           mlir::Value size, mlir::Value bound);
/// A run-time check that `holds` (an i1) is true, a cf.assert: the function's
/// shape function evaluates it before a run and reports "node 'N': <what>"
/// when it fails (docs/dynamic-shapes.md).
void check(mlir::OpBuilder &b, mlir::Location loc, mlir::Value holds, const llvm::Twine &what);
/// A run-time check that two dynamic sizes are equal (a cf.assert: the
/// function's shape function reports it, docs/dynamic-shapes.md); `what`
/// says which sizes, for the message.
void checkSameSize(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y,
                   const llvm::Twine &what);
/// A scalar constant of `type` (int or float).
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, double value);
/// The most negative (or most positive) value of `type`, for max (min) reductions.
mlir::Value lowestValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, bool isUnsigned);
mlir::Value highestValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, bool isUnsigned);
/// The larger (smaller) of two floats for pools and max (min) reductions: a
/// NaN propagates, as in ONNX's reference and PyTorch, but which of -0 and +0
/// (equal values) wins is left open. Ordering them costs half of each
/// maximum on x86 (six AVX-512 instructions instead of three): 3x3 max pools
/// ran 1.4-2x faster without.
mlir::Value poolMax(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value poolMin(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);

/// The indexing map reading an operand of `shape` broadcast NumPy-style into
/// an iteration space of `rank` dims (size-1 dims read index 0).
mlir::AffineMap broadcastMap(mlir::MLIRContext *context, llvm::ArrayRef<int64_t> shape,
                             llvm::ArrayRef<int64_t> outShape);

/// A parallel linalg.generic over `resultType` reading `inputs` broadcast into
/// it; `body` computes the result element from the input elements. The result
/// is written into `init` when given (a loop-carried tensor, say), else into a
/// new tensor.
mlir::Value buildElementwise(
    mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType resultType,
    mlir::ValueRange inputs,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)> body,
    mlir::Value init = nullptr);

/// A generic over `resultType` (whose dynamic dims are `dynamicSizes`) whose
/// body computes each element from its output index (`linalg.index` per dim),
/// reading inputs via tensor.extract. Its buffer is `init` when given.
mlir::Value buildGather(
    mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType resultType,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, llvm::ArrayRef<mlir::Value>)> body,
    mlir::ValueRange dynamicSizes = {}, mlir::Value init = {});

/// A tensor of `type` (whose dynamic dims are `dynamicSizes`) whose element
/// at index i is input[map(i)]: slices with negative steps, tiling, flips.
mlir::Value buildMappedCopy(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                            mlir::RankedTensorType type, mlir::AffineMap map,
                            mlir::ValueRange dynamicSizes = {});

/// Static sizes and offsets as the OpFoldResults slicing ops take.
llvm::SmallVector<mlir::OpFoldResult> indexAttrs(mlir::OpBuilder &b, llvm::ArrayRef<int64_t> values);

/// `value` reshaped to `type` (same element count). With dynamic dims on
/// either side, the two may differ only in static size-1 dims.
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                      mlir::RankedTensorType type);

/// Converts a scalar between element types with ONNX Cast semantics.
mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value, mlir::Type to,
                       bool fromUnsigned, bool toUnsigned);

/// Applies `fn` to a float scalar, computing in f32 when the type is narrower
/// (f16/bf16), as math libraries and approximations expect.
mlir::Value inF32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                  llvm::function_ref<mlir::Value(mlir::Value)> fn);

/// Element `i` of the shape-like operand `original` (its converted value
/// `converted`) as an index: a constant, the dim of a tensor when the model
/// took it with Shape (nn::traceShapeElement), else read at run time.
mlir::Value shapeElement(mlir::ConversionPatternRewriter &b, mlir::Location loc,
                         mlir::Value original, mlir::Value converted, int64_t i);

/// Element `i` of a 1-D integer tensor, read at run time, as an index.
/// Element `i` (row-major) of `original`, a small static tensor the function
/// computes from its inputs' values and dims (a shape computed from axes
/// given at run time), rebuilt as scalar arithmetic on those (signless, of
/// its element type); null where it cannot be (ScalarElements.cpp).
mlir::Value scalarElement(mlir::ConversionPatternRewriter &b, mlir::Location loc,
                          mlir::Value original, int64_t i);
mlir::Value elementIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tensor, int64_t i);

/// Of a result's dims computed at run time (`dims`, one per dim of `type`),
/// the dynamic ones, as emptyTensor takes them; each static one is checked
/// to equal the size the type states.
llvm::SmallVector<mlir::Value> resultSizes(mlir::OpBuilder &b, mlir::Location loc,
                                           mlir::RankedTensorType type,
                                           llvm::ArrayRef<mlir::Value> dims);

/// The value of a constant scalar tensor operand (0-D or one element).
mlir::Value extractScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tensor);

} // namespace nnc::lowering

#endif // NNC_COMPILER_CONVERSION_NNTOLINALG_LOWERING_H
