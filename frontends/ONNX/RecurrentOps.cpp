//===- RecurrentOps.cpp - RNN, GRU and LSTM, unrolled over the sequence ---===//
//
// A recurrent op is imported as its recurrence in nn ops: the input
// projection of all steps is one matmul, then each step is a matmul of the
// hidden state with R and the cell's gates. A static sequence length is
// written out step by step: the graph grows with it, but every step is an
// ordinary matmul and elementwise chain that the existing schedules (the CUDA
// target's too) tile and fuse. A dynamic one becomes an scf.for over the steps
// whose body is one step on static shapes (stepLoop); the batch and the sizes
// must be static.
//
// The formulas are ONNX's (RNN, GRU and LSTM operator specifications): gate
// order z, r, h for GRU and i, o, f, c for LSTM; W's and R's bias halves; clip
// on every gate's pre-activation; sequence_lens stops a batch entry's state at
// its length (a reverse direction starts at its length) and zeroes its later
// outputs.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
enum class Cell { RNN, GRU, LSTM };

struct Activation {
  std::string name; // lower case
  float alpha, beta;
};

/// Whether activation `name` reads alpha and beta, and their defaults.
struct ActivationInfo {
  const char *name;
  bool alpha, beta;
  float defaultAlpha, defaultBeta;
};
constexpr ActivationInfo kActivations[] = {
    {"relu", false, false, 0, 0},         {"tanh", false, false, 0, 0},
    {"sigmoid", false, false, 0, 0},      {"softsign", false, false, 0, 0},
    {"softplus", false, false, 0, 0},     {"affine", true, true, 1.0f, 0.0f},
    {"leakyrelu", true, false, 0.01f, 0}, {"thresholdedrelu", true, false, 1.0f, 0},
    {"scaledtanh", true, true, 1.0f, 1.0f}, {"hardsigmoid", true, true, 0.2f, 0.5f},
    {"elu", true, false, 1.0f, 0},
};

/// The node's activations for `directions` directions of `perDirection`
/// functions each (one list for both directions may be given once). alpha
/// and beta values are consumed in order by the functions that take them.
FailureOr<SmallVector<Activation>> readActivations(NodeImporter &n, ArrayRef<StringRef> defaults,
                                                   int64_t directions) {
  SmallVector<std::string> names;
  if (const onnx::AttributeProto *attr = n.attr("activations")) {
    for (const std::string &name : attr->strings())
      names.push_back(llvm::StringRef(name).lower());
  } else {
    for (int64_t d = 0; d < directions; ++d)
      for (StringRef name : defaults)
        names.push_back(name.lower());
  }
  size_t perDirection = defaults.size();
  if (names.size() == perDirection && directions == 2)
    names.append(SmallVector<std::string>(names));
  if (names.size() != perDirection * directions) {
    (void)n.fail("expected " + Twine(perDirection * directions) + " activations, got " +
                 Twine(names.size()));
    return failure();
  }
  SmallVector<float> alphas = n.attrFloats("activation_alpha").value_or(SmallVector<float>());
  SmallVector<float> betas = n.attrFloats("activation_beta").value_or(SmallVector<float>());
  size_t nextAlpha = 0, nextBeta = 0;
  SmallVector<Activation> result;
  for (const std::string &name : names) {
    const ActivationInfo *info = nullptr;
    for (const ActivationInfo &known : kActivations)
      if (name == known.name)
        info = &known;
    if (!info) {
      (void)n.fail("unsupported activation '" + name + "'");
      return failure();
    }
    Activation act{name, info->defaultAlpha, info->defaultBeta};
    if (info->alpha && nextAlpha < alphas.size())
      act.alpha = alphas[nextAlpha++];
    if (info->beta && nextBeta < betas.size())
      act.beta = betas[nextBeta++];
    result.push_back(act);
  }
  return result;
}

class Unroller {
public:
  Unroller(NodeImporter &n, Type element) : n(n), b(n.builder), element(element) {}

  Value scalar(double value) { return n.scalar(element, value); }
  Value zeros(ArrayRef<int64_t> shape) {
    return n.create<nn::ConstantOp>(cast<ElementsAttr>(n.scalarAttr(element, 0.0, shape)));
  }
  Value add(Value x, Value y) { return n.create<nn::AddOp>(x, y); }
  Value mul(Value x, Value y) { return n.create<nn::MulOp>(x, y); }
  Value sub(Value x, Value y) { return n.create<nn::SubOp>(x, y); }
  Value matmul(Value x, Value y) { return n.create<nn::MatMulOp>(x, y); }
  Value transpose(Value x, ArrayRef<int64_t> perm) {
    return n.create<nn::TransposeOp>(x, b.getDenseI64ArrayAttr(perm));
  }
  Value unsqueeze(Value x, int64_t axis) {
    return n.create<nn::UnsqueezeOp>(x, b.getDenseI64ArrayAttr({axis}));
  }
  /// Elements [begin, end) of dim `axis`.
  Value slice(Value x, int64_t axis, int64_t begin, int64_t end) {
    Value starts = n.constI64({begin});
    Value ends = n.constI64({end});
    Value axes = n.constI64({axis});
    Value steps = n.constI64({1});
    return n.create<nn::SliceOp>(x, starts, ends, axes, steps);
  }
  /// Index `index` of dim `axis`, that dim dropped.
  Value take(Value x, int64_t axis, int64_t index) {
    Value sliced = slice(x, axis, index, index + 1);
    return n.create<nn::SqueezeOp>(sliced, b.getDenseI64ArrayAttr({axis}));
  }
  /// `x` cut along dim 1 into `parts` equal pieces.
  SmallVector<Value> split(Value x, int64_t parts) {
    int64_t size = NodeImporter::type(x).getDimSize(1) / parts;
    Operation *op = n.createOp<nn::SplitOp>(x, b.getI64IntegerAttr(1),
                                            b.getDenseI64ArrayAttr(SmallVector<int64_t>(parts, size)));
    if ((int64_t)op->getNumResults() != parts) // a rejected split's stand-in
      return SmallVector<Value>(parts, op->getResult(0));
    return SmallVector<Value>(op->getResults());
  }
  Value concat(ArrayRef<Value> values, int64_t axis) {
    if (values.size() == 1)
      return values[0];
    return n.create<nn::ConcatOp>(ValueRange(values), b.getI64IntegerAttr(axis));
  }

  Value apply(const Activation &act, Value x) {
    const std::string &name = act.name;
    if (name == "relu")
      return n.create<nn::ReluOp>(x);
    if (name == "tanh")
      return n.create<nn::TanhOp>(x);
    if (name == "sigmoid")
      return n.create<nn::SigmoidOp>(x);
    if (name == "softsign")
      return n.create<nn::SoftsignOp>(x);
    if (name == "softplus")
      return n.create<nn::SoftplusOp>(x);
    if (name == "affine")
      return add(mul(x, scalar(act.alpha)), scalar(act.beta));
    if (name == "leakyrelu")
      return n.create<nn::LeakyReluOp>(x, b.getF32FloatAttr(act.alpha));
    if (name == "thresholdedrelu") {
      Value above = n.create<nn::GreaterOp>(x, scalar(act.alpha));
      return n.create<nn::WhereOp>(above, x, scalar(0));
    }
    if (name == "scaledtanh") {
      Value inner = mul(x, scalar(act.beta));
      return mul(n.create<nn::TanhOp>(inner), scalar(act.alpha));
    }
    if (name == "hardsigmoid")
      return n.create<nn::HardSigmoidOp>(x, b.getF32FloatAttr(act.alpha),
                                         b.getF32FloatAttr(act.beta));
    assert(name == "elu" && "readActivations admits no other");
    return n.create<nn::EluOp>(x, b.getF32FloatAttr(act.alpha));
  }

  /// `x` clipped to [-clip, clip] when the node sets `clip`.
  Value clipped(Value x) {
    if (!clip)
      return x;
    Value low = n.create<nn::MaxOp>(x, scalar(-*clip));
    return n.create<nn::MinOp>(low, scalar(*clip));
  }

  NodeImporter &n;
  OpBuilder &b;
  Type element;
  std::optional<float> clip;
};

/// The steps of direction `direction` of a recurrence whose sequence length
/// is known only at run time, as an scf.for over them. The loop carries the
/// hidden (and cell) state in two slots [2, batch, hidden], step s reading
/// slot s mod 2 and writing the other, and the outputs of all directions
/// [steps, directions, batch, hidden], each step inserting its row: every
/// update is an insertion into a loop-carried tensor, which bufferizes in
/// place. Its body holds static ops of one step, which the schedules treat
/// like the ops of a sample in a loop over a dynamic batch
/// ("nnc.batch_loop"). On return `h` and `c` are the final states and `*y`
/// the outputs with this direction's written.
template <typename CellStep, typename Mask>
LogicalResult stepLoop(NodeImporter &n, Value projected, int64_t direction, bool reverse,
                       int64_t batch, int64_t hidden, int64_t gates, Type lensElement,
                       CellStep &cellStep, Mask &mask, Value &h, Value &c, Value *y) {
  OpBuilder &b = n.builder;
  Location loc = n.loc;
  Type element = NodeImporter::type(projected).getElementType();
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  // Row `at` of a [rows, batch, width] tensor.
  auto row = [&](Value from, Value at, int64_t width) -> Value {
    return n.extractAt(from, {at}, RankedTensorType::get({batch, width}, element));
  };
  Value zero = index(0), one = index(1), two = index(2);
  Value steps = tensor::DimOp::create(b, loc, projected, 0);
  SmallVector<Value> inits{n.stateSlots(h)};
  if (c)
    inits.push_back(n.stateSlots(c));
  if (y)
    inits.push_back(*y);
  auto loop = scf::ForOp::create(b, loc, zero, steps, one, inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value s = loop.getInductionVar();
    Value t = reverse ? arith::SubIOp::create(b, loc, arith::SubIOp::create(b, loc, steps, one), s)
                            .getResult()
                      : s;
    Value current = arith::RemUIOp::create(b, loc, s, two);
    Value next = arith::RemUIOp::create(b, loc, arith::AddIOp::create(b, loc, s, one), two);
    ValueRange carried = loop.getRegionIterArgs();
    Value stepH = row(carried[0], current, hidden);
    Value stepC = c ? row(carried[1], current, hidden) : Value();
    auto [newH, newC] = cellStep(row(projected, t, gates * hidden), stepH, stepC);
    Value step;
    if (lensElement) {
      Value t64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), t);
      step = tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, b.getI64Type()),
                                            ValueRange{t64});
      if (lensElement != b.getI64Type())
        step = n.create<nn::CastOp>(step, TypeAttr::get(lensElement));
    }
    Value output;
    mask(step, output, stepH, stepC, newH, newC);
    if (n.rejected())
      return failure();
    SmallVector<Value> updated{n.insertAt(stepH, carried[0], {next})};
    if (c)
      updated.push_back(n.insertAt(stepC, carried[1], {next}));
    if (y)
      updated.push_back(n.insertAt(output, carried.back(), {t, b.getIndexAttr(direction)}));
    scf::YieldOp::create(b, loc, updated);
  }
  loop->setAttr("nnc.batch_loop", b.getUnitAttr());
  Value last = arith::RemUIOp::create(b, loc, steps, two);
  h = row(loop.getResult(0), last, hidden);
  if (c)
    c = row(loop.getResult(1), last, hidden);
  if (y)
    *y = loop.getResults().back();
  return success();
}

template <Cell cell> LogicalResult importRecurrent(NodeImporter &n) {
  constexpr int64_t gates = cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4;
  Value x = n.input(0), w = n.input(1), r = n.input(2), bias = n.input(3);
  Value lens = n.input(4), h0 = n.input(5);
  Value c0 = cell == Cell::LSTM ? n.input(6) : nullptr;
  Value peep = cell == Cell::LSTM ? n.input(7) : nullptr;
  auto rankIs = [](Value v, int64_t rank) { return !v || NodeImporter::rank(v) == rank; };
  if (!rankIs(x, 3) || !rankIs(w, 3) || !rankIs(r, 3))
    return n.fail("expected 3-D X, W and R");
  if (!rankIs(bias, 2) || !rankIs(lens, 1) || !rankIs(h0, 3) || !rankIs(c0, 3) || !rankIs(peep, 2))
    return n.fail("expected 2-D B and P, 1-D sequence_lens, 3-D initial_h and initial_c");

  int64_t layout = n.attrInt("layout", 0);
  if (layout != 0 && layout != 1)
    return n.fail("layout must be 0 or 1 (got " + Twine(layout) + ")");
  std::string direction = n.attrString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return n.fail("direction must be forward, reverse or bidirectional (got '" + direction + "')");
  int64_t directions = direction == "bidirectional" ? 2 : 1;

  Unroller u(n, NodeImporter::type(x).getElementType());
  if (layout == 1) { // batch first: [batch, seq, ...] to [seq, batch, ...]
    x = u.transpose(x, {1, 0, 2});
    if (h0)
      h0 = u.transpose(h0, {1, 0, 2});
    if (c0)
      c0 = u.transpose(c0, {1, 0, 2});
  }
  RankedTensorType xType = NodeImporter::type(x), rType = NodeImporter::type(r);
  // A sequence length known only at run time makes the recurrence a loop
  // over the steps; every other dim must be static.
  if (xType.isDynamicDim(1) || xType.isDynamicDim(2) ||
      !NodeImporter::type(w).hasStaticShape() || !rType.hasStaticShape())
    return n.fail("X's batch and input dims, W and R need static shapes (pin symbolic dims "
                  "with --dim; only the sequence length may be dynamic)");
  bool dynamicSteps = xType.isDynamicDim(0);
  int64_t steps = xType.getDimSize(0), batch = xType.getDimSize(1), inputSize = xType.getDimSize(2);
  int64_t hidden = rType.getDimSize(2);
  if ((steps == 0 && !dynamicSteps) || batch == 0 || inputSize == 0 || hidden == 0)
    return n.fail("X and R must have no zero-sized dims (got sequence " +
                  (dynamicSteps ? Twine("?") : Twine(steps)) + ", batch " +
                  Twine(batch) + ", input " + Twine(inputSize) + ", hidden " + Twine(hidden) + ")");
  if (n.attr("hidden_size") && n.attrInt("hidden_size", 0) != hidden)
    return n.fail("hidden_size " + Twine(n.attrInt("hidden_size", 0)) +
                  " does not match R's last dim " + Twine(hidden));
  auto expect = [&](Value v, StringRef what, ArrayRef<int64_t> shape) -> LogicalResult {
    if (!v || NodeImporter::type(v).getShape() == shape)
      return success();
    std::string dims;
    llvm::raw_string_ostream os(dims);
    llvm::interleave(shape, os, "x");
    return n.fail(what + " must have shape " + dims + " (its dims as ONNX's " +
                  n.node.op_type() + " defines them for this X, R and direction)");
  };
  if (failed(expect(w, "W", {directions, gates * hidden, inputSize})) ||
      failed(expect(r, "R", {directions, gates * hidden, hidden})) ||
      failed(expect(bias, "B", {directions, 2 * gates * hidden})) ||
      failed(expect(lens, "sequence_lens", {batch})) ||
      failed(expect(h0, "initial_h", {directions, batch, hidden})) ||
      failed(expect(c0, "initial_c", {directions, batch, hidden})) ||
      failed(expect(peep, "P", {directions, 3 * hidden})))
    return failure();
  if (lens && !isa<IntegerType>(NodeImporter::type(lens).getElementType()))
    return n.fail("sequence_lens must hold integers");
  Type element = xType.getElementType();
  if (!isa<FloatType>(element))
    return n.fail("X must hold floats");
  for (Value v : {w, r, bias, h0, c0, peep})
    if (v && NodeImporter::type(v).getElementType() != element)
      return n.fail("W, R, B, initial_h, initial_c and P must hold X's element type");

  if (const onnx::AttributeProto *clip = n.attr("clip")) {
    if (!(clip->f() > 0))
      return n.fail("clip must be positive (got " + std::to_string(clip->f()) + ")");
    u.clip = clip->f();
  }
  bool inputForget = cell == Cell::LSTM && n.attrInt("input_forget", 0) != 0;
  bool linearBeforeReset = cell == Cell::GRU && n.attrInt("linear_before_reset", 0) != 0;
  SmallVector<StringRef> defaults = cell == Cell::RNN   ? SmallVector<StringRef>{"Tanh"}
                                    : cell == Cell::GRU ? SmallVector<StringRef>{"Sigmoid", "Tanh"}
                                                        : SmallVector<StringRef>{"Sigmoid", "Tanh", "Tanh"};
  FailureOr<SmallVector<Activation>> acts = readActivations(n, defaults, directions);
  if (failed(acts))
    return failure();

  // A step t updates batch entry b only while t < sequence_lens[b]; lengths
  // that are constants covering every step need no mask.
  if (lens && !dynamicSteps) {
    if (std::optional<SmallVector<int64_t>> known = n.constInts(4);
        known && llvm::all_of(*known, [&](int64_t len) { return len >= steps; }))
      lens = nullptr;
  }
  Type lensElement = lens ? NodeImporter::type(lens).getElementType() : Type();

  // All steps' input projections at once: [steps * batch, input] x W^T.
  Value flatShape = n.constI64({dynamicSteps ? -1 : steps * batch, inputSize});
  Value flatX = n.create<nn::ReshapeOp>(x, flatShape, n.builder.getBoolAttr(false));

  SmallVector<Value> ys, lastH, lastC;
  // With a dynamic sequence length each direction's loop writes its outputs
  // into this [steps, directions, batch, hidden] tensor.
  Value dynamicY;
  if (dynamicSteps && n.hasOutput(0))
    dynamicY = tensor::EmptyOp::create(
        n.builder, n.loc, ArrayRef<int64_t>{ShapedType::kDynamic, directions, batch, hidden},
        xType.getElementType(), ValueRange{tensor::DimOp::create(n.builder, n.loc, x, 0)});
  for (int64_t d = 0; d < directions; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    ArrayRef<Activation> act = ArrayRef<Activation>(*acts).slice(d * defaults.size(), defaults.size());
    Value wT = u.transpose(u.take(w, 0, d), {1, 0});   // [input, gates * hidden]
    Value rd = u.take(r, 0, d);                         // [gates * hidden, hidden]
    Value projected = u.matmul(flatX, wT);              // [steps * batch, gates * hidden]
    Value recurrentBias; // GRU with linear_before_reset: R's h-gate bias, applied inside
    if (bias) {
      Value bd = u.take(bias, 0, d);
      Value wb = u.slice(bd, 0, 0, gates * hidden), rb = u.slice(bd, 0, gates * hidden, 2 * gates * hidden);
      if (linearBeforeReset) {
        recurrentBias = u.slice(rb, 0, 2 * hidden, 3 * hidden);
        rb = u.concat({u.slice(rb, 0, 0, 2 * hidden), u.zeros({hidden})}, 0);
      }
      projected = u.add(projected, u.add(wb, rb));
    }
    Value projShape = n.constI64({dynamicSteps ? -1 : steps, batch, gates * hidden});
    projected = n.create<nn::ReshapeOp>(projected, projShape, n.builder.getBoolAttr(false));

    // R^T; GRU's h gate multiplies (r * H) or adds its bias first, so it is apart.
    Value rT, rhT;
    if (cell == Cell::GRU) {
      rT = u.transpose(u.slice(rd, 0, 0, 2 * hidden), {1, 0});
      rhT = u.transpose(u.slice(rd, 0, 2 * hidden, 3 * hidden), {1, 0});
    } else {
      rT = u.transpose(rd, {1, 0});
    }
    Value pi, po, pf;
    if (peep) {
      Value pd = u.take(peep, 0, d);
      pi = u.slice(pd, 0, 0, hidden);
      po = u.slice(pd, 0, hidden, 2 * hidden);
      pf = u.slice(pd, 0, 2 * hidden, 3 * hidden);
    }

    Value h = h0 ? u.take(h0, 0, d) : u.zeros({batch, hidden});
    Value c = cell == Cell::LSTM ? (c0 ? u.take(c0, 0, d) : u.zeros({batch, hidden})) : Value();
    // One step: the new hidden and cell states from the step's projected
    // input xt [batch, gates * hidden] and the states before it.
    auto cellStep = [&](Value xt, Value h, Value c) -> std::pair<Value, Value> {
      Value newH, newC;
      if (cell == Cell::RNN) {
        newH = u.apply(act[0], u.clipped(u.add(xt, u.matmul(h, rT))));
      } else if (cell == Cell::GRU) {
        SmallVector<Value> xg = u.split(xt, 3);
        SmallVector<Value> hg = u.split(u.matmul(h, rT), 2);
        Value z = u.apply(act[0], u.clipped(u.add(xg[0], hg[0])));
        Value reset = u.apply(act[0], u.clipped(u.add(xg[1], hg[1])));
        Value recurrent;
        if (linearBeforeReset) {
          Value hr = u.matmul(h, rhT);
          if (recurrentBias)
            hr = u.add(hr, recurrentBias);
          recurrent = u.mul(reset, hr);
        } else {
          recurrent = u.matmul(u.mul(reset, h), rhT);
        }
        Value candidate = u.apply(act[1], u.clipped(u.add(xg[2], recurrent)));
        // (1 - z) * candidate + z * h
        newH = u.add(candidate, u.mul(z, u.sub(h, candidate)));
      } else {
        SmallVector<Value> g = u.split(u.add(xt, u.matmul(h, rT)), 4); // i, o, f, c
        Value gi = peep ? u.add(g[0], u.mul(pi, c)) : g[0];
        Value i = u.apply(act[0], u.clipped(gi));
        Value f;
        if (inputForget) {
          f = u.sub(u.scalar(1.0), i);
        } else {
          Value gf = peep ? u.add(g[2], u.mul(pf, c)) : g[2];
          f = u.apply(act[0], u.clipped(gf));
        }
        Value candidate = u.apply(act[1], u.clipped(g[3]));
        newC = u.add(u.mul(f, c), u.mul(i, candidate));
        Value go = peep ? u.add(g[1], u.mul(po, newC)) : g[1];
        Value o = u.apply(act[0], u.clipped(go));
        newH = u.mul(o, u.apply(act[2], newC));
      }
      return {newH, newC};
    };
    // A batch entry past its sequence_lens keeps its states and outputs
    // zeros: `step` is the step's index t, a 0-D tensor of lens' type.
    auto mask = [&](Value step, Value &output, Value &h, Value &c, Value newH, Value newC) {
      if (!lens) {
        output = h = newH;
        c = newC;
        return;
      }
      Value live = u.unsqueeze(n.create<nn::LessOp>(step, lens), 1); // [batch, 1]
      output = n.create<nn::WhereOp>(live, newH, u.scalar(0));
      h = n.create<nn::WhereOp>(live, newH, h);
      if (newC)
        c = n.create<nn::WhereOp>(live, newC, c);
    };
    if (dynamicSteps) {
      if (failed(stepLoop(n, projected, d, reverse, batch, hidden, gates, lensElement, cellStep,
                          mask, h, c, n.hasOutput(0) ? &dynamicY : nullptr)))
        return failure();
      lastH.push_back(u.unsqueeze(h, 0));
      if (c)
        lastC.push_back(u.unsqueeze(c, 0));
      continue;
    }
    SmallVector<Value> outputs(steps);
    for (int64_t s = 0; s < steps; ++s) {
      if (n.rejected()) // reported; the remaining steps would repeat it
        return failure();
      int64_t t = reverse ? steps - 1 - s : s;
      Value xt = u.take(projected, 0, t); // [batch, gates * hidden]
      auto [newH, newC] = cellStep(xt, h, c);
      Value step = lens ? n.create<nn::ConstantOp>(
                              cast<ElementsAttr>(n.scalarAttr(lensElement, (double)t)))
                        : Value();
      mask(step, outputs[t], h, c, newH, newC);
    }
    if (n.hasOutput(0)) {
      SmallVector<Value> stacked;
      for (Value y : outputs)
        stacked.push_back(u.unsqueeze(y, 0));
      ys.push_back(u.unsqueeze(u.concat(stacked, 0), 1)); // [steps, 1, batch, hidden]
    }
    lastH.push_back(u.unsqueeze(h, 0));
    if (c)
      lastC.push_back(u.unsqueeze(c, 0));
  }

  SmallVector<Value> results(3);
  if (n.hasOutput(0)) {
    results[0] = dynamicSteps ? dynamicY : u.concat(ys, 1); // [steps, directions, batch, hidden]
    if (layout == 1)
      results[0] = u.transpose(results[0], {2, 0, 1, 3});
  }
  results[1] = u.concat(lastH, 0); // [directions, batch, hidden]
  if (cell == Cell::LSTM)
    results[2] = u.concat(lastC, 0);
  for (Value &state : MutableArrayRef<Value>(results).drop_front())
    if (state && layout == 1)
      state = u.transpose(state, {1, 0, 2});
  if (cell != Cell::LSTM)
    results.pop_back();
  n.setOutputs(results);
  return success();
}
} // namespace

void nnc::onnx_frontend::addRecurrentHandlers(std::vector<HandlerEntry> &t) {
  constexpr int64_t M = kMaxOpset;
  t.insert(t.end(), {
      {"RNN", 7, M, importRecurrent<Cell::RNN>},
      {"GRU", 7, M, importRecurrent<Cell::GRU>},
      {"LSTM", 7, M, importRecurrent<Cell::LSTM>},
  });
}
