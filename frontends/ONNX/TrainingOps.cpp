//===- TrainingOps.cpp - ONNX's preview training optimizers ---------------===//
//
// Adagrad, Adam and Momentum (domain ai.onnx.preview.training) each update
// any number of tensors in one node: inputs R (learning rate) and T (step
// count), then the tensors, their gradients and their optimizer state, one
// group after the other; outputs the new tensors, then the new state. Each
// update is a few elementwise nn ops.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
/// The optimizer's common inputs, checked: `groups` groups of n tensors after R and T.
struct OptimizerInputs {
  Value rate, step; // R and T as scalars of the tensors' float type
  int64_t count;    // tensors updated
  Value tensor(NodeImporter &n, int64_t group, int64_t i) const { return n.input(2 + group * count + i); }
};

FailureOr<OptimizerInputs> readOptimizerInputs(NodeImporter &n, int64_t groups) {
  int64_t extra = (int64_t)n.numInputs() - 2;
  if (extra < groups || extra % groups != 0)
    return n.fail("expected R, T and " + Twine(groups) + " groups of tensors of one size (got " +
                  Twine(n.numInputs()) + " inputs)");
  if ((int64_t)n.numOutputs() > extra / groups * (groups - 1))
    return n.fail("expected at most " + Twine(extra / groups * (groups - 1)) + " outputs");
  OptimizerInputs in;
  in.count = extra / groups;
  Value first = n.input(2);
  Type element = getElementTypeOrSelf(first.getType());
  if (!isa<FloatType>(element))
    return n.fail("expected float tensors");
  for (int64_t i = 0; i < extra; ++i) {
    Value v = n.input(2 + i);
    if (!v)
      return n.fail("input " + Twine(2 + i) + " is missing");
    if (getElementTypeOrSelf(v.getType()) != element)
      return n.fail("expected every tensor of one float type");
  }
  for (int64_t g = 1; g < groups; ++g)
    for (int64_t i = 0; i < in.count; ++i)
      if (NodeImporter::type(in.tensor(n, g, i)).getShape() != NodeImporter::type(in.tensor(n, 0, i)).getShape())
        return n.fail("tensor " + Twine(i) + " and its gradient and state must have one shape");
  auto scalarInput = [&](size_t index, StringRef what) -> FailureOr<Value> {
    Value v = n.input(index);
    if (NodeImporter::type(v).getNumElements() != 1 || NodeImporter::rank(v) > 1)
      return n.fail("expected a scalar " + what);
    Value s = NodeImporter::rank(v) == 0
                  ? v
                  : n.create<nn::ReshapeOp>(v, n.constI64({}), n.builder.getBoolAttr(false));
    return n.create<nn::CastOp>(s, TypeAttr::get(element));
  };
  FailureOr<Value> rate = scalarInput(0, "learning rate R"), step = scalarInput(1, "step count T");
  if (failed(rate) || failed(step))
    return failure();
  in.rate = *rate;
  in.step = *step;
  return in;
}

/// norm_coefficient * x + g.
Value regularized(NodeImporter &n, Value x, Value g, float normCoefficient) {
  if (normCoefficient == 0)
    return g;
  Type element = getElementTypeOrSelf(x.getType());
  return n.create<nn::AddOp>(n.create<nn::MulOp>(n.scalar(element, normCoefficient), x), g);
}

LogicalResult importAdagrad(NodeImporter &n) {
  FailureOr<OptimizerInputs> in = readOptimizerInputs(n, 3);
  if (failed(in))
    return failure();
  float decay = n.attrFloat("decay_factor", 0), epsilon = n.attrFloat("epsilon", 1e-6f),
        norm = n.attrFloat("norm_coefficient", 0);
  Type element = getElementTypeOrSelf(in->rate.getType());
  // r / (1 + t * decay_factor)
  Value rate = n.create<nn::DivOp>(
      in->rate, n.create<nn::AddOp>(n.scalar(element, 1), n.create<nn::MulOp>(in->step, n.scalar(element, decay))));
  SmallVector<Value> xs, hs;
  for (int64_t i = 0; i < in->count; ++i) {
    Value x = in->tensor(n, 0, i), g = regularized(n, x, in->tensor(n, 1, i), norm);
    Value h = n.create<nn::AddOp>(in->tensor(n, 2, i), n.create<nn::MulOp>(g, g));
    Value denom = n.create<nn::AddOp>(n.create<nn::SqrtOp>(h), n.scalar(element, epsilon));
    xs.push_back(n.create<nn::SubOp>(x, n.create<nn::DivOp>(n.create<nn::MulOp>(rate, g), denom)));
    hs.push_back(h);
  }
  xs.append(hs);
  n.setOutputs(xs);
  return success();
}

LogicalResult importMomentum(NodeImporter &n) {
  FailureOr<OptimizerInputs> in = readOptimizerInputs(n, 3);
  if (failed(in))
    return failure();
  for (const char *required : {"alpha", "beta", "mode", "norm_coefficient"})
    if (!n.attr(required))
      return n.fail("attribute '" + Twine(required) + "' is required");
  std::string mode = n.attrString("mode", "");
  if (mode != "standard" && mode != "nesterov")
    return n.fail("unknown mode '" + mode + "' (expected standard or nesterov)");
  float alpha = n.attrFloat("alpha", 0), beta = n.attrFloat("beta", 0),
        norm = n.attrFloat("norm_coefficient", 0);
  Type element = getElementTypeOrSelf(in->rate.getType());
  // The gradient's coefficient is 1 at the first step (T = 0).
  Value first = n.create<nn::LessOp>(in->step, n.scalar(element, 0.5));
  Value gradScale = n.create<nn::WhereOp>(first, n.scalar(element, 1), n.scalar(element, beta));
  Value alphaValue = n.scalar(element, alpha);
  SmallVector<Value> xs, vs;
  for (int64_t i = 0; i < in->count; ++i) {
    Value x = in->tensor(n, 0, i), g = regularized(n, x, in->tensor(n, 1, i), norm);
    Value v = n.create<nn::AddOp>(n.create<nn::MulOp>(alphaValue, in->tensor(n, 2, i)),
                                  n.create<nn::MulOp>(gradScale, g));
    Value direction = mode == "standard"
                          ? v
                          : n.create<nn::AddOp>(g, n.create<nn::MulOp>(alphaValue, v));
    xs.push_back(n.create<nn::SubOp>(x, n.create<nn::MulOp>(in->rate, direction)));
    vs.push_back(v);
  }
  xs.append(vs);
  n.setOutputs(xs);
  return success();
}

LogicalResult importAdam(NodeImporter &n) {
  FailureOr<OptimizerInputs> in = readOptimizerInputs(n, 4);
  if (failed(in))
    return failure();
  float alpha = n.attrFloat("alpha", 0.9f), beta = n.attrFloat("beta", 0.999f),
        epsilon = n.attrFloat("epsilon", 1e-6f), norm = n.attrFloat("norm_coefficient", 0),
        normPost = n.attrFloat("norm_coefficient_post", 0);
  Type element = getElementTypeOrSelf(in->rate.getType());
  Value one = n.scalar(element, 1);
  // Bias correction from the first step on (T > 0): r * sqrt(1 - beta^t) / (1 - alpha^t).
  Value corrected = n.create<nn::DivOp>(
      n.create<nn::MulOp>(in->rate, n.create<nn::SqrtOp>(n.create<nn::SubOp>(
                                        one, n.create<nn::PowOp>(n.scalar(element, beta), in->step)))),
      n.create<nn::SubOp>(one, n.create<nn::PowOp>(n.scalar(element, alpha), in->step)));
  Value first = n.create<nn::LessOp>(in->step, n.scalar(element, 0.5));
  Value rate = n.create<nn::WhereOp>(first, in->rate, corrected);
  SmallVector<Value> xs, vs, hs;
  for (int64_t i = 0; i < in->count; ++i) {
    Value x = in->tensor(n, 0, i), g = regularized(n, x, in->tensor(n, 1, i), norm);
    Value v = n.create<nn::AddOp>(n.create<nn::MulOp>(n.scalar(element, alpha), in->tensor(n, 2, i)),
                                  n.create<nn::MulOp>(n.scalar(element, 1 - alpha), g));
    Value h = n.create<nn::AddOp>(n.create<nn::MulOp>(n.scalar(element, beta), in->tensor(n, 3, i)),
                                  n.create<nn::MulOp>(n.scalar(element, 1 - beta), n.create<nn::MulOp>(g, g)));
    Value denom = n.create<nn::AddOp>(n.create<nn::SqrtOp>(h), n.scalar(element, epsilon));
    Value updated = n.create<nn::SubOp>(x, n.create<nn::MulOp>(rate, n.create<nn::DivOp>(v, denom)));
    if (normPost != 0)
      updated = n.create<nn::MulOp>(n.scalar(element, 1 - normPost), updated);
    xs.push_back(updated);
    vs.push_back(v);
    hs.push_back(h);
  }
  xs.append(vs);
  xs.append(hs);
  n.setOutputs(xs);
  return success();
}
} // namespace

void nnc::onnx_frontend::addTrainingHandlers(std::vector<HandlerEntry> &t) {
  const char *domain = "ai.onnx.preview.training";
  t.insert(t.end(), {
      {"Adagrad", 1, 1, importAdagrad, domain},
      {"Momentum", 1, 1, importMomentum, domain},
      {"Adam", 1, 1, importAdam, domain},
  });
}
