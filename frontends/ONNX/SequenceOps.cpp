//===- SequenceOps.cpp - sequences of tensors, fixed on import -------------===//
//
// An ONNX sequence is a list of tensors. nnc keeps a sequence only in the
// importer: as the list of its elements' values, whose length is known when
// compiling (a construction, a split along a static dim, an insertion grows
// it by one). The ops on it become ops on those values: SequenceAt picks one,
// ConcatFromSequence concatenates them. A position given at run time works on
// elements of one type: SequenceAt gathers from their stack, SequenceInsert
// and SequenceErase select each element of the result from its two
// candidates; the position is checked against the length before the run.
// A Loop of a run-time length carries a sequence that starts empty and gets
// one element appended per iteration (a list built in a scripted loop): in
// its body the sequence's earlier elements are unknown, and after it the
// sequence is the stack of the appended elements, which ConcatFromSequence
// reads (ControlFlowOps.cpp). Sequences as graph inputs or outputs, and ops
// other than these on them (SequenceMap), are refused by node.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

namespace {
using Elements = SmallVector<Value>;
using Check = SequenceCheck;

Value i64Scalar(NodeImporter &n, int64_t v) { return n.scalar(n.builder.getI64Type(), v); }

/// What an op may read of a sequence a Loop of a run-time length made:
/// nothing, the stack it built, or (inside its body) the sequence it carries,
/// to append to.
enum class LoopSequences { None, Stacked, Appended };

/// Input `i` as a sequence, or an error.
FailureOr<SequenceValue> sequenceInput(NodeImporter &n, size_t i,
                                       LoopSequences allowed = LoopSequences::None) {
  const SequenceValue *sequence = n.sequence(i);
  if (!sequence)
    return n.fail("input " + Twine(i) + " must be a sequence");
  if (sequence->stacked && allowed != LoopSequences::Stacked)
    return n.fail("it reads a sequence a Loop of a run-time length appended to, which nnc reads "
                  "only with ConcatFromSequence");
  if (sequence->carrier && allowed != LoopSequences::Appended)
    return n.fail("it reads the sequence a Loop of a run-time length carries, which nnc supports "
                  "there only as appended to (SequenceInsert without a position)");
  return *sequence;
}

/// `x` carrying the sequence's run-time checks (a tensor taken from it),
/// each reported as the node that needs it.
Value carryingChecks(NodeImporter &n, Value x, ArrayRef<Check> checks) {
  for (const Check &check : checks)
    x = nn::CheckOp::create(n.builder, check.loc, x.getType(), x, check.holds,
                            n.builder.getStringAttr(check.rule));
  return x;
}

/// A position input: its constant value, or the 0-D i64 value given at run
/// time (nullopt and `dynamic` set), or an error.
struct Position {
  std::optional<int64_t> constant;
  Value dynamic;
};
FailureOr<Position> positionInput(NodeImporter &n, size_t i) {
  Value v = n.input(i);
  auto type = NodeImporter::type(v);
  if (!isa<IntegerType>(type.getElementType()) || !type.hasStaticShape() || type.getNumElements() != 1)
    return n.fail("the position must be one integer");
  if (std::optional<SmallVector<int64_t>> values = n.constInts(i))
    return Position{values->front(), nullptr};
  Value scalar = n.create<nn::ReshapeOp>(n.toI64(v), n.constI64({}), n.builder.getBoolAttr(false));
  return Position{std::nullopt, scalar};
}

/// A constant position in [-length, length + extra) as an index from 0.
FailureOr<int64_t> normalized(NodeImporter &n, int64_t position, int64_t length, int64_t extra) {
  if (position < -length || position >= length + extra)
    return n.fail("position " + Twine(position) + " is out of range for a sequence of " +
                  Twine(length));
  return position < 0 ? position + length : position;
}

/// A run-time position as an index from 0, and its check (to lie in
/// [-length, length + extra)) added to `checks`.
Value normalizedAtRunTime(NodeImporter &n, Value position, int64_t length, int64_t extra,
                          SmallVector<Check> &checks) {
  Value low = n.create<nn::GreaterEqualOp>(position, i64Scalar(n, -length));
  Value high = n.create<nn::LessOp>(position, i64Scalar(n, length + extra));
  Check check{n.create<nn::AndOp>(low, high),
              "the position must be within [" + std::to_string(-length) + ", " +
                  std::to_string(length + extra - 1) + "]",
              n.loc};
  checks.push_back(check);
  Value checked = carryingChecks(n, position, check);
  Value negative = n.create<nn::LessOp>(checked, i64Scalar(n, 0));
  return n.create<nn::WhereOp>(negative, n.create<nn::AddOp>(checked, i64Scalar(n, length)), checked);
}

/// Whether all `elements` have one static type (run-time positions select
/// among them).
LogicalResult oneType(NodeImporter &n, ArrayRef<Value> elements) {
  for (Value v : elements)
    if (v.getType() != elements.front().getType() || !NodeImporter::type(v).hasStaticShape())
      return n.fail("a position given at run time needs elements of one static shape; the "
                    "sequence's " + Twine(elements.size()) + " are not");
  return success();
}

LogicalResult importSequenceConstruct(NodeImporter &n) {
  Elements elements;
  for (size_t i = 0; i < n.numInputs(); ++i) {
    Value v = n.input(i);
    if (!v)
      return n.fail("input " + Twine(i) + " is missing");
    if (!elements.empty() && getElementTypeOrSelf(v.getType()) != getElementTypeOrSelf(elements[0].getType()))
      return n.fail("its tensors have different element types");
    elements.push_back(v);
  }
  n.setSequenceOutput(0, {elements, {}});
  return success();
}

LogicalResult importSequenceEmpty(NodeImporter &n) {
  n.setSequenceOutput(0, {});
  return success();
}

LogicalResult importSequenceLength(NodeImporter &n) {
  FailureOr<SequenceValue> sequence = sequenceInput(n, 0);
  if (failed(sequence))
    return failure();
  n.setOutputs(carryingChecks(n, i64Scalar(n, sequence->elements.size()), sequence->checks));
  return success();
}

LogicalResult importSequenceAt(NodeImporter &n) {
  FailureOr<SequenceValue> sequence = sequenceInput(n, 0);
  if (failed(sequence))
    return failure();
  Elements *elements = &sequence->elements;
  FailureOr<Position> position = positionInput(n, 1);
  if (failed(position))
    return failure();
  int64_t length = elements->size();
  if (position->constant) {
    FailureOr<int64_t> at = normalized(n, *position->constant, length, 0);
    if (failed(at))
      return failure();
    n.setOutputs(carryingChecks(n, (*elements)[*at], sequence->checks));
    return success();
  }
  if (length == 0)
    return n.fail("the sequence is empty");
  if (failed(oneType(n, *elements)))
    return failure();
  Value at = normalizedAtRunTime(n, position->dynamic, length, 0, sequence->checks);
  Value all = n.join(*elements, 0, /*newAxis=*/true);
  n.setOutputs(carryingChecks(n, n.create<nn::GatherOp>(all, at, n.builder.getI64IntegerAttr(0)),
                              sequence->checks));
  return success();
}

LogicalResult importSequenceInsert(NodeImporter &n) {
  FailureOr<SequenceValue> sequence =
      sequenceInput(n, 0, n.input(2) ? LoopSequences::None : LoopSequences::Appended);
  if (failed(sequence))
    return failure();
  Elements *elements = &sequence->elements;
  Value tensor = n.input(1);
  if (!elements->empty() &&
      getElementTypeOrSelf(tensor.getType()) != getElementTypeOrSelf((*elements)[0].getType()))
    return n.fail("the tensor's element type differs from the sequence's");
  int64_t length = elements->size();
  Elements result(*elements);
  if (!n.input(2)) {
    SequenceValue appended = *sequence;
    appended.elements.push_back(tensor);
    n.setSequenceOutput(0, appended);
    return success();
  }
  FailureOr<Position> position = positionInput(n, 2);
  if (failed(position))
    return failure();
  if (position->constant) {
    FailureOr<int64_t> at = normalized(n, *position->constant, length, 1);
    if (failed(at))
      return failure();
    result.insert(result.begin() + *at, tensor);
    n.setSequenceOutput(0, {result, sequence->checks});
    return success();
  }
  Elements all(*elements);
  all.push_back(tensor);
  if (failed(oneType(n, all)))
    return failure();
  // Element i of the result: the old element i before the position, the
  // tensor at it, the old element i - 1 after it.
  Value at = normalizedAtRunTime(n, position->dynamic, length, 1, sequence->checks);
  result.clear();
  for (int64_t i = 0; i <= length; ++i) {
    Value here = n.create<nn::EqualOp>(at, i64Scalar(n, i));
    Value after = i == 0 ? tensor : n.create<nn::WhereOp>(here, tensor, (*elements)[i - 1]);
    if (i == length) {
      result.push_back(after);
      continue;
    }
    Value before = n.create<nn::LessOp>(i64Scalar(n, i), at);
    result.push_back(n.create<nn::WhereOp>(before, (*elements)[i], after));
  }
  n.setSequenceOutput(0, {result, sequence->checks});
  return success();
}

LogicalResult importSequenceErase(NodeImporter &n) {
  FailureOr<SequenceValue> sequence = sequenceInput(n, 0);
  if (failed(sequence))
    return failure();
  Elements *elements = &sequence->elements;
  int64_t length = elements->size();
  if (length == 0)
    return n.fail("the sequence is empty");
  Elements result(*elements);
  if (!n.input(1)) {
    result.pop_back();
    n.setSequenceOutput(0, {result, sequence->checks});
    return success();
  }
  FailureOr<Position> position = positionInput(n, 1);
  if (failed(position))
    return failure();
  if (position->constant) {
    FailureOr<int64_t> at = normalized(n, *position->constant, length, 0);
    if (failed(at))
      return failure();
    result.erase(result.begin() + *at);
    n.setSequenceOutput(0, {result, sequence->checks});
    return success();
  }
  if (failed(oneType(n, *elements)))
    return failure();
  // Element i of the result: the old element i before the position, i + 1
  // from it on.
  Value at = normalizedAtRunTime(n, position->dynamic, length, 0, sequence->checks);
  result.clear();
  for (int64_t i = 0; i + 1 < length; ++i) {
    Value before = n.create<nn::LessOp>(i64Scalar(n, i), at);
    result.push_back(n.create<nn::WhereOp>(before, (*elements)[i], (*elements)[i + 1]));
  }
  n.setSequenceOutput(0, {result, sequence->checks});
  return success();
}

LogicalResult importConcatFromSequence(NodeImporter &n) {
  FailureOr<SequenceValue> sequence = sequenceInput(n, 0, LoopSequences::Stacked);
  if (failed(sequence))
    return failure();
  Elements *elements = &sequence->elements;
  if (elements->empty() && !sequence->stacked)
    return n.fail("the sequence is empty: its concatenation has no type");
  int64_t rank = sequence->stacked ? NodeImporter::type(sequence->stacked).getRank() - 1
                                   : NodeImporter::type(elements->front()).getRank();
  bool newAxis = n.attrInt("new_axis", 0) != 0;
  const onnx::AttributeProto *axisAttr = n.attr("axis");
  if (!axisAttr)
    return n.fail("the axis attribute is required");
  int64_t axis = axisAttr->i(), outRank = rank + (newAxis ? 1 : 0);
  if (axis < -outRank || axis >= outRank)
    return n.fail("axis " + Twine(axis) + " is out of range for rank " + Twine(outRank));
  if (axis < 0)
    axis += outRank;
  if (!sequence->stacked) {
    n.setOutputs(carryingChecks(n, n.join(*elements, axis, newAxis), sequence->checks));
    return success();
  }
  // The stack of a Loop's appends: stacked along a new axis, its rows moved
  // there; concatenated along the first, its first two dims merged.
  Value stacked = sequence->stacked;
  if (newAxis) {
    SmallVector<int64_t> perm;
    for (int64_t d = 1; d <= rank; ++d)
      perm.push_back(d);
    perm.insert(perm.begin() + axis, 0);
    n.setOutputs(axis == 0 ? stacked
                           : n.create<nn::TransposeOp>(stacked, n.builder.getDenseI64ArrayAttr(perm)));
    return success();
  }
  if (axis != 0)
    return n.fail("it concatenates the elements a Loop of a run-time length appended along axis " +
                  Twine(axis) + "; nnc supports axis 0 or a new axis there");
  // A reassociation, not a reshape: nothing to check of a count only the
  // run knows (a while loop's).
  SmallVector<ReassociationIndices> groups{{0, 1}};
  for (int64_t d = 2; d <= rank; ++d)
    groups.push_back({d});
  n.setOutputs(tensor::CollapseShapeOp::create(n.builder, n.loc, stacked, groups).getResult());
  return success();
}

LogicalResult importSplitToSequence(NodeImporter &n) {
  OpBuilder &b = n.builder;
  Value x = n.input(0);
  auto type = NodeImporter::type(x);
  int64_t rank = type.getRank(), axis = n.attrInt("axis", 0);
  if (axis < -rank || axis >= rank)
    return n.fail("axis " + Twine(axis) + " is out of range for rank " + Twine(rank));
  if (axis < 0)
    axis += rank;
  Value split = n.input(1);
  std::optional<SmallVector<int64_t>> given = split ? n.constInts(1) : std::nullopt;
  // Sizes known only at run time (or a split dim that is): as many elements
  // as sizes, each of the shape its size gives.
  if (split && (!given || type.isDynamicDim(axis)) && NodeImporter::type(split).getRank() == 1) {
    FailureOr<SmallVector<Value>> parts = splitAt(n, x, axis, split);
    if (failed(parts))
      return failure();
    n.setSequenceOutput(0, {*parts, {}});
    return success();
  }
  if (type.isDynamicDim(axis))
    return n.fail("the split dim must be static, or the split sizes a list: nnc fixes a "
                  "sequence's length when compiling");
  int64_t extent = type.getDimSize(axis);
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (split) {
    if (!given)
      return n.fail("a split size given at run time as one number is not supported: the number "
                    "of elements would be known only at run time");
    if (NodeImporter::type(split).getRank() == 0) {
      int64_t chunk = given->front();
      if (chunk <= 0)
        return n.fail("the split size must be positive (got " + Twine(chunk) + ")");
      for (int64_t at = 0; at < extent; at += chunk)
        sizes.push_back(std::min(chunk, extent - at));

    } else {
      sizes = *given;
      int64_t total = 0;
      for (int64_t s : sizes) {
        if (s < 0)
          return n.fail("split sizes must not be negative");
        total += s;
      }
      if (total != extent)
        return n.fail("split sizes add up to " + Twine(total) + ", not the dim's " + Twine(extent));
    }
  } else {
    sizes.assign(extent, 1);
    squeeze = n.attrInt("keepdims", 1) == 0;
  }
  if (sizes.empty()) {
    n.setSequenceOutput(0, {});
    return success();
  }
  n.setSequenceOutput(0, {n.cut(x, axis, sizes, squeeze), {}});
  return success();
}
} // namespace

void nnc::onnx_frontend::addSequenceHandlers(std::vector<HandlerEntry> &t) {
  constexpr int64_t M = kMaxOpset;
  t.insert(t.end(), {
      {"SequenceConstruct", 11, M, importSequenceConstruct},
      {"SequenceEmpty", 11, M, importSequenceEmpty},
      {"SequenceLength", 11, M, importSequenceLength},
      {"SequenceAt", 11, M, importSequenceAt},
      {"SequenceInsert", 11, M, importSequenceInsert},
      {"SequenceErase", 11, M, importSequenceErase},
      {"ConcatFromSequence", 11, M, importConcatFromSequence},
      {"SplitToSequence", 11, M, importSplitToSequence},
  });
}

bool nnc::onnx_frontend::takesSequences(llvm::StringRef opType) {
  return llvm::is_contained({"SequenceLength", "SequenceAt", "SequenceInsert", "SequenceErase",
                             "ConcatFromSequence"},
                            opType);
}
