//===- ControlFlowOps.cpp - Loop and Scan ---------------------------------===//
//
// Loop and Scan run a body graph once per iteration. When the number of
// iterations is known when compiling, nnc imports the body once per
// iteration, in order, each copy reading the values the one before computed:
// the iterations become a straight line of nn ops, which the graph stage
// folds and the schedules tile like any other (RNN, GRU and LSTM of a static
// length are unrolled the same way, RecurrentOps.cpp): Scan's sequence length
// from its inputs' static shapes; Loop's trip count and condition as
// constants, or folded to constants from them. A count above kMaxIterations
// is refused (the graph grows with each). A Loop whose trip count or initial
// condition is known only at run time becomes an scf.for with the body
// imported once (importRuntimeLoop); one whose body computes its condition
// from the data, an scf.while. A Scan over a sequence length known only at
// run time becomes an scf.for over the steps (importRuntimeScan).
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
/// The most iterations unrolled: each copies the body into the graph.
constexpr int64_t kMaxIterations = 4096;
/// The largest constant trip count that sizes a while loop's scan outputs:
/// beyond it, the count is a stand-in for "no bound" (INT64_MAX).
constexpr int64_t kMaxBoundingTrips = std::numeric_limits<int32_t>::max();

/// The value of a one-element integer or boolean constant, if `value` is one.
std::optional<int64_t> constantScalar(Value value) {
  DenseIntElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)) || attr.getNumElements() != 1)
    return std::nullopt;
  APInt v = *attr.value_begin<APInt>();
  return v.getBitWidth() == 1 ? (int64_t)v.getZExtValue() : v.getSExtValue();
}

/// `x` cut into its `count` single elements along `axis`, that dim dropped.
SmallVector<Value> elementsAlong(NodeImporter &n, Value x, int64_t axis, int64_t count) {
  return n.cut(x, axis, SmallVector<int64_t>(count, 1), /*squeeze=*/true);
}

/// Whether every one of an output's per-iteration values has the first's
/// type, as stacking them needs; an error naming `what` otherwise.
LogicalResult sameTypes(NodeImporter &n, ArrayRef<Value> values, const Twine &what) {
  for (auto [t, v] : llvm::enumerate(values))
    if (v.getType() != values.front().getType()) {
      std::string first, later;
      llvm::raw_string_ostream(first) << values.front().getType();
      llvm::raw_string_ostream(later) << v.getType();
      return n.fail(what + " is " + first + " in the first iteration but " + later +
                    " in iteration " + Twine(t) + "; stacking needs one shape");
    }
  return success();
}

/// An attribute list of `count` entries, each defaulting to `otherwise`.
FailureOr<SmallVector<int64_t>> perInput(NodeImporter &n, StringRef name, size_t count,
                                        int64_t otherwise) {
  std::optional<SmallVector<int64_t>> given = n.attrInts(name);
  if (!given)
    return SmallVector<int64_t>(count, otherwise);
  if (given->size() != count)
    return n.fail(Twine(name) + " has " + Twine(given->size()) + " entries for " + Twine(count) +
                  " inputs or outputs");
  return *given;
}

/// Scan's output axes and directions for `count` scan outputs: zeros when
/// absent, an error naming them when their lengths differ.
LogicalResult scanOutputAttributes(NodeImporter &n, size_t count,
                                   std::optional<SmallVector<int64_t>> &axes,
                                   std::optional<SmallVector<int64_t>> &directions) {
  if (!axes)
    axes = SmallVector<int64_t>(count, 0);
  if (!directions)
    directions = SmallVector<int64_t>(count, 0);
  if (axes->size() != count || directions->size() != count)
    return n.fail("scan_output_axes and scan_output_directions need one entry per scan output (" +
                  Twine(count) + ")");
  return success();
}

/// Whether a value carried through a loop of a run-time length (`what`, of
/// op `op`) keeps its type from `before` to `after`; an error otherwise.
LogicalResult keepsType(NodeImporter &n, Value before, Value after, const Twine &what,
                        StringRef op) {
  if (before.getType() == after.getType())
    return success();
  std::string from, to;
  llvm::raw_string_ostream(from) << before.getType();
  llvm::raw_string_ostream(to) << after.getType();
  return n.fail(what + " is " + from + " but the body makes it " + to + "; a " + op +
                " of a run-time length needs one static type");
}

/// Scan's iterations over sequences of `length`: `states` threaded through
/// the body, `scans` cut along `inAxes` (read backwards where `inDirections`
/// is 1). Returns the final states, then each scan output stacked along its
/// axis of `outAxes` (written backwards where `outDirections` is 1).
FailureOr<SmallVector<Value>> scanIterations(NodeImporter &n, SmallVector<Value> states,
                                             ArrayRef<Value> scans, int64_t length,
                                             ArrayRef<int64_t> inAxes, ArrayRef<int64_t> inDirections,
                                             std::optional<SmallVector<int64_t>> outAxes,
                                             std::optional<SmallVector<int64_t>> outDirections) {
  SmallVector<SmallVector<Value>> elements;
  for (auto [x, axis] : llvm::zip(scans, inAxes))
    elements.push_back(elementsAlong(n, x, axis, length));
  size_t numStates = states.size();
  SmallVector<SmallVector<Value>> scanned; // per scan output, per iteration
  for (int64_t t = 0; t < length; ++t) {
    SmallVector<Value> inputs(states);
    for (auto [parts, direction] : llvm::zip(elements, inDirections))
      inputs.push_back(parts[direction ? length - 1 - t : t]);
    FailureOr<SmallVector<Value>> outputs = n.importSubgraph("body", inputs);
    if (failed(outputs))
      return failure();
    if (outputs->size() < numStates)
      return n.fail("its body has " + Twine(outputs->size()) + " outputs for " + Twine(numStates) +
                    " state variables");
    states.assign(outputs->begin(), outputs->begin() + numStates);
    scanned.resize(outputs->size() - numStates);
    for (auto [list, v] : llvm::zip(scanned, llvm::drop_begin(*outputs, numStates)))
      list.push_back(v);
  }
  if (failed(scanOutputAttributes(n, scanned.size(), outAxes, outDirections)))
    return failure();
  SmallVector<Value> results(states);
  for (auto [k, list] : llvm::enumerate(scanned))
    if (failed(sameTypes(n, list, "its scan output " + Twine(k))))
      return failure();
  for (auto [list, axis, direction] : llvm::zip(scanned, *outAxes, *outDirections)) {
    int64_t rank = NodeImporter::type(list.front()).getRank() + 1;
    if (axis < -rank || axis >= rank)
      return n.fail("scan output axis " + Twine(axis) + " is out of range for rank " + Twine(rank));
    if (direction)
      std::reverse(list.begin(), list.end());
    results.push_back(n.join(list, axis < 0 ? axis + rank : axis, /*newAxis=*/true));
  }
  return results;
}

/// The static length of every scan input along its axis (normalized in
/// place), kDynamic when one is known only at run time, or an error naming
/// the problem.
FailureOr<int64_t> sequenceLength(NodeImporter &n, ArrayRef<Value> scans, SmallVector<int64_t> &axes) {
  std::optional<int64_t> length;
  bool dynamic = false;
  for (auto [x, axis] : llvm::zip(scans, axes)) {
    auto type = NodeImporter::type(x);
    int64_t rank = type.getRank();
    if (axis < -rank || axis >= rank)
      return n.fail("scan input axis " + Twine(axis) + " is out of range for rank " + Twine(rank));
    if (axis < 0)
      axis += rank;
    if (type.isDynamicDim(axis))
      dynamic = true;
    else if (length && *length != type.getDimSize(axis))
      return n.fail("its scan inputs have sequence lengths " + Twine(*length) + " and " +
                    Twine(type.getDimSize(axis)));
    else
      length = type.getDimSize(axis);
  }
  if (dynamic)
    return ShapedType::kDynamic;
  if (!length || *length == 0)
    return n.fail("a Scan needs at least one scan input of nonzero length");
  if (*length > kMaxIterations)
    return n.fail("its sequence of " + Twine(*length) + " is longer than the " +
                  Twine(kMaxIterations) + " iterations nnc unrolls");
  return *length;
}

/// An scf.for over [0, count) carrying each of `values` in two slots
/// (stateSlots), marked as a batch loop; its body, without a terminator, is
/// the caller's to fill and end.
scf::ForOp slotLoop(NodeImporter &n, Value count, ArrayRef<Value> values) {
  OpBuilder &b = n.builder;
  SmallVector<Value> inits;
  for (Value v : values)
    inits.push_back(n.stateSlots(v));
  Value zero = arith::ConstantIndexOp::create(b, n.loc, 0);
  Value one = arith::ConstantIndexOp::create(b, n.loc, 1);
  auto loop = scf::ForOp::create(b, n.loc, zero, count, one, inits);
  loop->setAttr("nnc.batch_loop", b.getUnitAttr());
  // Without iteration arguments the builder made a yield.
  if (inits.empty())
    loop.getBody()->getTerminator()->erase();
  return loop;
}

/// The slice of `x` (static but along `axis`) at `at` along `axis`, that dim
/// dropped.
Value elementAt(OpBuilder &b, Location loc, Value x, int64_t axis, OpFoldResult at) {
  RankedTensorType type = NodeImporter::type(x);
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(b.getIndexAttr(d == axis ? 1 : type.getDimSize(d)));
  offsets[axis] = at;
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + axis);
  return tensor::ExtractSliceOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()),
                                        x, offsets, sizes, strides);
}

/// `element` inserted into `into` at `at` along `axis` (a dim `element` lacks).
Value insertAlong(OpBuilder &b, Location loc, Value element, Value into, int64_t axis,
                  OpFoldResult at) {
  RankedTensorType type = NodeImporter::type(element);
  int64_t rank = type.getRank() + 1;
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  SmallVector<int64_t> shape(type.getShape());
  shape.insert(shape.begin() + axis, 1);
  for (int64_t d : shape)
    sizes.push_back(b.getIndexAttr(d));
  offsets[axis] = at;
  return tensor::InsertSliceOp::create(b, loc, element, into, offsets, sizes, strides);
}

/// A Scan whose sequence length is known only at run time, as an scf.for
/// over the steps with the body imported once, built like a Loop's of a
/// run-time trip count (importRuntimeLoop): each state in two slots, each
/// scan input's element read at the step (counted from the end where its
/// direction is 1), each scan output's element inserted along its axis. The
/// scan inputs' lengths must agree: checked before the run.
LogicalResult importRuntimeScan(NodeImporter &n, ArrayRef<Value> states, SmallVector<Value> scans,
                                ArrayRef<int64_t> axes, ArrayRef<int64_t> directions,
                                std::optional<SmallVector<int64_t>> outAxes,
                                std::optional<SmallVector<int64_t>> outDirections) {
  OpBuilder &b = n.builder;
  Location loc = n.loc;
  for (auto [k, v] : llvm::enumerate(states))
    if (!NodeImporter::type(v).hasStaticShape())
      return n.fail("its state " + Twine(k) +
                    " has dynamic dims; a Scan of a run-time length needs static ones");
  for (auto [k, v] : llvm::enumerate(scans)) {
    RankedTensorType type = NodeImporter::type(v);
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axes[k] && type.isDynamicDim(d))
        return n.fail("its scan input " + Twine(k) + " has dynamic dims besides the sequence; a "
                      "Scan of a run-time length needs static ones");
  }
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  Value zero = index(0), one = index(1), two = index(2);
  // The length, checked against every other scan input's: the loop's bound
  // carries the checks, so that they stay when the body reads no element
  // of an input.
  Value length = tensor::DimOp::create(b, loc, scans[0], axes[0]);
  if (scans.size() > 1) {
    Value checked = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, b.getI64Type()),
        ValueRange{arith::IndexCastOp::create(b, loc, b.getI64Type(), length)});
    for (size_t k = 1; k < scans.size(); ++k) {
      Value other = tensor::DimOp::create(b, loc, scans[k], axes[k]);
      Value same = tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({}, b.getI1Type()),
          ValueRange{arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, length, other)});
      checked = n.create<nn::CheckOp>(checked, same,
                                      b.getStringAttr("its scan inputs' sequence lengths differ"));
    }
    length = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                        tensor::ExtractOp::create(b, loc, checked, ValueRange{}));
  }
  Value last = arith::SubIOp::create(b, loc, length, one);
  scf::ForOp loop = slotLoop(n, length, states);
  SmallVector<Value> elements; // the body's scan outputs
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value backwards = arith::SubIOp::create(b, loc, last, t);
    Value current = arith::RemUIOp::create(b, loc, t, two);
    Value next = arith::RemUIOp::create(b, loc, arith::AddIOp::create(b, loc, t, one), two);
    SmallVector<Value> inputs;
    for (auto [v, slots] : llvm::zip(states, loop.getRegionIterArgs()))
      inputs.push_back(n.extractAt(slots, {current}, NodeImporter::type(v)));
    for (auto [x, axis, direction] : llvm::zip(scans, axes, directions))
      inputs.push_back(elementAt(b, loc, x, axis, direction ? backwards : t));
    FailureOr<SmallVector<Value>> outputs = n.importSubgraph("body", inputs);
    if (failed(outputs))
      return failure();
    if (outputs->size() < states.size())
      return n.fail("its body has " + Twine(outputs->size()) + " outputs for " +
                    Twine(states.size()) + " state variables");
    SmallVector<Value> yields;
    for (auto [k, pair] : llvm::enumerate(llvm::zip(states, loop.getRegionIterArgs()))) {
      auto [v, slots] = pair;
      Value updated = (*outputs)[k];
      if (failed(keepsType(n, v, updated, "its state " + Twine(k), "Scan")))
        return failure();
      yields.push_back(n.insertAt(updated, slots, {next}));
    }
    scf::YieldOp::create(b, loc, yields);
    elements.assign(outputs->begin() + states.size(), outputs->end());
  }
  if (failed(scanOutputAttributes(n, elements.size(), outAxes, outDirections)))
    return failure();
  SmallVector<Value> scanInits;
  b.setInsertionPoint(loop);
  for (auto [k, pair] : llvm::enumerate(llvm::zip(elements, *outAxes))) {
    auto &[v, axis] = pair;
    RankedTensorType type = NodeImporter::type(v);
    if (!type.hasStaticShape())
      return n.fail("its scan output " + Twine(k) +
                    " has dynamic dims; a Scan of a run-time length needs static ones");
    int64_t rank = type.getRank() + 1;
    if (axis < -rank || axis >= rank)
      return n.fail("scan output axis " + Twine(axis) + " is out of range for rank " + Twine(rank));
    if (axis < 0)
      axis += rank;
    SmallVector<int64_t> shape(type.getShape());
    shape.insert(shape.begin() + axis, ShapedType::kDynamic);
    scanInits.push_back(
        tensor::EmptyOp::create(b, loc, shape, type.getElementType(), ValueRange{length}));
  }
  IRRewriter rewriter(b);
  rewriter.setInsertionPoint(loop);
  FailureOr<LoopLikeOpInterface> grown = cast<LoopLikeOpInterface>(*loop).replaceWithAdditionalYields(
      rewriter, scanInits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &at, Location, ArrayRef<BlockArgument> rows) {
        Value t = loop.getInductionVar();
        Value backwards = arith::SubIOp::create(at, loc, last, t);
        SmallVector<Value> updated;
        for (auto [v, rowsArg, axis, direction] :
             llvm::zip(elements, rows, *outAxes, *outDirections))
          updated.push_back(insertAlong(at, loc, v, rowsArg, axis, direction ? backwards : t));
        return updated;
      });
  if (failed(grown))
    return n.fail("could not build its loop");
  auto built = cast<scf::ForOp>(grown->getOperation());
  b.setInsertionPointAfter(built);
  Value final = arith::RemUIOp::create(b, loc, length, two);
  SmallVector<Value> results;
  for (auto [v, slots] : llvm::zip(states, built.getResults().take_front(states.size())))
    results.push_back(n.extractAt(slots, {final}, NodeImporter::type(v)));
  for (Value rows : built.getResults().drop_front(states.size()))
    results.push_back(rows);
  n.setOutputs(results);
  return success();
}

/// Scan from opset 9: states, then scan inputs, each cut along its axis.
LogicalResult importScan(NodeImporter &n) {
  int64_t numScans = n.attrInt("num_scan_inputs", -1);
  int64_t numInputs = n.numInputs();
  if (numScans < 1 || numScans > numInputs)
    return n.fail("num_scan_inputs must be between 1 and its " + Twine(numInputs) + " inputs");
  SmallVector<Value> states, scans;
  for (int64_t i = 0; i < numInputs; ++i) {
    Value v = n.input(i);
    if (!v)
      return n.fail("input " + Twine(i) + " is missing");
    (i < numInputs - numScans ? states : scans).push_back(v);
  }
  FailureOr<SmallVector<int64_t>> axes = perInput(n, "scan_input_axes", numScans, 0);
  FailureOr<SmallVector<int64_t>> directions = perInput(n, "scan_input_directions", numScans, 0);
  if (failed(axes) || failed(directions))
    return failure();
  FailureOr<int64_t> length = sequenceLength(n, scans, *axes);
  if (failed(length))
    return failure();
  if (ShapedType::isDynamic(*length))
    return importRuntimeScan(n, states, scans, *axes, *directions, n.attrInts("scan_output_axes"),
                             n.attrInts("scan_output_directions"));
  FailureOr<SmallVector<Value>> results =
      scanIterations(n, states, scans, *length, *axes, *directions, n.attrInts("scan_output_axes"),
                     n.attrInts("scan_output_directions"));
  if (failed(results))
    return failure();
  n.setOutputs(*results);
  return success();
}

/// Scan of opset 8: a leading batch dim on every input and output, the
/// sequence along dim 1 of the scan inputs, an optional sequence_lens first.
/// Each batch entry is scanned on its own.
LogicalResult importScan8(NodeImporter &n) {
  int64_t numScans = n.attrInt("num_scan_inputs", -1);
  int64_t numInputs = n.numInputs() - 1;
  if (numScans < 1 || numScans > numInputs)
    return n.fail("num_scan_inputs must be between 1 and its " + Twine(numInputs) +
                  " inputs after sequence_lens");
  SmallVector<Value> states, scans;
  for (int64_t i = 0; i < numInputs; ++i) {
    Value v = n.input(i + 1);
    if (!v)
      return n.fail("input " + Twine(i + 1) + " is missing");
    if (NodeImporter::type(v).getRank() < 1 + (i >= numInputs - numScans))
      return n.fail("input " + Twine(i + 1) + " lacks the batch dim (and a scan input the sequence dim)");
    (i < numInputs - numScans ? states : scans).push_back(v);
  }
  FailureOr<SmallVector<int64_t>> directions = perInput(n, "directions", numScans, 0);
  if (failed(directions))
    return failure();
  auto batchType = NodeImporter::type(scans.front());
  if (llvm::any_of(llvm::concat<Value>(states, scans),
                   [](Value v) { return NodeImporter::type(v).isDynamicDim(0); }))
    return n.fail("its batch is known only at run time; nnc unrolls Scan over the batch and the "
                  "sequence, which needs both when compiling (pin them with --dim)");
  int64_t batch = batchType.getDimSize(0);
  for (Value v : llvm::concat<Value>(states, scans))
    if (NodeImporter::type(v).getDimSize(0) != batch)
      return n.fail("its inputs' batch dims differ (" + Twine(batch) + " and " +
                    Twine(NodeImporter::type(v).getDimSize(0)) + ")");
  SmallVector<int64_t> seqAxes(numScans, 1);
  FailureOr<int64_t> length = sequenceLength(n, scans, seqAxes);
  if (failed(length))
    return failure();
  if (ShapedType::isDynamic(*length))
    return n.fail("its sequence length is known only at run time; nnc unrolls opset 8's Scan "
                  "over the batch and the sequence, which needs both when compiling (pin them "
                  "with --dim)");
  if (Value lens = n.input(0)) {
    std::optional<SmallVector<int64_t>> given = n.constInts(0);
    if (!given || llvm::any_of(*given, [&](int64_t l) { return l != *length; }))
      return n.fail("sequence_lens other than the full length " + Twine(*length) +
                    " for every batch entry are not supported");
  }
  if (batch == 0 || batch > kMaxIterations)
    return n.fail("its batch of " + Twine(batch) + " is outside the 1 to " + Twine(kMaxIterations) +
                  " entries nnc unrolls");
  SmallVector<SmallVector<Value>> stateEntries, scanEntries;
  for (Value s : states)
    stateEntries.push_back(elementsAlong(n, s, 0, batch));
  for (Value s : scans)
    scanEntries.push_back(elementsAlong(n, s, 0, batch));
  SmallVector<SmallVector<Value>> perEntry; // per output, per batch entry
  SmallVector<int64_t> entryAxes(numScans, 0);
  for (int64_t b = 0; b < batch; ++b) {
    SmallVector<Value> entryStates, entryScans;
    for (auto &parts : stateEntries)
      entryStates.push_back(parts[b]);
    for (auto &parts : scanEntries)
      entryScans.push_back(parts[b]);
    FailureOr<SmallVector<Value>> results = scanIterations(
        n, entryStates, entryScans, *length, entryAxes, *directions, std::nullopt, std::nullopt);
    if (failed(results))
      return failure();
    perEntry.resize(results->size());
    for (auto [list, v] : llvm::zip(perEntry, *results))
      list.push_back(v);
  }
  SmallVector<Value> outputs;
  for (auto &list : perEntry)
    outputs.push_back(n.join(list, 0, /*newAxis=*/true));
  n.setOutputs(outputs);
  return success();
}

/// A Loop's body imported at the builder's place from (iteration,
/// condition, carried...): its condition, carried values and scan outputs.
FailureOr<SmallVector<Value>>
importLoopBody(NodeImporter &n, ArrayRef<Value> inputs, size_t numCarried,
               ArrayRef<std::optional<SequenceValue>> sequenceInputs = {},
               SmallVectorImpl<std::optional<SequenceValue>> *sequenceOutputs = nullptr) {
  FailureOr<SmallVector<Value>> outputs =
      n.importSubgraph("body", inputs, sequenceInputs, sequenceOutputs);
  if (failed(outputs))
    return failure();
  if (outputs->size() < 1 + numCarried)
    return n.fail("its body has " + Twine(outputs->size()) + " outputs for the condition and " +
                  Twine(numCarried) + " loop-carried values");
  return outputs;
}

/// The one element of a 0-D or one-element tensor, as a scalar.
Value element(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return tensor::ExtractOp::create(b, loc, tensor, SmallVector<Value>(type.getRank(), zero));
}

/// The one element of a 0-D or one-element tensor as an i1: whether it is
/// nonzero.
Value truth(OpBuilder &b, Location loc, Value tensor) {
  Value v = element(b, loc, tensor);
  if (v.getType().isInteger(1))
    return v;
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v,
                               arith::ConstantOp::create(b, loc, b.getZeroAttr(v.getType())));
}

/// `loop` (from 0, step 1, its body computing `goOn`) as an scf.while that
/// also stops after an iteration whose `goOn` is false: the same body in the
/// after region, the iteration number carried before the loop's own values
/// and `goOn` after them (last, so that the tensors keep their positions in
/// the condition's operands when canonicalization drops it there, as
/// bufferization needs). Its results: the iterations run, the loop's
/// results, the last `goOn`.
scf::WhileOp untilFalse(OpBuilder &b, scf::ForOp loop, Value goOn) {
  Location loc = loop.getLoc();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop);
  SmallVector<Value> inits{loop.getLowerBound()};
  inits.append(loop.getInitArgs().begin(), loop.getInitArgs().end());
  inits.push_back(arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  Value upper = loop.getUpperBound();
  auto whileOp = scf::WhileOp::create(
      b, loc, ValueRange(inits).getTypes(), inits,
      [&](OpBuilder &bb, Location l, ValueRange args) {
        Value more = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::slt, args[0], upper);
        scf::ConditionOp::create(bb, l, arith::AndIOp::create(bb, l, more, args.back()), args);
      },
      [](OpBuilder &, Location, ValueRange) {});
  whileOp->setAttrs(loop->getDiscardableAttrDictionary());
  Block *after = whileOp.getAfterBody();
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  b.setInsertionPoint(yield);
  SmallVector<Value> next{arith::AddIOp::create(b, loc, loop.getInductionVar(), loop.getStep())};
  next.append(yield.getOperands().begin(), yield.getOperands().end());
  next.push_back(goOn);
  scf::YieldOp::create(b, loc, next);
  yield.erase();
  loop.getInductionVar().replaceAllUsesWith(after->getArgument(0));
  for (auto [arg, replacement] : llvm::zip(loop.getRegionIterArgs(), after->getArguments().slice(1, loop.getNumRegionIterArgs())))
    arg.replaceAllUsesWith(replacement);
  after->getOperations().splice(after->end(), body->getOperations());
  loop.replaceAllUsesWith(whileOp.getResults().slice(1, loop.getNumResults()));
  loop.erase();
  return whileOp;
}

/// A Loop whose trip count or initial condition is known only at run time,
/// or whose body computes its condition, with the body imported once. When
/// the body passes its condition on (a for loop, as exporters write one), an
/// scf.for over `trip count` iterations (none when the condition is false);
/// when it computes it (a while loop), an scf.while that also stops after
/// the first iteration whose condition is false (untilFalse). Loop-carried
/// values keep one static shape; each lives in two slots [2, ...],
/// iteration i reading slot i mod 2 and writing the other, and each scan
/// output is a tensor [iterations, ...] the iterations insert their rows
/// into: every update is an insertion into a loop-carried tensor, which
/// bufferizes in place. A while loop's scan outputs are sized for the trip
/// count, and only the run knows how many rows it wrote (a bounded extent,
/// like NonZero's count). The loop is marked like a loop over a dynamic
/// batch, whose body the schedules and the memory plan treat like a
/// function's.
LogicalResult importRuntimeLoop(NodeImporter &n, Value tripCount, Value condition,
                                ArrayRef<Value> carried,
                                ArrayRef<std::optional<SequenceValue>> sequences) {
  OpBuilder &b = n.builder;
  Location loc = n.loc;
  for (Value v : {tripCount, condition})
    if (v && NodeImporter::type(v).getNumElements() != 1)
      return n.fail("its trip count and condition must be single elements");
  // The loop-carried tensors, each in slots; the sequences, each appended
  // to, row by row like a scan output.
  SmallVector<Value> tensors;
  for (auto [k, v] : llvm::enumerate(carried)) {
    if (const std::optional<SequenceValue> &sequence = sequences[k]) {
      if (!sequence->elements.empty() || sequence->stacked || sequence->carrier)
        return n.fail("its loop-carried sequence " + Twine(k) +
                      " is not empty; nnc carries a sequence through a Loop of a run-time length "
                      "only from empty, appended to");
      continue;
    }
    if (!NodeImporter::type(v).hasStaticShape())
      return n.fail("its loop-carried value " + Twine(k) +
                    " has dynamic dims; a Loop of a run-time length needs static ones");
    tensors.push_back(v);
  }
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  Value zero = index(0), one = index(1), two = index(2);
  // Iterations at most: the trip count (none if negative; unbounded without
  // one), or none when the initial condition is false.
  Value count = tripCount ? arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                                       element(b, loc, tripCount)).getResult()
                          : index(std::numeric_limits<int64_t>::max());
  count = arith::MaxSIOp::create(b, loc, count, zero);
  // What a while loop's rows are sized for: the trip count alone (an
  // initial condition computed from data would make the size data too).
  Value bound = count;
  if (condition)
    count = arith::SelectOp::create(b, loc, truth(b, loc, condition), count, zero);
  scf::ForOp loop = slotLoop(n, count, tensors);
  SmallVector<Value> scans; // each sequence's appended element, then the scan outputs
  size_t numAppended = 0;
  Value goOn; // the body's condition, when it computes one
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value current = arith::RemUIOp::create(b, loc, i, two);
    Value next = arith::RemUIOp::create(b, loc, arith::AddIOp::create(b, loc, i, one), two);
    Value iteration = tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, b.getI64Type()),
        ValueRange{arith::IndexCastOp::create(b, loc, b.getI64Type(), i)});
    Value conditionIn = n.scalar(b.getI1Type(), 1);
    SmallVector<Value> inputs{iteration, conditionIn};
    SmallVector<std::optional<SequenceValue>> sequenceInputs(2);
    auto slots = loop.getRegionIterArgs().begin();
    for (auto [v, sequence] : llvm::zip(carried, sequences)) {
      if (sequence) {
        // What earlier iterations appended is not known here.
        SequenceValue carriedIn;
        carriedIn.carrier = loop.getOperation();
        carriedIn.carrierSlot = sequenceInputs.size() - 2;
        inputs.push_back(Value());
        sequenceInputs.push_back(carriedIn);
        continue;
      }
      inputs.push_back(n.extractAt(*slots++, {current}, NodeImporter::type(v)));
      sequenceInputs.push_back(std::nullopt);
    }
    SmallVector<std::optional<SequenceValue>> sequenceOutputs;
    FailureOr<SmallVector<Value>> outputs =
        importLoopBody(n, inputs, carried.size(), sequenceInputs, &sequenceOutputs);
    if (failed(outputs))
      return failure();
    if (!outputs->front())
      return n.fail("its body's condition is a sequence");
    std::optional<int64_t> kept = constantScalar(outputs->front());
    if (outputs->front() != conditionIn && (!kept || *kept == 0)) {
      if (NodeImporter::type(outputs->front()).getNumElements() != 1)
        return n.fail("its body's condition must be a single element");
      goOn = truth(b, loc, outputs->front());
    }
    SmallVector<Value> yields;
    slots = loop.getRegionIterArgs().begin();
    for (auto [k, v] : llvm::enumerate(carried)) {
      Value updated = (*outputs)[1 + k];
      const std::optional<SequenceValue> &appended = sequenceOutputs[1 + k];
      if (sequences[k]) {
        if (!appended || appended->carrier != loop.getOperation() || appended->carrierSlot != k ||
            appended->elements.size() != 1 || !appended->checks.empty())
          return n.fail("its body does not make loop-carried sequence " + Twine(k) +
                        " itself with one element appended, which nnc needs of a sequence carried "
                        "through a Loop of a run-time length");
        scans.push_back(appended->elements.front());
        continue;
      }
      if (!updated)
        return n.fail("its body makes loop-carried value " + Twine(k) + " a sequence");
      if (failed(keepsType(n, v, updated, "its loop-carried value " + Twine(k), "Loop")))
        return failure();
      yields.push_back(n.insertAt(updated, *slots++, {next}));
    }
    numAppended = scans.size();
    for (auto [k, v] : llvm::enumerate(llvm::drop_begin(*outputs, 1 + carried.size()))) {
      if (!v)
        return n.fail("its scan output " + Twine(k) + " is a sequence");
      scans.push_back(v);
    }
    scf::YieldOp::create(b, loc, yields);
  }
  if (!tripCount && !goOn)
    return n.fail("it has no trip count and its body passes its condition on: it would never end "
                  "unless its condition starts false");
  if (!tripCount && !scans.empty())
    return n.fail("its body computes its condition and it has no trip count: nothing bounds its "
                  "scan outputs' (or appended sequences') lengths, which nnc needs to size them "
                  "before the run");
  if (std::optional<int64_t> trips = tripCount ? constantScalar(tripCount) : std::nullopt;
      goOn && !scans.empty() && trips && *trips > kMaxBoundingTrips)
    return n.fail("its body computes its condition and only its trip count of " + Twine(*trips) +
                  " bounds its scan outputs' (or appended sequences') lengths: too many to size "
                  "them before the run, as nnc does (PyTorch exports a scripted `while`, or a "
                  "loop with `break`, so)");
  for (auto [k, v] : llvm::enumerate(scans))
    if (!NodeImporter::type(v).hasStaticShape())
      return n.fail((k < numAppended ? "the element its body appends to a sequence"
                                     : "its scan output " + Twine(k - numAppended)) +
                    " has dynamic dims; a Loop of a run-time length needs static ones");
  // The scan outputs, known once the body is imported, join the loop.
  SmallVector<Value> scanInits;
  b.setInsertionPoint(loop);
  for (Value v : scans) {
    RankedTensorType type = NodeImporter::type(v);
    SmallVector<int64_t> shape{ShapedType::kDynamic};
    shape.append(type.getShape().begin(), type.getShape().end());
    scanInits.push_back(
        tensor::EmptyOp::create(b, loc, shape, type.getElementType(),
                                ValueRange{goOn ? bound : count}));
  }
  IRRewriter rewriter(b);
  rewriter.setInsertionPoint(loop);
  FailureOr<LoopLikeOpInterface> grown = cast<LoopLikeOpInterface>(*loop).replaceWithAdditionalYields(
      rewriter, scanInits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &at, Location, ArrayRef<BlockArgument> rows) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(at.getInsertionBlock(), at.getInsertionPoint());
        SmallVector<Value> updated;
        for (auto [v, rowsArg] : llvm::zip(scans, rows))
          updated.push_back(n.insertAt(v, rowsArg, {loop.getInductionVar()}));
        return updated;
      });
  if (failed(grown))
    return n.fail("could not build its loop");
  auto built = cast<scf::ForOp>(grown->getOperation());
  ValueRange loopResults = built.getResults();
  Value iterations = count;
  if (goOn) {
    unsigned numResults = built.getNumResults();
    scf::WhileOp whileOp = untilFalse(b, built, goOn);
    iterations = whileOp.getResult(0);
    loopResults = whileOp.getResults().slice(1, numResults);
    b.setInsertionPointAfter(whileOp);
  } else {
    b.setInsertionPointAfter(built);
  }
  Value last = arith::RemUIOp::create(b, loc, iterations, two);
  // A while loop's rows: the first `iterations` of the trip count's.
  Value rowsRun = goOn ? nn::BoundedExtentOp::create(b, loc, iterations, bound).getResult() : Value();
  SmallVector<Value> rowsOut;
  for (Value rows : loopResults.drop_front(tensors.size())) {
    if (!rowsRun) {
      rowsOut.push_back(rows);
      continue;
    }
    auto type = cast<RankedTensorType>(rows.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes{rowsRun},
        strides(type.getRank(), b.getIndexAttr(1));
    for (int64_t d : type.getShape().drop_front())
      sizes.push_back(b.getIndexAttr(d));
    rowsOut.push_back(tensor::ExtractSliceOp::create(b, loc, type, rows, offsets, sizes, strides));
  }
  SmallVector<Value> results;
  auto slotResults = loopResults.begin();
  auto appendedRows = rowsOut.begin();
  for (auto [k, v] : llvm::enumerate(carried)) {
    if (sequences[k]) {
      SequenceValue stack;
      stack.stacked = *appendedRows++;
      n.setSequenceOutput(k, stack);
      results.push_back(Value());
      continue;
    }
    results.push_back(n.extractAt(*slotResults++, {last}, NodeImporter::type(v)));
  }
  results.append(appendedRows, rowsOut.end());
  n.setOutputs(results);
  return success();
}

/// Loop: a trip count and a condition (either may be absent), then the
/// loop-carried values. The body maps (iteration, condition, carried...) to
/// (condition, carried..., scan outputs...); scan outputs are stacked along
/// a new leading dim. Unrolled when the number of iterations is known when
/// compiling; otherwise a loop (importRuntimeLoop).
LogicalResult importLoop(NodeImporter &n) {
  OpBuilder &b = n.builder;
  Value tripCount = n.input(0), condition = n.input(1);
  // The loop-carried values: a tensor, or a sequence (its value null).
  SmallVector<Value> carried;
  SmallVector<std::optional<SequenceValue>> sequences;
  for (size_t i = 2; i < n.numInputs(); ++i) {
    if (const SequenceValue *sequence = n.sequence(i)) {
      carried.push_back(Value());
      sequences.push_back(*sequence);
      continue;
    }
    Value v = n.input(i);
    if (!v)
      return n.fail("loop-carried input " + Twine(i) + " is missing");
    carried.push_back(v);
    sequences.push_back(std::nullopt);
  }
  std::optional<int64_t> trips;
  if (tripCount) {
    trips = constantScalar(tripCount);
    if (!trips)
      return importRuntimeLoop(n, tripCount, condition, carried, sequences);
  }
  std::optional<int64_t> go = condition ? constantScalar(condition) : std::optional<int64_t>(1);
  if (!go)
    return importRuntimeLoop(n, tripCount, condition, carried, sequences);
  // Where the unrolled iterations begin, to take them back when the body
  // turns out to compute its condition at run time.
  SmallVector<Value> initial(carried);
  SmallVector<std::optional<SequenceValue>> initialSequences(sequences);
  Block *block = b.getInsertionBlock();
  Block::iterator end = b.getInsertionPoint();
  Operation *before = end == block->begin() ? nullptr : &*std::prev(end);
  Value conditionIn = n.scalar(b.getI1Type(), 1);
  SmallVector<SmallVector<Value>> scanned;
  int64_t t = 0;
  for (; *go && (!trips || t < *trips); ++t) {
    if (t == kMaxIterations)
      return n.fail(trips ? "its " + Twine(*trips) + " iterations are more than the " +
                                Twine(kMaxIterations) + " nnc unrolls"
                          : "its condition stays true for " + Twine(kMaxIterations) +
                                " iterations, the most nnc unrolls");
    SmallVector<Value> inputs{n.scalar(b.getI64Type(), t), conditionIn};
    inputs.append(carried);
    SmallVector<std::optional<SequenceValue>> sequenceInputs(2), sequenceOutputs;
    sequenceInputs.append(sequences);
    FailureOr<SmallVector<Value>> outputs =
        importLoopBody(n, inputs, carried.size(), sequenceInputs, &sequenceOutputs);
    if (failed(outputs))
      return failure();
    if (!outputs->front())
      return n.fail("its body's condition is a sequence");
    go = constantScalar(outputs->front());
    if (!go) {
      // A while loop: the iterations unrolled so far go, and the loop runs.
      Block::iterator first = before ? std::next(before->getIterator()) : block->begin();
      SmallVector<Operation *> unrolled;
      for (Operation &op : llvm::make_range(first, b.getInsertionPoint()))
        unrolled.push_back(&op);
      for (Operation *op : llvm::reverse(unrolled))
        op->erase();
      return importRuntimeLoop(n, tripCount, condition, initial, initialSequences);
    }
    conditionIn = outputs->front();
    for (size_t k = 0; k < carried.size(); ++k) {
      if (sequences[k].has_value() != sequenceOutputs[1 + k].has_value())
        return n.fail("its body makes loop-carried value " + Twine(k) + " a " +
                      (sequences[k] ? "tensor" : "sequence") + ", but it starts as a " +
                      (sequences[k] ? "sequence" : "tensor"));
      carried[k] = (*outputs)[1 + k];
      sequences[k] = sequenceOutputs[1 + k];
    }
    scanned.resize(outputs->size() - 1 - carried.size());
    for (auto [k, v] : llvm::enumerate(llvm::drop_begin(*outputs, 1 + carried.size()))) {
      if (!v)
        return n.fail("its scan output " + Twine(k) + " is a sequence");
      scanned[k].push_back(v);
    }
  }
  SmallVector<Value> results(carried);
  for (auto [k, sequence] : llvm::enumerate(sequences))
    if (sequence)
      n.setSequenceOutput(k, *sequence);
  int64_t numScanOutputs = (int64_t)n.numOutputs() - (int64_t)carried.size();
  if (t == 0 && numScanOutputs > 0)
    return n.fail("it runs no iteration, so its scan outputs have no element to take a shape from");
  for (auto [k, list] : llvm::enumerate(scanned)) {
    if (failed(sameTypes(n, list, "its scan output " + Twine(k))))
      return failure();
    results.push_back(n.join(list, 0, /*newAxis=*/true));
  }
  n.setOutputs(results);
  return success();
}
} // namespace

void nnc::onnx_frontend::addControlFlowHandlers(std::vector<HandlerEntry> &t) {
  constexpr int64_t M = kMaxOpset;
  t.insert(t.end(), {
      {"Scan", 8, 8, importScan8},
      {"Scan", 9, M, importScan},
      {"Loop", 1, M, importLoop},
  });
}
