//===- ElementwiseOps.cpp - handlers for elementwise ONNX ops -------------===//
//
// Unary math and activations, broadcasting binary ops, comparisons, logic,
// variadic Sum/Mean/Min/Max (chains of binary ops), Clip (max then min),
// Cast, Where, Identity, Dropout (inference), Softmax and LogSoftmax.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
template <typename Op> Handler unary() {
  return [](NodeImporter &n) {
    n.setOutputs(n.create<Op>(n.input(0)));
    return success();
  };
}

/// Binary ops take operands of one element type; the result broadcasts.
template <typename Op> Handler binary() {
  return [](NodeImporter &n) {
    Value lhs = n.input(0), rhs = n.input(1);
    if (getElementTypeOrSelf(lhs.getType()) != getElementTypeOrSelf(rhs.getType()))
      return n.fail("expected operands of one element type");
    n.setOutputs(n.create<Op>(lhs, rhs));
    return success();
  };
}

/// Sum, Mean, Min, Max: a left fold over any number of inputs.
template <typename Op> Handler variadic(bool mean = false) {
  return [mean](NodeImporter &n) {
    if (n.numInputs() == 0)
      return n.fail("expected at least one input");
    Value acc = n.input(0);
    for (size_t i = 1; i < n.numInputs(); ++i)
      acc = n.create<Op>(acc, n.input(i));
    if (mean && n.numInputs() > 1)
      acc = n.create<nn::DivOp>(acc, n.scalar(getElementTypeOrSelf(acc.getType()),
                                               (double)n.numInputs()));
    n.setOutputs(acc);
    return success();
  };
}

LogicalResult importPow(NodeImporter &n) {
  Value base = n.input(0), exponent = n.input(1);
  Type element = getElementTypeOrSelf(base.getType());
  Type exponentElement = getElementTypeOrSelf(exponent.getType());
  // Pow-12 allows an exponent of another numeric type; nn.pow takes one type.
  // An integer base with a float exponent is computed in float (4 ^ 0.5 = 2)
  // and converted back, as ONNX's reference does.
  if (isa<IntegerType>(element) && isa<FloatType>(exponentElement)) {
    Value power = n.create<nn::PowOp>(n.create<nn::CastOp>(base, TypeAttr::get(exponentElement)),
                                      exponent);
    n.setOutputs(n.create<nn::CastOp>(power, TypeAttr::get(element)));
    return success();
  }
  if (exponentElement != element)
    exponent = n.create<nn::CastOp>(exponent, TypeAttr::get(element));
  n.setOutputs(n.create<nn::PowOp>(base, exponent));
  return success();
}

LogicalResult importMod(NodeImporter &n) {
  bool fmod = n.attrInt("fmod", 0) != 0;
  if (!fmod && isa<FloatType>(getElementTypeOrSelf(n.input(0).getType())))
    return n.fail("fmod = 0 is only defined for integers");
  n.setOutputs(n.create<nn::ModOp>(n.input(0), n.input(1), n.builder.getBoolAttr(fmod)));
  return success();
}

LogicalResult importLeakyRelu(NodeImporter &n) {
  n.setOutputs(n.create<nn::LeakyReluOp>(n.input(0), n.builder.getF32FloatAttr(n.attrFloat("alpha", 0.01f))));
  return success();
}

LogicalResult importElu(NodeImporter &n) {
  n.setOutputs(n.create<nn::EluOp>(n.input(0), n.builder.getF32FloatAttr(n.attrFloat("alpha", 1.0f))));
  return success();
}

LogicalResult importSelu(NodeImporter &n) {
  n.setOutputs(n.create<nn::SeluOp>(
      n.input(0), n.builder.getF32FloatAttr(n.attrFloat("alpha", 1.67326319217681884765625f)),
      n.builder.getF32FloatAttr(n.attrFloat("gamma", 1.05070102214813232421875f))));
  return success();
}

LogicalResult importHardSigmoid(NodeImporter &n) {
  n.setOutputs(n.create<nn::HardSigmoidOp>(n.input(0),
                                           n.builder.getF32FloatAttr(n.attrFloat("alpha", 0.2f)),
                                           n.builder.getF32FloatAttr(n.attrFloat("beta", 0.5f))));
  return success();
}

/// IsNaN(x) = !(x == x): only NaN compares unequal to itself.
LogicalResult importIsNaN(NodeImporter &n) {
  Value x = n.input(0);
  n.setOutputs(n.create<nn::NotOp>(n.create<nn::EqualOp>(x, x)));
  return success();
}

LogicalResult importIsInf(NodeImporter &n) {
  Value x = n.input(0);
  Type element = getElementTypeOrSelf(x.getType());
  bool positive = n.attrInt("detect_positive", 1) != 0, negative = n.attrInt("detect_negative", 1) != 0;
  auto equals = [&](double v) { return n.create<nn::EqualOp>(x, n.scalar(element, v)); };
  Value result;
  if (positive && negative)
    result = n.create<nn::OrOp>(equals(INFINITY), equals(-INFINITY));
  else if (positive || negative)
    result = equals(positive ? INFINITY : -INFINITY);
  else // detects nothing: x is never both +inf and -inf
    result = n.create<nn::AndOp>(equals(INFINITY), equals(-INFINITY));
  n.setOutputs(result);
  return success();
}

/// ThresholdedRelu(x) = x > alpha ? x : 0
LogicalResult importThresholdedRelu(NodeImporter &n) {
  Value x = n.input(0);
  Type element = getElementTypeOrSelf(x.getType());
  Value above = n.create<nn::GreaterOp>(x, n.scalar(element, n.attrFloat("alpha", 1.0f)));
  n.setOutputs(n.create<nn::WhereOp>(above, x, n.scalar(element, 0)));
  return success();
}

/// Shrink(x) = x < -lambd ? x + bias : x > lambd ? x - bias : 0
LogicalResult importShrink(NodeImporter &n) {
  Value x = n.input(0);
  Type original = getElementTypeOrSelf(x.getType());
  // The float bounds and bias apply to integers too: compute in f64, convert back.
  bool isInt = isa<IntegerType>(original);
  Type element = isInt ? n.builder.getF64Type() : original;
  if (isInt)
    x = n.create<nn::CastOp>(x, TypeAttr::get(element));
  float lambd = n.attrFloat("lambd", 0.5f), bias = n.attrFloat("bias", 0.0f);
  Value low = n.create<nn::LessOp>(x, n.scalar(element, -lambd));
  Value high = n.create<nn::GreaterOp>(x, n.scalar(element, lambd));
  Value zero = n.scalar(element, 0);
  Value upper = n.create<nn::WhereOp>(high, n.create<nn::SubOp>(x, n.scalar(element, bias)), zero);
  Value y = n.create<nn::WhereOp>(low, n.create<nn::AddOp>(x, n.scalar(element, bias)), upper);
  n.setOutputs(isInt ? n.create<nn::CastOp>(y, TypeAttr::get(original)) : y);
  return success();
}

/// PRelu(x, slope) = x < 0 ? slope * x : x, with the slope broadcast to x.
LogicalResult importPRelu(NodeImporter &n) {
  Value x = n.input(0), slope = n.input(1);
  Type element = getElementTypeOrSelf(x.getType());
  Value negative = n.create<nn::LessOp>(x, n.scalar(element, 0));
  n.setOutputs(n.create<nn::WhereOp>(negative, n.create<nn::MulOp>(x, slope), x));
  return success();
}

/// Celu(x) = max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
LogicalResult importCelu(NodeImporter &n) {
  Value x = n.input(0);
  Type element = getElementTypeOrSelf(x.getType());
  float alpha = n.attrFloat("alpha", 1.0f);
  Value zero = n.scalar(element, 0);
  Value e = n.create<nn::ExpOp>(n.create<nn::DivOp>(x, n.scalar(element, alpha)));
  Value neg = n.create<nn::MulOp>(n.create<nn::SubOp>(e, n.scalar(element, 1)), n.scalar(element, alpha));
  n.setOutputs(n.create<nn::AddOp>(n.create<nn::MaxOp>(x, zero), n.create<nn::MinOp>(neg, zero)));
  return success();
}

/// Cast (and CastLike) of `x` to `element`: text to and from numbers reads
/// and writes it (abi.h's nnc_abi_strings_t); bool and the 16-bit floats
/// have no text form in nnc.
LogicalResult importCastTo(NodeImporter &n, Value x, Type element) {
  Type from = getElementTypeOrSelf(x.getType());
  bool fromText = isa<nn::StringType>(from), toText = isa<nn::StringType>(element);
  if (fromText != toText) {
    Type number = fromText ? element : from;
    bool written = number.isF32() || number.isF64() ||
                   (isa<IntegerType>(number) && !number.isInteger(1));
    if (!written) {
      std::string name = number.isInteger(1) ? "bool" : "";
      llvm::raw_string_ostream os(name);
      if (name.empty())
        os << number;
      return n.fail(std::string("cast ") + (fromText ? "from STRING to " : "to STRING from ") +
                    name + " is not supported (only f32, f64 and integers read and write text)");
    }
  }
  n.setOutputs(from == element ? x : n.create<nn::CastOp>(x, TypeAttr::get(element)));
  return success();
}

/// CastLike: Cast to the element type of the second input.
LogicalResult importCastLike(NodeImporter &n) {
  return importCastTo(n, n.input(0), getElementTypeOrSelf(n.input(1).getType()));
}

LogicalResult importBitShift(NodeImporter &n) {
  std::string direction = n.attrString("direction", "");
  Value x = n.input(0), y = n.input(1);
  if (getElementTypeOrSelf(x.getType()) != getElementTypeOrSelf(y.getType()))
    return n.fail("expected operands of one element type");
  if (direction == "LEFT")
    n.setOutputs(n.create<nn::ShiftLeftOp>(x, y));
  else if (direction == "RIGHT")
    n.setOutputs(n.create<nn::ShiftRightOp>(x, y));
  else
    return n.fail("expected direction 'LEFT' or 'RIGHT' (got '" + direction + "')");
  return success();
}

/// Clip-6: bounds are attributes, float only.
LogicalResult importClipAttrs(NodeImporter &n) {
  Value x = n.input(0);
  Type element = getElementTypeOrSelf(x.getType());
  if (n.attr("min"))
    x = n.create<nn::MaxOp>(x, n.scalar(element, n.attrFloat("min", 0)));
  if (n.attr("max"))
    x = n.create<nn::MinOp>(x, n.scalar(element, n.attrFloat("max", 0)));
  n.setOutputs(x);
  return success();
}

/// Clip-11+: optional scalar bound inputs.
LogicalResult importClip(NodeImporter &n) {
  Value x = n.input(0);
  for (size_t i : {1, 2}) {
    Value bound = n.input(i);
    if (!bound)
      continue;
    if (NodeImporter::rank(bound) != 0)
      return n.fail("expected scalar bounds");
    x = i == 1 ? n.create<nn::MaxOp>(x, bound) : n.create<nn::MinOp>(x, bound);
  }
  n.setOutputs(x);
  return success();
}

LogicalResult importCast(NodeImporter &n) {
  int64_t to = n.attrInt("to", 0);
  Type element = importValueElementType(*n.builder.getContext(), to);
  if (!element)
    return n.fail("cast to " + dataTypeName(to) + " is not supported");
  return importCastTo(n, n.input(0), element);
}

LogicalResult importWhere(NodeImporter &n) {
  n.setOutputs(n.create<nn::WhereOp>(n.input(0), n.input(1), n.input(2)));
  return success();
}

LogicalResult importIdentity(NodeImporter &n) {
  n.setOutputs(n.input(0));
  return success();
}

/// Dropout: nn.dropout, the identity at inference, which training turns into
/// a random mask; the mask output, if asked for, is inference's: every
/// element kept, all true, or all ones of the input's type before Dropout-10.
/// A node in training mode with a ratio of 0 drops nothing, so it is the
/// identity too (PyTorch exports one for every F.dropout(p=0.0,
/// training=True), torchvision's Swin Transformer among them).
LogicalResult importDropout(NodeImporter &n) {
  Value x = n.input(0);
  // The ratio: an attribute before Dropout-12, then an optional input.
  std::optional<double> ratio = 0.5;
  if (n.opset < 12) {
    ratio = n.attrFloat("ratio", 0.5f);
  } else if (n.input(1)) {
    ratio.reset();
    DenseFPElementsAttr value;
    if (matchPattern(n.input(1), m_Constant(&value)) && value.getNumElements() == 1)
      ratio = (*value.getValues<APFloat>().begin()).convertToDouble();
  }
  if (n.opset >= 12 && n.input(2)) {
    auto training = n.constInts(2);
    if (!training)
      return n.fail("training_mode must be a constant");
    if (!training->empty() && (*training)[0] && ratio != 0.0)
      return n.fail("training_mode = true with a ratio other than a constant 0 is not "
                    "supported (dropout is imported for inference; nnc --train trains it)");
  }
  SmallVector<Value> outputs{x};
  if (isa<FloatType>(getElementTypeOrSelf(x.getType())))
    outputs[0] = n.create<nn::DropoutOp>(
        x, ratio ? n.builder.getF64FloatAttr(*ratio) : FloatAttr());
  if (n.hasOutput(1)) {
    Value shape = n.create<nn::ShapeOp>(x, n.builder.getI64IntegerAttr(0),
                                        n.builder.getI64IntegerAttr(NodeImporter::rank(x)));
    Type maskElement = n.opset >= 10 ? n.builder.getI1Type() : getElementTypeOrSelf(x.getType());
    outputs.push_back(n.create<nn::ConstantOfShapeOp>(
        shape, cast<ElementsAttr>(n.scalarAttr(maskElement, 1, {1}))));
  }
  n.setOutputs(outputs);
  return success();
}

/// Softmax-13+: over one axis (default -1).
template <typename Op> Handler softmax13() {
  return [](NodeImporter &n) {
    Value x = n.input(0);
    FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", -1), NodeImporter::rank(x));
    if (failed(axis))
      return failure();
    n.setOutputs(n.create<Op>(x, n.builder.getI64IntegerAttr(*axis)));
    return success();
  };
}

/// Softmax before 13: over all dims from `axis` (default 1), as if flattened to 2-D.
template <typename Op> Handler softmax1() {
  return [](NodeImporter &n) {
    Value x = n.input(0);
    int64_t rank = NodeImporter::rank(x);
    FailureOr<int64_t> axis = n.normalizeAxis(n.attrInt("axis", 1), std::max<int64_t>(rank, 1));
    if (failed(axis))
      return failure();
    if (*axis == rank - 1) {
      n.setOutputs(n.create<Op>(x, n.builder.getI64IntegerAttr(*axis)));
      return success();
    }
    Value flat = n.create<nn::FlattenOp>(x, n.builder.getI64IntegerAttr(*axis));
    Value y = n.create<Op>(flat, n.builder.getI64IntegerAttr(1));
    Value shape = n.create<nn::ShapeOp>(x, n.builder.getI64IntegerAttr(0),
                                        n.builder.getI64IntegerAttr(rank));
    n.setOutputs(n.create<nn::ReshapeOp>(y, shape, n.builder.getBoolAttr(false)));
    return success();
  };
}
} // namespace

void nnc::onnx_frontend::addElementwiseHandlers(std::vector<HandlerEntry> &t) {
  constexpr int64_t M = kMaxOpset;
  t.insert(t.end(), {
      {"Sqrt", 6, M, unary<nn::SqrtOp>()},
      {"Exp", 6, M, unary<nn::ExpOp>()},
      {"Log", 6, M, unary<nn::LogOp>()},
      {"Erf", 9, M, unary<nn::ErfOp>()},
      {"Sigmoid", 6, M, unary<nn::SigmoidOp>()},
      {"Tanh", 6, M, unary<nn::TanhOp>()},
      {"Softplus", 1, M, unary<nn::SoftplusOp>()},
      {"HardSwish", 14, M, unary<nn::HardSwishOp>()},
      {"Floor", 6, M, unary<nn::FloorOp>()},
      {"Ceil", 6, M, unary<nn::CeilOp>()},
      {"Round", 11, M, unary<nn::RoundOp>()},
      {"Reciprocal", 6, M, unary<nn::ReciprocalOp>()},
      {"Sin", 7, M, unary<nn::SinOp>()},
      {"Cos", 7, M, unary<nn::CosOp>()},
      {"Tan", 7, M, unary<nn::TanOp>()},
      {"Asin", 7, M, unary<nn::AsinOp>()},
      {"Acos", 7, M, unary<nn::AcosOp>()},
      {"Atan", 7, M, unary<nn::AtanOp>()},
      {"Sinh", 9, M, unary<nn::SinhOp>()},
      {"Cosh", 9, M, unary<nn::CoshOp>()},
      {"Asinh", 9, M, unary<nn::AsinhOp>()},
      {"Acosh", 9, M, unary<nn::AcoshOp>()},
      {"Atanh", 9, M, unary<nn::AtanhOp>()},
      {"Softsign", 1, M, unary<nn::SoftsignOp>()},
      {"IsNaN", 9, M, importIsNaN},
      {"IsInf", 10, M, importIsInf},
      {"ThresholdedRelu", 10, M, importThresholdedRelu},
      {"Shrink", 9, M, importShrink},
      {"PRelu", 7, M, importPRelu},
      {"Celu", 12, M, importCelu},
      {"CastLike", 15, M, importCastLike},
      {"Neg", 6, M, unary<nn::NegOp>()},
      {"Abs", 6, M, unary<nn::AbsOp>()},
      {"Sign", 9, M, unary<nn::SignOp>()},
      {"Relu", 6, M, unary<nn::ReluOp>()},
      {"Not", 1, M, unary<nn::NotOp>()},
      {"LeakyRelu", 6, M, importLeakyRelu},
      {"Elu", 6, M, importElu},
      {"Selu", 6, M, importSelu},
      {"HardSigmoid", 6, M, importHardSigmoid},
      {"Add", 7, M, binary<nn::AddOp>()},
      {"Sub", 7, M, binary<nn::SubOp>()},
      {"Mul", 7, M, binary<nn::MulOp>()},
      {"Div", 7, M, binary<nn::DivOp>()},
      {"Pow", 7, M, importPow},
      {"Mod", 10, M, importMod},
      {"BitShift", 11, M, importBitShift},
      {"And", 7, M, binary<nn::AndOp>()},
      {"Or", 7, M, binary<nn::OrOp>()},
      {"Xor", 7, M, binary<nn::XorOp>()},
      {"Equal", 7, M, binary<nn::EqualOp>()},
      {"Less", 7, M, binary<nn::LessOp>()},
      {"Greater", 7, M, binary<nn::GreaterOp>()},
      {"LessOrEqual", 12, M, binary<nn::LessEqualOp>()},
      {"GreaterOrEqual", 12, M, binary<nn::GreaterEqualOp>()},
      {"Sum", 6, M, variadic<nn::AddOp>()},
      {"Mean", 6, M, variadic<nn::AddOp>(/*mean=*/true)},
      {"Max", 6, M, variadic<nn::MaxOp>()},
      {"Min", 6, M, variadic<nn::MinOp>()},
      {"Clip", 6, 10, importClipAttrs},
      {"Clip", 11, M, importClip},
      {"Cast", 6, M, importCast},
      {"Where", 9, M, importWhere},
      {"Identity", 1, M, importIdentity},
      {"Dropout", 7, M, importDropout},
      {"Softmax", 1, 12, softmax1<nn::SoftmaxOp>()},
      {"Softmax", 13, M, softmax13<nn::SoftmaxOp>()},
      {"LogSoftmax", 1, 12, softmax1<nn::LogSoftmaxOp>()},
      {"LogSoftmax", 13, M, softmax13<nn::LogSoftmaxOp>()},
  });
}
