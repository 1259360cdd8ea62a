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
// imported once (importRuntimeLoop), when it is a for loop: the body passes
// its condition on.
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
  size_t numScanOutputs = scanned.size();
  if (!outAxes)
    outAxes = SmallVector<int64_t>(numScanOutputs, 0);
  if (!outDirections)
    outDirections = SmallVector<int64_t>(numScanOutputs, 0);
  if (outAxes->size() != numScanOutputs || outDirections->size() != numScanOutputs)
    return n.fail("scan_output_axes and scan_output_directions need one entry per scan output (" +
                  Twine(numScanOutputs) + ")");
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
/// place), or an error naming the problem.
FailureOr<int64_t> sequenceLength(NodeImporter &n, ArrayRef<Value> scans, SmallVector<int64_t> &axes) {
  std::optional<int64_t> length;
  for (auto [x, axis] : llvm::zip(scans, axes)) {
    auto type = NodeImporter::type(x);
    int64_t rank = type.getRank();
    if (axis < -rank || axis >= rank)
      return n.fail("scan input axis " + Twine(axis) + " is out of range for rank " + Twine(rank));
    if (axis < 0)
      axis += rank;
    if (type.isDynamicDim(axis))
      return n.fail("its sequence length is known only at run time; nnc unrolls Scan over the "
                    "sequence, which needs it when compiling (pin it with --dim)");
    if (length && *length != type.getDimSize(axis))
      return n.fail("its scan inputs have sequence lengths " + Twine(*length) + " and " +
                    Twine(type.getDimSize(axis)));
    length = type.getDimSize(axis);
  }
  if (!length || *length == 0)
    return n.fail("a Scan needs at least one scan input of nonzero length");
  if (*length > kMaxIterations)
    return n.fail("its sequence of " + Twine(*length) + " is longer than the " +
                  Twine(kMaxIterations) + " iterations nnc unrolls");
  return *length;
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
FailureOr<SmallVector<Value>> importLoopBody(NodeImporter &n, ArrayRef<Value> inputs,
                                             size_t numCarried) {
  FailureOr<SmallVector<Value>> outputs = n.importSubgraph("body", inputs);
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

/// A Loop whose trip count or initial condition is known only at run time,
/// as an scf.for over `trip count` iterations (none when the condition is
/// false), the body imported once into it. The body must pass its condition
/// through unchanged (a for loop, as exporters write one): a condition
/// computed per iteration would need an early exit. Loop-carried values keep
/// one static shape; each lives in two slots [2, ...], iteration i reading
/// slot i mod 2 and writing the other, and each scan output is a tensor
/// [iterations, ...] the iterations insert their rows into: every update is
/// an insertion into a loop-carried tensor, which bufferizes in place. The
/// loop is marked like a loop over a dynamic batch, whose body the schedules
/// and the memory plan treat like a function's.
LogicalResult importRuntimeLoop(NodeImporter &n, Value tripCount, Value condition,
                                ArrayRef<Value> carried) {
  OpBuilder &b = n.builder;
  Location loc = n.loc;
  if (!tripCount)
    return n.fail("its condition is known only at run time and it has no trip count: nnc runs a "
                  "Loop of a run-time length only as a for loop");
  if (isa<scf::ForOp>(b.getInsertionBlock()->getParentOp()))
    return n.fail("it runs a run-time number of iterations inside another loop of a run-time "
                  "length, which is not supported yet");
  for (Value v : {tripCount, condition})
    if (v && NodeImporter::type(v).getNumElements() != 1)
      return n.fail("its trip count and condition must be single elements");
  for (auto [k, v] : llvm::enumerate(carried))
    if (!NodeImporter::type(v).hasStaticShape())
      return n.fail("its loop-carried value " + Twine(k) +
                    " has dynamic dims; a Loop of a run-time length needs static ones");
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  Value zero = index(0), one = index(1), two = index(2);
  // Iterations: the trip count (none if negative), or none when the initial
  // condition is false.
  Value count = arith::IndexCastOp::create(b, loc, b.getIndexType(), element(b, loc, tripCount));
  count = arith::MaxSIOp::create(b, loc, count, zero);
  if (condition) {
    Value go = element(b, loc, condition);
    if (!go.getType().isInteger(1))
      go = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, go,
                                 arith::ConstantOp::create(b, loc, b.getZeroAttr(go.getType())));
    count = arith::SelectOp::create(b, loc, go, count, zero);
  }
  SmallVector<Value> inits;
  for (Value v : carried)
    inits.push_back(n.stateSlots(v));
  auto loop = scf::ForOp::create(b, loc, zero, count, one, inits);
  loop->setAttr("nnc.batch_loop", b.getUnitAttr());
  SmallVector<Value> scans;
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
    for (auto [v, slots] : llvm::zip(carried, loop.getRegionIterArgs()))
      inputs.push_back(n.extractAt(slots, {current}, NodeImporter::type(v)));
    FailureOr<SmallVector<Value>> outputs = importLoopBody(n, inputs, carried.size());
    if (failed(outputs))
      return failure();
    std::optional<int64_t> kept = constantScalar(outputs->front());
    if (outputs->front() != conditionIn && (!kept || *kept == 0))
      return n.fail("its body computes the condition; nnc runs a Loop of a run-time length only "
                    "as a for loop, whose body passes its condition on");
    SmallVector<Value> yields;
    for (auto [k, pair] : llvm::enumerate(llvm::zip(carried, loop.getRegionIterArgs()))) {
      auto [v, slots] = pair;
      Value updated = (*outputs)[1 + k];
      if (updated.getType() != v.getType()) {
        std::string before, after;
        llvm::raw_string_ostream(before) << v.getType();
        llvm::raw_string_ostream(after) << updated.getType();
        return n.fail("its loop-carried value " + Twine(k) + " is " + before +
                      " but the body makes it " + after +
                      "; a Loop of a run-time length needs one static type");
      }
      yields.push_back(n.insertAt(updated, slots, {next}));
    }
    scf::YieldOp::create(b, loc, yields);
    scans.assign(outputs->begin() + 1 + carried.size(), outputs->end());
  }
  for (auto [k, v] : llvm::enumerate(scans))
    if (!NodeImporter::type(v).hasStaticShape())
      return n.fail("its scan output " + Twine(k) +
                    " has dynamic dims; a Loop of a run-time length needs static ones");
  // The scan outputs, known once the body is imported, join the loop.
  SmallVector<Value> scanInits;
  b.setInsertionPoint(loop);
  for (Value v : scans) {
    RankedTensorType type = NodeImporter::type(v);
    SmallVector<int64_t> shape{ShapedType::kDynamic};
    shape.append(type.getShape().begin(), type.getShape().end());
    scanInits.push_back(
        tensor::EmptyOp::create(b, loc, shape, type.getElementType(), ValueRange{count}));
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
  b.setInsertionPointAfter(built);
  Value last = arith::RemUIOp::create(b, loc, count, two);
  SmallVector<Value> results;
  for (auto [v, slots] : llvm::zip(carried, built.getResults().take_front(carried.size())))
    results.push_back(n.extractAt(slots, {last}, NodeImporter::type(v)));
  for (Value rows : built.getResults().drop_front(carried.size()))
    results.push_back(rows);
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
  SmallVector<Value> carried;
  for (size_t i = 2; i < n.numInputs(); ++i) {
    Value v = n.input(i);
    if (!v)
      return n.fail("loop-carried input " + Twine(i) + " is missing");
    carried.push_back(v);
  }
  std::optional<int64_t> trips;
  if (tripCount) {
    trips = constantScalar(tripCount);
    if (!trips)
      return importRuntimeLoop(n, tripCount, condition, carried);
  }
  std::optional<int64_t> go = condition ? constantScalar(condition) : std::optional<int64_t>(1);
  if (!go)
    return importRuntimeLoop(n, tripCount, condition, carried);
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
    FailureOr<SmallVector<Value>> outputs = importLoopBody(n, inputs, carried.size());
    if (failed(outputs))
      return failure();
    go = constantScalar(outputs->front());
    if (!go)
      return n.fail("its body computes the condition at run time; nnc unrolls Loop, which needs "
                    "the number of iterations when compiling");
    conditionIn = outputs->front();
    carried.assign(outputs->begin() + 1, outputs->begin() + 1 + carried.size());
    scanned.resize(outputs->size() - 1 - carried.size());
    for (auto [list, v] : llvm::zip(scanned, llvm::drop_begin(*outputs, 1 + carried.size())))
      list.push_back(v);
  }
  SmallVector<Value> results(carried);
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
