//===- ReduceOps.cpp - handlers for reductions and ArgMax/ArgMin ----------===//
//
// Reduce* axes moved from an attribute to an input (ReduceSum at 13, the
// others at 18); both become nn's sorted axes attribute. Empty axes reduce
// everything unless noop_with_empty_axes asks for the identity.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
template <typename Op> Handler reduce(int64_t axesInputSince) {
  return [axesInputSince](NodeImporter &n) -> LogicalResult {
    // Reducing what was reduced gives the reduction over both dims.
    // (Not so the sum of squares, or the log of a sum.)
    constexpr bool composes = !std::is_same_v<Op, nn::ReduceSumSquareOp> &&
                              !std::is_same_v<Op, nn::ReduceLogSumOp>;
    Value x = n.input(0);
    int64_t rank = NodeImporter::rank(x);
    SmallVector<int64_t> axes;
    // Axes in the other version's form would be silently ignored: reject them.
    if (n.opset < axesInputSince && n.input(1))
      return n.fail("axes are an attribute before opset " + Twine(axesInputSince));
    if (n.opset >= axesInputSince && n.attr("axes"))
      return n.fail("axes are an input from opset " + Twine(axesInputSince));
    if (n.opset < axesInputSince) {
      axes = n.attrInts("axes").value_or(SmallVector<int64_t>());
    } else if (n.input(1)) {
      auto values = n.constInts(1);
      // Axes given at run time; an empty list is known when compiling.
      auto axesType = NodeImporter::type(n.input(1));
      bool none = axesType.hasStaticShape() && axesType.getNumElements() == 0;
      if (!values && !none) {
        if (!composes)
          return n.fail("axes given at run time are not supported for ReduceSumSquare and "
                        "ReduceLogSum");
        bool keepDims = n.attrInt("keepdims", 1) != 0;
        constexpr bool mean = std::is_same_v<Op, nn::ReduceMeanOp>;
        using Step = std::conditional_t<mean, nn::ReduceSumOp, Op>;
        FailureOr<Value> result = reduceAt(
            n, x, n.input(1), keepDims,
            [&](Value y, int64_t d) {
              return n.create<Step>(y, n.builder.getDenseI64ArrayAttr({d}), n.builder.getBoolAttr(true));
            },
            mean);
        if (failed(result))
          return failure();
        n.setOutputs(*result);
        return success();
      }
      axes = values.value_or(SmallVector<int64_t>());
    }
    if (axes.empty()) {
      if (n.attrInt("noop_with_empty_axes", 0) != 0) {
        n.setOutputs(x);
        return success();
      }
      for (int64_t d = 0; d < rank; ++d)
        axes.push_back(d);
    }
    FailureOr<SmallVector<int64_t>> normalized = n.normalizeAxes(axes, rank);
    if (failed(normalized))
      return failure();
    n.setOutputs(n.create<Op>(x, n.builder.getDenseI64ArrayAttr(*normalized),
                              n.builder.getBoolAttr(n.attrInt("keepdims", 1) != 0)));
    return success();
  };
}

template <typename Op> LogicalResult importArg(NodeImporter &n) {
  Value x = n.input(0);
  FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", 0), NodeImporter::rank(x));
  if (failed(axis))
    return failure();
  auto &b = n.builder;
  n.setOutputs(n.create<Op>(x, b.getI64IntegerAttr(*axis),
                            b.getBoolAttr(n.attrInt("keepdims", 1) != 0),
                            b.getBoolAttr(n.attrInt("select_last_index", 0) != 0)));
  return success();
}
/// TopK: k from the attribute before opset 10, then from input 1 (which may
/// be known only at run time); always sorted (`sorted` = 0 allows any order).
LogicalResult importTopK(NodeImporter &n) {
  Value x = n.input(0);
  FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", -1), NodeImporter::rank(x));
  if (failed(axis))
    return failure();
  Value k;
  if (n.opset < 10) {
    if (!n.attr("k"))
      return n.fail("expected a 'k' attribute");
    k = n.constI64({n.attrInt("k", 0)});
  } else {
    k = n.toI64(n.input(1));
  }
  auto &b = n.builder;
  Operation *op = n.createOp<nn::TopKOp>(x, k, b.getI64IntegerAttr(*axis),
                                         b.getBoolAttr(n.attrInt("largest", 1) != 0));
  n.setOutputs(op->getResults());
  return success();
}
} // namespace

void nnc::onnx_frontend::addReduceHandlers(std::vector<HandlerEntry> &t) {
  constexpr int64_t M = kMaxOpset;
  t.insert(t.end(), {
      {"ReduceSum", 1, M, reduce<nn::ReduceSumOp>(13)},
      {"ReduceMean", 1, M, reduce<nn::ReduceMeanOp>(18)},
      {"ReduceMax", 1, M, reduce<nn::ReduceMaxOp>(18)},
      {"ReduceMin", 1, M, reduce<nn::ReduceMinOp>(18)},
      {"ReduceProd", 1, M, reduce<nn::ReduceProdOp>(18)},
      {"ReduceL1", 1, M, reduce<nn::ReduceL1Op>(18)},
      {"ReduceL2", 1, M, reduce<nn::ReduceL2Op>(18)},
      {"ReduceSumSquare", 1, M, reduce<nn::ReduceSumSquareOp>(18)},
      {"ReduceLogSum", 1, M, reduce<nn::ReduceLogSumOp>(18)},
      {"ReduceLogSumExp", 1, M, reduce<nn::ReduceLogSumExpOp>(18)},
      {"ArgMax", 1, M, importArg<nn::ArgMaxOp>},
      {"ArgMin", 1, M, importArg<nn::ArgMinOp>},
      {"TopK", 1, M, importTopK},
  });
}
