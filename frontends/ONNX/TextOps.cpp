//===- TextOps.cpp - n-gram counts of integer token sequences -------------===//
//
// TfIdfVectorizer counts, in each row of tokens, the n-grams its pool lists.
// An n-gram with skip s takes tokens i, i + (s + 1), ..., i + (n - 1)(s + 1);
// over all windows i, its j-th token is a contiguous slice of the row, so
// matching a length's pool is n comparisons of slices [.., L, 1] against the
// pool's j-th tokens [K], anded and summed over the windows: [.., K] counts.
// Unigrams are counted once (skips do not apply to them), every longer
// length once per skip 0..max_skip_count. Tokens compare as int64 (int32
// tokens are widened), so no pool value is truncated.
//
// Counts move to their output columns (ngram_indexes) by gathers of constant
// indices, summed where several n-grams share a column; a pool n-gram listed
// twice is counted at its last entry only. IDF clips a column's count to 1
// and IDF and TFIDF scale column i by weights[i], as ONNX's reference
// implementation and ONNX Runtime do.
//
// Strings (pool_strings) are not supported: nnc has no string tensors.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

#include <map>

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
  if (!type.hasStaticShape())
    return n.fail("the tokens' dims must be static; pin a symbolic batch with --dim");
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
  // The output's width: one past the largest index, within what a tensor dim holds.
  int64_t columns = 0;
  for (int64_t index : *indexes) {
    if (index < 0 || index >= (int64_t(1) << 31))
      return n.fail("ngram_indexes must lie in [0, 2^31) (got " + Twine(index) + ")");
    columns = std::max(columns, index + 1);
  }
  std::optional<SmallVector<float>> weights = n.attrFloats("weights");
  if (mode != "TF" && weights && int64_t(weights->size()) < columns)
    return n.fail("weights has " + Twine(weights->size()) + " entries for " + Twine(columns) +
                  " output columns");

  Type f32 = b.getF32Type(), i64 = b.getI64Type();
  if (!type.getElementType().isInteger(64))
    x = n.create<nn::CastOp>(x, TypeAttr::get(i64));
  SmallVector<int64_t> shape(type.getShape());
  // The last entry of each distinct n-gram: the one that is counted.
  std::map<std::pair<int64_t, SmallVector<int64_t>>, int64_t> lastEntry;
  {
    int64_t g = 0;
    for (auto [i, range] : llvm::enumerate(ranges))
      for (int64_t p = range.first; p < range.second; p += i + 1)
        lastEntry[{int64_t(i + 1), SmallVector<int64_t>(pool->begin() + p, pool->begin() + p + i + 1)}] = g++;
  }
  // Counts of the counted n-grams ([.., counted]) and, for each, its pool entry.
  SmallVector<Value> counts;
  SmallVector<int64_t> countedEntries;
  int64_t firstEntry = 0;
  for (auto [i, range] : llvm::enumerate(ranges)) {
    int64_t gramLength = i + 1, poolGrams = (range.second - range.first) / gramLength;
    int64_t entries = firstEntry;
    firstEntry += poolGrams;
    if (gramLength < minLength || gramLength > maxLength)
      continue;
    SmallVector<int64_t> kept;
    for (int64_t g = 0; g < poolGrams; ++g) {
      int64_t p = range.first + g * gramLength;
      if (lastEntry[{gramLength, SmallVector<int64_t>(pool->begin() + p, pool->begin() + p + gramLength)}] ==
          entries + g)
        kept.push_back(g);
    }
    Value count;
    for (int64_t skip = 0; skip <= (gramLength == 1 ? 0 : maxSkip); ++skip) {
      int64_t step = skip + 1, windows = length - (gramLength - 1) * step;
      if (windows <= 0 || kept.empty())
        break;
      Value match;
      for (int64_t j = 0; j < gramLength; ++j) {
        // Token j of every window, against token j of every kept pool n-gram.
        Value tokens = n.create<nn::SliceOp>(x, n.constI64({j * step}), n.constI64({j * step + windows}),
                                             n.constI64({rank - 1}), n.constI64({1}));
        tokens = n.create<nn::UnsqueezeOp>(tokens, b.getDenseI64ArrayAttr({rank}));
        SmallVector<int64_t> column;
        for (int64_t g : kept)
          column.push_back((*pool)[range.first + g * gramLength + j]);
        Value equal = n.create<nn::EqualOp>(tokens, n.constI64(column));
        match = match ? n.create<nn::AndOp>(match, equal) : equal;
      }
      Value found = n.create<nn::ReduceSumOp>(n.create<nn::CastOp>(match, TypeAttr::get(f32)),
                                              b.getDenseI64ArrayAttr({rank - 1}), b.getBoolAttr(false));
      count = count ? n.create<nn::AddOp>(count, found) : found;
    }
    if (!count)
      continue; // rows shorter than these n-grams: none found
    counts.push_back(count);
    for (int64_t g : kept)
      countedEntries.push_back(entries + g);
  }
  SmallVector<int64_t> resultShape(shape);
  resultShape.back() = columns;
  if (counts.empty()) {
    n.setOutputs(n.create<nn::ConstantOp>(cast<ElementsAttr>(n.scalarAttr(f32, 0, resultShape))));
    return success();
  }
  // A zero column after the counts, for the output columns a gather leaves empty.
  SmallVector<int64_t> zeroShape(shape);
  zeroShape.back() = 1;
  counts.push_back(n.create<nn::ConstantOp>(cast<ElementsAttr>(n.scalarAttr(f32, 0, zeroShape))));
  Value all = n.create<nn::ConcatOp>(ValueRange(counts), b.getI64IntegerAttr(rank - 1));
  int64_t zero = countedEntries.size();
  // Gather k takes, for each column, its k-th counted n-gram (or the zero).
  SmallVector<SmallVector<int64_t>> sources;
  SmallVector<int64_t> filled(columns, 0);
  for (auto [c, entry] : llvm::enumerate(countedEntries)) {
    int64_t column = (*indexes)[entry], level = filled[column]++;
    if (level == int64_t(sources.size()))
      sources.emplace_back(columns, zero);
    sources[level][column] = c;
  }
  Value tf;
  for (ArrayRef<int64_t> source : sources) {
    Value picked = n.create<nn::GatherOp>(all, n.constI64(source), b.getI64IntegerAttr(rank - 1));
    tf = tf ? n.create<nn::AddOp>(tf, picked) : picked;
  }
  if (mode == "IDF")
    tf = n.create<nn::MinOp>(tf, n.scalar(f32, 1));
  if (mode != "TF" && weights)
    tf = n.create<nn::MulOp>(tf, n.create<nn::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(
                                      RankedTensorType::get({columns}, f32),
                                      ArrayRef<float>(*weights).take_front(columns)))));
  n.setOutputs(tf);
  return success();
}
} // namespace

void nnc::onnx_frontend::addTextHandlers(std::vector<HandlerEntry> &t) {
  constexpr int64_t M = kMaxOpset;
  t.insert(t.end(), {
      {"TfIdfVectorizer", 9, M, importTfIdfVectorizer},
  });
}
