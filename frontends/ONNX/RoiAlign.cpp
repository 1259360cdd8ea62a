//===- RoiAlign.cpp - RoiAlign, spelled out in gathers --------------------===//
//
// RoiAlign pools each region of interest (a box in image coordinates, on one
// image of the batch) into an output_height x output_width grid of bins; a
// bin's value is the average (or maximum) of sampling_ratio^2 bilinear
// samples spread evenly over it. It is imported as nn ops, like GridSample:
// per sample, its coordinates along each axis from the box (clamped into the
// map, weighted zero when more than a pixel outside it, as ONNX's reference
// does), one gather per interpolation corner from the input laid out as
// [N*H*W, C] rows (a row per pixel, so a region reads only its own pixels),
// weighted and summed over the samples. The chain is elementwise and fuses
// into one pass over the output on either target.
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
/// A sample coordinate along one axis of the input: the pixels on either
/// side, as i64, and their interpolation weights, zero when the point lies
/// outside [-1, size] (ONNX's reference: such a sample counts, as zero).
struct AxisSample {
  Value low, high, lowWeight, highWeight;
};

struct RoiPooler {
  NodeImporter &n;
  Type element;

  Value scalar(double v) { return n.scalar(element, v); }
  Value add(Value a, Value b) { return n.create<nn::AddOp>(a, b); }
  Value sub(Value a, Value b) { return n.create<nn::SubOp>(a, b); }
  Value mul(Value a, Value b) { return n.create<nn::MulOp>(a, b); }
  Value reshape(Value v, ArrayRef<int64_t> shape) {
    return n.create<nn::ReshapeOp>(v, n.constI64(shape), n.builder.getBoolAttr(false));
  }

  /// `positions` (a point per box and bin) along a dim of `size` pixels.
  AxisSample sample(Value positions, int64_t size) {
    Value above = n.create<nn::GreaterEqualOp>(positions, scalar(-1));
    Value below = n.create<nn::LessEqualOp>(positions, scalar(static_cast<double>(size)));
    Value within = n.create<nn::AndOp>(above, below);
    Value inside = n.create<nn::CastOp>(within, TypeAttr::get(element));
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

  /// Positions of sample `i` of `grid` in each of `bins` bins along an axis,
  /// [R, bins] from the boxes' [R, 1] starts and bin sizes.
  Value positions(Value start, Value binSize, int64_t bins, int64_t i, int64_t grid) {
    auto type = RankedTensorType::get({1, bins}, n.builder.getF64Type());
    SmallVector<double> offsets;
    for (int64_t b = 0; b < bins; ++b)
      offsets.push_back(b + (i + 0.5) / grid);
    Value constant = n.create<nn::ConstantOp>(
        cast<ElementsAttr>(DenseElementsAttr::get(type, ArrayRef<double>(offsets))));
    if (element != n.builder.getF64Type())
      constant = n.create<nn::CastOp>(constant, TypeAttr::get(element));
    return add(start, mul(binSize, constant));
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
  if (!inType.hasStaticShape() || !roiType.hasStaticShape() || !indexType.hasStaticShape())
    return n.fail("needs static shapes (pin dynamic dims with --dim or --input-shape)");
  int64_t regions = roiType.getDimSize(0);
  if (roiType.getDimSize(1) != 4 || indexType.getDimSize(0) != regions)
    return n.fail("expected rois of shape " + Twine(regions) + " x 4 and as many batch_indices (got " +
                  Twine(roiType.getDimSize(1)) + " columns and " + Twine(indexType.getDimSize(0)) +
                  " indices)");
  Type element = inType.getElementType();
  if (!isa<FloatType>(element) || !isa<FloatType>(roiType.getElementType()))
    return n.fail("expected a float input and float rois");
  if (!isa<IntegerType>(indexType.getElementType()))
    return n.fail("expected integer batch_indices");

  std::string mode = n.attrString("mode", "avg");
  if (mode != "avg" && mode != "max")
    return n.fail("unknown mode '" + mode + "' (expected avg or max)");
  // Opset 10 has no coordinate_transformation_mode and behaves as
  // output_half_pixel; opset 16 added the attribute, defaulting to half_pixel.
  std::string transform = n.attrString("coordinate_transformation_mode",
                                       n.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return n.fail("unknown coordinate_transformation_mode '" + transform + "'");
  bool halfPixel = transform == "half_pixel";
  int64_t outH = n.attrInt("output_height", 1), outW = n.attrInt("output_width", 1);
  if (outH < 1 || outW < 1)
    return n.fail("output_height and output_width must be positive (got " + Twine(outH) + " and " +
                  Twine(outW) + ")");
  int64_t grid = n.attrInt("sampling_ratio", 0);
  if (grid < 0)
    return n.fail("sampling_ratio must not be negative (got " + Twine(grid) + ")");
  if (grid == 0)
    return n.fail("sampling_ratio 0 (an adaptive number of samples per bin, computed from each "
                  "region's size at run time) is not supported; give a positive sampling_ratio");
  double spatialScale = n.attrFloat("spatial_scale", 1.0f);

  int64_t batch = inType.getDimSize(0), channels = inType.getDimSize(1);
  int64_t height = inType.getDimSize(2), width = inType.getDimSize(3);
  RoiPooler p{n, element};
  if (roiType.getElementType() != element)
    rois = n.create<nn::CastOp>(rois, TypeAttr::get(element));

  // The boxes' coordinates in the input's pixels, [R, 1] each.
  auto coordinate = [&](int64_t column) {
    Value index = n.scalar(n.builder.getI64Type(), static_cast<double>(column));
    Value picked = n.create<nn::GatherOp>(rois, index, n.builder.getI64IntegerAttr(1));
    Value column2d = p.reshape(picked, {regions, 1});
    Value scaled = p.mul(column2d, p.scalar(spatialScale));
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

  SmallVector<AxisSample> ys, xs;
  for (int64_t i = 0; i < grid; ++i) {
    ys.push_back(p.sample(p.positions(startY, binH, outH, i, grid), height));
    xs.push_back(p.sample(p.positions(startX, binW, outW, i, grid), width));
  }

  // Each pixel's channels as a row: row (b * H + y) * W + x of [N*H*W, C].
  Value pixels = n.create<nn::TransposeOp>(input, n.builder.getDenseI64ArrayAttr({0, 2, 3, 1}));
  pixels = p.reshape(pixels, {batch * height * width, channels});
  // A batch index outside [0, N) reads the nearest image, as out-of-range
  // gather indices read the nearest element.
  Type i64 = n.builder.getI64Type();
  Value image = n.create<nn::MaxOp>(n.toI64(batchIndices), n.scalar(i64, 0));
  image = n.create<nn::MinOp>(image, n.scalar(i64, static_cast<double>(batch - 1)));
  Value imageRow = p.mul(image, n.scalar(i64, static_cast<double>(height * width)));
  Value firstRow = p.reshape(imageRow, {regions, 1, 1});
  Value rowStride = n.scalar(i64, static_cast<double>(width));

  // One corner of one sample: weight * input at (y, x), [R, outH, outW, C].
  auto corner = [&](Value y, Value yWeight, Value x, Value xWeight) {
    Value yRows = p.reshape(p.mul(y, rowStride), {regions, outH, 1});
    Value rowStart = p.add(firstRow, yRows);
    Value column = p.reshape(x, {regions, 1, outW});
    Value row = p.add(rowStart, column);
    Value picked = n.create<nn::GatherOp>(pixels, row, n.builder.getI64IntegerAttr(0));
    Value yWeights = p.reshape(yWeight, {regions, outH, 1});
    Value xWeights = p.reshape(xWeight, {regions, 1, outW});
    Value weight = p.reshape(p.mul(yWeights, xWeights), {regions, outH, outW, 1});
    return p.mul(picked, weight);
  };
  Value result;
  for (const AxisSample &y : ys)
    for (const AxisSample &x : xs) {
      Value a = corner(y.low, y.lowWeight, x.low, x.lowWeight);
      Value b = corner(y.low, y.lowWeight, x.high, x.highWeight);
      Value c = corner(y.high, y.highWeight, x.low, x.lowWeight);
      Value d = corner(y.high, y.highWeight, x.high, x.highWeight);
      if (mode == "avg") {
        Value upper = p.add(a, b);
        Value sum = p.add(p.add(upper, c), d);
        result = result ? p.add(result, sum) : sum;
      } else { // ONNX's max: the largest weighted corner of any sample
        Value upper = n.create<nn::MaxOp>(a, b);
        Value top = n.create<nn::MaxOp>(n.create<nn::MaxOp>(upper, c), d);
        result = result ? n.create<nn::MaxOp>(result, top) : top;
      }
    }
  if (mode == "avg")
    result = n.create<nn::DivOp>(result, p.scalar(static_cast<double>(grid * grid)));
  n.setOutputs(n.create<nn::TransposeOp>(result, n.builder.getDenseI64ArrayAttr({0, 3, 1, 2})));
  return success();
}
} // namespace

void nnc::onnx_frontend::addRoiAlignHandlers(std::vector<HandlerEntry> &t) {
  t.push_back({"RoiAlign", 10, kMaxOpset, importRoiAlign});
}
