//===- TextOps.cpp - n-gram counts of integer token sequences -------------===//
//
// TfIdfVectorizer counts, in each row of tokens, the n-grams its pool lists.
// An n-gram with skip s takes tokens i, i + (s + 1), ..., i + (n - 1)(s + 1);
// over all windows i, its j-th token is a contiguous slice of the row, so
// matching a length's pool is n comparisons of slices [.., L, 1] against the
// pool's j-th tokens [K], anded and summed over the windows: [.., K] counts.
// Unigrams are counted once (skips do not apply to them), every longer
// length once per skip 0..max_skip_count. A constant 0/1 matrix moves the
// pool's counts to their output columns (ngram_indexes).
//
// Strings (pool_strings) are not supported: nnc has no string tensors.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
LogicalResult importTfIdfVectorizer(NodeImporter &n) {
  OpBuilder &b = n.builder;
  if (n.attr("pool_strings"))
    return n.fail("pool_strings is not supported (nnc has no string tensors); pool_int64s is");
  Value x = n.input(0);
  auto type = NodeImporter::type(x);
  int64_t rank = type.getRank();
  if (!type.getElementType().isInteger(32) && !type.getElementType().isInteger(64))
    return n.fail("the tokens must be int32 or int64");
  if (rank != 1 && rank != 2)
    return n.fail("the tokens must be 1-D or 2-D (got rank " + Twine(rank) + ")");
  if (type.isDynamicDim(rank - 1))
    return n.fail("the token count (the last dim) must be static");
  int64_t length = type.getDimSize(rank - 1);

  std::string mode = n.attrString("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return n.fail("mode must be TF, IDF or TFIDF (got '" + mode + "')");
  int64_t minLength = n.attrInt("min_gram_length", 0), maxLength = n.attrInt("max_gram_length", 0),
          maxSkip = n.attrInt("max_skip_count", 0);
  if (minLength < 1 || maxLength < minLength)
    return n.fail("min_gram_length must be at least 1 and at most max_gram_length (got " +
                  Twine(minLength) + " and " + Twine(maxLength) + ")");
  if (maxSkip < 0)
    return n.fail("max_skip_count must not be negative");
  std::optional<SmallVector<int64_t>> pool = n.attrInts("pool_int64s"),
                                      starts = n.attrInts("ngram_counts"),
                                      indexes = n.attrInts("ngram_indexes");
  if (!pool || !starts || !indexes)
    return n.fail("pool_int64s, ngram_counts and ngram_indexes are required");
  // The pool's n-grams, length by length: [start, end) of pool for length i + 1.
  SmallVector<std::pair<int64_t, int64_t>> ranges;
  int64_t grams = 0;
  for (auto [i, start] : llvm::enumerate(*starts)) {
    int64_t end = i + 1 < starts->size() ? (*starts)[i + 1] : int64_t(pool->size());
    int64_t gramLength = i + 1;
    if (start < 0 || end < start || end > int64_t(pool->size()) || (end - start) % gramLength)
      return n.fail("ngram_counts must split pool_int64s into whole n-grams of lengths 1, 2, ...");
    ranges.emplace_back(start, end);
    grams += (end - start) / gramLength;
  }
  if (int64_t(indexes->size()) != grams)
    return n.fail("ngram_indexes has " + Twine(indexes->size()) + " entries for " + Twine(grams) +
                  " n-grams in the pool");
  int64_t columns = 0;
  for (int64_t index : *indexes) {
    if (index < 0)
      return n.fail("ngram_indexes must not be negative");
    columns = std::max(columns, index + 1);
  }
  std::optional<SmallVector<float>> weights = n.attrFloats("weights");
  if (weights && int64_t(weights->size()) != grams)
    return n.fail("weights has " + Twine(weights->size()) + " entries for " + Twine(grams) +
                  " n-grams in the pool");

  Type f32 = b.getF32Type(), element = type.getElementType();
  SmallVector<int64_t> leading(type.getShape().drop_back());
  // Counts per pool n-gram, in pool order: [.., grams].
  SmallVector<Value> counts;
  for (auto [i, range] : llvm::enumerate(ranges)) {
    int64_t gramLength = i + 1, poolGrams = (range.second - range.first) / gramLength;
    if (poolGrams == 0)
      continue;
    Value count;
    if (gramLength >= minLength && gramLength <= maxLength) {
      for (int64_t skip = 0; skip <= (gramLength == 1 ? 0 : maxSkip); ++skip) {
        int64_t step = skip + 1, windows = length - (gramLength - 1) * step;
        if (windows <= 0)
          break;
        Value match;
        for (int64_t j = 0; j < gramLength; ++j) {
          // Token j of every window, against token j of every pool n-gram.
          Value tokens = n.create<nn::SliceOp>(x, n.constI64({j * step}), n.constI64({j * step + windows}),
                                               n.constI64({rank - 1}), n.constI64({1}));
          tokens = n.create<nn::UnsqueezeOp>(tokens, b.getDenseI64ArrayAttr({rank}));
          SmallVector<APInt> column;
          for (int64_t g = 0; g < poolGrams; ++g)
            column.push_back(APInt(element.getIntOrFloatBitWidth(),
                                   (*pool)[range.first + g * gramLength + j], /*isSigned=*/true));
          Value wanted = n.create<nn::ConstantOp>(cast<ElementsAttr>(
              DenseElementsAttr::get(RankedTensorType::get({poolGrams}, element), column)));
          Value equal = n.create<nn::EqualOp>(tokens, wanted);
          match = match ? n.create<nn::AndOp>(match, equal) : equal;
        }
        Value found = n.create<nn::ReduceSumOp>(n.create<nn::CastOp>(match, TypeAttr::get(f32)),
                                                b.getDenseI64ArrayAttr({rank - 1}), b.getBoolAttr(false));
        count = count ? n.create<nn::AddOp>(count, found) : found;
      }
    }
    if (!count) {
      // A length outside [min, max] (or longer than the row): never counted.
      SmallVector<int64_t> shape(leading);
      shape.push_back(poolGrams);
      if (llvm::any_of(shape, ShapedType::isDynamic))
        return n.fail("a dynamic batch with pool n-grams that are never counted is not supported");
      count = n.create<nn::ConstantOp>(cast<ElementsAttr>(n.scalarAttr(f32, 0, shape)));
    }
    counts.push_back(count);
  }
  SmallVector<int64_t> resultShape(leading);
  resultShape.push_back(columns);
  if (counts.empty()) {
    if (llvm::any_of(resultShape, ShapedType::isDynamic))
      return n.fail("an empty pool with a dynamic batch is not supported");
    n.setOutputs(n.create<nn::ConstantOp>(cast<ElementsAttr>(n.scalarAttr(f32, 0, resultShape))));
    return success();
  }
  Value tf = counts.size() == 1 ? counts.front()
                                : n.create<nn::ConcatOp>(ValueRange(counts), b.getI64IntegerAttr(rank - 1));
  // IDF: presence, not counts; IDF and TFIDF scale by the weights.
  if (mode == "IDF")
    tf = n.create<nn::MinOp>(tf, n.scalar(f32, 1));
  if (mode != "TF" && weights)
    tf = n.create<nn::MulOp>(tf, n.create<nn::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(
                                      RankedTensorType::get({grams}, f32), ArrayRef<float>(*weights)))));
  // Pool n-gram g lands in column ngram_indexes[g].
  SmallVector<float> placement(grams * columns, 0.0f);
  for (auto [g, index] : llvm::enumerate(*indexes))
    placement[g * columns + index] = 1.0f;
  Value moved = n.create<nn::ConstantOp>(cast<ElementsAttr>(
      DenseElementsAttr::get(RankedTensorType::get({grams, columns}, f32), ArrayRef<float>(placement))));
  n.setOutputs(n.create<nn::MatMulOp>(tf, moved));
  return success();
}
} // namespace

void nnc::onnx_frontend::addTextHandlers(std::vector<HandlerEntry> &t) {
  constexpr int64_t M = kMaxOpset;
  t.insert(t.end(), {
      {"TfIdfVectorizer", 9, M, importTfIdfVectorizer},
  });
}
