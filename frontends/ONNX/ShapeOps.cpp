//===- ShapeOps.cpp - handlers for data movement and shape ops ------------===//
//
// Where an opset moved an attribute to an input (Squeeze/Unsqueeze 13,
// Split 13/18, Slice 10, Pad 11, Resize 11), the old form is rewritten to the
// new one: shape-like inputs become nn operands, so folding can feed them.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
LogicalResult importConstant(NodeImporter &n) {
  auto &b = n.builder;
  Attribute value;
  if (n.attr("value")) {
    FailureOr<ElementsAttr> t = n.attrTensor("value");
    if (failed(t))
      return failure();
    value = *t;
  } else if (const onnx::AttributeProto *a = n.attr("value_float")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()), a->f());
  } else if (auto floats = n.attrFloats("value_floats")) {
    value = DenseElementsAttr::get(RankedTensorType::get({(int64_t)floats->size()}, b.getF32Type()),
                                   ArrayRef<float>(*floats));
  } else if (const onnx::AttributeProto *a = n.attr("value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()), (int64_t)a->i());
  } else if (auto ints = n.attrInts("value_ints")) {
    value = DenseElementsAttr::get(RankedTensorType::get({(int64_t)ints->size()}, b.getI64Type()),
                                   ArrayRef<int64_t>(*ints));
  } else {
    return n.fail("only tensor, float and int constants are supported (not strings or sparse tensors)");
  }
  n.setOutputs(n.create<nn::ConstantOp>(cast<ElementsAttr>(value)));
  return success();
}

LogicalResult importReshape(NodeImporter &n) {
  Value shape = n.input(1);
  auto type = NodeImporter::type(shape);
  if (type.getRank() != 1 || type.isDynamicDim(0))
    return n.fail("expected a 1-D shape input of static length");
  n.setOutputs(n.create<nn::ReshapeOp>(n.input(0), n.toI64(shape),
                                       n.builder.getBoolAttr(n.attrInt("allowzero", 0) != 0)));
  return success();
}

LogicalResult importFlatten(NodeImporter &n) {
  Value x = n.input(0);
  int64_t rank = NodeImporter::rank(x);
  int64_t axis = n.attrInt("axis", 1);
  if (axis < -rank || axis > rank)
    return n.fail("axis " + Twine(axis) + " is out of range for rank " + Twine(rank));
  if (axis < 0)
    axis += rank;
  n.setOutputs(n.create<nn::FlattenOp>(x, n.builder.getI64IntegerAttr(axis)));
  return success();
}

LogicalResult importTranspose(NodeImporter &n) {
  Value x = n.input(0);
  int64_t rank = NodeImporter::rank(x);
  SmallVector<int64_t> perm;
  if (auto attr = n.attrInts("perm"))
    perm = *attr;
  else
    for (int64_t d = rank - 1; d >= 0; --d)
      perm.push_back(d);
  n.setOutputs(n.create<nn::TransposeOp>(x, n.builder.getDenseI64ArrayAttr(perm)));
  return success();
}

/// Whether input 1 holds static length 0.
bool emptyInput(NodeImporter &n) {
  auto type = NodeImporter::type(n.input(1));
  return type.hasStaticShape() && type.getNumElements() == 0;
}

/// Whether input 1 holds axes given at run time (from `inputSince`); an
/// empty list is known when compiling.
bool runtimeAxes(NodeImporter &n, int64_t inputSince) {
  return n.opset >= inputSince && n.input(1) && !n.constInts(1) && !emptyInput(n);
}

/// Axes from the attribute (before `inputSince`) or the constant input 1.
FailureOr<std::optional<SmallVector<int64_t>>> readAxes(NodeImporter &n, int64_t inputSince) {
  if (n.opset < inputSince)
    return n.attrInts("axes");
  if (!n.input(1))
    return std::optional<SmallVector<int64_t>>();
  if (emptyInput(n))
    return std::optional<SmallVector<int64_t>>(SmallVector<int64_t>());
  auto axes = n.constInts(1);
  if (!axes)
    return n.fail("axes must be a constant");
  return std::optional<SmallVector<int64_t>>(*axes);
}

LogicalResult importSqueeze(NodeImporter &n) {
  Value x = n.input(0);
  if (runtimeAxes(n, 13))
    return importSqueezeAt(n, x, n.input(1));
  auto type = NodeImporter::type(x);
  FailureOr<std::optional<SmallVector<int64_t>>> axes = readAxes(n, 13);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> normalized;
  if (*axes) {
    FailureOr<SmallVector<int64_t>> a = n.normalizeAxes(**axes, type.getRank());
    if (failed(a))
      return failure();
    normalized = *a;
  } else {
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (type.isDynamicDim(d))
        return n.fail("squeezing without axes needs static dims (dim " + Twine(d) + " is dynamic)");
      if (type.getDimSize(d) == 1)
        normalized.push_back(d);
    }
  }
  n.setOutputs(n.create<nn::SqueezeOp>(x, n.builder.getDenseI64ArrayAttr(normalized)));
  return success();
}

LogicalResult importUnsqueeze(NodeImporter &n) {
  Value x = n.input(0);
  if (runtimeAxes(n, 13))
    return importUnsqueezeAt(n, x, n.input(1));
  FailureOr<std::optional<SmallVector<int64_t>>> axes = readAxes(n, 13);
  if (failed(axes))
    return failure();
  if (!*axes)
    return n.fail("expected axes");
  FailureOr<SmallVector<int64_t>> normalized =
      n.normalizeAxes(**axes, NodeImporter::rank(x) + (*axes)->size());
  if (failed(normalized))
    return failure();
  n.setOutputs(n.create<nn::UnsqueezeOp>(x, n.builder.getDenseI64ArrayAttr(*normalized)));
  return success();
}

LogicalResult importConcat(NodeImporter &n) {
  SmallVector<Value> inputs;
  for (size_t i = 0; i < n.numInputs(); ++i)
    if (Value v = n.input(i))
      inputs.push_back(v);
  if (inputs.empty())
    return n.fail("expected at least one input");
  FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", 0), NodeImporter::rank(inputs[0]));
  if (failed(axis))
    return failure();
  n.setOutputs(n.create<nn::ConcatOp>(inputs, n.builder.getI64IntegerAttr(*axis)));
  return success();
}

LogicalResult importSplit(NodeImporter &n) {
  Value x = n.input(0);
  auto type = NodeImporter::type(x);
  FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  std::optional<SmallVector<int64_t>> sizes;
  if (n.opset < 13) {
    sizes = n.attrInts("split");
  } else if (n.input(1)) {
    sizes = n.constInts(1);
    if (!sizes)
      return importSplitAt(n, x, *axis, n.input(1));
  }
  if (!sizes) {
    // Equal parts, one per output (Split-18: num_outputs parts, the last smaller).
    int64_t dim = type.getDimSize(*axis);
    if (ShapedType::isDynamic(dim))
      return n.fail("splitting a dynamic dim needs explicit sizes");
    int64_t parts = n.opset >= 18 ? n.attrInt("num_outputs", 0) : (int64_t)n.numOutputs();
    if (parts < 1)
      return n.fail("expected 'num_outputs' or a 'split' input");
    // One size per output: a larger count would only build results nobody reads.
    if (parts != (int64_t)n.numOutputs())
      return n.fail("expected 'num_outputs' (" + Twine(parts) + ") to equal the number of outputs (" +
                    Twine(n.numOutputs()) + ")");
    // parts >= 1 and dim >= 0: neither division overflows.
    int64_t chunk = n.opset >= 18 ? llvm::divideCeilSigned(dim, parts) : dim / parts;
    if (n.opset < 18 && dim % parts != 0)
      return n.fail("dim " + Twine(dim) + " does not split evenly into " + Twine(parts));
    sizes.emplace();
    for (int64_t i = 0, left = dim; i < parts; ++i, left -= chunk)
      sizes->push_back(std::min(chunk, left));
  }
  Operation *op = n.createOp<nn::SplitOp>(x, n.builder.getI64IntegerAttr(*axis),
                                          n.builder.getDenseI64ArrayAttr(*sizes));
  n.setOutputs(op->getResults());
  return success();
}

/// Slice-1: starts, ends and axes are attributes.
LogicalResult importSliceAttrs(NodeImporter &n) {
  auto starts = n.attrInts("starts"), ends = n.attrInts("ends");
  if (!starts || !ends || starts->size() != ends->size())
    return n.fail("expected 'starts' and 'ends' of one length");
  SmallVector<int64_t> axes = n.attrInts("axes").value_or(SmallVector<int64_t>());
  if (axes.empty())
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  n.setOutputs(n.create<nn::SliceOp>(n.input(0), n.constI64(*starts), n.constI64(*ends),
                                     n.constI64(axes), n.constI64(SmallVector<int64_t>(starts->size(), 1))));
  return success();
}

LogicalResult importSlice(NodeImporter &n) {
  Value starts = n.toI64(n.input(1)), ends = n.toI64(n.input(2));
  auto startsType = NodeImporter::type(starts);
  if (startsType.getRank() != 1 || startsType.isDynamicDim(0))
    return n.fail("expected 1-D starts of static length");
  int64_t count = startsType.getDimSize(0);
  Value axes = n.input(3), steps = n.input(4);
  if (axes) {
    axes = n.toI64(axes);
  } else {
    SmallVector<int64_t> all;
    for (int64_t i = 0; i < count; ++i)
      all.push_back(i);
    axes = n.constI64(all);
  }
  steps = steps ? n.toI64(steps) : n.constI64(SmallVector<int64_t>(count, 1));
  n.setOutputs(n.create<nn::SliceOp>(n.input(0), starts, ends, axes, steps));
  return success();
}

/// Constant indices outside [-size, size) along `axis` of `x` are an error
/// (index tensors computed at run time are clamped by the lowering).
LogicalResult checkConstantIndices(NodeImporter &n, Value x, int64_t axis) {
  std::optional<SmallVector<int64_t>> indices = n.constInts(1);
  int64_t size = NodeImporter::type(x).getDimSize(axis);
  if (!indices || ShapedType::isDynamic(size))
    return success();
  for (int64_t i : *indices)
    if (i < -size || i >= size)
      return n.fail("index " + Twine(i) + " is out of range for axis " + Twine(axis) + " of size " +
                    Twine(size));
  return success();
}

LogicalResult importGather(NodeImporter &n) {
  Value x = n.input(0);
  FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", 0), NodeImporter::rank(x));
  if (failed(axis) || failed(checkConstantIndices(n, x, *axis)))
    return failure();
  n.setOutputs(n.create<nn::GatherOp>(x, n.input(1), n.builder.getI64IntegerAttr(*axis)));
  return success();
}

LogicalResult importGatherElements(NodeImporter &n) {
  Value x = n.input(0);
  FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", 0), NodeImporter::rank(x));
  if (failed(axis) || failed(checkConstantIndices(n, x, *axis)))
    return failure();
  n.setOutputs(n.create<nn::GatherElementsOp>(x, n.input(1), n.builder.getI64IntegerAttr(*axis)));
  return success();
}

LogicalResult importGatherND(NodeImporter &n) {
  n.setOutputs(n.create<nn::GatherNDOp>(n.input(0), n.input(1),
                                        n.builder.getI64IntegerAttr(n.attrInt("batch_dims", 0))));
  return success();
}

/// Scatter (9-10), ScatterElements and ScatterND: reduction from opset 16.
template <typename Op, bool hasAxis> LogicalResult importScatter(NodeImporter &n) {
  Value x = n.input(0);
  std::string reduction = n.attrString("reduction", "none");
  auto &b = n.builder;
  if constexpr (hasAxis) {
    FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", 0), NodeImporter::rank(x));
    if (failed(axis))
      return failure();
    n.setOutputs(n.create<Op>(x, n.input(1), n.input(2), b.getStringAttr(reduction), b.getI64IntegerAttr(*axis)));
  } else {
    n.setOutputs(n.create<Op>(x, n.input(1), n.input(2), b.getStringAttr(reduction)));
  }
  return success();
}

LogicalResult importExpand(NodeImporter &n) {
  n.setOutputs(n.create<nn::ExpandOp>(n.input(0), n.toI64(n.input(1))));
  return success();
}

LogicalResult importTile(NodeImporter &n) {
  n.setOutputs(n.create<nn::TileOp>(n.input(0), n.toI64(n.input(1))));
  return success();
}

/// Pad-2: pads and value are attributes. Pad-11+: inputs (18 adds axes).
LogicalResult importPad(NodeImporter &n) {
  Value x = n.input(0);
  int64_t rank = NodeImporter::rank(x);
  Type element = getElementTypeOrSelf(x.getType());
  std::string mode = n.attrString("mode", "constant");
  Value pads, value;
  if (n.opset < 11) {
    auto attr = n.attrInts("pads");
    if (!attr)
      return n.fail("expected attribute 'pads'");
    pads = n.constI64(*attr);
    value = n.scalar(element, n.attrFloat("value", 0.0f));
  } else {
    pads = n.toI64(n.input(1));
    if (n.input(3)) {
      // Pads for only some axes: scatter them into a full list.
      auto axes = n.constInts(3);
      auto given = n.constInts(1);
      if (!axes || !given)
        return n.fail("with 'axes', pads and axes must be constants");
      FailureOr<SmallVector<int64_t>> normalized = n.normalizeAxes(*axes, rank);
      if (failed(normalized))
        return failure();
      if (given->size() != 2 * axes->size())
        return n.fail("expected two pads per axis");
      SmallVector<int64_t> full(2 * rank, 0);
      for (size_t i = 0; i < axes->size(); ++i) {
        int64_t a = (*axes)[i] < 0 ? (*axes)[i] + rank : (*axes)[i];
        full[a] = (*given)[i];
        full[a + rank] = (*given)[i + axes->size()];
      }
      pads = n.constI64(full);
    }
    value = n.input(2);
    if (value && NodeImporter::type(value).getNumElements() == 1 && NodeImporter::rank(value) != 0)
      value = n.create<nn::ReshapeOp>(value, n.constI64({}), n.builder.getBoolAttr(false));
    if (!value)
      value = n.scalar(element, 0);
  }
  n.setOutputs(n.create<nn::PadOp>(x, pads, value, n.builder.getStringAttr(mode)));
  return success();
}

/// Resize (10 to 21) and Upsample (7 to 9, Resize-10 semantics: scales only,
/// asymmetric coordinates, nearest rounds down).
LogicalResult importResize(NodeImporter &n) {
  Value x = n.input(0);
  int64_t rank = NodeImporter::rank(x);
  std::string mode = n.attrString("mode", "nearest");
  std::string ctm = n.attrString("coordinate_transformation_mode", "half_pixel");
  std::string nearest = n.attrString("nearest_mode", "round_prefer_floor");
  Value scales, sizes, roi;
  if (n.opset < 9) { // Upsample-7: scales as an attribute
    auto attr = n.attrFloats("scales");
    if (!attr)
      return n.fail("expected attribute 'scales'");
    scales = n.create<nn::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)attr->size()}, n.builder.getF32Type()),
        ArrayRef<float>(*attr))));
    ctm = "asymmetric";
    nearest = "floor";
  } else if (n.opset < 11) {
    scales = n.input(1);
    ctm = "asymmetric";
    nearest = "floor";
  } else {
    scales = n.input(2);
    sizes = n.input(3);
    if (ctm == "tf_crop_and_resize") {
      roi = n.input(1);
      if (!roi)
        return n.fail("tf_crop_and_resize needs the roi input");
      if (NodeImporter::rank(roi) != 1)
        return n.fail("roi must be 1-D");
      if (n.attr("axes"))
        return n.fail("tf_crop_and_resize with 'axes' is not supported");
      // f16 widens; f32 and f64 keep their precision.
      Type roiElement = getElementTypeOrSelf(roi.getType());
      if (!roiElement.isF32() && !roiElement.isF64())
        roi = n.create<nn::CastOp>(roi, TypeAttr::get(n.builder.getF32Type()));
    }
    if (n.attrInt("antialias", 0) != 0)
      return n.fail("antialias = 1 is not supported");
  }
  // Opset 11-12 models pass an empty tensor for the unused one of scales/sizes.
  if (scales && NodeImporter::type(scales).hasStaticShape() &&
      NodeImporter::type(scales).getNumElements() == 0)
    scales = nullptr;
  if (sizes && NodeImporter::type(sizes).hasStaticShape() &&
      NodeImporter::type(sizes).getNumElements() == 0)
    sizes = nullptr;
  if (!scales == !sizes)
    return n.fail("expected exactly one of 'scales' and 'sizes'");
  if (mode == "linear" || mode == "bilinear" || mode == "trilinear")
    mode = "linear";
  else if (mode == "cubic" || mode == "bicubic")
    mode = "cubic";

  // Resize-18: `axes` names the dims that scales/sizes cover; keep_aspect_ratio_policy.
  std::optional<SmallVector<int64_t>> axes = n.attrInts("axes");
  std::string policy = n.attrString("keep_aspect_ratio_policy", "stretch");
  if (axes || (sizes && policy != "stretch")) {
    SmallVector<int64_t> ax;
    if (axes) {
      FailureOr<SmallVector<int64_t>> normalized = n.normalizeAxes(*axes, rank);
      if (failed(normalized))
        return failure();
      for (int64_t a : *axes)
        ax.push_back(a < 0 ? a + rank : a);
    } else {
      for (int64_t d = 0; d < rank; ++d)
        ax.push_back(d);
    }
    auto type = NodeImporter::type(x);
    if (scales) {
      auto values = nn::getConstantFloats(scales);
      if (!values || values->size() != ax.size())
        return n.fail("with 'axes', scales must be a constant with one value per axis");
      SmallVector<float> full(rank, 1.0f);
      for (size_t i = 0; i < ax.size(); ++i)
        full[ax[i]] = (*values)[i];
      scales = n.create<nn::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(
          RankedTensorType::get({rank}, n.builder.getF32Type()), ArrayRef<float>(full))));
    } else {
      auto values = n.constInts(3);
      if (!values || values->size() != ax.size() || !type.hasStaticShape())
        return n.fail("with 'axes' or an aspect-ratio policy, sizes must be a constant and the "
                      "input static");
      SmallVector<int64_t> full(type.getShape());
      if (policy == "stretch") {
        for (size_t i = 0; i < ax.size(); ++i)
          full[ax[i]] = (*values)[i];
      } else if (policy == "not_larger" || policy == "not_smaller") {
        double scale = policy == "not_larger" ? 1e300 : 0;
        for (size_t i = 0; i < ax.size(); ++i) {
          if (type.getDimSize(ax[i]) == 0 || (*values)[i] < 0)
            return n.fail("an aspect-ratio policy needs non-empty dims and non-negative sizes");
          double s = (double)(*values)[i] / (double)type.getDimSize(ax[i]);
          scale = policy == "not_larger" ? std::min(scale, s) : std::max(scale, s);
        }
        for (int64_t a : ax) {
          FailureOr<int64_t> size =
              n.checked(CheckedInt::fromDouble(std::round(scale * (double)type.getDimSize(a))),
                        "size along dim " + Twine(a));
          if (failed(size))
            return failure();
          full[a] = *size;
        }
      } else {
        return n.fail("unknown keep_aspect_ratio_policy '" + policy + "'");
      }
      sizes = n.constI64(full);
    }
  }
  if (sizes)
    sizes = n.toI64(sizes);
  auto &b = n.builder;
  n.setOutputs(n.create<nn::ResizeOp>(x, scales, sizes, roi, b.getStringAttr(mode), b.getStringAttr(ctm),
                                      b.getStringAttr(nearest),
                                      b.getF32FloatAttr(n.attrFloat("cubic_coeff_a", -0.75f)),
                                      b.getBoolAttr(n.attrInt("exclude_outside", 0) != 0),
                                      b.getF32FloatAttr(n.attrFloat("extrapolation_value", 0.0f))));
  return success();
}

LogicalResult importShape(NodeImporter &n) {
  Value x = n.input(0);
  int64_t rank = NodeImporter::rank(x);
  auto clampDim = [&](int64_t d) { return std::clamp<int64_t>(d < 0 ? d + rank : d, 0, rank); };
  int64_t start = clampDim(n.attrInt("start", 0)), end = clampDim(n.attrInt("end", rank));
  end = std::max(start, end);
  n.setOutputs(n.create<nn::ShapeOp>(x, n.builder.getI64IntegerAttr(start),
                                     n.builder.getI64IntegerAttr(end)));
  return success();
}

LogicalResult importSize(NodeImporter &n) {
  n.setOutputs(n.create<nn::SizeOp>(n.input(0)));
  return success();
}

LogicalResult importConstantOfShape(NodeImporter &n) {
  ElementsAttr value;
  if (n.attr("value")) {
    FailureOr<ElementsAttr> t = n.attrTensor("value");
    if (failed(t))
      return failure();
    value = *t;
  } else {
    value = cast<ElementsAttr>(DenseElementsAttr::get(
        RankedTensorType::get({1}, n.builder.getF32Type()), 0.0f));
  }
  Value shape = n.input(0);
  auto shapeType = NodeImporter::type(shape);
  if (shapeType.getRank() != 1 || shapeType.isDynamicDim(0))
    return n.fail("expected a 1-D shape input of static length");
  n.setOutputs(n.create<nn::ConstantOfShapeOp>(n.toI64(shape), value));
  return success();
}

LogicalResult importRange(NodeImporter &n) {
  n.setOutputs(n.create<nn::RangeOp>(n.input(0), n.input(1), n.input(2)));
  return success();
}

LogicalResult importTrilu(NodeImporter &n) {
  Value k = n.input(1);
  if (!k) {
    k = n.scalar(n.builder.getI64Type(), 0);
  } else {
    auto type = NodeImporter::type(k);
    if (!type.hasStaticShape() || type.getNumElements() != 1)
      return n.fail("expected a one-element k");
    if (type.getRank() != 0)
      k = n.create<nn::ReshapeOp>(k, n.constI64({}), n.builder.getBoolAttr(false));
  }
  n.setOutputs(n.create<nn::TriluOp>(n.input(0), k, n.builder.getBoolAttr(n.attrInt("upper", 1) != 0)));
  return success();
}

LogicalResult importCumSum(NodeImporter &n) {
  Value x = n.input(0);
  auto axisValues = n.constInts(1);
  if (!axisValues)
    return importCumSumAt(n, x, n.input(1));
  if (axisValues->size() != 1)
    return n.fail("expected one axis");
  FailureOr<int64_t> axis = n.normalizeAxis((*axisValues)[0], NodeImporter::rank(x));
  if (failed(axis))
    return failure();
  auto &b = n.builder;
  n.setOutputs(n.create<nn::CumSumOp>(x, b.getI64IntegerAttr(*axis),
                                      b.getBoolAttr(n.attrInt("exclusive", 0) != 0),
                                      b.getBoolAttr(n.attrInt("reverse", 0) != 0)));
  return success();
}
} // namespace

void nnc::onnx_frontend::addShapeHandlers(std::vector<HandlerEntry> &t) {
  constexpr int64_t M = kMaxOpset;
  t.insert(t.end(), {
      {"Constant", 1, M, importConstant},
      {"Reshape", 5, M, importReshape},
      {"Flatten", 1, M, importFlatten},
      {"Transpose", 1, M, importTranspose},
      {"Squeeze", 1, M, importSqueeze},
      {"Unsqueeze", 1, M, importUnsqueeze},
      {"Concat", 4, M, importConcat},
      {"Split", 2, M, importSplit},
      {"Slice", 1, 9, importSliceAttrs},
      {"Slice", 10, M, importSlice},
      {"Gather", 1, M, importGather},
      {"GatherElements", 11, M, importGatherElements},
      {"GatherND", 11, M, importGatherND},
      {"Scatter", 9, 10, importScatter<nn::ScatterElementsOp, true>},
      {"ScatterElements", 11, M, importScatter<nn::ScatterElementsOp, true>},
      {"ScatterND", 11, M, importScatter<nn::ScatterNDOp, false>},
      {"Expand", 8, M, importExpand},
      {"Tile", 6, M, importTile},
      {"Pad", 2, M, importPad},
      {"Resize", 10, M, importResize},
      {"Upsample", 7, 9, importResize},
      {"Shape", 1, M, importShape},
      {"Size", 1, M, importSize},
      {"ConstantOfShape", 9, M, importConstantOfShape},
      {"Range", 11, M, importRange},
      {"Trilu", 14, M, importTrilu},
      {"CumSum", 11, M, importCumSum},
  });
}
