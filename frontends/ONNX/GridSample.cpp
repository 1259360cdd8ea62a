//===- GridSample.cpp - GridSample, spelled out in gathers ----------------===//
//
// GridSample reads the input at the points a grid gives: each output element
// is an interpolation of input pixels around its point. It is imported as nn
// ops: the point's pixel coordinates (unnormalized, then clipped or reflected
// by the padding mode), one gather_elements per interpolation tap from the
// input flattened to [N, C, H*W], each masked when its pixel lies outside and
// weighted, then summed. The CPU and CUDA pipelines then compile it like any
// elementwise and gather chain, and training differentiates it (the gathers'
// gradients are scatter-adds).
//
// The formulas are PyTorch's grid_sample, which ONNX's operator follows:
// bilinear corners with weights from the fractional parts, nearest rounding
// half to even, bicubic taps at x0 - 1 .. x0 + 2 with the cubic convolution
// coefficients (A = -0.75), each bicubic tap clipped or reflected on its own.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
enum class Mode { Bilinear, Nearest, Bicubic };
enum class Padding { Zeros, Border, Reflection };

/// The nn ops of one GridSample node: values are [N, 1, P] coordinates (P the
/// output's pixels) unless said otherwise. One op per statement where two
/// arguments would build ops: argument order is unspecified, and the IR's
/// order would follow the host compiler.
struct Sampler {
  NodeImporter &n;
  Type element;
  int64_t batch, channels, height, width, points;
  Padding padding;
  bool alignCorners;
  Value flatInput; // [N, C, H*W]

  Value scalar(double v) { return n.scalar(element, v); }
  Value add(Value a, Value b) { return n.create<nn::AddOp>(a, b); }
  Value sub(Value a, Value b) { return n.create<nn::SubOp>(a, b); }
  Value mul(Value a, Value b) { return n.create<nn::MulOp>(a, b); }
  Value floor(Value a) { return n.create<nn::FloorOp>(a); }
  Value clip(Value v, int64_t size) {
    Value low = n.create<nn::MaxOp>(v, scalar(0));
    return n.create<nn::MinOp>(low, scalar(static_cast<double>(size - 1)));
  }
  /// v * a + b for constants a and b.
  Value affine(Value v, double a, double b) {
    Value scaled = mul(v, scalar(a));
    return add(scaled, scalar(b));
  }

  /// A grid coordinate in [-1, 1] as a pixel coordinate along a dim of `size`.
  Value unnormalize(Value g, int64_t size) {
    if (alignCorners)
      return affine(g, (size - 1) / 2.0, (size - 1) / 2.0);
    return affine(g, size / 2.0, (size - 1) / 2.0);
  }

  /// `v` reflected into [low/2, high/2] (PyTorch's reflect_coordinates).
  Value reflect(Value v, int64_t twiceLow, int64_t twiceHigh) {
    if (twiceLow == twiceHigh)
      return mul(v, scalar(0));
    double low = twiceLow / 2.0, span = (twiceHigh - twiceLow) / 2.0;
    Value distance = n.create<nn::AbsOp>(affine(v, 1, -low));
    Value flips = floor(mul(distance, scalar(1 / span)));
    Value whole = mul(flips, scalar(span));
    Value extra = sub(distance, whole);
    Value half = floor(mul(flips, scalar(0.5)));
    Value odd = sub(flips, mul(half, scalar(2)));
    Value even = n.create<nn::EqualOp>(odd, scalar(0));
    Value forward = affine(extra, 1, low);
    Value backward = affine(extra, -1, span + low);
    return n.create<nn::WhereOp>(even, forward, backward);
  }

  /// The padding mode applied to a pixel coordinate along a dim of `size`.
  Value pad(Value v, int64_t size) {
    if (padding == Padding::Border)
      return clip(v, size);
    if (padding == Padding::Reflection) {
      Value reflected = alignCorners ? reflect(v, 0, 2 * (size - 1)) : reflect(v, -1, 2 * size - 1);
      return clip(reflected, size);
    }
    return v;
  }

  /// weight * input[n, c, y, x] for integral coordinates, 0 where (x, y) is
  /// outside the input: [N, C, P].
  Value tap(Value x, Value y, Value weight) {
    auto inside = [&](Value v, int64_t size) {
      Value low = n.create<nn::GreaterEqualOp>(v, scalar(0));
      Value high = n.create<nn::LessEqualOp>(v, scalar(static_cast<double>(size - 1)));
      return n.create<nn::AndOp>(low, high);
    };
    Value insideX = inside(x, width);
    Value insideY = inside(y, height);
    Value within = n.create<nn::AndOp>(insideX, insideY);
    // The flat index in integers: f16 holds integers exactly only to 2048.
    Type i64 = n.builder.getI64Type();
    Value rowIndex = n.create<nn::CastOp>(clip(y, height), TypeAttr::get(i64));
    Value row = mul(rowIndex, n.scalar(i64, static_cast<double>(width)));
    Value column = n.create<nn::CastOp>(clip(x, width), TypeAttr::get(i64));
    Value index = add(row, column);
    Value shape = n.constI64({batch, channels, points});
    Value indices = n.create<nn::ExpandOp>(index, shape);
    Value picked = n.create<nn::GatherElementsOp>(flatInput, indices, n.builder.getI64IntegerAttr(2));
    Value mask = n.create<nn::CastOp>(within, TypeAttr::get(element));
    Value masked = mul(weight, mask);
    return mul(picked, masked);
  }

  /// The cubic convolution coefficients of the 4 taps around fraction t.
  SmallVector<Value> cubicCoefficients(Value t) {
    constexpr double A = -0.75;
    auto near = [&](Value d) { // ((A + 2) d - (A + 3)) d^2 + 1, |d| <= 1
      Value inner = affine(d, A + 2, -(A + 3));
      return affine(mul(mul(inner, d), d), 1, 1);
    };
    auto far = [&](Value d) { // ((A d - 5A) d + 8A) d - 4A, 1 < |d| < 2
      Value inner = affine(mul(affine(d, A, -5 * A), d), 1, 8 * A);
      return affine(mul(inner, d), 1, -4 * A);
    };
    SmallVector<Value> coefficients;
    coefficients.push_back(far(affine(t, 1, 1)));
    coefficients.push_back(near(t));
    coefficients.push_back(near(affine(t, -1, 1)));
    coefficients.push_back(far(affine(t, -1, 2)));
    return coefficients;
  }
};

LogicalResult importGridSample(NodeImporter &n) {
  Value input = n.input(0), grid = n.input(1);
  auto inType = NodeImporter::type(input), gridType = NodeImporter::type(grid);
  if (inType.getRank() != 4 || gridType.getRank() != 4 || gridType.getDimSize(3) != 2)
    return n.fail("only 2-D sampling is supported: expected an N x C x H x W input and an "
                  "N x H_out x W_out x 2 grid");
  if (!inType.hasStaticShape() || !gridType.hasStaticShape())
    return n.fail("needs static shapes (pin dynamic dims with --dim or --input-shape)");
  if (inType.getDimSize(0) != gridType.getDimSize(0))
    return n.fail("the input's batch (" + Twine(inType.getDimSize(0)) + ") and the grid's (" +
                  Twine(gridType.getDimSize(0)) + ") differ");
  if (!isa<FloatType>(inType.getElementType()) || !isa<FloatType>(gridType.getElementType()))
    return n.fail("expected a float input and grid (an integer input is not supported)");
  // The points in the input's precision, as the interpolation computes.
  if (gridType.getElementType() != inType.getElementType())
    grid = n.create<nn::CastOp>(grid, TypeAttr::get(inType.getElementType()));

  std::string modeName = n.attrString("mode", n.opset >= 20 ? "linear" : "bilinear");
  Mode mode;
  if (modeName == "bilinear" || (n.opset >= 20 && modeName == "linear"))
    mode = Mode::Bilinear;
  else if (modeName == "nearest")
    mode = Mode::Nearest;
  else if (modeName == "bicubic" || (n.opset >= 20 && modeName == "cubic"))
    mode = Mode::Bicubic;
  else
    return n.fail("unknown mode '" + modeName + "'");
  std::string paddingName = n.attrString("padding_mode", "zeros");
  Padding padding;
  if (paddingName == "zeros")
    padding = Padding::Zeros;
  else if (paddingName == "border")
    padding = Padding::Border;
  else if (paddingName == "reflection")
    padding = Padding::Reflection;
  else
    return n.fail("unknown padding_mode '" + paddingName + "'");

  int64_t batch = inType.getDimSize(0), channels = inType.getDimSize(1);
  int64_t height = inType.getDimSize(2), width = inType.getDimSize(3);
  int64_t outH = gridType.getDimSize(1), outW = gridType.getDimSize(2);
  Sampler s{n, inType.getElementType(), batch, channels, height, width, outH * outW, padding,
            n.attrInt("align_corners", 0) != 0, Value()};
  s.flatInput = n.create<nn::ReshapeOp>(input, n.constI64({batch, channels, height * width}),
                                        n.builder.getBoolAttr(false));
  // The grid's x (width) and y (height) coordinates, [N, 1, P].
  auto coordinate = [&](int64_t which) {
    Value index = n.scalar(n.builder.getI64Type(), static_cast<double>(which));
    Value picked = n.create<nn::GatherOp>(grid, index, n.builder.getI64IntegerAttr(3));
    return n.create<nn::ReshapeOp>(picked, n.constI64({batch, 1, outH * outW}),
                                   n.builder.getBoolAttr(false));
  };
  Value gx = coordinate(0);
  Value gy = coordinate(1);
  Value x = s.unnormalize(gx, width);
  Value y = s.unnormalize(gy, height);

  Value result;
  auto accumulate = [&](Value v) { result = result ? s.add(result, v) : v; };
  if (mode == Mode::Nearest) {
    Value nearestX = n.create<nn::RoundOp>(s.pad(x, width));
    Value nearestY = n.create<nn::RoundOp>(s.pad(y, height));
    accumulate(s.tap(nearestX, nearestY, s.scalar(1)));
  } else if (mode == Mode::Bilinear) {
    Value px = s.pad(x, width);
    Value py = s.pad(y, height);
    Value x0 = s.floor(px);
    Value y0 = s.floor(py);
    Value x1 = s.add(x0, s.scalar(1));
    Value y1 = s.add(y0, s.scalar(1));
    Value wx1 = s.sub(px, x0);
    Value wy1 = s.sub(py, y0);
    Value wx0 = s.sub(s.scalar(1), wx1);
    Value wy0 = s.sub(s.scalar(1), wy1);
    accumulate(s.tap(x0, y0, s.mul(wx0, wy0)));
    accumulate(s.tap(x1, y0, s.mul(wx1, wy0)));
    accumulate(s.tap(x0, y1, s.mul(wx0, wy1)));
    accumulate(s.tap(x1, y1, s.mul(wx1, wy1)));
  } else {
    // Bicubic: the taps around the unpadded point, each padded on its own.
    Value x0 = s.floor(x);
    Value y0 = s.floor(y);
    SmallVector<Value> cx = s.cubicCoefficients(s.sub(x, x0));
    SmallVector<Value> cy = s.cubicCoefficients(s.sub(y, y0));
    for (int64_t j = 0; j < 4; ++j) {
      Value ty = s.pad(s.add(y0, s.scalar(static_cast<double>(j - 1))), height);
      for (int64_t i = 0; i < 4; ++i) {
        Value tx = s.pad(s.add(x0, s.scalar(static_cast<double>(i - 1))), width);
        accumulate(s.tap(tx, ty, s.mul(cx[i], cy[j])));
      }
    }
  }
  n.setOutputs(n.create<nn::ReshapeOp>(result, n.constI64({batch, channels, outH, outW}),
                                       n.builder.getBoolAttr(false)));
  return success();
}
} // namespace

void nnc::onnx_frontend::addSamplingHandlers(std::vector<HandlerEntry> &t) {
  t.push_back({"GridSample", 16, kMaxOpset, importGridSample});
}
