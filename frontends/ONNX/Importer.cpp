//===- Importer.cpp - ONNX graphs to func.func @main of nn ops ------------===//
//
// Checks the model's versions, maps graph inputs (with pinned shapes) to
// function arguments, initializers to nn.constant, and each node through the
// handler registered for its op type and opset. Unsupported nodes are all
// collected before anything is built, so one run names every one of them.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/Importer.h"
#include "frontends/ONNX/NodeImporter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Verifier.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

#include <onnx/defs/schema.h>

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

/// The payload fields set in `a`, as the attribute types they belong to.
static SmallVector<onnx::AttributeProto::AttributeType> fieldsSet(const onnx::AttributeProto &a) {
  using A = onnx::AttributeProto;
  std::pair<bool, A::AttributeType> fields[] = {
      {a.has_f(), A::FLOAT},           {a.has_i(), A::INT},
      {a.has_s(), A::STRING},          {a.has_t(), A::TENSOR},
      {a.has_g(), A::GRAPH},           {a.has_sparse_tensor(), A::SPARSE_TENSOR},
      {a.has_tp(), A::TYPE_PROTO},     {a.floats_size() > 0, A::FLOATS},
      {a.ints_size() > 0, A::INTS},    {a.strings_size() > 0, A::STRINGS},
      {a.tensors_size() > 0, A::TENSORS}, {a.graphs_size() > 0, A::GRAPHS}};
  SmallVector<A::AttributeType> set;
  for (auto [isSet, type] : fields)
    if (isSet)
      set.push_back(type);
  return set;
}

/// What is wrong with attribute `a` read as `expected` ("attribute 'alpha'
/// is INT, but the op declares it FLOAT"), or empty: a type field at odds
/// with the payload set, no type and no single payload, a type other than
/// `expected`, or a tensor or graph type with none given.
static std::string attributeProblem(const onnx::AttributeProto &a,
                                    onnx::AttributeProto::AttributeType expected) {
  using A = onnx::AttributeProto;
  auto name = [](A::AttributeType type) { return A::AttributeType_Name(type); };
  SmallVector<A::AttributeType> set = fieldsSet(a);
  // Models before IR version 2 leave `type` out: the one field set gives it.
  A::AttributeType type = a.type();
  if (type == A::UNDEFINED && set.size() == 1)
    type = set.front();
  std::string quoted = "attribute '" + a.name() + "'";
  if (type == A::UNDEFINED)
    return quoted + " has no type and no single value";
  for (A::AttributeType field : set)
    if (field != type)
      return quoted + " is typed " + name(type) + " but holds a value of type " + name(field);
  if (type != expected)
    return quoted + " is " + name(type) + ", but the op declares it " + name(expected);
  // Numbers and strings always hold one: writers built from onnx.proto3
  // leave out a field equal to its default, so a typed INT with no `i` is 0,
  // as protobuf reads it. A tensor or graph is written whenever it is set.
  bool missing = (type == A::TENSOR && !a.has_t()) || (type == A::GRAPH && !a.has_g()) ||
                 (type == A::SPARSE_TENSOR && !a.has_sparse_tensor()) ||
                 (type == A::TYPE_PROTO && !a.has_tp());
  if (missing)
    return quoted + " of type " + name(type) + " holds no value";
  return "";
}

//===----------------------------------------------------------------------===//
// NodeImporter
//===----------------------------------------------------------------------===//

Value NodeImporter::input(size_t i) const {
  if ((int)i >= node.input_size() || node.input(i).empty())
    return nullptr;
  return lookup(node.input(i));
}

const onnx::AttributeProto *NodeImporter::attr(StringRef name) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

const onnx::AttributeProto *NodeImporter::typedAttr(StringRef name,
                                                     onnx::AttributeProto::AttributeType type) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return nullptr;
  if (std::string problem = attributeProblem(*a, type); !problem.empty()) {
    (void)fail(problem);
    buildFailed = true;
    return nullptr;
  }
  return a;
}

int64_t NodeImporter::attrInt(StringRef name, int64_t otherwise) const {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::INT);
  return a ? a->i() : otherwise;
}

float NodeImporter::attrFloat(StringRef name, float otherwise) const {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::FLOAT);
  return a ? a->f() : otherwise;
}

std::string NodeImporter::attrString(StringRef name, StringRef otherwise) const {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::STRING);
  return a ? a->s() : otherwise.str();
}

std::optional<SmallVector<int64_t>> NodeImporter::attrInts(StringRef name) const {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::INTS);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<SmallVector<float>> NodeImporter::attrFloats(StringRef name) const {
  const onnx::AttributeProto *a = typedAttr(name, onnx::AttributeProto::FLOATS);
  if (!a)
    return std::nullopt;
  return SmallVector<float>(a->floats().begin(), a->floats().end());
}

FailureOr<ElementsAttr> NodeImporter::attrTensor(StringRef name) {
  for (onnx::AttributeProto &a : *node.mutable_attribute())
    if (a.name() == name)
      return importTensor(*builder.getContext(), loc, *a.mutable_t(), modelPath);
  return fail("expected attribute '" + name + "'");
}

std::optional<SmallVector<int64_t>> NodeImporter::constInts(size_t i) const {
  Value v = input(i);
  if (!v)
    return std::nullopt;
  return nn::getConstantInts(v);
}

LogicalResult NodeImporter::fail(const Twine &message) const {
  // A node reports its first error only: what follows a rejected op or a
  // mistyped attribute is its consequence.
  if (buildFailed)
    return failure();
  return emitError(loc) << node.op_type() << " (opset " << opset << "): " << message;
}

FailureOr<int64_t> NodeImporter::checked(CheckedInt value, const Twine &what) const {
  if (std::optional<int64_t> v = value.get())
    return *v;
  return fail(what + " " + value.problem());
}

Operation *NodeImporter::standIn(ValueRange operands) {
  Type type = operands.empty() ? Type(RankedTensorType::get({}, builder.getF32Type()))
                               : operands[0].getType();
  return UnrealizedConversionCastOp::create(builder, loc, TypeRange(type), ValueRange());
}

Value NodeImporter::foldNow(Operation *op) {
  SmallVector<OpFoldResult> folded;
  // A float initializer stays an operand when marked: training makes it a
  // parameter.
  auto isFloatInitializer = [](Value v) {
    Operation *def = v.getDefiningOp();
    return def && def->hasAttr("nn.initializer") &&
           isa<FloatType>(getElementTypeOrSelf(v.getType()));
  };
  if (buildFailed || !isa<nn::NNDialect>(op->getDialect()) ||
      llvm::any_of(op->getOperands(), isFloatInitializer) || failed(op->fold(folded)) ||
      folded.size() != 1)
    return op->getResult(0);
  Value result;
  if (auto value = dyn_cast<Value>(folded[0])) {
    result = value;
  } else {
    Operation *constant = op->getDialect()->materializeConstant(
        builder, cast<Attribute>(folded[0]), op->getResult(0).getType(), loc);
    if (!constant)
      return op->getResult(0);
    result = constant->getResult(0);
  }
  op->erase();
  return result;
}

Value NodeImporter::constI64(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({(int64_t)values.size()}, builder.getI64Type());
  return create<nn::ConstantOp>(DenseElementsAttr::get(type, values));
}

/// Offsets, sizes and strides of a slice of `type` at leading indices `at`.
static std::tuple<SmallVector<OpFoldResult>, SmallVector<OpFoldResult>, SmallVector<OpFoldResult>>
sliceAt(OpBuilder &b, ArrayRef<OpFoldResult> at, RankedTensorType type) {
  SmallVector<OpFoldResult> offsets(at), sizes(at.size(), b.getIndexAttr(1));
  offsets.append(type.getRank(), b.getIndexAttr(0));
  for (int64_t d : type.getShape())
    sizes.push_back(b.getIndexAttr(d));
  return {offsets, sizes, SmallVector<OpFoldResult>(offsets.size(), b.getIndexAttr(1))};
}

Value NodeImporter::insertAt(Value value, Value into, ArrayRef<OpFoldResult> at) {
  auto [offsets, sizes, strides] = sliceAt(builder, at, type(value));
  return tensor::InsertSliceOp::create(builder, loc, value, into, offsets, sizes, strides);
}

Value NodeImporter::extractAt(Value from, ArrayRef<OpFoldResult> at, RankedTensorType type) {
  auto [offsets, sizes, strides] = sliceAt(builder, at, type);
  return tensor::ExtractSliceOp::create(builder, loc, type, from, offsets, sizes, strides);
}

Value NodeImporter::stateSlots(Value first) {
  RankedTensorType t = type(first);
  SmallVector<int64_t> shape{2};
  shape.append(t.getShape().begin(), t.getShape().end());
  Value empty = tensor::EmptyOp::create(builder, loc, shape, t.getElementType());
  return insertAt(first, empty, {builder.getIndexAttr(0)});
}

Value NodeImporter::join(ArrayRef<Value> values, int64_t axis, bool newAxis) {
  SmallVector<Value> parts;
  for (Value v : values)
    parts.push_back(newAxis ? create<nn::UnsqueezeOp>(v, builder.getDenseI64ArrayAttr({axis})) : v);
  if (parts.size() == 1)
    return parts.front();
  return create<nn::ConcatOp>(ValueRange(parts), builder.getI64IntegerAttr(axis));
}

SmallVector<Value> NodeImporter::cut(Value x, int64_t axis, ArrayRef<int64_t> sizes, bool squeeze) {
  Operation *split = createOp<nn::SplitOp>(x, builder.getI64IntegerAttr(axis), builder.getDenseI64ArrayAttr(sizes));
  SmallVector<Value> parts;
  for (size_t i = 0; i < sizes.size(); ++i) {
    // A rejected split's stand-in has one result.
    Value part = split->getNumResults() == sizes.size() ? split->getResult(i) : split->getResult(0);
    parts.push_back(squeeze ? create<nn::SqueezeOp>(part, builder.getDenseI64ArrayAttr({axis})) : part);
  }
  return parts;
}

Value NodeImporter::scalar(Type element, double value) {
  return create<nn::ConstantOp>(cast<ElementsAttr>(scalarAttr(element, value)));
}

DenseElementsAttr NodeImporter::scalarAttr(Type element, double value, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, element);
  DenseElementsAttr attr;
  if (isa<FloatType>(element))
    attr = DenseElementsAttr::get(type, builder.getFloatAttr(element, value).getValue());
  else if (element.isInteger(1))
    attr = DenseElementsAttr::get(type, value != 0);
  else // saturated to int64 first: a cast of a double outside it is undefined
    attr = DenseElementsAttr::get(
        type, APInt(element.getIntOrFloatBitWidth(), (uint64_t)saturatingInt64(value),
                    !element.isUnsignedInteger(), /*implicitTrunc=*/true));
  return attr;
}

NodeImporter::Moments NodeImporter::moments(Value x, ArrayRef<int64_t> axes) {
  auto axesAttr = builder.getDenseI64ArrayAttr(axes);
  Value mean = create<nn::ReduceMeanOp>(x, axesAttr, builder.getBoolAttr(true));
  Value centered = create<nn::SubOp>(x, mean);
  Value variance = create<nn::ReduceMeanOp>(create<nn::MulOp>(centered, centered), axesAttr,
                                            builder.getBoolAttr(true));
  return {mean, centered, variance};
}

Value NodeImporter::toI64(Value value) {
  if (type(value).getElementType().isInteger(64))
    return value;
  return create<nn::CastOp>(value, TypeAttr::get(builder.getI64Type()));
}

FailureOr<int64_t> NodeImporter::normalizeAxis(int64_t axis, int64_t rank) const {
  if (axis < -rank || axis >= rank)
    return fail("axis " + Twine(axis) + " is out of range for rank " + Twine(rank));
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>> NodeImporter::normalizeAxes(ArrayRef<int64_t> axes,
                                                            int64_t rank) const {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    FailureOr<int64_t> n = normalizeAxis(a, rank);
    if (failed(n))
      return failure();
    out.push_back(*n);
  }
  llvm::sort(out);
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    return fail("repeated axis");
  return out;
}

//===----------------------------------------------------------------------===//
// Graph import
//===----------------------------------------------------------------------===//

bool nnc::onnx_frontend::isDefaultDomain(StringRef domain) {
  return domain.empty() || domain == "ai.onnx";
}

namespace {
const std::vector<HandlerEntry> &handlerTable() {
  static const std::vector<HandlerEntry> table = [] {
    std::vector<HandlerEntry> t;
    addElementwiseHandlers(t);
    addNNHandlers(t);
    addShapeHandlers(t);
    addReduceHandlers(t);
    addLossHandlers(t);
    addMiscHandlers(t);
    addRecurrentHandlers(t);
    addSamplingHandlers(t);
    addRoiAlignHandlers(t);
    addQuantizedHandlers(t);
    addTrainingHandlers(t);
    addControlFlowHandlers(t);
    addSequenceHandlers(t);
    addSignalHandlers(t);
    addTextHandlers(t);
    return t;
  }();
  return table;
}

/// The newest opset libonnx's schema registry knows.
constexpr int64_t kSchemaOpset = 17;

/// Checks a node's attributes against its op's schema: each has the type the
/// op declares (attributeProblem), no name is empty, unknown or given twice,
/// and every required one is given. Handlers read attributes by the declared
/// type, and protobuf answers a wrong-typed read with zero: a FLOAT `alpha`
/// stored as INT would compute with 0. Attributes the schema does not know
/// (those added after opset 17) are checked by NodeImporter's accessors when
/// read.
LogicalResult checkAttributes(const onnx::NodeProto &node, const onnx::OpSchema &schema,
                              int64_t opset, Location loc) {
  using A = onnx::AttributeProto;
  auto fail = [&]() {
    return emitError(loc) << node.op_type() << " (opset " << opset << "): ";
  };
  llvm::StringSet<> given;
  for (const A &a : node.attribute()) {
    if (a.name().empty())
      return fail() << "an attribute has no name";
    if (!given.insert(a.name()).second)
      return fail() << "attribute '" << a.name() << "' is given twice";
    // nnc imports no functions, whose attributes a reference would name.
    if (!a.ref_attr_name().empty())
      return fail() << "attribute '" << a.name() << "' refers to attribute '" << a.ref_attr_name()
                    << "' of an enclosing function, and nnc imports no model-local functions";
    auto declared = schema.attributes().find(a.name());
    // A misspelt attribute would leave its op at the default. Past opset 17
    // the schema at hand lacks the attributes added since. ONNX lets any op
    // carry names starting with "__", and LayerNormalization any name (the
    // one schema of libonnx 1.12 that allows unchecked attributes, a flag it
    // has no getter for).
    bool anyName = opset > kSchemaOpset || StringRef(a.name()).starts_with("__") ||
                   node.op_type() == "LayerNormalization";
    if (declared == schema.attributes().end() && !anyName)
      return fail() << "attribute '" << a.name() << "' is not one the op declares";
    if (declared == schema.attributes().end())
      continue;
    if (std::string problem = attributeProblem(a, declared->second.type); !problem.empty())
      return fail() << problem;
  }
  // No attribute required up to opset 17 stopped being required later.
  for (const auto &[name, declared] : schema.attributes())
    if (declared.required && !given.contains(name))
      return fail() << "missing required attribute '" << name << "'";
  return success();
}

/// Checks that a node has the inputs its op requires, and its attributes
/// (checkAttributes). Handlers take required inputs as present: the first
/// min_input, and every one that fills a variadic parameter (Sum's,
/// Concat's), which ONNX never lets be left out with an empty name. The rules
/// come from ONNX's schema (which stops at opset 17; later versions required
/// no more inputs than their predecessors).
LogicalResult checkAgainstSchema(const onnx::NodeProto &node, int64_t opset, Location loc) {
  const onnx::OpSchema *schema =
      onnx::OpSchemaRegistry::Schema(node.op_type(), std::min(opset, kSchemaOpset),
                                     isDefaultDomain(node.domain()) ? "" : node.domain());
  if (!schema)
    return success();
  const auto &formals = schema->inputs();
  // An optional input counts toward min_input but may be left out with an
  // empty name (Scan-8's sequence_lens, before its variadic inputs).
  auto optional = [&](int i) {
    return !formals.empty() &&
           formals[std::min<size_t>(i, formals.size() - 1)].GetOption() == onnx::OpSchema::Optional;
  };
  for (int i = 0; i < schema->min_input(); ++i)
    if (i >= node.input_size() || (node.input(i).empty() && !optional(i)))
      return emitError(loc) << node.op_type() << " (opset " << opset << "): expected at least "
                            << schema->min_input() << " inputs (input " << i << " is missing)";
  for (int i = 0; i < node.input_size() && !formals.empty(); ++i) {
    const auto &formal = formals[std::min<size_t>(i, formals.size() - 1)];
    if (formal.GetOption() == onnx::OpSchema::Variadic && (size_t)i + 1 >= formals.size() &&
        node.input(i).empty())
      return emitError(loc) << node.op_type() << " (opset " << opset << "): input " << i
                            << " is missing (an empty name), but its inputs '" << formal.GetName()
                            << "' are variadic: each must be given";
  }
  return checkAttributes(node, *schema, opset, loc);
}

/// Whether `op` is a ceil_mode pool that drops a last window starting in the
/// trailing padding, as PyTorch, ONNX Runtime and ONNX from 1.16 do. ONNX's
/// earlier shape inference kept that window, so exporters' declared shapes
/// downstream of it are one larger than what the model computes.
template <typename PoolOp> bool dropsLastWindow(Operation *op) {
  auto pool = dyn_cast<PoolOp>(op);
  if (!pool || !pool.getCeilMode())
    return false;
  auto in = cast<RankedTensorType>(pool.getInput().getType());
  auto out = cast<RankedTensorType>(pool.getType());
  int64_t spatial = in.getRank() - 2;
  ArrayRef<int64_t> kernel = pool.getKernel(), strides = pool.getStrides(),
                    dilations = pool.getDilations(), pads = pool.getPads();
  for (int64_t i = 0; i < spatial; ++i) {
    if (in.isDynamicDim(i + 2) || out.isDynamicDim(i + 2))
      continue;
    CheckedInt kept = ceilDiv(CheckedInt(in.getDimSize(i + 2)) + pads[i] + pads[i + spatial] -
                                  (CheckedInt(kernel[i]) - 1) * dilations[i] - 1,
                              strides[i]) + 1;
    if (kept.valueOr(out.getDimSize(i + 2)) != out.getDimSize(i + 2))
      return true;
  }
  return false;
}

/// The handler of `opType` at `version` of `domain`'s opset, or null.
const Handler *findHandler(StringRef domain, StringRef opType, int64_t version) {
  bool defaultDomain = isDefaultDomain(domain);
  for (const HandlerEntry &e : handlerTable())
    if (opType == e.opType && version >= e.minOpset && version <= e.maxOpset &&
        (defaultDomain ? isDefaultDomain(e.domain) : domain == e.domain))
      return &e.handler;
  return nullptr;
}

/// The initializers a graph reads only as a loss's class weights. PyTorch
/// keeps those as buffers, not parameters, so training keeps them constant
/// (marked nn.loss_weight).
llvm::StringSet<> onlyLossWeights(const onnx::GraphProto &graph) {
  llvm::StringSet<> weights, other;
  for (const onnx::NodeProto &node : graph.node()) {
    bool loss = isDefaultDomain(node.domain()) &&
                (node.op_type() == "SoftmaxCrossEntropyLoss" ||
                 node.op_type() == "NegativeLogLikelihoodLoss");
    for (int i = 0; i < node.input_size(); ++i)
      (loss && i == 2 ? weights : other).insert(node.input(i));
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    other.insert(output.name());
  llvm::StringSet<> result;
  for (const auto &name : weights)
    if (!other.contains(name.getKey()))
      result.insert(name.getKey());
  return result;
}

/// Ops of the default domain that may take string tensors: they move
/// elements, read dims, or read or make text (docs/strings.md). Others
/// would read an element as a number (the lowering holds a string as the
/// address of its text), and Loop and Scan cannot carry them.
static bool takesStrings(const onnx::NodeProto &node) {
  static const llvm::StringSet<> kOps = {
      "Cast", "CastLike", "StringNormalizer", "Identity", "Reshape", "Transpose", "Flatten",
      "Squeeze", "Unsqueeze", "Expand", "Tile", "Slice", "Split", "Concat", "Gather", "GatherND",
      "Where", "Shape", "Size", "If", "Dropout", "DepthToSpace", "SpaceToDepth", "OneHot",
      "SequenceConstruct", "SequenceAt", "SequenceInsert", "SequenceErase", "SequenceLength",
      "SequenceEmpty", "ConcatFromSequence", "SplitToSequence"};
  return isDefaultDomain(node.domain()) && kOps.contains(node.op_type());
}

class GraphImporter {
public:
  GraphImporter(MLIRContext &context, onnx::ModelProto &model, const std::string &modelPath,
                const ImportOptions &options)
      : context(context), model(model), modelPath(modelPath), options(options),
        builder(&context) {}

  OwningOpRef<ModuleOp> run();

private:
  /// Ops and diagnostics of a node carry its name (or its position when unnamed).
  Location nodeLoc(const onnx::NodeProto &node, int index) {
    return NameLoc::get(builder.getStringAttr(scope + nodeName(node, index)),
                        FileLineColLoc::get(&context, modelPath, 0, 0));
  }
  /// The scope of subgraph `attr` of `node`: its nodes are named after it
  /// ("loop/body/#1"), since their indices restart at 0.
  std::string subgraphScope(const onnx::NodeProto &node, int index, StringRef attr) {
    return scope + nodeName(node, index) + "/" + attr.str() + "/";
  }
  LogicalResult checkVersions();
  /// The opset version of the node's domain the model imports.
  int64_t nodeVersion(const onnx::NodeProto &node) {
    return isDefaultDomain(node.domain()) ? opset : domainVersions.lookup(node.domain());
  }
  LogicalResult checkSupported();
  /// The number of unsupported nodes of `graph` (and of its Ifs' branches),
  /// each reported.
  int checkSupportedNodes(const onnx::GraphProto &graph);
  /// Imports the nodes of `graph` (the model's, or a branch's) into `values`;
  /// false when one failed (each failure is reported).
  bool importNodes(onnx::GraphProto &graph);
  /// An If: the branch its condition selects when that is known when
  /// compiling (exporters' conditions on static shapes), else both, joined
  /// by a Where per output.
  LogicalResult importIf(onnx::NodeProto &node, int index, Location loc);
  FailureOr<SmallVector<Value>>
  importSubgraph(onnx::GraphProto &graph, ArrayRef<Value> inputs, Location loc,
                 std::string graphScope, ArrayRef<std::optional<SequenceValue>> sequenceInputs = {},
                 SmallVectorImpl<std::optional<SequenceValue>> *sequenceOutputs = nullptr);
  LogicalResult checkSingleAssignment(const llvm::StringSet<> &initializerNames, Location fileLoc);
  FailureOr<Type> inputType(const onnx::ValueInfoProto &info, llvm::StringSet<> &usedDims);
  LogicalResult checkInputShape(const onnx::ValueInfoProto &info, ArrayRef<int64_t> shape,
                                Type element);
  /// The type `info` declares (a graph output or value_info) when it
  /// conflicts with the one imported for `value`.
  std::optional<Type> declaredConflict(const onnx::ValueInfoProto &info, Value value);

  MLIRContext &context;
  onnx::ModelProto &model;
  std::string modelPath;
  const ImportOptions &options;
  OpBuilder builder;
  int64_t opset = 0; // of the default domain
  llvm::StringMap<int64_t> domainVersions; // of the others
  llvm::StringMap<Value> values;

  /// Whether `node` takes a string tensor, and is not one of the ops that may.
  bool takesStringsItCannot(const onnx::NodeProto &node) const {
    if (takesStrings(node))
      return false;
    return llvm::any_of(node.input(), [&](const std::string &name) {
      Value v = name.empty() ? Value() : values.lookup(name);
      return v && isa<nn::StringType>(getElementTypeOrSelf(v.getType()));
    });
  }
  /// Outputs of failed nodes: nodes reading them are skipped, not reported.
  llvm::StringSet<> poisoned;
  /// The prefix of node names in diagnostics: empty in the main graph.
  std::string scope;
  /// Sequence values (SequenceOps.cpp), by name.
  llvm::StringMap<SequenceValue> sequences;

  /// False once the model's declared shapes may legitimately differ from the
  /// computed ones: --input-shape changed a static dim the model declares, or
  /// a ceil_mode pool dropped a window that ONNX's older shape inference kept.
  /// Element types are still compared.
  bool declaredShapesHold = true;
};

LogicalResult GraphImporter::checkVersions() {
  Location loc = FileLineColLoc::get(&context, modelPath, 0, 0);
  // IR version 3 is the oldest with opset imports; 10 is the newest defined.
  if (model.ir_version() < 3 || model.ir_version() > 10)
    return emitError(loc) << "unsupported ONNX IR version " << model.ir_version()
                          << " (supported: 3 to 10)";
  for (const onnx::OperatorSetIdProto &imp : model.opset_import()) {
    if (isDefaultDomain(imp.domain()))
      opset = imp.version();
    else
      domainVersions[imp.domain()] = imp.version();
  }
  // A model of other domains only has its nodes reported as unsupported.
  if (opset != 0 && (opset < kMinOpset || opset > kMaxOpset))
    return emitError(loc) << "unsupported default-domain opset " << opset << " (supported: "
                          << kMinOpset << " to " << kMaxOpset << ")";
  return success();
}

LogicalResult GraphImporter::checkSupported() {
  int unsupported = checkSupportedNodes(model.graph());
  if (unsupported)
    return emitError(FileLineColLoc::get(&context, modelPath, 0, 0))
           << unsupported << " node(s) of the model are not supported";
  return success();
}

/// Whether `node` is an If (of the default domain), which importNodes
/// imports itself, branches included.
static bool isIf(const onnx::NodeProto &node) {
  return node.op_type() == "If" && isDefaultDomain(node.domain());
}

int GraphImporter::checkSupportedNodes(const onnx::GraphProto &graph) {
  int unsupported = 0;
  for (int index = 0; index < graph.node_size(); ++index) {
    const onnx::NodeProto &node = graph.node(index);
    auto checkSubgraphs = [&] {
      for (const onnx::AttributeProto &a : node.attribute()) {
        if (!a.has_g())
          continue;
        std::string outer = std::exchange(scope, subgraphScope(node, index, a.name()));
        unsupported += checkSupportedNodes(a.g());
        scope = std::move(outer);
      }
    };
    if (isIf(node)) {
      checkSubgraphs();
      continue;
    }
    std::string domain = node.domain().empty() ? "ai.onnx" : node.domain();
    int64_t version = nodeVersion(node);
    if (isDefaultDomain(node.domain()) && opset == 0) {
      ++unsupported;
      emitError(nodeLoc(node, index)) << "op '" << node.op_type()
                                      << "' is in the default domain, which the model does not import";
      continue;
    }
    bool known = findHandler(node.domain(), node.op_type(), version);
    if (!known) {
      ++unsupported;
      emitError(nodeLoc(node, index)) << "unsupported op '" << node.op_type() << "' (domain '"
                               << domain << "', opset " << version << ")";
      continue;
    }
    // Loop's and Scan's bodies.
    checkSubgraphs();
  }
  return unsupported;
}

FailureOr<Type> GraphImporter::inputType(const onnx::ValueInfoProto &info,
                                         llvm::StringSet<> &usedDims) {
  Location loc = FileLineColLoc::get(&context, modelPath, 0, 0);
  if (info.type().has_sequence_type())
    return emitError(loc) << "graph input '" << info.name()
                          << "' is a sequence; nnc supports sequences only within a graph";
  if (!info.type().has_tensor_type())
    return emitError(loc) << "graph input '" << info.name() << "' is not a tensor";
  const onnx::TypeProto::Tensor &tensor = info.type().tensor_type();
  Type element = importValueElementType(context, tensor.elem_type());
  if (!element)
    return emitError(loc) << "graph input '" << info.name() << "' has unsupported element type "
                          << dataTypeName(tensor.elem_type());
  SmallVector<int64_t> shape;
  auto pinned = options.inputShapes.find(info.name());
  if (pinned != options.inputShapes.end()) {
    if (tensor.has_shape() && tensor.shape().dim_size() != (int)pinned->second.size())
      return emitError(loc) << "--input-shape for '" << info.name() << "' has "
                            << pinned->second.size() << " dims but the model declares "
                            << tensor.shape().dim_size();
    shape.assign(pinned->second.begin(), pinned->second.end());
    // Declarations elsewhere in the model describe the declared input; once a
    // static dim is pinned to another size they no longer hold.
    if (tensor.has_shape())
      for (auto [d, size] : llvm::zip(tensor.shape().dim(), shape))
        if (d.has_dim_value() && d.dim_value() != size)
          declaredShapesHold = false;
    if (failed(checkInputShape(info, shape, element)))
      return failure();
    return Type(RankedTensorType::get(shape, element));
  }
  if (!tensor.has_shape())
    return emitError(loc) << "graph input '" << info.name()
                          << "' has no declared rank; pin it with --input-shape=" << info.name()
                          << ":DIMS";
  for (const onnx::TensorShapeProto::Dimension &d : tensor.shape().dim()) {
    if (d.has_dim_value()) {
      shape.push_back(d.dim_value());
      continue;
    }
    auto it = d.has_dim_param() ? options.dims.find(d.dim_param()) : options.dims.end();
    if (it != options.dims.end()) {
      usedDims.insert(d.dim_param());
      shape.push_back(it->second);
    } else {
      shape.push_back(ShapedType::kDynamic);
    }
  }
  if (failed(checkInputShape(info, shape, element)))
    return failure();
  return Type(RankedTensorType::get(shape, element));
}

LogicalResult GraphImporter::checkInputShape(const onnx::ValueInfoProto &info,
                                             ArrayRef<int64_t> shape, Type element) {
  if (std::optional<std::string> problem = tensorShapeProblem(shape, element))
    return emitError(FileLineColLoc::get(&context, modelPath, 0, 0))
           << "graph input '" << info.name() << "' has " << *problem;
  return success();
}

std::optional<Type> GraphImporter::declaredConflict(const onnx::ValueInfoProto &info,
                                                    Value value) {
  auto computed = dyn_cast<RankedTensorType>(value.getType());
  if (!computed || !info.type().has_tensor_type())
    return std::nullopt;
  const onnx::TypeProto::Tensor &tensor = info.type().tensor_type();
  // An undeclared (or unknown) element type is not compared.
  Type element = importValueElementType(context, tensor.elem_type());
  if (!element)
    element = computed.getElementType();
  // A symbolic declared dim matches any size, a static one only itself; a
  // dynamic computed dim is left to run time. Shapes that no longer hold (see
  // declaredShapesHold) are not compared.
  std::optional<SmallVector<int64_t>> shape;
  if (tensor.has_shape() && declaredShapesHold) {
    shape.emplace();
    for (const onnx::TensorShapeProto::Dimension &d : tensor.shape().dim())
      shape->push_back(d.has_dim_value() ? d.dim_value() : ShapedType::kDynamic);
  }
  if (element == computed.getElementType() &&
      (!shape || succeeded(verifyCompatibleShape(*shape, computed.getShape()))))
    return std::nullopt;
  return shape ? Type(RankedTensorType::get(*shape, element)) : Type(computed.clone(element));
}

/// ONNX graphs are in single assignment form: each name is defined once, by a
/// graph input, an initializer or one node output. A second definition would
/// silently shadow the first; every one is reported.
LogicalResult GraphImporter::checkSingleAssignment(const llvm::StringSet<> &initializerNames,
                                                   Location fileLoc) {
  const onnx::GraphProto &graph = model.graph();
  llvm::StringMap<std::string> definedBy;
  bool ok = true;
  auto define = [&](const std::string &name, const std::string &what, const std::string &kind,
                    Location loc) {
    if (name.empty())
      return;
    auto [it, inserted] = definedBy.try_emplace(name, what);
    if (!inserted) {
      emitError(loc) << kind << " '" << name << "' is already defined by " << it->second;
      ok = false;
    }
  };
  for (const onnx::TensorProto &t : graph.initializer())
    define(t.name(), "an initializer", "initializer", fileLoc);
  for (const onnx::ValueInfoProto &info : graph.input())
    if (!initializerNames.contains(info.name())) // before IR 4, initializers are inputs too
      define(info.name(), "a graph input", "graph input", fileLoc);
  for (int index = 0; index < graph.node_size(); ++index) {
    const onnx::NodeProto &node = graph.node(index);
    std::string name = node.name().empty() ? "#" + std::to_string(index) : node.name();
    for (const std::string &out : node.output())
      define(out, "node '" + name + "' (" + node.op_type() + ")", node.op_type() + " output",
             nodeLoc(node, index));
  }
  return success(ok);
}

bool GraphImporter::importNodes(onnx::GraphProto &graph) {
  llvm::StringMap<const onnx::ValueInfoProto *> valueInfos;
  for (const onnx::ValueInfoProto &info : graph.value_info())
    valueInfos[info.name()] = &info;

  // A failed node poisons its outputs; nodes reading poisoned values are
  // skipped, so independent errors are all reported.
  bool ok = true;
  for (int index = 0; index < graph.node_size(); ++index) {
    onnx::NodeProto &node = *graph.mutable_node(index);
    Location loc = nodeLoc(node, index);

    bool skip = false;
    for (auto [slot, in] : llvm::enumerate(node.input())) {
      if (in.empty() || values.count(in))
        continue;
      if (sequences.count(in)) {
        // A Loop carries sequences (its inputs after the trip count and
        // condition).
        bool carried = node.op_type() == "Loop" && isDefaultDomain(node.domain()) && slot >= 2;
        if (!carried && (isIf(node) || !takesSequences(node.op_type()) || slot != 0)) {
          emitError(loc) << node.op_type() << " reads '" << in
                         << "', a sequence, which nnc supports only as the first input of the sequence ops";
          ok = false;
          skip = true;
        }
        continue;
      }
      if (!poisoned.contains(in)) {
        emitError(loc) << node.op_type() << " reads '" << in
                       << "', which no earlier node, graph input or initializer defines";
        ok = false;
      }
      skip = true;
    }
    int64_t version = nodeVersion(node);
    if (!skip && failed(checkAgainstSchema(node, version, loc))) {
      ok = false;
      skip = true;
    }
    if (isIf(node)) {
      if (skip || failed(importIf(node, index, loc))) {
        ok &= skip;
        for (const std::string &out : node.output())
          poisoned.insert(out);
      }
      continue;
    }
    NodeImporter importer(node, version, builder, loc,
                          [this](const std::string &name) { return values.lookup(name); }, modelPath);
    importer.lookupSequence = [this](const std::string &name) -> const SequenceValue * {
      auto it = sequences.find(name);
      return it == sequences.end() ? nullptr : &it->second;
    };
    importer.importGraph = [this, &node, index, loc](
                               StringRef name, ArrayRef<Value> inputs,
                               ArrayRef<std::optional<SequenceValue>> sequenceInputs,
                               SmallVectorImpl<std::optional<SequenceValue>> *sequenceOutputs)
        -> FailureOr<SmallVector<Value>> {
      for (onnx::AttributeProto &a : *node.mutable_attribute())
        if (a.name() == name && a.has_g())
          return importSubgraph(*a.mutable_g(), inputs, loc, subgraphScope(node, index, name),
                                sequenceInputs, sequenceOutputs);
      return emitError(loc) << node.op_type() << " has no graph attribute '" << name << "'";
    };
    if (!skip && takesStringsItCannot(node)) {
      emitError(loc) << node.op_type() << " (opset " << version
                     << "): a string input, which only Cast, CastLike, StringNormalizer, Shape, "
                        "Size, If and ops that move elements take (docs/strings.md)";
      ok = false;
      skip = true;
    }
    if (!skip && succeeded((*findHandler(node.domain(), node.op_type(), version))(importer)) &&
        !importer.rejected()) {
      for (int i = 0; i < node.output_size(); ++i) {
        if (node.output(i).empty())
          continue;
        if (i < (int)importer.sequenceOutputs.size() && importer.sequenceOutputs[i]) {
          sequences[node.output(i)] = *importer.sequenceOutputs[i];
          continue;
        }
        if (i >= (int)importer.outputs.size() || !importer.outputs[i]) {
          emitError(loc) << node.op_type() << " (opset " << version << "): output " << i
                         << " is not supported";
          ok = false;
          poisoned.insert(node.output(i));
          continue;
        }
        values[node.output(i)] = importer.outputs[i];
        if (Operation *def = importer.outputs[i].getDefiningOp();
            def && (dropsLastWindow<nn::MaxPoolOp>(def) || dropsLastWindow<nn::AvgPoolOp>(def)))
          declaredShapesHold = false;
        const onnx::ValueInfoProto *info = valueInfos.lookup(node.output(i));
        if (std::optional<Type> declared = info ? declaredConflict(*info, importer.outputs[i])
                                                : std::nullopt) {
          // Diagnostics quote types themselves.
          emitError(loc) << "value_info declares '" << node.output(i) << "' as " << *declared
                         << " but the node computes " << importer.outputs[i].getType();
          ok = false;
        }
      }
      continue;
    }
    ok &= skip; // a skipped node was already reported upstream
    for (const std::string &out : node.output())
      poisoned.insert(out);
  }
  return ok;
}

LogicalResult GraphImporter::importIf(onnx::NodeProto &node, int index, Location loc) {
  onnx::GraphProto *branches[2] = {nullptr, nullptr}; // then, else
  for (onnx::AttributeProto &a : *node.mutable_attribute()) {
    if (a.name() == "then_branch" && a.has_g())
      branches[0] = a.mutable_g();
    else if (a.name() == "else_branch" && a.has_g())
      branches[1] = a.mutable_g();
  }
  if (!branches[0] || !branches[1] || node.input_size() != 1 || node.input(0).empty())
    return emitError(loc) << "If needs a condition and then_branch and else_branch graphs";
  Value cond = values.lookup(node.input(0));
  auto condType = cast<RankedTensorType>(cond.getType());
  if (!condType.getElementType().isInteger(1) || !condType.hasStaticShape() ||
      condType.getNumElements() != 1)
    return emitError(loc) << "If's condition must be one bool (got " << cond.getType() << ")";
  // One branch's outputs, its names scoped to it.
  auto importBranch = [&](onnx::GraphProto &branch) -> FailureOr<SmallVector<Value>> {
    StringRef attr = &branch == branches[0] ? "then_branch" : "else_branch";
    FailureOr<SmallVector<Value>> results =
        importSubgraph(branch, {}, loc, subgraphScope(node, index, attr));
    if (failed(results))
      return failure();
    if ((int)results->size() != node.output_size())
      return emitError(loc) << "If branch '" << branch.name() << "' has " << results->size()
                            << " outputs, the node " << node.output_size();
    return results;
  };
  SmallVector<Value> outputs;
  DenseIntElementsAttr known;
  if (matchPattern(cond, m_Constant(&known))) {
    FailureOr<SmallVector<Value>> taken = importBranch(*branches[(*known.value_begin<APInt>()).isZero() ? 1 : 0]);
    if (failed(taken))
      return failure();
    outputs = *taken;
  } else {
    // The condition as a 0-D flag, before both branches (their checks read it).
    Value scalar = cond;
    if (condType.getRank() != 0)
      scalar = nn::ReshapeOp::create(builder, loc, RankedTensorType::get({}, condType.getElementType()),
                                     cond,
                                     nn::ConstantOp::create(builder, loc,
                                                            cast<ElementsAttr>(DenseElementsAttr::get(
                                                                RankedTensorType::get({0}, builder.getI64Type()),
                                                                ArrayRef<int64_t>{}))),
                                     builder.getBoolAttr(false));
    Block *block = builder.getInsertionBlock();
    Operation *last = block->empty() ? nullptr : &block->back();
    FailureOr<SmallVector<Value>> thenOutputs = importBranch(*branches[0]);
    if (failed(thenOutputs))
      return failure();
    Operation *thenLast = block->empty() ? nullptr : &block->back();
    FailureOr<SmallVector<Value>> elseOutputs = importBranch(*branches[1]);
    if (failed(elseOutputs))
      return failure();
    auto after = [&](Operation *op) { return op ? std::next(op->getIterator()) : block->begin(); };
    // The axis along which `empty` (static, no elements) is `other` (its
    // type but for that dim, dynamic there) cut to nothing.
    auto emptyAxis = [](Value empty, Value other) -> std::optional<int64_t> {
      auto e = cast<RankedTensorType>(empty.getType()), o = cast<RankedTensorType>(other.getType());
      if (!e.hasStaticShape() || e.getNumElements() != 0 || e.getRank() != o.getRank() ||
          e.getElementType() != o.getElementType())
        return std::nullopt;
      std::optional<int64_t> axis;
      for (int64_t d = 0; d < e.getRank(); ++d) {
        if (!axis && e.getDimSize(d) == 0 && o.isDynamicDim(d))
          axis = d;
        else if (e.getDimSize(d) != o.getDimSize(d))
          return std::nullopt;
      }
      return axis;
    };
    // `other` cut to no rows along that axis where the empty branch is taken
    // (`cond` is `emptyWhen`): a Slice to an end the condition picks, whose
    // size the lowering bounds by `other`'s (docs/dynamic-shapes.md).
    auto emptyOr = [&](Value cond, bool emptyWhen, Value empty, Value other) -> Value {
      auto i64s = [&](int64_t v) {
        return nn::ConstantOp::create(builder, loc,
                                      cast<ElementsAttr>(DenseElementsAttr::get(
                                          RankedTensorType::get({1}, builder.getI64Type()), ArrayRef<int64_t>{v})))
            .getResult();
      };
      Value none = i64s(0), all = i64s(std::numeric_limits<int64_t>::max());
      Value end = nn::WhereOp::create(builder, loc, none.getType(), cond, emptyWhen ? none : all,
                                      emptyWhen ? all : none);
      return nn::SliceOp::create(builder, loc, other.getType(), other, none, end,
                                 i64s(*emptyAxis(empty, other)), i64s(1));
    };
    // A branch that gives empty tensors (a detector's "no boxes: return
    // nothing") against one whose dims are counts: see emptyOr.
    std::optional<bool> emptyThen;
    for (bool then : {true, false})
      if (llvm::all_of(llvm::zip(*thenOutputs, *elseOutputs), [&](auto pair) {
            auto [a, b] = pair;
            return emptyAxis(then ? a : b, then ? b : a).has_value();
          }))
        emptyThen = then;
    // Both branches run: one whose shapes are known only at run time could
    // fail its checks (or differ from the other's) while not taken.
    auto dynamic = [](Type t) {
      auto tensor = dyn_cast<RankedTensorType>(t);
      return tensor && !tensor.hasStaticShape();
    };
    for (Operation &op : llvm::make_range(after(last), block->end())) {
      bool inThen = thenLast && op.getBlock() == block && !thenLast->isBeforeInBlock(&op);
      bool mayBeDynamic = emptyThen && inThen != *emptyThen;
      if (!mayBeDynamic &&
          (llvm::any_of(op.getOperandTypes(), dynamic) || llvm::any_of(op.getResultTypes(), dynamic)))
        return emitError(loc) << "If with a condition known only at run time: nnc computes both "
                                 "branches and selects, which needs their shapes known when "
                                 "compiling (pin the model's dims)";
      // A loop of a run-time length would run taken or not (a while loop
      // might then never end).
      if (isa<scf::ForOp, scf::WhileOp>(op))
        return emitError(loc) << "If with a condition known only at run time: nnc computes both "
                                 "branches and selects, so a Loop of a run-time length in a "
                                 "branch would run whether the branch is taken or not; not "
                                 "supported";
    }
    // A branch's run-time checks (a position within a sequence) hold only
    // where it is taken.
    SmallVector<std::pair<nn::CheckOp, bool>> checks; // and whether in the then branch
    for (Operation &op : llvm::make_range(after(last), after(thenLast)))
      if (auto check = dyn_cast<nn::CheckOp>(op))
        checks.push_back({check, true});
    for (Operation &op : llvm::make_range(after(thenLast), block->end()))
      if (auto check = dyn_cast<nn::CheckOp>(op))
        checks.push_back({check, false});
    if (!checks.empty()) {
      // Its negation, before both branches too.
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPoint(&*after(last));
      Value taken = scalar;
      Value notTaken = nn::NotOp::create(builder, loc, taken.getType(), taken);
      for (auto [check, inThen] : checks) {
        builder.setInsertionPoint(check);
        Value valid = check->getOperand(1);
        check->setOperand(1, nn::OrOp::create(builder, loc, valid.getType(), valid,
                                              inThen ? notTaken : taken));
      }
    }
    for (auto [i, pair] : llvm::enumerate(llvm::zip(*thenOutputs, *elseOutputs))) {
      auto [a, b] = pair;
      if (emptyThen) {
        outputs.push_back(*emptyThen ? emptyOr(scalar, true, a, b) : emptyOr(scalar, false, b, a));
        continue;
      }
      if (a.getType() != b.getType())
        return emitError(loc) << "If with a condition known only at run time: its branches give output "
                              << i << " as " << a.getType() << " and " << b.getType()
                              << "; nnc computes both and selects, which needs one type";
      outputs.push_back(nn::WhereOp::create(builder, loc, a.getType(), scalar, a, b));
    }
  }
  for (auto [name, v] : llvm::zip(node.output(), outputs))
    if (!name.empty())
      values[name] = v;
  return success();
}

/// `graph` (a node's subgraph) in a scope of its own: the values around it
/// visible, its initializers, its inputs (bound to `inputs`) and its nodes'
/// outputs gone afterwards. Its outputs in order.
FailureOr<SmallVector<Value>>
GraphImporter::importSubgraph(onnx::GraphProto &graph, ArrayRef<Value> inputs, Location loc,
                              std::string graphScope,
                              ArrayRef<std::optional<SequenceValue>> sequenceInputs,
                              SmallVectorImpl<std::optional<SequenceValue>> *sequenceOutputs) {
  if (graph.input_size() != (int)inputs.size())
    return emitError(loc) << "subgraph '" << graph.name() << "' has " << graph.input_size()
                          << " inputs, but the node gives it " << inputs.size();
  llvm::StringMap<Value> outer = values;
  llvm::StringMap<SequenceValue> outerSequences = sequences;
  std::string outerScope = std::exchange(scope, std::move(graphScope));
  llvm::scope_exit restore([&] {
    values = std::move(outer);
    sequences = std::move(outerSequences);
    scope = std::move(outerScope);
  });
  for (onnx::TensorProto &t : *graph.mutable_initializer()) {
    FailureOr<ElementsAttr> attr = importTensor(context, loc, t, modelPath);
    if (failed(attr))
      return failure();
    values[t.name()] = nn::ConstantOp::create(builder, loc, *attr).getResult();
  }
  for (auto [i, info] : llvm::enumerate(graph.input())) {
    if (i < sequenceInputs.size() && sequenceInputs[i])
      sequences[info.name()] = *sequenceInputs[i];
    else
      values[info.name()] = inputs[i];
  }
  if (!importNodes(graph))
    return failure();
  SmallVector<Value> results;
  if (sequenceOutputs)
    sequenceOutputs->assign(graph.output_size(), std::nullopt);
  for (auto [i, info] : llvm::enumerate(graph.output())) {
    Value v = values.lookup(info.name());
    if (!v && sequences.count(info.name())) {
      if (!sequenceOutputs)
        return emitError(loc) << "subgraph '" << graph.name() << "': output '" << info.name()
                              << "' is a sequence, which nnc supports only within a graph";
      (*sequenceOutputs)[i] = sequences.lookup(info.name());
      results.push_back(Value());
      continue;
    }
    if (!v)
      return emitError(loc) << "subgraph '" << graph.name() << "': output '" << info.name()
                            << "' is never computed";
    results.push_back(v);
  }
  return results;
}

OwningOpRef<ModuleOp> GraphImporter::run() {
  if (failed(checkVersions()) || failed(checkSupported()))
    return nullptr;
  onnx::GraphProto &graph = *model.mutable_graph();
  Location fileLoc = FileLineColLoc::get(&context, modelPath, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());

  // Initializers; before IR version 4 they are listed among the inputs as well.
  llvm::StringSet<> initializerNames;
  for (const onnx::TensorProto &t : graph.initializer())
    initializerNames.insert(t.name());

  if (failed(checkSingleAssignment(initializerNames, fileLoc)))
    return nullptr;

  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  llvm::StringSet<> usedDims, inputNames;
  for (const onnx::ValueInfoProto &info : graph.input()) {
    if (initializerNames.contains(info.name()))
      continue;
    FailureOr<Type> type = inputType(info, usedDims);
    if (failed(type))
      return nullptr;
    argTypes.push_back(*type);
    argNames.push_back(info.name());
    inputNames.insert(info.name());
  }
  for (const auto &[name, shape] : options.inputShapes)
    if (!inputNames.contains(name)) {
      emitError(fileLoc) << "--input-shape names '" << name << "', which is not a graph input";
      return nullptr;
    }
  for (const auto &[name, value] : options.dims)
    if (!usedDims.contains(name)) {
      emitError(fileLoc) << "--dim names '" << name << "', which no graph input uses";
      return nullptr;
    }

  auto func = func::FuncOp::create(builder, fileLoc, "main", builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "nn.name", builder.getStringAttr(name));
    values[name] = body->getArgument(i);
  }
  builder.setInsertionPointToStart(body);

  llvm::StringSet<> lossWeights = options.markInitializers ? onlyLossWeights(graph)
                                                           : llvm::StringSet<>();
  for (onnx::TensorProto &t : *graph.mutable_initializer()) {
    Location loc = NameLoc::get(builder.getStringAttr(t.name()), fileLoc);
    FailureOr<ElementsAttr> attr = importTensor(context, loc, t, modelPath);
    if (failed(attr))
      return nullptr;
    auto constant = nn::ConstantOp::create(builder, loc, *attr);
    if (options.markInitializers) {
      constant->setAttr("nn.initializer", builder.getStringAttr(t.name()));
      if (lossWeights.contains(t.name()))
        constant->setAttr("nn.loss_weight", builder.getUnitAttr());
    }
    values[t.name()] = constant.getResult();
  }
  for (const onnx::SparseTensorProto &t : graph.sparse_initializer()) {
    emitError(fileLoc) << "sparse initializer '" << t.values().name() << "' is not supported";
    return nullptr;
  }

  if (!importNodes(graph))
    return nullptr;

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &info : graph.output()) {
    Value v = values.lookup(info.name());
    if (!v && sequences.count(info.name())) {
      emitError(fileLoc) << "graph output '" << info.name()
                         << "' is a sequence; nnc supports sequences only within a graph";
      return nullptr;
    }
    if (!v) {
      emitError(fileLoc) << "graph output '" << info.name() << "' is never computed";
      return nullptr;
    }
    if (std::optional<Type> declared = declaredConflict(info, v)) {
      // At the value's definition: the node computing it, when one does.
      emitError(v.getLoc()) << "graph output '" << info.name() << "' is declared as "
                            << *declared << " but computes " << v.getType();
      return nullptr;
    }
    results.push_back(v);
  }
  func::ReturnOp::create(builder, fileLoc, results);
  func.setType(builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, info] : llvm::enumerate(graph.output()))
    func.setResultAttr(i, "nn.name", builder.getStringAttr(info.name()));

  if (failed(verify(*module)))
    return nullptr;
  return module;
}
} // namespace

std::string nnc::onnx_frontend::nodeName(const onnx::NodeProto &node, int index) {
  return node.name().empty() ? "#" + std::to_string(index) : node.name();
}

OwningOpRef<ModuleOp> nnc::onnx_frontend::importModel(MLIRContext &context, onnx::ModelProto &model,
                                                      const std::string &modelPath,
                                                      const ImportOptions &options) {
  context.loadDialect<nn::NNDialect, func::FuncDialect, arith::ArithDialect, scf::SCFDialect,
                      tensor::TensorDialect>();
  if (failed(upgradeOpset(context, model, modelPath, options)))
    return nullptr;
  return GraphImporter(context, model, modelPath, options).run();
}
