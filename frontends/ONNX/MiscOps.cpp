//===- MiscOps.cpp - ops spelled out in other nn ops ----------------------===//
//
// Hardmax, OneHot, EyeLike, DepthToSpace, SpaceToDepth, LRN,
// MeanVarianceNormalization, ReverseSequence, Det and the window functions have
// no nn op of their own:
// each is a short composition of existing ones (comparisons against an index
// ramp, reshape/transpose, pooling, reductions, gathers; Det is Gaussian
// elimination unrolled over the columns), which later stages
// fuse like any other graph.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"

#include <limits>

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
/// 0, 1, ..., size - 1 along dim `axis` of a rank-`rank` i64 tensor (size 1 elsewhere).
Value indexRamp(NodeImporter &n, int64_t size, int64_t axis, int64_t rank) {
  SmallVector<int64_t> values;
  for (int64_t i = 0; i < size; ++i)
    values.push_back(i);
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = size;
  auto type = RankedTensorType::get(shape, n.builder.getI64Type());
  return n.create<nn::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(type, ArrayRef<int64_t>(values))));
}

/// 1 where x is the first maximum along `axis`, else 0.
Value hardmaxAlong(NodeImporter &n, Value x, int64_t axis) {
  auto type = NodeImporter::type(x);
  auto &b = n.builder;
  Value arg = n.create<nn::ArgMaxOp>(x, b.getI64IntegerAttr(axis), b.getBoolAttr(true), b.getBoolAttr(false));
  Value hit = n.create<nn::EqualOp>(arg, indexRamp(n, type.getDimSize(axis), axis, type.getRank()));
  return n.create<nn::CastOp>(hit, TypeAttr::get(type.getElementType()));
}

LogicalResult importHardmax(NodeImporter &n) {
  Value x = n.input(0);
  auto type = NodeImporter::type(x);
  if (!type.hasStaticShape())
    return n.fail("needs static shapes");
  int64_t rank = type.getRank();
  if (n.opset >= 13) {
    FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", -1), rank);
    if (failed(axis))
      return failure();
    n.setOutputs(hardmaxAlong(n, x, *axis));
    return success();
  }
  // Before 13: over all dims from `axis`, as if flattened to 2-D.
  FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", 1), std::max<int64_t>(rank, 1));
  if (failed(axis))
    return failure();
  Value flat = n.create<nn::FlattenOp>(x, n.builder.getI64IntegerAttr(*axis));
  Value y = hardmaxAlong(n, flat, 1);
  n.setOutputs(n.create<nn::ReshapeOp>(y, n.constI64(type.getShape()), n.builder.getBoolAttr(false)));
  return success();
}

LogicalResult importOneHot(NodeImporter &n) {
  Value indices = n.input(0), values = n.input(2);
  auto valuesType = NodeImporter::type(values);
  if (!valuesType.hasStaticShape() || valuesType.getNumElements() != 2)
    return n.fail("expected two values (off, on)");
  int64_t rank = NodeImporter::rank(indices) + 1;
  FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  auto &b = n.builder;
  Type i64 = b.getI64Type();
  // The depth as a value, and the ramp 0..depth-1 along the axis.
  DepthRamp depth;
  auto depthValues = nn::getConstantFloats(n.input(1));
  auto depthInts = n.constInts(1);
  if ((depthInts && depthInts->size() == 1) || (depthValues && depthValues->size() == 1)) {
    int64_t known = depthInts ? (*depthInts)[0] : (int64_t)(*depthValues)[0];
    if (known < 1)
      return n.fail("depth must be positive (got " + Twine(known) + ")");
    // The index ramp below holds `depth` values: refuse a depth no result could have.
    SmallVector<int64_t> resultShape(NodeImporter::type(indices).getShape());
    resultShape.insert(resultShape.begin() + *axis, known);
    if (std::optional<std::string> problem =
            tensorShapeProblem(resultShape, valuesType.getElementType()))
      return n.fail("depth '" + Twine(known) + "' makes a result with " + *problem);
    depth = {n.scalar(i64, known), indexRamp(n, known, *axis, rank)};
  } else {
    FailureOr<DepthRamp> given = depthRampAt(n, n.input(1), *axis, rank);
    if (failed(given))
      return failure();
    depth = *given;
  }
  // Indices may be floats; negative ones count from depth.
  Value idx = getElementTypeOrSelf(indices.getType()) == i64
                  ? indices
                  : n.create<nn::CastOp>(indices, TypeAttr::get(i64));
  Value negative = n.create<nn::LessOp>(idx, n.scalar(i64, 0));
  idx = n.create<nn::WhereOp>(negative, n.create<nn::AddOp>(idx, depth.depth), idx);
  Value hit = n.create<nn::EqualOp>(n.create<nn::UnsqueezeOp>(idx, b.getDenseI64ArrayAttr({*axis})),
                                    depth.ramp);
  Value flatValues = n.create<nn::ReshapeOp>(values, n.constI64({2}), b.getBoolAttr(false));
  auto pick = [&](int64_t i) {
    return n.create<nn::GatherOp>(flatValues, n.create<nn::ConstantOp>(cast<ElementsAttr>(
                                                  DenseElementsAttr::get(RankedTensorType::get({}, i64), i))),
                                  b.getI64IntegerAttr(0));
  };
  n.setOutputs(n.create<nn::WhereOp>(hit, pick(1), pick(0)));
  return success();
}

/// NonZero and Compress: results whose length the data gives
/// (DataDependent.cpp).
/// Whether `v` has no elements (their loops would index an empty dim).
bool isEmpty(Value v) { return llvm::is_contained(NodeImporter::type(v).getShape(), 0); }

LogicalResult importNonZero(NodeImporter &n) {
  if (NodeImporter::rank(n.input(0)) == 0)
    return n.fail("NonZero of a scalar is not supported (ONNX leaves its result's shape open)");
  n.setOutputs(n.create<nn::NonZeroOp>(n.input(0)));
  return success();
}

/// Compress's and Unique's input and axis: a static, nonempty input along
/// `axis`, or flattened when the node has none.
FailureOr<std::pair<Value, int64_t>> selectionAxis(NodeImporter &n) {
  Value x = n.input(0);
  auto type = NodeImporter::type(x);
  if (!type.hasStaticShape())
    return n.fail("needs an input of static shape (it bounds the result)");
  if (isEmpty(x))
    return n.fail("an input with no elements is not supported yet");
  if (!n.attr("axis"))
    return std::make_pair(n.create<nn::ReshapeOp>(x, n.constI64({type.getNumElements()}),
                                                  n.builder.getBoolAttr(false)),
                          int64_t(0));
  FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  return std::make_pair(x, *axis);
}

LogicalResult importCompress(NodeImporter &n) {
  if (!NodeImporter::type(n.input(1)).getElementType().isInteger(1))
    return n.fail("expected a bool condition");
  FailureOr<std::pair<Value, int64_t>> selection = selectionAxis(n);
  if (failed(selection))
    return failure();
  n.setOutputs(n.create<nn::CompressOp>(selection->first, n.input(1),
                                        n.builder.getI64IntegerAttr(selection->second)));
  return success();
}

LogicalResult importNonMaxSuppression(NodeImporter &n) {
  Value boxes = n.input(0), scores = n.input(1);
  auto element = NodeImporter::type(scores).getElementType();
  // Absent limits: no box (ONNX's default max_output_boxes_per_class is 0),
  // an IoU threshold of 0, no score threshold (NaN: every box passes).
  Value maxOutput = n.input(2) ? n.toI64(n.input(2)) : n.constI64({0});
  Value iou = n.input(3) ? n.input(3) : n.scalar(element, 0);
  Value score = n.input(4) ? n.input(4) : n.scalar(element, std::numeric_limits<double>::quiet_NaN());
  if (isEmpty(boxes) || isEmpty(scores))
    return n.fail("boxes or scores with no elements are not supported yet");
  int64_t center = n.attrInt("center_point_box", 0);
  if (center != 0 && center != 1)
    return n.fail("center_point_box must be 0 or 1 (got " + Twine(center) + ")");
  n.setOutputs(n.create<nn::NonMaxSuppressionOp>(boxes, scores, maxOutput, iou, score,
                                                 n.builder.getBoolAttr(center == 1)));
  return success();
}

LogicalResult importUnique(NodeImporter &n) {
  FailureOr<std::pair<Value, int64_t>> selection = selectionAxis(n);
  if (failed(selection))
    return failure();
  Operation *op = n.createOp<nn::UniqueOp>(selection->first, n.builder.getI64IntegerAttr(selection->second),
                                           n.builder.getBoolAttr(n.attrInt("sorted", 1) != 0));
  n.setOutputs(op->getResults());
  return success();
}

LogicalResult importEyeLike(NodeImporter &n) {
  auto type = NodeImporter::type(n.input(0));
  if (type.getRank() != 2 || !type.hasStaticShape())
    return n.fail("expected a static 2-D input");
  Type element = type.getElementType();
  if (const onnx::AttributeProto *dtype = n.attr("dtype")) {
    element = importElementType(*n.builder.getContext(), dtype->i());
    if (!element)
      return n.fail("unsupported dtype " + dataTypeName(dtype->i()));
  }
  int64_t k = n.attrInt("k", 0), rows = type.getDimSize(0), cols = type.getDimSize(1);
  // An i64 0/1 pattern, cast to the requested type.
  SmallVector<int64_t> values;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      values.push_back(j - i == k);
  auto patternType = RankedTensorType::get({rows, cols}, n.builder.getI64Type());
  Value pattern = n.create<nn::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(patternType, ArrayRef<int64_t>(values))));
  n.setOutputs(n.create<nn::CastOp>(pattern, TypeAttr::get(element)));
  return success();
}

/// DepthToSpace and SpaceToDepth: reshape to expose the block, transpose, reshape back.
template <bool toSpace> LogicalResult importBlockShuffle(NodeImporter &n) {
  Value x = n.input(0);
  auto type = NodeImporter::type(x);
  if (type.getRank() != 4 || !type.hasStaticShape())
    return n.fail("expected a static 4-D input");
  int64_t bs = n.attrInt("blocksize", 0);
  int64_t N = type.getDimSize(0), C = type.getDimSize(1), H = type.getDimSize(2), W = type.getDimSize(3);
  if (bs < 1)
    return n.fail("blocksize must be positive");
  SmallVector<int64_t> split, perm, merged;
  if (toSpace) {
    FailureOr<int64_t> bs2 = n.checked(CheckedInt(bs) * bs, "blocksize^2 (blocksize '" + Twine(bs) + "')");
    if (failed(bs2))
      return failure();
    if (C % *bs2 != 0)
      return n.fail("channels (" + Twine(C) + ") must be divisible by blocksize^2");
    FailureOr<int64_t> outH = n.checked(CheckedInt(H) * bs, "output height");
    FailureOr<int64_t> outW = n.checked(CheckedInt(W) * bs, "output width");
    if (failed(outH) || failed(outW))
      return failure();
    std::string mode = n.attrString("mode", "DCR");
    if (mode != "DCR" && mode != "CRD")
      return n.fail("unknown mode '" + mode + "'");
    if (mode == "CRD") {
      split = {N, C / *bs2, bs, bs, H, W};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      split = {N, bs, bs, C / *bs2, H, W};
      perm = {0, 3, 4, 1, 5, 2};
    }
    merged = {N, C / *bs2, *outH, *outW};
  } else {
    if (H % bs != 0 || W % bs != 0)
      return n.fail("spatial dims must be divisible by blocksize");
    // Empty spatial dims are divisible by any blocksize.
    FailureOr<int64_t> outC = n.checked(CheckedInt(C) * bs * bs, "output channel count");
    if (failed(outC))
      return failure();
    split = {N, C, H / bs, bs, W / bs, bs};
    perm = {0, 3, 5, 1, 2, 4};
    merged = {N, *outC, H / bs, W / bs};
  }
  auto &b = n.builder;
  Value y = n.create<nn::ReshapeOp>(x, n.constI64(split), b.getBoolAttr(false));
  y = n.create<nn::TransposeOp>(y, b.getDenseI64ArrayAttr(perm));
  n.setOutputs(n.create<nn::ReshapeOp>(y, n.constI64(merged), b.getBoolAttr(false)));
  return success();
}

/// LRN: x / (bias + alpha / size * sum of squares over a channel window)^beta.
/// The channel window sum is an average pool over channels (pads counted) times size.
LogicalResult importLRN(NodeImporter &n) {
  Value x = n.input(0);
  auto type = NodeImporter::type(x);
  if (type.getRank() < 3 || !type.hasStaticShape())
    return n.fail("expected a static input of rank >= 3");
  if (type.getNumElements() == 0) { // nothing to normalize
    n.setOutputs(x);
    return success();
  }
  int64_t size = n.attrInt("size", 0);
  if (size < 1)
    return n.fail("size must be positive");
  float alpha = n.attrFloat("alpha", 1e-4f), beta = n.attrFloat("beta", 0.75f), bias = n.attrFloat("bias", 1.0f);
  auto &b = n.builder;
  Type element = type.getElementType();
  int64_t N = type.getDimSize(0), C = type.getDimSize(1), rest = type.getNumElements() / (N * C);
  Value sq = n.create<nn::MulOp>(x, x);
  Value view = n.create<nn::ReshapeOp>(sq, n.constI64({N, 1, C, rest}), b.getBoolAttr(false));
  // A window reaching more than C - 1 channels either side sums the same
  // channels as one reaching exactly that far, so a huge `size` costs nothing.
  int64_t before = std::min((size - 1) / 2, C - 1), after = std::min(size - 1 - (size - 1) / 2, C - 1);
  int64_t window = before + after + 1;
  Value mean = n.create<nn::AvgPoolOp>(view, b.getDenseI64ArrayAttr({window, 1}), b.getDenseI64ArrayAttr({1, 1}),
                                       b.getDenseI64ArrayAttr({1, 1}), b.getDenseI64ArrayAttr({before, 0, after, 0}),
                                       b.getBoolAttr(false), b.getBoolAttr(true));
  Value sum = n.create<nn::ReshapeOp>(mean, n.constI64(type.getShape()), b.getBoolAttr(false));
  // alpha / size * (mean * window)
  double scale = (double)alpha * (double)window / (double)size;
  Value denom = n.create<nn::AddOp>(n.scalar(element, bias), n.create<nn::MulOp>(sum, n.scalar(element, scale)));
  denom = n.create<nn::PowOp>(denom, n.scalar(element, beta));
  n.setOutputs(n.create<nn::DivOp>(x, denom));
  return success();
}
/// (x - mean) / (std + 1e-9) over `axes` (default 0, 2, 3), as ONNX's
/// function body defines it; the variance is the mean squared deviation.
/// f16 and bf16 compute in f32, where the 1e-9 is not 0.
LogicalResult importMeanVarianceNormalization(NodeImporter &n) {
  Value x = n.input(0);
  Type original = getElementTypeOrSelf(x.getType());
  bool narrow = isa<FloatType>(original) && original.getIntOrFloatBitWidth() < 32;
  if (narrow)
    x = n.create<nn::CastOp>(x, TypeAttr::get(n.builder.getF32Type()));
  int64_t rank = NodeImporter::rank(x);
  SmallVector<int64_t> requested = n.attrInts("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  FailureOr<SmallVector<int64_t>> axes = n.normalizeAxes(requested, rank);
  if (failed(axes))
    return failure();
  Type element = getElementTypeOrSelf(x.getType());
  if (!isa<FloatType>(element))
    return n.fail("expected a float input");
  NodeImporter::Moments m = n.moments(x, *axes);
  Value std = n.create<nn::AddOp>(n.create<nn::SqrtOp>(m.variance), n.scalar(element, 1e-9));
  Value y = n.create<nn::DivOp>(m.centered, std);
  n.setOutputs(narrow ? n.create<nn::CastOp>(y, TypeAttr::get(original)) : y);
  return success();
}

/// y[.., t, ..] = x[.., len - 1 - t, ..] for t < len, the sequence's own
/// length along the batch axis; the rest is copied. One gather along time.
LogicalResult importReverseSequence(NodeImporter &n) {
  Value x = n.input(0), lens = n.input(1);
  auto type = NodeImporter::type(x);
  int64_t rank = type.getRank();
  if (rank < 2 || !type.hasStaticShape())
    return n.fail("expected a static input of rank 2 or more");
  int64_t batchAxis = n.attrInt("batch_axis", 1), timeAxis = n.attrInt("time_axis", 0);
  if ((batchAxis != 0 && batchAxis != 1) || (timeAxis != 0 && timeAxis != 1) || batchAxis == timeAxis)
    return n.fail("batch_axis and time_axis must be 0 and 1 in some order");
  auto lensType = NodeImporter::type(lens);
  if (lensType.getRank() != 1 || lensType.getDimSize(0) != type.getDimSize(batchAxis) ||
      !lensType.getElementType().isInteger(64))
    return n.fail("sequence_lens must be int64 with one value per batch entry (" +
                  Twine(type.getDimSize(batchAxis)) + ")");
  Type i64 = n.builder.getI64Type();
  Value time = indexRamp(n, type.getDimSize(timeAxis), timeAxis, rank);
  SmallVector<int64_t> lensShape(rank, 1);
  lensShape[batchAxis] = type.getDimSize(batchAxis);
  Value len = n.create<nn::ReshapeOp>(lens, n.constI64(lensShape), n.builder.getBoolAttr(false));
  // ONNX requires lengths of at most the time dim: a longer one reverses all of it.
  len = n.create<nn::MinOp>(len, n.scalar(i64, type.getDimSize(timeAxis)));
  Value reversed = n.create<nn::SubOp>(n.create<nn::SubOp>(len, n.scalar(i64, 1)), time);
  Value index = n.create<nn::WhereOp>(n.create<nn::LessOp>(time, len), reversed, time);
  index = n.create<nn::ExpandOp>(index, n.constI64(type.getShape()));
  n.setOutputs(n.create<nn::GatherElementsOp>(x, index, n.builder.getI64IntegerAttr(timeAxis)));
  return success();
}
/// The largest matrix Det unrolls its elimination for (a few ops per column).
constexpr int64_t kMaxDetSize = 64;

/// Det: Gaussian elimination with partial pivoting, one column at a time:
/// the row with the largest magnitude in the column is gathered to the top
/// (flipping the sign unless it already was), its pivot multiplies the
/// determinant, and the rows below subtract their multiple of it.
LogicalResult importDet(NodeImporter &n) {
  Value x = n.input(0);
  auto type = NodeImporter::type(x);
  int64_t rank = type.getRank();
  if (rank < 2 || !type.hasStaticShape() || !isa<FloatType>(type.getElementType()))
    return n.fail("expected a static float input of rank 2 or more");
  int64_t size = type.getDimSize(rank - 1);
  if (type.getDimSize(rank - 2) != size)
    return n.fail("expected square matrices (got " + Twine(type.getDimSize(rank - 2)) + "x" +
                  Twine(size) + ")");
  if (size > kMaxDetSize)
    return n.fail("matrices larger than " + Twine(kMaxDetSize) + "x" + Twine(kMaxDetSize) +
                  " are not supported (the elimination is unrolled)");
  auto &b = n.builder;
  Type element = type.getElementType(), i64 = b.getI64Type();
  int64_t rowAxis = rank - 2, colAxis = rank - 1;
  auto slice = [&](Value v, int64_t axis, int64_t begin, int64_t end) {
    return n.create<nn::SliceOp>(v, n.constI64({begin}), n.constI64({end}), n.constI64({axis}), n.constI64({1}));
  };
  Value one = n.scalar(element, 1);
  Value det = one, m = x;
  for (int64_t k = size; k > 0; --k) {
    if (k > 1) {
      Value column = n.create<nn::AbsOp>(slice(m, colAxis, 0, 1));
      Value pivotRow = n.create<nn::ArgMaxOp>(column, b.getI64IntegerAttr(rowAxis), b.getBoolAttr(true),
                                              b.getBoolAttr(false));
      // Rows 0 and pivotRow trade places.
      Value ramp = indexRamp(n, k, rowAxis, rank);
      Value zero = n.scalar(i64, 0);
      Value swapped = n.create<nn::WhereOp>(n.create<nn::EqualOp>(ramp, pivotRow), zero, ramp);
      Value order = n.create<nn::WhereOp>(n.create<nn::EqualOp>(ramp, zero), pivotRow, swapped);
      Value index = n.create<nn::ExpandOp>(order, n.constI64(NodeImporter::type(m).getShape()));
      m = n.create<nn::GatherElementsOp>(m, index, b.getI64IntegerAttr(rowAxis));
      Value stayed = n.create<nn::EqualOp>(pivotRow, zero);
      det = n.create<nn::MulOp>(det, n.create<nn::WhereOp>(stayed, one, n.scalar(element, -1)));
    }
    Value top = slice(m, rowAxis, 0, 1);
    Value pivot = slice(top, colAxis, 0, 1);
    det = n.create<nn::MulOp>(det, pivot);
    if (k == 1)
      break;
    // A zero pivot makes the determinant 0; divide by 1 instead of 0 so no NaN reaches it.
    Value divisor = n.create<nn::WhereOp>(n.create<nn::EqualOp>(pivot, n.scalar(element, 0)), one, pivot);
    Value below = slice(m, rowAxis, 1, k);
    Value factors = n.create<nn::DivOp>(slice(below, colAxis, 0, 1), divisor);
    m = n.create<nn::SubOp>(slice(below, colAxis, 1, k),
                            n.create<nn::MulOp>(factors, slice(top, colAxis, 1, k)));
  }
  SmallVector<int64_t> batch(type.getShape().drop_back(2));
  if (size == 0) // the empty product
    n.setOutputs(n.create<nn::ExpandOp>(one, n.constI64(batch)));
  else
    n.setOutputs(n.create<nn::ReshapeOp>(det, n.constI64(batch), b.getBoolAttr(false)));
  return success();
}
/// HannWindow, HammingWindow and BlackmanWindow: a0 - a1 cos(2 pi n / N) +
/// a2 cos(4 pi n / N) for n in [0, size), N = size (periodic) or size - 1,
/// computed in f32 as ONNX's function bodies do; the size may be known only
/// at run time (a Range to it).
template <int kind> LogicalResult importWindow(NodeImporter &n) {
  constexpr double coefficients[3][3] = {{0.5, 0.5, 0.0},                 // Hann
                                         {25.0 / 46.0, 21.0 / 46.0, 0.0}, // Hamming
                                         {0.42, 0.5, 0.08}};              // Blackman
  auto [a0, a1, a2] = coefficients[kind];
  auto &b = n.builder;
  Type f32 = b.getF32Type();
  int64_t to = n.attrInt("output_datatype", 1);
  Type element = importElementType(*b.getContext(), to);
  if (!element)
    return n.fail("output_datatype " + dataTypeName(to) + " is not supported");
  if (NodeImporter::rank(n.input(0)) != 0)
    return n.fail("expected a scalar size");
  Value size = n.create<nn::CastOp>(n.input(0), TypeAttr::get(f32));
  Value period = n.attrInt("periodic", 1) ? size : n.create<nn::SubOp>(size, n.scalar(f32, 1));
  // 2 pi as f32, as the function bodies state it.
  Value increment = n.create<nn::DivOp>(n.scalar(f32, 6.2831854820251465), period);
  Value ramp = n.create<nn::RangeOp>(n.scalar(f32, 0), size, n.scalar(f32, 1));
  Value angle = n.create<nn::MulOp>(ramp, increment);
  Value y = n.create<nn::SubOp>(n.scalar(f32, a0),
                                n.create<nn::MulOp>(n.scalar(f32, a1), n.create<nn::CosOp>(angle)));
  if (a2 != 0) {
    Value twice = n.create<nn::MulOp>(angle, n.scalar(f32, 2));
    y = n.create<nn::AddOp>(y, n.create<nn::MulOp>(n.scalar(f32, a2), n.create<nn::CosOp>(twice)));
  }
  n.setOutputs(element == f32 ? y : n.create<nn::CastOp>(y, TypeAttr::get(element)));
  return success();
}
/// StringNormalizer: its stopwords dropped, then its case changed, by the
/// runtime's Unicode simple case mappings. Locales whose case rules differ
/// from those (Turkish and Azeri dotted i, Lithuanian) are refused rather
/// than mapped wrongly.
LogicalResult importStringNormalizer(NodeImporter &n) {
  if (!isa<nn::StringType>(getElementTypeOrSelf(n.input(0).getType())))
    return n.fail("expected a string input");
  std::string action = n.attrString("case_change_action", "NONE");
  int64_t caseChange = action == "NONE" ? 0 : action == "LOWER" ? 1 : action == "UPPER" ? 2 : -1;
  if (caseChange < 0)
    return n.fail("case_change_action '" + action + "' is not one of NONE, LOWER, UPPER");
  std::string locale = n.attrString("locale", "");
  std::string language =
      StringRef(locale).take_until([](char c) { return !llvm::isAlpha(c); }).lower();
  if (language == "tr" || language == "az" || language == "lt")
    return n.fail("locale '" + locale +
                  "' has case rules of its own, which nnc does not implement (it maps case by "
                  "Unicode's default simple mappings)");
  SmallVector<StringRef> stopwords;
  if (const onnx::AttributeProto *attr = n.attr("stopwords"))
    for (const std::string &word : attr->strings())
      stopwords.push_back(word);
  for (auto [i, word] : llvm::enumerate(stopwords)) {
    if (word.contains('\0'))
      return n.fail("stopword " + Twine(i) + " holds a NUL character");
    const auto *begin = reinterpret_cast<const llvm::UTF8 *>(word.data());
    if (!llvm::isLegalUTF8String(&begin, begin + word.size()))
      return n.fail("stopword " + Twine(i) + " is not valid UTF-8");
  }
  auto &b = n.builder;
  n.setOutputs(n.create<nn::StringNormalizerOp>(n.input(0), b.getI64IntegerAttr(caseChange),
                                                b.getBoolAttr(n.attrInt("is_case_sensitive", 0) != 0),
                                                b.getStrArrayAttr(stopwords)));
  return success();
}
} // namespace

void nnc::onnx_frontend::addMiscHandlers(std::vector<HandlerEntry> &t) {
  constexpr int64_t M = kMaxOpset;
  t.insert(t.end(), {
      {"Hardmax", 1, M, importHardmax},
      {"OneHot", 9, M, importOneHot},
      {"NonZero", 9, M, importNonZero},
      {"Compress", 9, M, importCompress},
      {"NonMaxSuppression", 10, M, importNonMaxSuppression},
      {"Unique", 11, M, importUnique},
      {"EyeLike", 9, M, importEyeLike},
      {"DepthToSpace", 1, M, importBlockShuffle<true>},
      {"SpaceToDepth", 1, M, importBlockShuffle<false>},
      {"LRN", 1, M, importLRN},
      {"MeanVarianceNormalization", 9, M, importMeanVarianceNormalization},
      {"ReverseSequence", 10, M, importReverseSequence},
      {"Det", 11, M, importDet},
      {"HannWindow", 17, M, importWindow<0>},
      {"HammingWindow", 17, M, importWindow<1>},
      {"BlackmanWindow", 17, M, importWindow<2>},
      {"StringNormalizer", 10, M, importStringNormalizer},
  });
}
