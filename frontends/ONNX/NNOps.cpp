//===- NNOps.cpp - handlers for matmul, conv, pooling, normalization ------===//
//
// ONNX's padding conventions (auto_pad, ConvTranspose's output_shape) are
// resolved here into explicit pads; Gemm becomes transposes + matmul + scaled
// add; global pooling becomes a reduction; Einsum gets an explicit output and
// no ellipsis.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
/// Window attributes of Conv, ConvTranspose and pooling, with defaults filled in.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
};

/// The values as the messages quote them: '1, 2'.
std::string listString(ArrayRef<int64_t> values) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(values, os);
  return s;
}

/// Strides and dilations divide and multiply sizes, here and in nn's inference.
LogicalResult checkStridesAndDilations(NodeImporter &n, ArrayRef<int64_t> strides,
                                       ArrayRef<int64_t> dilations) {
  auto positive = [](ArrayRef<int64_t> v) { return llvm::all_of(v, [](int64_t x) { return x > 0; }); };
  if (!positive(strides))
    return n.fail("expected positive strides (got '" + listString(strides) + "')");
  if (!positive(dilations))
    return n.fail("expected positive dilations (got '" + listString(dilations) + "')");
  return success();
}

/// Reads strides/dilations/pads and resolves auto_pad for a forward window op.
FailureOr<Window> readWindow(NodeImporter &n, Value input, ArrayRef<int64_t> kernel) {
  int64_t spatial = NodeImporter::rank(input) - 2;
  if (spatial < 1)
    return n.fail("expected an input of rank >= 3");
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = n.attrInts("strides").value_or(SmallVector<int64_t>(spatial, 1));
  w.dilations = n.attrInts("dilations").value_or(SmallVector<int64_t>(spatial, 1));
  w.pads = n.attrInts("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  if ((int64_t)w.kernel.size() != spatial || (int64_t)w.strides.size() != spatial ||
      (int64_t)w.dilations.size() != spatial || (int64_t)w.pads.size() != 2 * spatial)
    return n.fail("expected kernel, strides and dilations with " + Twine(spatial) +
                  " values and pads with " + Twine(2 * spatial));
  if (failed(checkStridesAndDilations(n, w.strides, w.dilations)))
    return failure();
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET")
    return w;
  if (autoPad == "VALID") {
    w.pads.assign(2 * spatial, 0);
    return w;
  }
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    return n.fail("unknown auto_pad '" + autoPad + "'");
  auto type = NodeImporter::type(input);
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = type.getDimSize(i + 2);
    if (ShapedType::isDynamic(in))
      return n.fail("auto_pad " + autoPad + " needs static spatial dims; pin them with --input-shape");
    // Output ceil(in / stride); the pads make the last window end at the input's end.
    CheckedInt out = ceilDiv(CheckedInt(in), w.strides[i]);
    FailureOr<int64_t> total =
        n.checked((out - 1) * w.strides[i] + (CheckedInt(w.kernel[i]) - 1) * w.dilations[i] + 1 - in,
                  "auto_pad " + autoPad + " padding along dim " + Twine(i + 2));
    if (failed(total))
      return failure();
    int64_t small = std::max<int64_t>(0, *total) / 2, large = std::max<int64_t>(0, *total) - small;
    w.pads[i] = autoPad == "SAME_UPPER" ? small : large;
    w.pads[i + spatial] = autoPad == "SAME_UPPER" ? large : small;
  }
  return w;
}

/// The kernel's spatial dims: the filter's, which `kernel_shape` may give
/// when they are dynamic and must agree with when they are not.
FailureOr<SmallVector<int64_t>> filterKernel(NodeImporter &n, Value filter) {
  auto type = NodeImporter::type(filter);
  SmallVector<int64_t> kernel(type.getShape().drop_front(2));
  if (auto attr = n.attrInts("kernel_shape")) {
    bool agrees = attr->size() == kernel.size();
    for (size_t i = 0; agrees && i < kernel.size(); ++i)
      agrees = ShapedType::isDynamic(kernel[i]) || kernel[i] == (*attr)[i];
    if (!agrees)
      return n.fail("kernel_shape '" + listString(*attr) + "' contradicts the filter's spatial dims '" +
                    listString(kernel) + "'");
    return *attr;
  }
  if (ShapedType::isDynamicShape(kernel))
    return n.fail("the filter's spatial dims are dynamic; give kernel_shape or a static filter");
  return kernel;
}

LogicalResult importMatMul(NodeImporter &n) {
  n.setOutputs(n.create<nn::MatMulOp>(n.input(0), n.input(1)));
  return success();
}

LogicalResult importGemm(NodeImporter &n) {
  Value a = n.input(0), b = n.input(1), c = n.input(2);
  if (NodeImporter::rank(a) != 2 || NodeImporter::rank(b) != 2)
    return n.fail("expected 2-D A and B");
  auto transpose = [&](Value v) {
    return n.create<nn::TransposeOp>(v, n.builder.getDenseI64ArrayAttr({1, 0}));
  };
  if (n.attrInt("transA", 0))
    a = transpose(a);
  if (n.attrInt("transB", 0))
    b = transpose(b);
  Value y = n.create<nn::MatMulOp>(a, b);
  Type element = getElementTypeOrSelf(y.getType());
  float alpha = n.attrFloat("alpha", 1.0f), beta = n.attrFloat("beta", 1.0f);
  if (alpha != 1.0f)
    y = n.create<nn::MulOp>(y, n.scalar(element, alpha));
  if (c && beta != 0.0f) {
    if (beta != 1.0f)
      c = n.create<nn::MulOp>(c, n.scalar(element, beta));
    y = n.create<nn::AddOp>(y, c);
  }
  n.setOutputs(y);
  return success();
}

LogicalResult importConv(NodeImporter &n) {
  FailureOr<Value> y = buildConvolution(n, n.input(0), n.input(1), n.input(2));
  if (failed(y))
    return failure();
  n.setOutputs(*y);
  return success();
}

LogicalResult importConvTranspose(NodeImporter &n) {
  Value x = n.input(0), w = n.input(1);
  int64_t spatial = NodeImporter::rank(x) - 2;
  if (spatial < 1 || NodeImporter::rank(w) != NodeImporter::rank(x))
    return n.fail("expected input and filter of one rank >= 3");
  FailureOr<SmallVector<int64_t>> kernel = filterKernel(n, w);
  if (failed(kernel))
    return failure();
  SmallVector<int64_t> strides = n.attrInts("strides").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> dilations = n.attrInts("dilations").value_or(SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> pads = n.attrInts("pads").value_or(SmallVector<int64_t>(2 * spatial, 0));
  SmallVector<int64_t> outputPadding =
      n.attrInts("output_padding").value_or(SmallVector<int64_t>(spatial, 0));
  if ((int64_t)kernel->size() != spatial || (int64_t)strides.size() != spatial ||
      (int64_t)dilations.size() != spatial || (int64_t)pads.size() != 2 * spatial ||
      (int64_t)outputPadding.size() != spatial)
    return n.fail("expected window attributes with " + Twine(spatial) + " values per dim");
  if (failed(checkStridesAndDilations(n, strides, dilations)))
    return failure();
  // ONNX: output_padding < stride (or < dilation): more would add rows no
  // input reaches.
  for (int64_t i = 0; i < spatial; ++i)
    if (outputPadding[i] < 0 || (outputPadding[i] >= strides[i] && outputPadding[i] >= dilations[i]))
      return n.fail("output_padding '" + listString(outputPadding) +
                    "' must be non-negative and less than the stride or the dilation of its dim");
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  std::optional<SmallVector<int64_t>> outputShape = n.attrInts("output_shape");
  if (outputShape && (int64_t)outputShape->size() < spatial)
    return n.fail("expected output_shape with at least " + Twine(spatial) + " values (got " +
                  Twine(outputShape->size()) + ")");
  auto type = NodeImporter::type(x);
  if (outputShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    // Pads follow from the requested output size; output_shape may include N and C.
    SmallVector<int64_t> target;
    if (outputShape)
      target.assign(outputShape->end() - spatial, outputShape->end());
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = type.getDimSize(i + 2);
      if (ShapedType::isDynamic(in))
        return n.fail("output_shape/auto_pad need static spatial dims; pin them with --input-shape");
      if (!outputShape) {
        FailureOr<int64_t> size =
            n.checked(CheckedInt(in) * strides[i], "output size along dim " + Twine(i + 2));
        if (failed(size))
          return failure();
        target.push_back(*size);
      }
      FailureOr<int64_t> totalOr =
          n.checked(CheckedInt(strides[i]) * (CheckedInt(in) - 1) + outputPadding[i] +
                        (CheckedInt((*kernel)[i]) - 1) * dilations[i] + 1 - target[i],
                    "padding along dim " + Twine(i + 2));
      if (failed(totalOr))
        return failure();
      int64_t total = *totalOr;
      if (total < 0) { // a larger output than the window reaches grows output_padding
        FailureOr<int64_t> grown = n.checked(CheckedInt(outputPadding[i]) - total,
                                             "output_padding along dim " + Twine(i + 2));
        if (failed(grown))
          return failure();
        outputPadding[i] = *grown;
        total = 0;
      }
      int64_t half = total / 2;
      // ONNX: SAME_UPPER puts the odd pad at the end, everything else at the start.
      bool upper = autoPad == "SAME_UPPER";
      pads[i] = upper ? half : total - half;
      pads[i + spatial] = upper ? total - half : half;
    }
  } else if (autoPad == "VALID") {
    pads.assign(2 * spatial, 0);
  } else if (autoPad != "NOTSET") {
    return n.fail("unknown auto_pad '" + autoPad + "'");
  }
  auto &b = n.builder;
  n.setOutputs(n.create<nn::ConvTransposeOp>(
      x, w, n.input(2), b.getDenseI64ArrayAttr(strides), b.getDenseI64ArrayAttr(dilations),
      b.getDenseI64ArrayAttr(pads), b.getDenseI64ArrayAttr(outputPadding),
      b.getI64IntegerAttr(n.attrInt("group", 1))));
  return success();
}

/// A pooling op's window, from its required kernel_shape.
FailureOr<Window> readPoolWindow(NodeImporter &n, Value input) {
  std::optional<SmallVector<int64_t>> kernel = n.attrInts("kernel_shape");
  if (!kernel)
    return n.fail("expected attribute 'kernel_shape'");
  return readWindow(n, input, *kernel);
}

/// The most window taps MaxPool's Indices output is built for: one
/// comparison and select per tap.
constexpr int64_t kMaxIndexTaps = 256;

/// MaxPool's Indices output: for each output, the position of the first
/// element of its window (in window order) equal to the maximum `pooled`,
/// flattened over the whole input (row-major; with storage_order 1, each
/// plane column-major, as ONNX defines it). Padding reads NaN, which equals
/// nothing.
FailureOr<Value> maxPoolIndices(NodeImporter &n, Value x, Value pooled, const Window &win,
                                bool columnMajor) {
  auto &b = n.builder;
  // A window the pool itself refused was reported already.
  if (n.rejected())
    return failure();
  auto type = NodeImporter::type(x), outType = NodeImporter::type(pooled);
  if (!type.hasStaticShape() || !outType.hasStaticShape() || !isa<FloatType>(type.getElementType()))
    return n.fail("the Indices output of MaxPool needs a floating-point input of static shape");
  int64_t rank = type.getRank(), spatial = rank - 2;
  ArrayRef<int64_t> in = type.getShape(), out = outType.getShape();
  int64_t taps = 1;
  for (int64_t k : win.kernel) {
    if (k < 1 || k > kMaxIndexTaps || taps * k > kMaxIndexTaps)
      return n.fail("the Indices output of MaxPool is built for windows of at most " +
                    Twine(kMaxIndexTaps) + " elements (kernel_shape '" + listString(win.kernel) +
                    "')");
    taps *= k;
  }
  // Padded with NaN far enough for every window, ceil_mode's last included.
  SmallVector<int64_t> pads(2 * rank, 0);
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t reach = (out[i + 2] - 1) * win.strides[i] + (win.kernel[i] - 1) * win.dilations[i] + 1;
    pads[i + 2] = win.pads[i];
    pads[rank + i + 2] = std::max<int64_t>(win.pads[i + spatial], reach - in[i + 2] - win.pads[i]);
  }
  Value padded = n.create<nn::PadOp>(x, n.constI64(pads), n.scalar(type.getElementType(), NAN),
                                     b.getStringAttr("constant"));
  // Each image's and channel's offset in the flattened input.
  int64_t plane = 1;
  for (int64_t i = 0; i < spatial; ++i)
    plane *= in[i + 2];
  SmallVector<int64_t> baseShape{in[0], in[1]}, base;
  baseShape.append(spatial, 1);
  for (int64_t i = 0; i < in[0] * in[1]; ++i)
    base.push_back(i * plane);
  Value baseValue = n.create<nn::ConstantOp>(cast<ElementsAttr>(
      DenseElementsAttr::get(RankedTensorType::get(baseShape, b.getI64Type()), ArrayRef(base))));
  SmallVector<int64_t> planeShape{1, 1};
  planeShape.append(out.begin() + 2, out.end());
  // The product of the output's spatial dims (no division: a batch or a
  // channel count may be 0).
  int64_t outPlane = 1;
  for (int64_t i = 0; i < spatial; ++i)
    outPlane *= out[i + 2];
  Value indices;
  // From the last tap to the first: the first equal one is kept.
  for (int64_t t = taps - 1; t >= 0; --t) {
    SmallVector<int64_t> tap(spatial);
    for (int64_t i = spatial - 1, rest = t; i >= 0; --i) {
      tap[i] = rest % win.kernel[i];
      rest /= win.kernel[i];
    }
    SmallVector<int64_t> starts, ends, axes, steps;
    for (int64_t i = 0; i < spatial; ++i) {
      starts.push_back(tap[i] * win.dilations[i]);
      ends.push_back(starts.back() + (out[i + 2] - 1) * win.strides[i] + 1);
      axes.push_back(i + 2);
      steps.push_back(win.strides[i]);
    }
    Value values = n.create<nn::SliceOp>(padded, n.constI64(starts), n.constI64(ends),
                                         n.constI64(axes), n.constI64(steps));
    // This tap's position in the input plane at every output.
    SmallVector<int64_t> positions(outPlane);
    for (int64_t o = 0; o < outPlane; ++o) {
      int64_t position = 0, scale = 1;
      SmallVector<int64_t> at(spatial);
      for (int64_t i = spatial - 1, rest = o; i >= 0; --i) {
        at[i] = (rest % out[i + 2]) * win.strides[i] + tap[i] * win.dilations[i] - win.pads[i];
        rest /= out[i + 2];
      }
      for (int64_t k = 0; k < spatial; ++k) {
        int64_t i = columnMajor ? k : spatial - 1 - k;
        position += at[i] * scale;
        scale *= in[i + 2];
      }
      positions[o] = position;
    }
    Value tapIndices = n.create<nn::AddOp>(
        baseValue, n.create<nn::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(
                       RankedTensorType::get(planeShape, b.getI64Type()), ArrayRef(positions)))));
    indices = indices ? n.create<nn::WhereOp>(n.create<nn::EqualOp>(values, pooled), tapIndices, indices)
                      : tapIndices;
  }
  return indices;
}

template <bool isMax> LogicalResult importPool(NodeImporter &n) {
  Value x = n.input(0);
  FailureOr<Window> win = readPoolWindow(n, x);
  if (failed(win))
    return failure();
  auto &b = n.builder;
  bool ceil = n.attrInt("ceil_mode", 0) != 0;
  if (isMax) {
    Value pooled = n.create<nn::MaxPoolOp>(x, b.getDenseI64ArrayAttr(win->kernel),
                                           b.getDenseI64ArrayAttr(win->strides),
                                           b.getDenseI64ArrayAttr(win->dilations),
                                           b.getDenseI64ArrayAttr(win->pads), b.getBoolAttr(ceil));
    if (!n.hasOutput(1)) {
      n.setOutputs(pooled);
      return success();
    }
    FailureOr<Value> indices =
        maxPoolIndices(n, x, pooled, *win, n.attrInt("storage_order", 0) != 0);
    if (failed(indices))
      return failure();
    n.setOutputs({pooled, *indices});
  } else {
    n.setOutputs(n.create<nn::AvgPoolOp>(
        x, b.getDenseI64ArrayAttr(win->kernel), b.getDenseI64ArrayAttr(win->strides),
        b.getDenseI64ArrayAttr(win->dilations), b.getDenseI64ArrayAttr(win->pads),
        b.getBoolAttr(ceil), b.getBoolAttr(n.attrInt("count_include_pad", 0) != 0)));
  }
  return success();
}

/// MaxUnpool: the values of X written at their indices I into zeros of the
/// output's shape: output_shape when given (constant, or at run time:
/// docs/dynamic-shapes.md), else the shape MaxPool's input would have had
/// (each spatial dim (in - 1) * stride - pads + kernel). I holds positions in
/// the whole output flattened, as MaxPool's Indices output gives them for
/// its input (MaxPool -> MaxUnpool to the input's shape restores the maxima
/// in place, as PyTorch's max_unpool and ONNX Runtime do), so this is a 1-D
/// scatter; indices beyond it are clamped, as ScatterElements clamps them.
/// An output_shape must keep X's batch and channels and have no negative
/// dim, checked before the run when given at run time.
LogicalResult importMaxUnpool(NodeImporter &n) {
  Value x = n.input(0), indices = n.input(1);
  FailureOr<Window> win = readPoolWindow(n, x);
  if (failed(win))
    return failure();
  RankedTensorType type = NodeImporter::type(x);
  if (!type.hasStaticShape() || NodeImporter::type(indices).getShape() != type.getShape())
    return n.fail("expected X of static shape and indices of the same shape");
  int64_t rank = type.getRank(), spatial = rank - 2;
  auto &b = n.builder;
  Type element = type.getElementType();
  Value flatX = n.create<nn::ReshapeOp>(x, n.constI64({type.getNumElements()}), b.getBoolAttr(false));
  Value flatI = n.create<nn::ReshapeOp>(n.toI64(indices), n.constI64({type.getNumElements()}),
                                        b.getBoolAttr(false));
  auto scatter = [&](Value zeros) {
    return n.create<nn::ScatterElementsOp>(zeros, flatI, flatX, b.getStringAttr("none"),
                                           b.getI64IntegerAttr(0));
  };
  std::optional<SmallVector<int64_t>> given;
  if (n.input(2)) {
    auto shapeType = NodeImporter::type(n.input(2));
    if (!isa<IntegerType>(shapeType.getElementType()) ||
        shapeType.getShape() != ArrayRef<int64_t>{rank})
      return n.fail("output_shape must be " + Twine(rank) + " integers");
    given = n.constInts(2);
    if (!given) {
      // Given at run time: zeros of its element count, reshaped to it.
      Type i64 = b.getI64Type();
      Value shape = n.toI64(n.input(2));
      SmallVector<int64_t> lowest(rank, 0), highest(rank, INT64_MAX);
      lowest[0] = highest[0] = type.getDimSize(0);
      lowest[1] = highest[1] = type.getDimSize(1);
      Value within = n.create<nn::AndOp>(n.create<nn::GreaterEqualOp>(shape, n.constI64(lowest)),
                                         n.create<nn::LessEqualOp>(shape, n.constI64(highest)));
      Value all = n.create<nn::ReduceMinOp>(n.create<nn::CastOp>(within, TypeAttr::get(i64)),
                                            b.getDenseI64ArrayAttr({0}), b.getBoolAttr(false));
      shape = n.create<nn::CheckOp>(
          shape, n.create<nn::EqualOp>(all, n.scalar(i64, 1)),
          b.getStringAttr("output_shape must keep X's batch (" + Twine(type.getDimSize(0)) +
                          ") and channels (" + Twine(type.getDimSize(1)) +
                          ") and have no negative dim"));
      Value count = n.create<nn::ReduceProdOp>(shape, b.getDenseI64ArrayAttr({0}), b.getBoolAttr(true));
      Value zeros = n.create<nn::ConstantOfShapeOp>(count, cast<ElementsAttr>(n.scalarAttr(element, 0.0, {1})));
      n.setOutputs(n.create<nn::ReshapeOp>(scatter(zeros), shape, b.getBoolAttr(true)));
      return success();
    }
  }
  SmallVector<int64_t> shape(type.getShape().take_front(2));
  if (given) {
    if ((*given)[0] != shape[0] || (*given)[1] != shape[1] ||
        llvm::any_of(*given, [](int64_t d) { return d < 0; }))
      return n.fail("output_shape '" + listString(*given) +
                    "' must keep X's batch and channels and have no negative dim");
    shape = *given;
  } else {
    for (int64_t i = 0; i < spatial; ++i) {
      FailureOr<int64_t> out = n.checked(
          (CheckedInt(type.getDimSize(i + 2)) - 1) * win->strides[i] - win->pads[i] -
              win->pads[i + spatial] + win->kernel[i],
          "the output size");
      if (failed(out))
        return failure();
      if (*out <= 0)
        return n.fail("the output's spatial dim " + Twine(i) + " would be " + Twine(*out));
      shape.push_back(*out);
    }
  }
  CheckedInt count(1);
  for (int64_t d : shape)
    count = count * d;
  FailureOr<int64_t> total = n.checked(count, "the output's element count");
  if (failed(total))
    return failure();
  // (Nowhere to write X's values: a scatter clamps into a nonempty output.)
  if (*total == 0 && type.getNumElements() > 0)
    return n.fail("output_shape '" + listString(shape) + "' has no element for X's values");
  Value zeros = n.create<nn::ConstantOp>(n.scalarAttr(element, 0.0, {*total}));
  n.setOutputs(n.create<nn::ReshapeOp>(scatter(zeros), n.constI64(shape), b.getBoolAttr(false)));
  return success();
}

template <typename Op> LogicalResult importGlobalPool(NodeImporter &n) {
  Value x = n.input(0);
  int64_t rank = NodeImporter::rank(x);
  if (rank < 3)
    return n.fail("expected an input of rank >= 3");
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  n.setOutputs(n.create<Op>(x, n.builder.getDenseI64ArrayAttr(axes), n.builder.getBoolAttr(true)));
  return success();
}

/// BatchNormalization with training_mode = 1 (opset 14+): normalizes by the
/// batch's statistics (the variance without Bessel's correction, as ONNX's
/// reference) and outputs the running statistics updated by `momentum`.
LogicalResult importBatchNormTraining(NodeImporter &n) {
  Value x = n.input(0);
  auto type = NodeImporter::type(x);
  int64_t rank = type.getRank();
  if (rank < 2 || type.isDynamicDim(1))
    return n.fail("expected an input of rank 2 or more with a static channel dim");
  int64_t channels = type.getDimSize(1);
  Type element = type.getElementType();
  for (size_t i = 1; i < 5; ++i) {
    auto param = NodeImporter::type(n.input(i));
    if (param.getRank() != 1 || param.getDimSize(0) != channels ||
        !isa<FloatType>(param.getElementType()))
      return n.fail("expected float scale, bias, mean and var of " + Twine(channels) + " values");
  }
  auto &b = n.builder;
  SmallVector<int64_t> axes{0}, perChannel(rank, 1);
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  perChannel[1] = channels;
  auto reshape = [&](Value v, ArrayRef<int64_t> shape) {
    return n.create<nn::ReshapeOp>(v, n.constI64(shape), b.getBoolAttr(false));
  };
  auto asElement = [&](Value v) {
    return getElementTypeOrSelf(v.getType()) == element ? v
                                                        : n.create<nn::CastOp>(v, TypeAttr::get(element));
  };
  NodeImporter::Moments m = n.moments(x, axes);
  Value epsilon = n.scalar(element, n.attrFloat("epsilon", 1e-5f));
  Value y = n.create<nn::DivOp>(m.centered, n.create<nn::SqrtOp>(n.create<nn::AddOp>(m.variance, epsilon)));
  y = n.create<nn::AddOp>(n.create<nn::MulOp>(y, reshape(asElement(n.input(1)), perChannel)),
                          reshape(asElement(n.input(2)), perChannel));
  // The running statistics keep their own type (ONNX's U: f16 data may keep f32 statistics).
  double momentum = n.attrFloat("momentum", 0.9f);
  auto running = [&](Value old, Value batch) {
    Type statType = getElementTypeOrSelf(old.getType());
    Value current = reshape(batch, {channels});
    if (statType != element)
      current = n.create<nn::CastOp>(current, TypeAttr::get(statType));
    Value kept = n.create<nn::MulOp>(old, n.scalar(statType, momentum));
    return n.create<nn::AddOp>(kept, n.create<nn::MulOp>(current, n.scalar(statType, 1 - momentum)));
  };
  Value runningMean = running(n.input(3), m.mean);
  Value runningVar = running(n.input(4), m.variance);
  n.setOutputs({y, runningMean, runningVar});
  return success();
}

LogicalResult importBatchNorm(NodeImporter &n) {
  if (n.opset < 9 && n.attrInt("spatial", 1) == 0)
    return n.fail("spatial = 0 (per-element statistics) is not supported");
  // Before opset 14 the schema check refuses training_mode.
  if (n.attrInt("training_mode", 0) != 0)
    return importBatchNormTraining(n);
  for (size_t i = 1; i < n.numOutputs(); ++i)
    if (n.hasOutput(i))
      return n.fail("the running-statistics outputs (training mode) are not supported");
  n.setOutputs(n.create<nn::BatchNormOp>(n.input(0), n.input(1), n.input(2), n.input(3),
                                         n.input(4),
                                         n.builder.getF32FloatAttr(n.attrFloat("epsilon", 1e-5f)),
                                         n.builder.getF32FloatAttr(n.attrFloat("momentum", 0.9f))));
  return success();
}

LogicalResult importInstanceNorm(NodeImporter &n) {
  n.setOutputs(n.create<nn::InstanceNormOp>(n.input(0), n.input(1), n.input(2),
                                            n.builder.getF32FloatAttr(n.attrFloat("epsilon", 1e-5f))));
  return success();
}

LogicalResult importLayerNorm(NodeImporter &n) {
  Value x = n.input(0);
  int64_t rank = NodeImporter::rank(x);
  FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  float epsilon = n.attrFloat("epsilon", 1e-5f);
  if (!n.hasOutput(1) && !n.hasOutput(2)) {
    n.setOutputs(n.create<nn::LayerNormOp>(x, n.input(1), n.input(2), n.builder.getI64IntegerAttr(*axis),
                                           n.builder.getF32FloatAttr(epsilon)));
    return success();
  }
  // Mean and InvStdDev asked for: spell the normalization out in nn ops. They
  // keep the normalized dims as size 1 and use the stash type (f32 by default).
  Type element = getElementTypeOrSelf(x.getType());
  Type stash = n.attrInt("stash_type", 1) == 1 ? n.builder.getF32Type() : element;
  Value xs = stash == element ? x : n.create<nn::CastOp>(x, TypeAttr::get(stash));
  SmallVector<int64_t> axes;
  for (int64_t d = *axis; d < rank; ++d)
    axes.push_back(d);
  NodeImporter::Moments m = n.moments(xs, axes);
  Value invStd = n.create<nn::ReciprocalOp>(
      n.create<nn::SqrtOp>(n.create<nn::AddOp>(m.variance, n.scalar(stash, epsilon))));
  Value y = n.create<nn::MulOp>(m.centered, invStd);
  if (stash != element)
    y = n.create<nn::CastOp>(y, TypeAttr::get(element));
  y = n.create<nn::MulOp>(y, n.input(1));
  if (n.input(2))
    y = n.create<nn::AddOp>(y, n.input(2));
  n.setOutputs({y, m.mean, invStd});
  return success();
}

/// Rewrites an Einsum equation to explicit form without '...': ellipsis dims get
/// fresh capital letters (right-aligned across operands), and an implicit
/// output lists the ellipsis then the letters used once, alphabetically.
FailureOr<std::string> canonicalEinsum(NodeImporter &n, StringRef equation, ValueRange inputs) {
  std::string eq;
  for (char c : equation)
    if (!isspace((unsigned char)c))
      eq.push_back(c);
  StringRef lhs = eq, output;
  bool explicitOutput = false;
  if (size_t arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = StringRef(eq).take_front(arrow);
    output = StringRef(eq).drop_front(arrow + 2);
    explicitOutput = true;
  }
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != inputs.size())
    return n.fail("equation '" + equation + "' names " + Twine(terms.size()) +
                  " operands but the node has " + Twine(inputs.size()));
  std::string used(eq);
  std::string fresh;
  for (char c = 'A'; c <= 'Z'; ++c)
    if (used.find(c) == std::string::npos)
      fresh.push_back(c);
  int64_t ellipsisRank = 0;
  SmallVector<int64_t> termEllipsis;
  for (auto [term, v] : llvm::zip(terms, inputs)) {
    int64_t letters = (int64_t)term.size() - (term.contains("...") ? 3 : 0);
    int64_t e = term.contains("...") ? NodeImporter::rank(v) - letters : 0;
    if (e < 0 || (!term.contains("...") && letters != NodeImporter::rank(v)))
      return n.fail("equation term '" + term + "' does not match an operand of rank " +
                    Twine(NodeImporter::rank(v)));
    termEllipsis.push_back(e);
    ellipsisRank = std::max(ellipsisRank, e);
  }
  if (ellipsisRank > (int64_t)fresh.size())
    return n.fail("too many ellipsis dims");
  std::string ellipsis = fresh.substr(0, ellipsisRank);
  std::string result;
  std::map<char, int> counts;
  for (auto [i, term] : llvm::enumerate(terms)) {
    std::string expanded =
        term.str();
    if (size_t pos = expanded.find("..."); pos != std::string::npos)
      expanded.replace(pos, 3, ellipsis.substr(ellipsisRank - termEllipsis[i]));
    for (char c : expanded)
      ++counts[c];
    result += (i ? "," : "") + expanded;
  }
  std::string out;
  if (explicitOutput) {
    out = output.str();
    if (size_t pos = out.find("..."); pos != std::string::npos)
      out.replace(pos, 3, ellipsis);
  } else {
    // The ellipsis, then the letters used once, in character-code order as NumPy does.
    out = ellipsis;
    for (auto [c, count] : counts)
      if (count == 1 && ellipsis.find(c) == std::string::npos)
        out.push_back(c);
  }
  return result + "->" + out;
}

LogicalResult importEinsum(NodeImporter &n) {
  SmallVector<Value> inputs;
  for (size_t i = 0; i < n.numInputs(); ++i)
    inputs.push_back(n.input(i));
  FailureOr<std::string> eq = canonicalEinsum(n, n.attrString("equation", ""), inputs);
  if (failed(eq))
    return failure();
  n.setOutputs(n.create<nn::EinsumOp>(inputs, n.builder.getStringAttr(*eq)));
  return success();
}
} // namespace

FailureOr<Value> nnc::onnx_frontend::buildConvolution(NodeImporter &n, Value x, Value w, Value bias) {
  if (NodeImporter::rank(x) < 3 || NodeImporter::rank(w) != NodeImporter::rank(x))
    return n.fail("expected input and filter of one rank >= 3");
  FailureOr<SmallVector<int64_t>> kernel = filterKernel(n, w);
  if (failed(kernel))
    return failure();
  FailureOr<Window> win = readWindow(n, x, *kernel);
  if (failed(win))
    return failure();
  auto &b = n.builder;
  return n.create<nn::ConvOp>(x, w, bias, b.getDenseI64ArrayAttr(win->strides),
                              b.getDenseI64ArrayAttr(win->dilations),
                              b.getDenseI64ArrayAttr(win->pads),
                              b.getI64IntegerAttr(n.attrInt("group", 1)));
}

void nnc::onnx_frontend::addNNHandlers(std::vector<HandlerEntry> &t) {
  constexpr int64_t M = kMaxOpset;
  t.insert(t.end(), {
      {"MatMul", 1, M, importMatMul},
      {"Gemm", 7, M, importGemm},
      {"Conv", 1, M, importConv},
      {"ConvTranspose", 1, M, importConvTranspose},
      {"MaxPool", 1, M, importPool<true>},
      {"AveragePool", 7, M, importPool<false>},
      {"MaxUnpool", 9, M, importMaxUnpool},
      {"GlobalAveragePool", 1, M, importGlobalPool<nn::ReduceMeanOp>},
      {"GlobalMaxPool", 1, M, importGlobalPool<nn::ReduceMaxOp>},
      {"BatchNormalization", 7, M, importBatchNorm},
      {"InstanceNormalization", 6, M, importInstanceNorm},
      {"LayerNormalization", 17, M, importLayerNorm},
      {"Einsum", 12, M, importEinsum},
  });
}
