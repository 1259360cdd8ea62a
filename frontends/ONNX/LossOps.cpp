//===- LossOps.cpp - handlers for the loss ops ----------------------------===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss are spelled out in nn
// ops: pick each sample's class score with gather_elements, weight it, mask
// ignore_index, then reduce. Training derives gradients from the same ops.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

#include <cmath>

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
/// loss[n, d...] = -weight[t] * input[n, t, d...] with t = target[n, d...],
/// reduced as asked; ignored targets contribute nothing, to sums and weights.
FailureOr<Value> nllLoss(NodeImporter &n, Value input, Value target, Value weight) {
  auto &b = n.builder;
  std::string reduction = n.attrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return n.fail("unknown reduction '" + reduction + "'");
  Type element = getElementTypeOrSelf(input.getType());
  Type targetElement = getElementTypeOrSelf(target.getType());
  const onnx::AttributeProto *ignore = n.attr("ignore_index");
  Value mask, safeTarget = target;
  if (ignore) {
    mask = n.create<nn::NotOp>(n.create<nn::EqualOp>(target, n.scalar(targetElement, ignore->i())));
    safeTarget = n.create<nn::WhereOp>(mask, target, n.scalar(targetElement, 0));
  }
  Value picked = n.create<nn::GatherElementsOp>(
      input, n.create<nn::UnsqueezeOp>(safeTarget, b.getDenseI64ArrayAttr({1})), b.getI64IntegerAttr(1));
  Value loss = n.create<nn::NegOp>(n.create<nn::SqueezeOp>(picked, b.getDenseI64ArrayAttr({1})));
  Value w;
  if (weight)
    w = n.create<nn::GatherOp>(weight, safeTarget, b.getI64IntegerAttr(0));
  if (mask) {
    Value maskValue = n.create<nn::CastOp>(mask, TypeAttr::get(element));
    w = w ? n.create<nn::MulOp>(w, maskValue) : maskValue;
  }
  if (w)
    loss = n.create<nn::MulOp>(loss, w);
  if (reduction == "none")
    return loss;
  int64_t rank = NodeImporter::rank(loss);
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < rank; ++d)
    all.push_back(d);
  auto sum = [&](Value v) {
    return n.create<nn::ReduceSumOp>(v, b.getDenseI64ArrayAttr(all), b.getBoolAttr(false));
  };
  if (reduction == "sum")
    return sum(loss);
  if (!w)
    return n.create<nn::ReduceMeanOp>(loss, b.getDenseI64ArrayAttr(all), b.getBoolAttr(false));
  // total / sum(w), NaN when every target is ignored (0 / 0, as PyTorch and
  // ONNX's reference), but divided by 1 then so that the gradient is 0, as
  // PyTorch's, not NaN: a batch of padding must not poison the parameters.
  // One op per statement: argument order is unspecified.
  Value total = sum(loss);
  Value weights = sum(w);
  Value zero = n.scalar(element, 0);
  Value empty = n.create<nn::EqualOp>(weights, zero);
  Value one = n.scalar(element, 1);
  Value divisor = n.create<nn::WhereOp>(empty, one, weights);
  Value nanValue = n.scalar(element, std::nan(""));
  Value nan = n.create<nn::WhereOp>(empty, nanValue, zero);
  Value mean = n.create<nn::DivOp>(total, divisor);
  return n.create<nn::AddOp>(mean, nan);
}

LogicalResult importNLLLoss(NodeImporter &n) {
  FailureOr<Value> loss = nllLoss(n, n.input(0), n.input(1), n.input(2));
  if (failed(loss))
    return failure();
  n.setOutputs(*loss);
  return success();
}

LogicalResult importSoftmaxCrossEntropyLoss(NodeImporter &n) {
  Value scores = n.input(0);
  if (NodeImporter::rank(scores) < 2)
    return n.fail("expected scores of rank >= 2");
  Value logProb = n.create<nn::LogSoftmaxOp>(scores, n.builder.getI64IntegerAttr(1));
  FailureOr<Value> loss = nllLoss(n, logProb, n.input(1), n.input(2));
  if (failed(loss))
    return failure();
  n.setOutputs({*loss, logProb});
  return success();
}
} // namespace

void nnc::onnx_frontend::addLossHandlers(std::vector<HandlerEntry> &t) {
  constexpr int64_t M = kMaxOpset;
  t.insert(t.end(), {
      {"NegativeLogLikelihoodLoss", 12, M, importNLLLoss},
      {"SoftmaxCrossEntropyLoss", 12, M, importSoftmaxCrossEntropyLoss},
  });
}
