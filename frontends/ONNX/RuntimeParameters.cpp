//===- RuntimeParameters.cpp - axes, sizes and depths given at run time ---===//
//
// Squeeze, Unsqueeze, the reductions, CumSum, Split and OneHot take axes, part
// sizes or a depth as inputs. When those are constants the handlers read them;
// otherwise the node becomes nn ops that compute its shape from the values
// (a Reshape to a computed shape, a Slice to computed bounds, Range for a
// depth), which the compiled code evaluates before the run (a shape input,
// docs/dynamic-shapes.md). nn.check refuses values ONNX calls invalid (an
// axis out of range or given twice, parts that do not add up), naming the
// node. Only the data-independent structure is fixed when compiling: the
// number of axes or parts, from the input's static length.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
Type i64Type(NodeImporter &n) { return n.builder.getI64Type(); }

/// An i64 constant of `shape` holding 0, 1, 2, ... in row-major order.
Value iota(NodeImporter &n, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, i64Type(n));
  SmallVector<int64_t> values(type.getNumElements());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = i;
  return n.create<nn::ConstantOp>(cast<ElementsAttr>(DenseElementsAttr::get(type, ArrayRef(values))));
}

Value i64Scalar(NodeImporter &n, int64_t v) { return n.scalar(i64Type(n), v); }
Value asI64(NodeImporter &n, Value v) { return n.create<nn::CastOp>(v, TypeAttr::get(i64Type(n))); }
Value sumAll(NodeImporter &n, Value v) {
  return n.create<nn::ReduceSumOp>(v, n.builder.getDenseI64ArrayAttr({0}), n.builder.getBoolAttr(false));
}

/// `values` (an integer input) as a 1-D i64 tensor of static length.
FailureOr<Value> listOf(NodeImporter &n, Value values, const Twine &what) {
  auto type = NodeImporter::type(values);
  if (!isa<IntegerType>(type.getElementType()))
    return n.fail(what + " must be integers");
  if (type.getRank() > 1 || !type.hasStaticShape())
    return n.fail(what + " must be a 1-D tensor of static length when given at run time");
  Value list = n.toI64(values);
  if (type.getRank() == 0)
    list = n.create<nn::ReshapeOp>(list, n.constI64({1}), n.builder.getBoolAttr(false));
  return list;
}

/// A one-element integer `value` as a 0-D i64.
FailureOr<Value> scalarOf(NodeImporter &n, Value value, const Twine &what) {
  auto type = NodeImporter::type(value);
  if (!type.hasStaticShape() || type.getNumElements() != 1 ||
      !isa<IntegerType>(type.getElementType()))
    return n.fail(what + " must be one integer");
  return n.create<nn::ReshapeOp>(n.toI64(value), n.constI64({}), n.builder.getBoolAttr(false));
}

/// `x`, checked (nn.check) to meet `valid` before the run. Checks go on the
/// node's data, which its result always uses: a check on a value computed
/// on the side would be dropped where nothing reads that value.
Value checked(NodeImporter &n, Value x, Value valid, const Twine &rule) {
  return n.create<nn::CheckOp>(x, valid, n.builder.getStringAttr(rule));
}

/// Which of `rank` positions the 1-D `axes` name, as an i1 tensor [rank];
/// `x` comes back checked: each axis in [-rank, rank), none given twice.
Value membersOf(NodeImporter &n, Value &x, Value axes, int64_t rank) {
  int64_t count = NodeImporter::type(axes).getDimSize(0);
  Value wrapped = n.create<nn::WhereOp>(n.create<nn::LessOp>(axes, i64Scalar(n, 0)),
                                        n.create<nn::AddOp>(axes, i64Scalar(n, rank)), axes);
  // hits[p][i]: axis i names position p.
  Value hits = asI64(n, n.create<nn::EqualOp>(
                            iota(n, {rank, 1}),
                            n.create<nn::ReshapeOp>(wrapped, n.constI64({1, count}),
                                                    n.builder.getBoolAttr(false))));
  Value perPosition = n.create<nn::ReduceSumOp>(hits, n.builder.getDenseI64ArrayAttr({1}),
                                                n.builder.getBoolAttr(false));
  // Every axis names a position, and none twice.
  Value valid = n.create<nn::AndOp>(
      n.create<nn::EqualOp>(sumAll(n, perPosition), i64Scalar(n, count)),
      n.create<nn::LessEqualOp>(
          n.create<nn::ReduceMaxOp>(perPosition, n.builder.getDenseI64ArrayAttr({0}),
                                    n.builder.getBoolAttr(false)),
          i64Scalar(n, 1)));
  x = checked(n, x, valid,
              "axes must lie in [-" + Twine(rank) + ", " + Twine(rank) + ") and be distinct");
  return n.create<nn::GreaterOp>(perPosition, i64Scalar(n, 0));
}

/// The entries of `dims` ([r] i64) whose `members` entry is false, in order:
/// [kept].
Value keptDims(NodeImporter &n, Value dims, Value members, int64_t kept) {
  if (kept == 0)
    return n.constI64({});
  int64_t rank = NodeImporter::type(dims).getDimSize(0);
  // seen[j]: how many kept dims are at j or before; the p-th kept one is at
  // the number of positions that have seen at most p.
  Value seen = n.create<nn::CumSumOp>(asI64(n, n.create<nn::NotOp>(members)),
                                      n.builder.getI64IntegerAttr(0), n.builder.getBoolAttr(false),
                                      n.builder.getBoolAttr(false));
  Value before = n.create<nn::LessEqualOp>(
      n.create<nn::ReshapeOp>(seen, n.constI64({1, rank}), n.builder.getBoolAttr(false)),
      iota(n, {kept, 1}));
  Value at = n.create<nn::ReduceSumOp>(asI64(n, before), n.builder.getDenseI64ArrayAttr({1}),
                                       n.builder.getBoolAttr(false));
  return n.create<nn::GatherOp>(dims, at, n.builder.getI64IntegerAttr(0));
}

Value shapeOf(NodeImporter &n, Value x) {
  return n.create<nn::ShapeOp>(x, n.builder.getI64IntegerAttr(0),
                               n.builder.getI64IntegerAttr(NodeImporter::rank(x)));
}

/// x reshaped to `shape`, a 0 meaning an empty dim.
Value reshapeTo(NodeImporter &n, Value x, Value shape) {
  return n.create<nn::ReshapeOp>(x, shape, n.builder.getBoolAttr(true));
}
} // namespace

LogicalResult nnc::onnx_frontend::importSqueezeAt(NodeImporter &n, Value x, Value axes) {
  FailureOr<Value> list = listOf(n, axes, "axes");
  if (failed(list))
    return failure();
  int64_t rank = NodeImporter::rank(x), count = NodeImporter::type(*list).getDimSize(0);
  if (count > rank)
    return n.fail("squeezes " + Twine(count) + " axes of a rank-" + Twine(rank) + " tensor");
  Value members = membersOf(n, x, *list, rank);
  Value dims = shapeOf(n, x);
  Value notOne = n.create<nn::AndOp>(
      members, n.create<nn::NotOp>(n.create<nn::EqualOp>(dims, i64Scalar(n, 1))));
  x = checked(n, x, n.create<nn::EqualOp>(sumAll(n, asI64(n, notOne)), i64Scalar(n, 0)),
              "a squeezed dim must have size 1");
  n.setOutputs(reshapeTo(n, x, keptDims(n, dims, members, rank - count)));
  return success();
}

LogicalResult nnc::onnx_frontend::importUnsqueezeAt(NodeImporter &n, Value x, Value axes) {
  FailureOr<Value> list = listOf(n, axes, "axes");
  if (failed(list))
    return failure();
  int64_t rank = NodeImporter::rank(x);
  int64_t resultRank = rank + NodeImporter::type(*list).getDimSize(0);
  Value members = membersOf(n, x, *list, resultRank);
  Value shape;
  if (rank == 0) {
    shape = asI64(n, members); // all ones
  } else {
    // Position j takes the input's dim at (the number of non-axes up to j) - 1.
    Value from = n.create<nn::MaxOp>(
        n.create<nn::SubOp>(n.create<nn::CumSumOp>(asI64(n, n.create<nn::NotOp>(members)),
                                                   n.builder.getI64IntegerAttr(0),
                                                   n.builder.getBoolAttr(false),
                                                   n.builder.getBoolAttr(false)),
                            i64Scalar(n, 1)),
        i64Scalar(n, 0));
    Value dims = n.create<nn::GatherOp>(shapeOf(n, x), from, n.builder.getI64IntegerAttr(0));
    shape = n.create<nn::WhereOp>(members, i64Scalar(n, 1), dims);
  }
  n.setOutputs(reshapeTo(n, x, shape));
  return success();
}

FailureOr<Value> nnc::onnx_frontend::reduceAt(NodeImporter &n, Value x, Value axes, bool keepDims,
                                              function_ref<Value(Value, int64_t)> reduceKeeping,
                                              bool mean) {
  FailureOr<Value> list = listOf(n, axes, "axes");
  if (failed(list))
    return failure();
  auto type = NodeImporter::type(x);
  int64_t rank = type.getRank(), count = NodeImporter::type(*list).getDimSize(0);
  if (!type.hasStaticShape() || llvm::is_contained(type.getShape(), 0))
    return n.fail("reducing over axes given at run time needs static, nonzero dims");
  if (count > rank)
    return n.fail("reduces " + Twine(count) + " axes of a rank-" + Twine(rank) + " tensor");
  Value members = membersOf(n, x, *list, rank);
  // Reduce along each dim the axes name, the result broadcast back over it,
  // so every step has the input's shape; then keep one element of each
  // reduced dim.
  Value y = x;
  for (int64_t d = 0; d < rank; ++d) {
    if (type.getDimSize(d) == 1)
      continue;
    Value named = n.create<nn::GatherOp>(members, n.create<nn::ConstantOp>(cast<ElementsAttr>(
                                                      n.scalarAttr(i64Type(n), d))),
                                         n.builder.getI64IntegerAttr(0));
    y = n.create<nn::WhereOp>(named, reduceKeeping(y, d), y);
  }
  Value dims = shapeOf(n, x);
  if (mean) {
    // A mean is the sum divided once by the count reduced (integer means
    // would truncate at each step).
    Value reduced = n.create<nn::ReduceProdOp>(n.create<nn::WhereOp>(members, dims, i64Scalar(n, 1)),
                                               n.builder.getDenseI64ArrayAttr({0}),
                                               n.builder.getBoolAttr(false));
    y = n.create<nn::DivOp>(y, n.create<nn::CastOp>(reduced, TypeAttr::get(type.getElementType())));
  }
  Value ends = n.create<nn::WhereOp>(members, i64Scalar(n, 1), dims);
  SmallVector<int64_t> zeros(rank, 0), ones(rank, 1), all;
  for (int64_t d = 0; d < rank; ++d)
    all.push_back(d);
  Value result = n.create<nn::SliceOp>(y, n.constI64(zeros), ends, n.constI64(all), n.constI64(ones));
  if (!keepDims)
    result = reshapeTo(n, result, keptDims(n, dims, members, rank - count));
  return result;
}

LogicalResult nnc::onnx_frontend::importCumSumAt(NodeImporter &n, Value x, Value axis) {
  FailureOr<Value> given = scalarOf(n, axis, "axis");
  if (failed(given))
    return failure();
  int64_t rank = NodeImporter::rank(x);
  if (rank == 0)
    return n.fail("expected an input of rank 1 or more");
  Value wrapped = n.create<nn::WhereOp>(n.create<nn::LessOp>(*given, i64Scalar(n, 0)),
                                        n.create<nn::AddOp>(*given, i64Scalar(n, rank)), *given);
  Value inRange = n.create<nn::AndOp>(n.create<nn::GreaterEqualOp>(wrapped, i64Scalar(n, 0)),
                                      n.create<nn::LessOp>(wrapped, i64Scalar(n, rank)));
  x = checked(n, x, inRange, "axis must lie in [-" + Twine(rank) + ", " + Twine(rank) + ")");
  auto &b = n.builder;
  auto sumAlong = [&](int64_t d) {
    return n.create<nn::CumSumOp>(x, b.getI64IntegerAttr(d),
                                  b.getBoolAttr(n.attrInt("exclusive", 0) != 0),
                                  b.getBoolAttr(n.attrInt("reverse", 0) != 0));
  };
  // The sum along each dim, the one the axis names selected.
  Value result = sumAlong(rank - 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    result = n.create<nn::WhereOp>(n.create<nn::EqualOp>(wrapped, i64Scalar(n, d)), sumAlong(d),
                                   result);
  n.setOutputs(result);
  return success();
}

LogicalResult nnc::onnx_frontend::importSplitAt(NodeImporter &n, Value x, int64_t axis,
                                                Value sizes) {
  auto type = NodeImporter::type(sizes);
  if (type.getRank() == 1 && !type.isDynamicDim(0) && type.getDimSize(0) != (int64_t)n.numOutputs())
    return n.fail("expected one split size per output (" + Twine(n.numOutputs()) + "), got " +
                  Twine(type.getDimSize(0)));
  FailureOr<SmallVector<Value>> parts = splitAt(n, x, axis, sizes);
  if (failed(parts))
    return failure();
  n.setOutputs(*parts);
  return success();
}

FailureOr<SmallVector<Value>> nnc::onnx_frontend::splitAt(NodeImporter &n, Value x, int64_t axis,
                                                          Value sizes) {
  FailureOr<Value> list = listOf(n, sizes, "split sizes");
  if (failed(list))
    return failure();
  int64_t parts = NodeImporter::type(*list).getDimSize(0);
  auto &b = n.builder;
  Value dim = n.create<nn::ShapeOp>(x, b.getI64IntegerAttr(axis), b.getI64IntegerAttr(axis + 1));
  Value ends = n.create<nn::CumSumOp>(*list, b.getI64IntegerAttr(0), b.getBoolAttr(false),
                                      b.getBoolAttr(false));
  // Each part within the dim first, so that their sum cannot wrap around.
  auto extreme = [&](auto op) {
    return n.create<decltype(op)>(*list, b.getDenseI64ArrayAttr({0}), b.getBoolAttr(false));
  };
  Value size = sumAll(n, dim);
  Value valid = n.create<nn::AndOp>(
      n.create<nn::AndOp>(n.create<nn::GreaterEqualOp>(extreme(nn::ReduceMinOp()), i64Scalar(n, 0)),
                          n.create<nn::LessEqualOp>(extreme(nn::ReduceMaxOp()), size)),
      n.create<nn::EqualOp>(sumAll(n, *list), size));
  x = checked(n, x, valid, "split sizes must be non-negative and add up to the split dim's size");
  Value starts = n.create<nn::SubOp>(ends, *list);
  SmallVector<Value> outputs;
  for (int64_t i = 0; i < parts; ++i) {
    auto part = [&](Value v) {
      return n.create<nn::SliceOp>(v, n.constI64({i}), n.constI64({i + 1}), n.constI64({0}),
                                   n.constI64({1}));
    };
    outputs.push_back(n.create<nn::SliceOp>(x, part(starts), part(ends), n.constI64({axis}),
                                            n.constI64({1})));
  }
  return outputs;
}

FailureOr<DepthRamp> nnc::onnx_frontend::depthRampAt(NodeImporter &n, Value depth, int64_t axis,
                                                     int64_t rank) {
  auto type = NodeImporter::type(depth);
  if (!type.hasStaticShape() || type.getNumElements() != 1)
    return n.fail("depth must hold one element");
  auto &b = n.builder;
  Value d = depth;
  if (type.getRank() != 0)
    d = n.create<nn::ReshapeOp>(d, n.constI64({}), b.getBoolAttr(false));
  // Integers count in i64 (an unsigned depth stays positive); floats in
  // their own type: a fractional depth, which ONNX would truncate, is
  // refused rather than counted up to the next whole number.
  if (isa<IntegerType>(type.getElementType()))
    d = n.toI64(d);
  Type element = NodeImporter::type(d).getElementType();
  Value valid = n.create<nn::GreaterEqualOp>(d, n.scalar(element, 1));
  if (isa<FloatType>(element))
    valid = n.create<nn::AndOp>(valid, n.create<nn::EqualOp>(n.create<nn::FloorOp>(d), d));
  d = checked(n, d, valid, "depth must be a positive whole number");
  SmallVector<int64_t> rampShape(rank, 1);
  rampShape[axis] = -1;
  Value ramp = asI64(n, n.create<nn::RangeOp>(n.scalar(element, 0), d, n.scalar(element, 1)));
  ramp = n.create<nn::ReshapeOp>(ramp, n.constI64(rampShape), b.getBoolAttr(false));
  return DepthRamp{asI64(n, d), ramp};
}
