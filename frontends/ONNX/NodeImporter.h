//===- NodeImporter.h - what an op handler sees -----------------*- C++ -*-===//
//
// ONNX coverage is a table of small handlers, each registered for an op type
// and the range of default-domain opsets whose semantics it implements. A
// handler reads its node through NodeImporter and builds nn ops.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_FRONTENDS_ONNX_NODEIMPORTER_H
#define NNC_FRONTENDS_ONNX_NODEIMPORTER_H

#include "dialects/NN/IR/CheckedInt.h"
#include "dialects/NN/IR/NNOps.h"
#include "frontends/ONNX/Importer.h"

#include "mlir/IR/Builders.h"

#include <onnx/onnx_pb.h>

#include <functional>

namespace nnc::onnx_frontend {

class NodeImporter;

/// A sequence as the importer keeps it (SequenceOps.cpp): its elements'
/// values, and the run-time checks its making needs (a position given at run
/// time), as validity flags and rules, which every tensor taken from it
/// carries: a check nothing reads would be dropped.
struct SequenceCheck {
  mlir::Value holds;
  std::string rule;
  mlir::Location loc; // of the node that needs it
};
struct SequenceValue {
  llvm::SmallVector<mlir::Value> elements;
  llvm::SmallVector<SequenceCheck> checks;
  /// A sequence a Loop of a run-time length built by appending one element
  /// per iteration: the rows of this [iterations, ...] tensor (elements
  /// empty). ConcatFromSequence reads it; other ops refuse it.
  mlir::Value stacked;
  /// Inside such a Loop's body, the sequence it carries as its loop-carried
  /// value `carrierSlot`: what earlier iterations appended is unknown there,
  /// `elements` are this iteration's appends. Only appending to it is
  /// supported, and only as the same loop-carried value's next.
  mlir::Operation *carrier = nullptr;
  unsigned carrierSlot = 0;
};

using Handler = std::function<llvm::LogicalResult(NodeImporter &)>;

struct HandlerEntry {
  const char *opType;
  int64_t minOpset, maxOpset; // versions of `domain`'s opset
  Handler handler;
  const char *domain = ""; // "" is ONNX's default domain
};

/// Whether `domain` names ONNX's default domain ("" or "ai.onnx").
bool isDefaultDomain(llvm::StringRef domain);

/// Each op family file contributes its table.
void addElementwiseHandlers(std::vector<HandlerEntry> &table);
void addNNHandlers(std::vector<HandlerEntry> &table);
void addShapeHandlers(std::vector<HandlerEntry> &table);
void addReduceHandlers(std::vector<HandlerEntry> &table);
void addLossHandlers(std::vector<HandlerEntry> &table);
void addMiscHandlers(std::vector<HandlerEntry> &table);
void addRecurrentHandlers(std::vector<HandlerEntry> &table);
void addSamplingHandlers(std::vector<HandlerEntry> &table);
void addRoiAlignHandlers(std::vector<HandlerEntry> &table);
void addQuantizedHandlers(std::vector<HandlerEntry> &table);
void addTrainingHandlers(std::vector<HandlerEntry> &table);
void addControlFlowHandlers(std::vector<HandlerEntry> &table);
void addSequenceHandlers(std::vector<HandlerEntry> &table);
void addSignalHandlers(std::vector<HandlerEntry> &table);
void addTextHandlers(std::vector<HandlerEntry> &table);
/// Whether op `opType` reads a sequence as its first input (SequenceOps.cpp);
/// no other input of any op may be one.
bool takesSequences(llvm::StringRef opType);

/// Converts a TensorProto to an elements attribute; large raw buffers are
/// moved into a dense resource. External data is found beside `modelPath`, the
/// model file.
mlir::FailureOr<mlir::ElementsAttr> importTensor(mlir::MLIRContext &context, mlir::Location loc,
                                                 onnx::TensorProto &tensor,
                                                 const std::string &modelPath);

/// The nn element type for an ONNX TensorProto data type, or null.
/// Numbers and bool only: see importValueElementType.
mlir::Type importElementType(mlir::MLIRContext &context, int64_t dataType);

/// importElementType, or `!nn.string` for STRING: for the types of values
/// that may hold text (graph inputs, Cast's result), not constants.
mlir::Type importValueElementType(mlir::MLIRContext &context, int64_t dataType);

/// Human-readable name of an ONNX data type (for diagnostics).
std::string dataTypeName(int64_t dataType);

class NodeImporter;

/// The convolution of `x` by `w` (plus `bias`, may be null) that the node's
/// Conv attributes describe (strides, dilations, pads or auto_pad, group).
mlir::FailureOr<mlir::Value> buildConvolution(NodeImporter &n, mlir::Value x, mlir::Value w,
                                              mlir::Value bias);

/// Nodes whose axes, part sizes or depth are run-time inputs
/// (RuntimeParameters.cpp): their shapes are computed from the values before
/// the run, which checks them.
llvm::LogicalResult importSqueezeAt(NodeImporter &n, mlir::Value x, mlir::Value axes);
llvm::LogicalResult importUnsqueezeAt(NodeImporter &n, mlir::Value x, mlir::Value axes);
llvm::LogicalResult importCumSumAt(NodeImporter &n, mlir::Value x, mlir::Value axis);
llvm::LogicalResult importSplitAt(NodeImporter &n, mlir::Value x, int64_t axis, mlir::Value sizes);
/// `x` split along `axis` into parts of the run-time `sizes` (a 1-D integer
/// tensor of static length: the number of parts), checked before the run.
mlir::FailureOr<llvm::SmallVector<mlir::Value>> splitAt(NodeImporter &n, mlir::Value x,
                                                        int64_t axis, mlir::Value sizes);
/// A reduction over `axes`, for reductions that compose: `reduceKeeping(y,
/// d)` reduces y along d keeping the dim, and reducing the reduced gives the
/// reduction over both (sum, max, min, product, L1, L2, log-sum-exp); a
/// `mean` is the sum's, divided by the count.
mlir::FailureOr<mlir::Value>
reduceAt(NodeImporter &n, mlir::Value x, mlir::Value axes, bool keepDims,
         llvm::function_ref<mlir::Value(mlir::Value, int64_t)> reduceKeeping, bool mean);
/// OneHot's depth given at run time: the depth as a checked 0-D i64, and the
/// ramp 0..depth-1 along `axis` of a rank-`rank` i64 tensor (size 1 elsewhere).
struct DepthRamp {
  mlir::Value depth, ramp;
};
mlir::FailureOr<DepthRamp> depthRampAt(NodeImporter &n, mlir::Value depth, int64_t axis,
                                       int64_t rank);

class NodeImporter {
public:
  using ValueLookup = std::function<mlir::Value(const std::string &)>;

  NodeImporter(onnx::NodeProto &node, int64_t opset, mlir::OpBuilder &builder,
               mlir::Location loc, ValueLookup lookup, const std::string &modelPath)
      : node(node), opset(opset), builder(builder), loc(loc), lookup(std::move(lookup)),
        modelPath(modelPath) {}

  onnx::NodeProto &node;
  const int64_t opset;
  mlir::OpBuilder &builder;
  const mlir::Location loc;

  /// Input `i`, or null when the node omits it (absent or empty name).
  mlir::Value input(size_t i) const;
  size_t numInputs() const { return node.input_size(); }
  size_t numOutputs() const { return node.output_size(); }
  /// Whether output `i` is requested (present with a nonempty name).
  bool hasOutput(size_t i) const { return (int)i < node.output_size() && !node.output(i).empty(); }

  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  // The typed readers below fail the node (once, naming the attribute) when
  // the attribute holds another type, and return `otherwise` or nullopt.
  int64_t attrInt(llvm::StringRef name, int64_t otherwise) const;
  float attrFloat(llvm::StringRef name, float otherwise) const;
  std::string attrString(llvm::StringRef name, llvm::StringRef otherwise) const;
  std::optional<llvm::SmallVector<int64_t>> attrInts(llvm::StringRef name) const;
  std::optional<llvm::SmallVector<float>> attrFloats(llvm::StringRef name) const;
  /// The tensor attribute `name` as elements, or failure (with an error) when unreadable.
  mlir::FailureOr<mlir::ElementsAttr> attrTensor(llvm::StringRef name);

  /// The constant integer values of input `i` (an initializer or Constant output).
  std::optional<llvm::SmallVector<int64_t>> constInts(size_t i) const;

  /// Emits an error naming the node and returns failure.
  llvm::LogicalResult fail(const llvm::Twine &message) const;
  /// `value`, or an error naming the node when computing `what` overflowed or
  /// divided by zero ("blocksize^2 overflows int64").
  mlir::FailureOr<int64_t> checked(CheckedInt value, const llvm::Twine &what) const;

  /// Imports the node's graph attribute `name` once, its inputs bound to
  /// `inputs` (input i to sequenceInputs[i] instead where that is set), in a
  /// scope of its own; returns its outputs, a sequence output as a null
  /// value and its sequence in (*sequenceOutputs)[i] (Loop and Scan call it
  /// once per iteration).
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  importSubgraph(llvm::StringRef name, mlir::ArrayRef<mlir::Value> inputs,
                 llvm::ArrayRef<std::optional<SequenceValue>> sequenceInputs = {},
                 llvm::SmallVectorImpl<std::optional<SequenceValue>> *sequenceOutputs = nullptr) {
    return importGraph(name, inputs, sequenceInputs, sequenceOutputs);
  }
  std::function<mlir::FailureOr<llvm::SmallVector<mlir::Value>>(
      llvm::StringRef, mlir::ArrayRef<mlir::Value>, llvm::ArrayRef<std::optional<SequenceValue>>,
      llvm::SmallVectorImpl<std::optional<SequenceValue>> *)>
      importGraph; // set by the graph importer

  /// Input `i` as a sequence, or null when it is not one.
  const SequenceValue *sequence(size_t i) const {
    if ((int)i >= node.input_size() || node.input(i).empty() || !lookupSequence)
      return nullptr;
    return lookupSequence(node.input(i));
  }
  std::function<const SequenceValue *(const std::string &)> lookupSequence;
  /// Records output `i` as sequence `value`.
  void setSequenceOutput(size_t i, SequenceValue value) {
    if (sequenceOutputs.size() <= i)
      sequenceOutputs.resize(i + 1);
    sequenceOutputs[i] = std::move(value);
  }
  llvm::SmallVector<std::optional<SequenceValue>> sequenceOutputs;

  /// Records the results, in order, as the node's outputs.
  void setOutputs(mlir::ValueRange values) { outputs.assign(values.begin(), values.end()); }
  llvm::SmallVector<mlir::Value> outputs;

  // Builders shared by handlers.

  /// Builds `Op` with inferred result types. ONNX models can be invalid, so a
  /// rejected op is reported (once per node) instead of asserting, and a
  /// stand-in value lets the handler finish; the node then counts as failed.
  template <typename Op, typename... Args> mlir::Operation *createOp(Args &&...args) {
    mlir::OperationState state(loc, Op::getOperationName());
    Op::build(builder, state, mlir::TypeRange(), std::forward<Args>(args)...);
    llvm::SmallVector<mlir::Type> types;
    mlir::MLIRContext *context = builder.getContext();
    std::optional<mlir::Location> reportAt;
    if (!buildFailed)
      reportAt = loc;
    if (succeeded(Op::inferReturnTypes(context, reportAt, state.operands,
                                       state.attributes.getDictionary(context),
                                       state.getRawProperties(), state.regions, types))) {
      state.addTypes(types);
      return builder.create(state);
    }
    buildFailed = true;
    return standIn(state.operands);
  }
  /// Builds a single-result `Op`, folded to a constant at once when its
  /// operands are constants, so shapes computed from constants are static
  /// while the rest of the graph is imported.
  template <typename Op, typename... Args> mlir::Value create(Args &&...args) {
    return foldNow(createOp<Op>(std::forward<Args>(args)...));
  }
  /// Whether an op of this node was rejected.
  bool rejected() const { return buildFailed; }
  /// A 1-D i64 constant.
  mlir::Value constI64(llvm::ArrayRef<int64_t> values);
  /// `values` joined along `axis`, each given a size-1 dim there first when
  /// `newAxis` (a stack).
  mlir::Value join(llvm::ArrayRef<mlir::Value> values, int64_t axis, bool newAxis);
  /// `x` cut along `axis` into parts of `sizes`, that dim dropped from each
  /// when `squeeze`.
  llvm::SmallVector<mlir::Value> cut(mlir::Value x, int64_t axis, llvm::ArrayRef<int64_t> sizes,
                                     bool squeeze);
  // Loops over a run-time count (RecurrentOps.cpp, ControlFlowOps.cpp)
  // carry tensors updated by insertion only, which bufferize in place.

  /// `value` inserted into `into` at the leading indices `at` (one per
  /// leading dim `into` has beyond `value`'s).
  mlir::Value insertAt(mlir::Value value, mlir::Value into, llvm::ArrayRef<mlir::OpFoldResult> at);
  /// The slice of `from` at the leading indices `at`, of `type`.
  mlir::Value extractAt(mlir::Value from, llvm::ArrayRef<mlir::OpFoldResult> at,
                        mlir::RankedTensorType type);
  /// Two slots [2, ...] of a loop-carried state, `first` in slot 0:
  /// iteration i reads slot i mod 2 and writes the other.
  mlir::Value stateSlots(mlir::Value first);
  /// A 0-D constant of `element` type holding `value`.
  mlir::Value scalar(mlir::Type element, double value);
  /// A splat of `value` as an attribute of `element` type and `shape`.
  mlir::DenseElementsAttr scalarAttr(mlir::Type element, double value,
                                     llvm::ArrayRef<int64_t> shape = {});
  /// The mean of `x` over `axes` (kept as size-1 dims), `x` minus it, and the
  /// variance (the mean squared deviation, without Bessel's correction).
  struct Moments {
    mlir::Value mean, centered, variance;
  };
  Moments moments(mlir::Value x, llvm::ArrayRef<int64_t> axes);
  /// `value` converted to i64 if it has another integer type (ONNX allows int32 indices).
  mlir::Value toI64(mlir::Value value);

  static int64_t rank(mlir::Value v) {
    return llvm::cast<mlir::RankedTensorType>(v.getType()).getRank();
  }
  static mlir::RankedTensorType type(mlir::Value v) {
    return llvm::cast<mlir::RankedTensorType>(v.getType());
  }
  /// `axis` made non-negative for `rank` dims; fails with a message when out of range.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank) const;
  /// Sorted, unique, non-negative `axes` for `rank` dims.
  mlir::FailureOr<llvm::SmallVector<int64_t>> normalizeAxes(llvm::ArrayRef<int64_t> axes,
                                                            int64_t rank) const;

private:
  /// Attribute `name` when it holds `type`; null when absent, or when it
  /// holds another type (the node then fails, reported once).
  const onnx::AttributeProto *typedAttr(llvm::StringRef name,
                                        onnx::AttributeProto::AttributeType type) const;
  mlir::Operation *standIn(mlir::ValueRange operands);
  mlir::Value foldNow(mlir::Operation *op);

  // Set by const attribute readers too.
  mutable bool buildFailed = false;
  ValueLookup lookup;
  const std::string &modelPath;
};

} // namespace nnc::onnx_frontend

#endif // NNC_FRONTENDS_ONNX_NODEIMPORTER_H
