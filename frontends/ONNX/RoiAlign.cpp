//===- RoiAlign.cpp - RoiAlign, spelled out in gathers --------------------===//
//
// RoiAlign pools each region of interest (a box in image coordinates, on one
// image of the batch) into an output_height x output_width grid of bins,
// sampling each bin at sampling_ratio x sampling_ratio bilinear points. In
// avg mode a bin is the mean of its samples; in max mode, as ONNX's
// reference defines it, the largest weighted corner of any of its samples.
//
// It is imported as nn ops, like GridSample: every sample's coordinates
// along each axis from the boxes, [R, bins, grid] (clamped into the map,
// weighted zero when more than a pixel outside it, as ONNX's reference
// does); one gather per interpolation corner over all samples at once,
// [R, outH, grid, outW, grid, C], from the input laid out as [N*H*W, C] rows
// (a row per pixel, so a region reads only its own pixels); the weighted
// corners summed (or maxed) and reduced over the two grid dims. The op count
// does not grow with the grid. Coordinates and weights are f32 for f16 and
// bf16 inputs: in f16 a sample 1000 pixels in is off by up to half a pixel.
//
// sampling_ratio 0 (an adaptive grid of ceil(box size / output size) samples
// per bin) is refused: the sample count would depend on the data.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
/// The samples along one axis of the input: the pixels on either side, as
/// i64, and their interpolation weights, zero for a point outside
/// [-1, size] (ONNX's reference: such a sample counts, as zero).
struct AxisSamples {
  Value low, high, lowWeight, highWeight;
};

struct RoiPooler {
  NodeImporter &n;
  Type compute; // f32, or f64 for an f64 input
  int64_t grid;

  Value scalar(double v) { return n.scalar(compute, v); }
  Value add(Value a, Value b) { return n.create<nn::AddOp>(a, b); }
  Value sub(Value a, Value b) { return n.create<nn::SubOp>(a, b); }
  Value mul(Value a, Value b) { return n.create<nn::MulOp>(a, b); }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    // allowzero: a 0 is a size (C = 0).
    return n.create<nn::ReshapeOp>(v, n.constI64(shape), n.builder.getBoolAttr(true));
  }
  /// `v`, whose dim 0 is the region count R, reshaped to [R, dims...] (each
  /// of dims at least 1): the leading 0 copies R, static or a count the data
  /// gives (a detector's proposals), whose element count then checks before
  /// the run, where a -1 would divide it out.
  Value perRegion(Value v, ArrayRef<int64_t> dims) {
    SmallVector<int64_t> shape{0};
    shape.append(dims.begin(), dims.end());
    return n.create<nn::ReshapeOp>(v, n.constI64(shape), n.builder.getBoolAttr(false));
  }
  /// A constant of `compute` type holding `values`, shaped `shape`.
  Value constant(ArrayRef<int64_t> shape, ArrayRef<double> values) {
    auto f64 = RankedTensorType::get(shape, n.builder.getF64Type());
    Value c = n.create<nn::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(f64, values)));
    return compute.isF64() ? c : n.create<nn::CastOp>(c, TypeAttr::get(compute));
  }

  /// The samples' positions along an axis, [R, bins, grid], as ONNX's
  /// reference computes them: start + bin * size + (i + 0.5) * size / grid.
  Value positions(Value start, Value binSize, int64_t bins) {
    SmallVector<double> binIndex, sampleOffset;
    for (int64_t b = 0; b < bins; ++b)
      binIndex.push_back(b);
    for (int64_t i = 0; i < grid; ++i)
      sampleOffset.push_back(i + 0.5);
    Value binStarts = mul(constant({1, bins, 1}, binIndex), binSize);
    Value offsets = mul(constant({1, 1, grid}, sampleOffset), binSize);
    Value inBin = n.create<nn::DivOp>(offsets, scalar(static_cast<double>(grid)));
    return add(add(start, binStarts), inBin);
  }

  AxisSamples samples(Value positions, int64_t size) {
    Value above = n.create<nn::GreaterEqualOp>(positions, scalar(-1));
    Value below = n.create<nn::LessEqualOp>(positions, scalar(static_cast<double>(size)));
    Value within = n.create<nn::AndOp>(above, below);
    Value inside = n.create<nn::CastOp>(within, TypeAttr::get(compute));
    // Past the last pixel the point is the last pixel: both corners there.
    Value last = scalar(static_cast<double>(size - 1));
    Value positive = n.create<nn::MaxOp>(positions, scalar(0));
    Value clamped = n.create<nn::MinOp>(positive, last);
    Value low = n.create<nn::FloorOp>(clamped);
    Value next = add(low, scalar(1));
    Value high = n.create<nn::MinOp>(next, last);
    Value highWeight = sub(clamped, low);
    Value lowWeight = sub(scalar(1), highWeight);
    auto i64 = TypeAttr::get(n.builder.getI64Type());
    // A braced list evaluates in order.
    return {n.create<nn::CastOp>(low, i64), n.create<nn::CastOp>(high, i64), mul(lowWeight, inside),
            mul(highWeight, inside)};
  }
};

LogicalResult importRoiAlign(NodeImporter &n) {
  Value input = n.input(0), rois = n.input(1), batchIndices = n.input(2);
  if (!input || !rois || !batchIndices)
    return n.fail("expects X, rois and batch_indices");
  auto inType = NodeImporter::type(input), roiType = NodeImporter::type(rois);
  auto indexType = NodeImporter::type(batchIndices);
  if (inType.getRank() != 4 || roiType.getRank() != 2 || indexType.getRank() != 1)
    return n.fail("expected an N x C x H x W input, num_rois x 4 rois and num_rois batch_indices");
  // The region count may be dynamic (the boxes a detector's first stage
  // kept, a count of the data): it is the leading dim of every tensor below,
  // reshaped as -1.
  if (!inType.hasStaticShape() || roiType.isDynamicDim(1))
    return n.fail("needs an input of static shape and rois of 4 columns (pin dynamic dims with --dim "
                  "or --input-shape)");
  int64_t regions = roiType.getDimSize(0);
  bool dynamicRegions = roiType.isDynamicDim(0) || indexType.isDynamicDim(0);
  if (roiType.getDimSize(1) != 4 || (!dynamicRegions && indexType.getDimSize(0) != regions))
    return n.fail("expected rois of shape " + Twine(regions) + " x 4 and as many batch_indices (got " +
                  Twine(roiType.getDimSize(1)) + " columns and " + Twine(indexType.getDimSize(0)) +
                  " indices)");
  Type element = inType.getElementType();
  if (!isa<FloatType>(element) || !isa<FloatType>(roiType.getElementType()))
    return n.fail("expected a float input and float rois");
  auto indexElement = dyn_cast<IntegerType>(indexType.getElementType());
  if (!indexElement || indexElement.getWidth() == 1)
    return n.fail("expected integer batch_indices");
  int64_t batch = inType.getDimSize(0), channels = inType.getDimSize(1);
  int64_t height = inType.getDimSize(2), width = inType.getDimSize(3);
  if (batch == 0 || height == 0 || width == 0)
    return n.fail("the input map is empty (" + Twine(batch) + " x " + Twine(channels) + " x " +
                  Twine(height) + " x " + Twine(width) + "): there is nothing to sample");

  std::string mode = n.attrString("mode", "avg");
  if (mode != "avg" && mode != "max")
    return n.fail("unknown mode '" + mode + "' (expected avg or max)");
  // Opset 10 behaves as output_half_pixel; opset 16 added the attribute,
  // defaulting to half_pixel.
  std::string transform =
      n.opset >= 16 ? n.attrString("coordinate_transformation_mode", "half_pixel") : "output_half_pixel";
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return n.fail("unknown coordinate_transformation_mode '" + transform + "'");
  bool halfPixel = transform == "half_pixel";
  // Limits far above any detector's (7 x 7 or 14 x 14 bins, 2 samples): the
  // sample positions are constants of these lengths.
  constexpr int64_t kMaxBins = 1 << 16, kMaxGrid = 1 << 10;
  int64_t outH = n.attrInt("output_height", 1), outW = n.attrInt("output_width", 1);
  if (outH < 1 || outW < 1 || outH > kMaxBins || outW > kMaxBins)
    return n.fail("output_height and output_width must be in [1, " + Twine(kMaxBins) + "] (got " +
                  Twine(outH) + " and " + Twine(outW) + ")");
  int64_t grid = n.attrInt("sampling_ratio", 0);
  if (grid < 0 || grid > kMaxGrid)
    return n.fail("sampling_ratio must be in [1, " + Twine(kMaxGrid) + "] (got " + Twine(grid) + ")");
  if (grid == 0)
    return n.fail("sampling_ratio 0 (an adaptive number of samples per bin, computed from each "
                  "region's size at run time) is not supported; give a positive sampling_ratio");
  // Every sample's corner is gathered before the reduction: its count must
  // fit (per region, when the count is dynamic).
  if (failed(n.checked(CheckedInt(dynamicRegions ? 1 : regions) * outH * grid * outW * grid * channels,
                       "the sample count")))
    return failure();
  double spatialScale = n.attrFloat("spatial_scale", 1.0f);

  Type compute = element.isF64() ? element : n.builder.getF32Type();
  RoiPooler p{n, compute, grid};
  if (roiType.getElementType() != compute)
    rois = n.create<nn::CastOp>(rois, TypeAttr::get(compute));

  // The boxes' coordinates in the input's pixels, [R, 1, 1] each.
  auto coordinate = [&](int64_t column) {
    Value index = n.scalar(n.builder.getI64Type(), static_cast<double>(column));
    Value picked = n.create<nn::GatherOp>(rois, index, n.builder.getI64IntegerAttr(1));
    Value column3d = p.perRegion(picked, {1, 1});
    Value scaled = p.mul(column3d, p.scalar(spatialScale));
    return p.sub(scaled, p.scalar(halfPixel ? 0.5 : 0.0));
  };
  Value startX = coordinate(0);
  Value startY = coordinate(1);
  Value endX = coordinate(2);
  Value endY = coordinate(3);
  Value boxW = p.sub(endX, startX);
  Value boxH = p.sub(endY, startY);
  if (!halfPixel) { // output_half_pixel makes malformed boxes 1 x 1
    boxW = n.create<nn::MaxOp>(boxW, p.scalar(1));
    boxH = n.create<nn::MaxOp>(boxH, p.scalar(1));
  }
  Value binW = n.create<nn::DivOp>(boxW, p.scalar(static_cast<double>(outW)));
  Value binH = n.create<nn::DivOp>(boxH, p.scalar(static_cast<double>(outH)));
  AxisSamples ys = p.samples(p.positions(startY, binH, outH), height);
  AxisSamples xs = p.samples(p.positions(startX, binW, outW), width);

  // Each pixel's channels as a row: row (b * H + y) * W + x of [N*H*W, C].
  Value pixels = n.create<nn::TransposeOp>(input, n.builder.getDenseI64ArrayAttr({0, 2, 3, 1}));
  pixels = p.reshape(pixels, {batch * height * width, channels});
  // A batch index outside [0, N) reads the nearest image, as out-of-range
  // gather indices read the nearest element.
  Type i64 = n.builder.getI64Type();
  Value image = n.toI64(batchIndices);
  image = n.create<nn::MaxOp>(image, n.scalar(i64, 0));
  image = n.create<nn::MinOp>(image, n.scalar(i64, static_cast<double>(batch - 1)));
  Value imageRow = p.mul(image, n.scalar(i64, static_cast<double>(height * width)));
  Value firstRow = p.perRegion(imageRow, {1, 1, 1, 1});
  Value rowStride = n.scalar(i64, static_cast<double>(width));

  // One corner of every sample: weight * input at (y, x),
  // [R, outH, grid, outW, grid, C].
  auto corner = [&](Value y, Value yWeight, Value x, Value xWeight) {
    Value yRows = p.perRegion(p.mul(y, rowStride), {outH, grid, 1, 1});
    Value rowStart = p.add(firstRow, yRows);
    Value column = p.perRegion(x, {1, 1, outW, grid});
    Value row = p.add(rowStart, column);
    Value picked = n.create<nn::GatherOp>(pixels, row, n.builder.getI64IntegerAttr(0));
    if (element != compute)
      picked = n.create<nn::CastOp>(picked, TypeAttr::get(compute));
    Value yWeights = p.perRegion(yWeight, {outH, grid, 1, 1});
    Value xWeights = p.perRegion(xWeight, {1, 1, outW, grid});
    Value weight = p.perRegion(p.mul(yWeights, xWeights), {outH, grid, outW, grid, 1});
    return p.mul(picked, weight);
  };
  Value a = corner(ys.low, ys.lowWeight, xs.low, xs.lowWeight);
  Value b = corner(ys.low, ys.lowWeight, xs.high, xs.highWeight);
  Value c = corner(ys.high, ys.highWeight, xs.low, xs.lowWeight);
  Value d = corner(ys.high, ys.highWeight, xs.high, xs.highWeight);
  auto gridDims = n.builder.getDenseI64ArrayAttr({2, 4});
  auto drop = n.builder.getBoolAttr(false);
  Value pooled; // [R, outH, outW, C]
  if (mode == "avg") {
    Value ab = p.add(a, b);
    Value sum = p.add(p.add(ab, c), d);
    Value total = n.create<nn::ReduceSumOp>(sum, gridDims, drop);
    pooled = n.create<nn::DivOp>(total, p.scalar(static_cast<double>(grid * grid)));
  } else {
    Value ab = n.create<nn::MaxOp>(a, b);
    Value top = n.create<nn::MaxOp>(n.create<nn::MaxOp>(ab, c), d);
    pooled = n.create<nn::ReduceMaxOp>(top, gridDims, drop);
  }
  if (element != compute)
    pooled = n.create<nn::CastOp>(pooled, TypeAttr::get(element));
  n.setOutputs(n.create<nn::TransposeOp>(pooled, n.builder.getDenseI64ArrayAttr({0, 3, 1, 2})));
  return success();
}
} // namespace

void nnc::onnx_frontend::addRoiAlignHandlers(std::vector<HandlerEntry> &t) {
  t.push_back({"RoiAlign", 10, kMaxOpset, importRoiAlign});
}
