//===- OpsetUpgrade.cpp - models older than opset 7, upgraded on import ----===//
//
// Opsets 1-6 differ from 7 in ways no handler should carry by hand (explicit
// `broadcast`/`axis` attributes, `consumed_inputs`, `is_test`, Upsample's
// scale attributes): ONNX's own version converter rewrites such a model to
// opset 7 before import, and the handlers only ever see opset 7 and later.
//
// The converter copies every tensor through its own IR, which would double the
// memory a model's weights take and drop the references of external data, so
// large weights sit out the conversion: it sees their name, type and dims
// only (all its adapters read), and the model keeps its own weights.
//
// Before opset 7, PRelu's slope was per channel, which the converter does not
// carry over: perChannelSlopes does.
//
// libonnx reports a failed conversion by throwing; this file alone is compiled
// with exceptions (CMakeLists.txt) to turn those into diagnostics. The
// converter names no node, so on failure each node is converted alone to find
// the one that fails. Shape inference and the converter crash on some
// malformed models instead of throwing: they run in a child process.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/Importer.h"
#include "frontends/ONNX/NodeImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <exception>
#include <optional>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
using nnc::onnx_frontend::isDefaultDomain;

namespace {
constexpr int64_t kUpgradeTarget = 7;

/// Weights above this size, or in external files, sit out the conversion.
constexpr size_t kLargeWeightBytes = 64 * 1024;

bool isLarge(const onnx::TensorProto &weight) {
  if (weight.data_location() == onnx::TensorProto::EXTERNAL)
    return true;
  size_t bytes = weight.raw_data().size() + 4 * (size_t)weight.float_data_size() +
                 4 * (size_t)weight.int32_data_size() + 8 * (size_t)weight.int64_data_size() +
                 8 * (size_t)weight.double_data_size() + 8 * (size_t)weight.uint64_data_size();
  for (const std::string &text : weight.string_data())
    bytes += text.size();
  return bytes > kLargeWeightBytes;
}

/// The shape `graph` declares or infers for `name`, an unknown (symbolic)
/// dim as -1; nullopt when not even the rank is known.
std::optional<std::vector<int64_t>> knownShape(const onnx::GraphProto &graph,
                                               const std::string &name) {
  for (const onnx::TensorProto &weight : graph.initializer())
    if (weight.name() == name)
      return std::vector<int64_t>(weight.dims().begin(), weight.dims().end());
  for (const auto *list : {&graph.input(), &graph.value_info(), &graph.output()})
    for (const onnx::ValueInfoProto &info : *list) {
      if (info.name() != name || !info.type().tensor_type().has_shape())
        continue;
      std::vector<int64_t> shape;
      for (const auto &dim : info.type().tensor_type().shape().dim())
        shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      return shape;
    }
  return std::nullopt;
}

/// A failure of the upgrade at a node (an index into the original graph).
struct NodeFailure {
  int node;
  std::string message;
};

/// The names of every value `graph` defines, for unsqueezeInput's new ones.
llvm::StringSet<> valueNames(const onnx::GraphProto &graph) {
  llvm::StringSet<> names;
  for (const onnx::ValueInfoProto &input : graph.input())
    names.insert(input.name());
  for (const onnx::TensorProto &weight : graph.initializer())
    names.insert(weight.name());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &output : node.output())
      names.insert(output);
  return names;
}

/// Inserts an Unsqueeze (opset 1's, axes as an attribute) of node `i`'s input
/// `input` by `axes` before node `i`, which then reads its result; `origin`
/// (each node's index in the original graph) gets the new node's entry.
/// Returns node i's new index.
int unsqueezeInput(onnx::GraphProto &graph, int i, int input, llvm::ArrayRef<int64_t> axes,
                   const std::string &what, llvm::StringSet<> &names, std::vector<int> &origin) {
  const onnx::NodeProto &node = graph.node(i);
  std::string name;
  for (int k = 0; name.empty() || names.contains(name); ++k)
    name = node.input(input) + "/" + what + (k ? "_" + std::to_string(k) : "");
  names.insert(name);
  onnx::NodeProto unsqueeze;
  unsqueeze.set_op_type("Unsqueeze");
  unsqueeze.set_name(node.name() + "/" + what);
  unsqueeze.add_input(node.input(input));
  unsqueeze.add_output(name);
  onnx::AttributeProto &attr = *unsqueeze.add_attribute();
  attr.set_name("axes");
  attr.set_type(onnx::AttributeProto::INTS);
  for (int64_t axis : axes)
    attr.add_ints(axis);
  graph.mutable_node(i)->set_input(input, name);
  // Insert before node i, keeping the list in topological order.
  graph.add_node()->Swap(&unsqueeze);
  for (int j = graph.node_size() - 1; j > i; --j)
    graph.mutable_node()->SwapElements(j, j - 1);
  origin.insert(origin.begin() + i, origin[i]);
  return i + 1;
}

/// Before opset 7, PRelu's slope holds one value per channel (dim 1); from 7
/// on it broadcasts from the right, and the converter leaves it as it is, so
/// an N x C x ... input with a C-slope would fail to broadcast or, where the
/// last dim happens to be C too, silently take the wrong slope. An Unsqueeze
/// before the PRelu places such a slope's channel dim at 1 (the import folds
/// it into a weight); a slope whose layout cannot be told is an error.
std::optional<NodeFailure> perChannelSlopes(onnx::ModelProto &model, llvm::StringSet<> &names,
                                            std::vector<int> &origin) {
  onnx::GraphProto &graph = *model.mutable_graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    if (node.op_type() != "PRelu" || !isDefaultDomain(node.domain()) || node.input_size() != 2)
      continue;
    std::optional<std::vector<int64_t>> x = knownShape(graph, node.input(0));
    std::optional<std::vector<int64_t>> slope = knownShape(graph, node.input(1));
    if (slope && (slope->size() == 0 || (slope->size() == 1 && (*slope)[0] == 1)))
      continue; // one slope for all
    if (slope && slope->size() != 1)
      continue; // laid out by the model itself
    if (!x || !slope || (*slope)[0] < 0)
      return NodeFailure{origin[i], "cannot tell whether PRelu's slope is per channel: ONNX's "
                                    "shape inference finds no shape for its input or slope"};
    if (x->size() < 3)
      continue; // [N, C]: the channel dim is last already
    std::vector<int64_t> axes;
    for (size_t axis = 1; axis + 1 < x->size(); ++axis)
      axes.push_back((int64_t)axis);
    i = unsqueezeInput(graph, i, 1, axes, "per_channel", names, origin);
  }
  return std::nullopt;
}

/// Before opset 7, a binary op with `broadcast` = 1 may place its second
/// input's dims at `axis` of the first's. The converter indexes the first
/// input's dims by that axis unchecked: a negative one is made positive here,
/// and a node whose axis leaves the dims out of range fails. The converter
/// also aligns the second input's dims with the first's last ones whatever
/// the axis (ONNX 1.12's BroadcastForwardCompatibility appends rank
/// difference unit dims): for [1, C, H, W] + [C] at axis 1 it computed a
/// [C, C, H, W] sum. A middle axis gets an Unsqueeze of unit dims after the
/// second input's here, which leaves its dims aligned with the last ones.
std::optional<NodeFailure> legacyBroadcastAxes(onnx::ModelProto &model, llvm::StringSet<> &names,
                                               std::vector<int> &origin) {
  onnx::GraphProto &graph = *model.mutable_graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    onnx::NodeProto &node = *graph.mutable_node(i);
    onnx::AttributeProto *axis = nullptr;
    bool broadcast = false;
    for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
      broadcast |= attr.name() == "broadcast" && attr.i() == 1;
      if (attr.name() == "axis")
        axis = &attr;
    }
    if (!broadcast || !axis || node.input_size() != 2)
      continue;
    std::optional<std::vector<int64_t>> a = knownShape(graph, node.input(0));
    std::optional<std::vector<int64_t>> b = knownShape(graph, node.input(1));
    if (!a || !b)
      continue; // the converter stops at the missing shape itself
    int64_t rank = (int64_t)a->size(), bRank = (int64_t)b->size();
    int64_t at = axis->i() < 0 ? axis->i() + rank : axis->i();
    if (at < 0 || at > rank - bRank)
      return NodeFailure{origin[i], "the broadcast axis leaves the second input's dims outside "
                                    "the first's"};
    axis->set_i(at);
    if (at == rank - bRank)
      continue;
    // With unit dims up to the first input's last, the second input's rank
    // makes `at` the trailing-aligned axis.
    std::vector<int64_t> axes;
    for (int64_t k = bRank; k < rank - at; ++k)
      axes.push_back(k);
    i = unsqueezeInput(graph, i, 1, axes, "broadcast_at_" + std::to_string(at), names, origin);
  }
  return std::nullopt;
}

/// Converts `model` to kUpgradeTarget; the converter's message when it throws.
std::optional<std::string> convert(const onnx::ModelProto &model, onnx::ModelProto &out) {
  try {
    out = onnx::version_conversion::ConvertVersion(model, (int)kUpgradeTarget);
  } catch (const std::exception &error) {
    std::string what = error.what();
    // Assertion messages start with the converter's source path and line.
    size_t at = what.find("Assertion");
    return at == std::string::npos ? what : what.substr(at);
  }
  return std::nullopt;
}

/// A model holding `graph`'s node `index` alone, its inputs and outputs typed
/// as `graph` declares them.
onnx::ModelProto singleNodeModel(const onnx::ModelProto &model, int index,
                                 const llvm::StringMap<const onnx::ValueInfoProto *> &infos) {
  onnx::ModelProto single;
  single.set_ir_version(model.ir_version());
  *single.mutable_opset_import() = model.opset_import();
  onnx::GraphProto &graph = *single.mutable_graph();
  graph.set_name("node");
  const onnx::NodeProto &node = model.graph().node(index);
  *graph.add_node() = node;
  auto declare = [&](const std::string &name, onnx::ValueInfoProto *info) {
    if (const onnx::ValueInfoProto *known = infos.lookup(name))
      *info = *known;
    else
      info->set_name(name);
  };
  for (const std::string &name : node.input())
    if (!name.empty())
      declare(name, graph.add_input());
  for (const std::string &name : node.output())
    if (!name.empty())
      declare(name, graph.add_output());
  return single;
}

/// The index of the node whose conversion alone fails, preferring one that
/// fails with `message`.
std::optional<int> failingNode(const onnx::ModelProto &model, const std::string &message) {
  llvm::StringMap<const onnx::ValueInfoProto *> infos;
  std::vector<onnx::ValueInfoProto> weightInfos(model.graph().initializer_size());
  for (int i = 0; i < model.graph().initializer_size(); ++i) {
    const onnx::TensorProto &weight = model.graph().initializer(i);
    onnx::ValueInfoProto &info = weightInfos[i];
    info.set_name(weight.name());
    onnx::TypeProto::Tensor &tensor = *info.mutable_type()->mutable_tensor_type();
    tensor.set_elem_type(weight.data_type());
    for (int64_t dim : weight.dims())
      tensor.mutable_shape()->add_dim()->set_dim_value(dim);
    infos[weight.name()] = &info;
  }
  for (const auto *list : {&model.graph().input(), &model.graph().value_info(),
                           &model.graph().output()})
    for (const onnx::ValueInfoProto &info : *list)
      if (info.has_type())
        infos[info.name()] = &info;
  std::optional<int> first;
  for (int i = 0; i < model.graph().node_size(); ++i) {
    onnx::ModelProto out;
    std::optional<std::string> failure = convert(singleNodeModel(model, i, infos), out);
    if (failure && *failure == message)
      return i;
    if (failure && !first)
      first = i;
  }
  return first;
}

struct Upgrade {
  std::optional<NodeFailure> failure; // node -1: no node to blame
  onnx::ModelProto model;
};

/// Shape inference, the converter and what prepares for it, in this process.
Upgrade upgradeInProcess(const onnx::ModelProto &stripped, const llvm::StringSet<> &defined,
                         int64_t opset) {
  Upgrade out;
  // The converter's broadcast adapters need every input's shape, which a
  // model of these opsets seldom declares: ONNX's shape inference adds them.
  // Where it cannot, the converter's own error says which shape is missing.
  onnx::ModelProto typed = stripped;
  try {
    onnx::shape_inference::InferShapes(typed);
  } catch (const std::exception &) {
    typed = stripped;
  }
  // The converter's IR import dereferences the value of every value_info
  // entry: those of values nothing defines go.
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &infos =
      *typed.mutable_graph()->mutable_value_info();
  for (int i = infos.size() - 1; i >= 0; --i)
    if (!defined.contains(infos[i].name()))
      infos.DeleteSubrange(i, 1);
  std::vector<int> origin(typed.graph().node_size());
  for (size_t i = 0; i < origin.size(); ++i)
    origin[i] = (int)i;
  llvm::StringSet<> names = valueNames(typed.graph());
  if (std::optional<NodeFailure> failure = perChannelSlopes(typed, names, origin)) {
    out.failure = failure;
    return out;
  }
  // The broadcast adapters need the shapes of the Unsqueezes added too, and
  // inferring them may give shapes to broadcasts skipped for want of one,
  // which the converter would then misalign: repeat until none is added.
  for (;;) {
    size_t before = origin.size();
    if (std::optional<NodeFailure> failure = legacyBroadcastAxes(typed, names, origin)) {
      out.failure = failure;
      return out;
    }
    if (origin.size() == before)
      break;
    try {
      onnx::shape_inference::InferShapes(typed);
    } catch (const std::exception &) {
      // Shapes it could not give: the converter's error names the missing one.
    }
  }
  if (std::optional<std::string> failure = convert(typed, out.model)) {
    std::optional<int> node = failingNode(typed, *failure);
    std::string message = "ONNX's version converter cannot upgrade it from opset " +
                          std::to_string(opset) + " to opset " +
                          std::to_string(kUpgradeTarget) + ": " + *failure;
    if (failure->find("is a param") != std::string::npos)
      message += " (pin symbolic dims with --dim or --input-shape)";
    out.failure = NodeFailure{node ? origin[*node] : -1, message};
  }
  return out;
}

/// upgradeInProcess in a child process. ONNX's shape inference and converter
/// are not hardened against malformed models (a zero stride divides by zero,
/// a rank-0 Gemm input is read past its end): a crash there must be an error
/// of nnc's, not its death. Where no child can be made, it runs here.
Upgrade runIsolated(const onnx::ModelProto &stripped, const llvm::StringSet<> &defined,
                    int64_t opset) {
  int fds[2];
  if (pipe(fds) != 0)
    return upgradeInProcess(stripped, defined, opset);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return upgradeInProcess(stripped, defined, opset);
  }
  if (pid == 0) { // the child: the outcome down the pipe, then out
    close(fds[0]);
    // A crash is reported by the parent: no crash handler's stack dump, and
    // nothing libonnx prints.
    for (int sig : {SIGSEGV, SIGFPE, SIGBUS, SIGILL, SIGABRT})
      signal(sig, SIG_DFL);
    if (int null = open("/dev/null", O_WRONLY); null >= 0) {
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
    }
    Upgrade up = upgradeInProcess(stripped, defined, opset);
    std::string bytes;
    if (up.failure) {
      int32_t node = up.failure->node;
      bytes = "F" + std::string(reinterpret_cast<const char *>(&node), sizeof(node)) +
              up.failure->message;
    } else {
      bytes = "O";
      up.model.AppendToString(&bytes);
    }
    for (size_t done = 0; done < bytes.size();) {
      ssize_t n = write(fds[1], bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        _exit(1);
      done += (size_t)n;
    }
    _exit(0); // no atexit handlers, no flushed buffers of the parent's
  }
  close(fds[1]);
  std::string data;
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    data.append(buffer, (size_t)n);
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  Upgrade out;
  bool exited = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!exited || data.empty()) {
    std::string how = WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                          : "exit status " + std::to_string(WEXITSTATUS(status));
    out.failure = NodeFailure{-1, "ONNX's shape inference or version converter crashed on this "
                                  "model (" + how + ") while upgrading it to opset " +
                                  std::to_string(kUpgradeTarget)};
  } else if (data[0] == 'O') {
    if (!out.model.ParseFromArray(data.data() + 1, (int)(data.size() - 1)))
      out.failure = NodeFailure{-1, "the upgraded model could not be read back"};
  } else {
    int32_t node = -1;
    if (data.size() >= 1 + sizeof(node))
      memcpy(&node, data.data() + 1, sizeof(node));
    out.failure = NodeFailure{node, data.size() > 1 + sizeof(node)
                                        ? data.substr(1 + sizeof(node))
                                        : std::string("the upgrade failed")};
  }
  return out;
}
} // namespace

LogicalResult nnc::onnx_frontend::upgradeOpset(MLIRContext &context, onnx::ModelProto &model,
                                               const std::string &modelPath,
                                               const ImportOptions &options) {
  int64_t opset = 0;
  for (const onnx::OperatorSetIdProto &imp : model.opset_import())
    if (isDefaultDomain(imp.domain()))
      opset = imp.version();
  if (opset == 0 || opset >= kUpgradeTarget)
    return success();

  Location fileLoc = FileLineColLoc::get(&context, modelPath, 0, 0);
  auto nodeLoc = [&](int index) {
    return NameLoc::get(StringAttr::get(&context, nodeName(model.graph().node(index), index)),
                        fileLoc);
  };
  // The converter knows the default domain only, and ops of its schemas, and
  // names no node when one reads a value nothing defined before it.
  int unconvertible = 0;
  onnx::checker::CheckerContext checker;
  checker.set_ir_version((int)model.ir_version());
  checker.set_opset_imports({{"", (int)opset}});
  // External data of a Constant's tensor is found beside the model.
  checker.set_model_dir(llvm::sys::path::parent_path(modelPath).str());
  onnx::checker::LexicalScopeContext scope;
  llvm::StringSet<> defined;
  for (const onnx::ValueInfoProto &input : model.graph().input())
    defined.insert(input.name());
  for (const onnx::TensorProto &weight : model.graph().initializer())
    defined.insert(weight.name());
  for (int i = 0; i < model.graph().node_size(); ++i) {
    const onnx::NodeProto &node = model.graph().node(i);
    for (const std::string &input : node.input())
      if (!input.empty() && !defined.contains(input)) {
        ++unconvertible;
        emitError(nodeLoc(i)) << node.op_type() << " reads '" << input
                              << "', which no earlier node, graph input or initializer defines";
      }
    for (const std::string &output : node.output())
      defined.insert(output);
    // Subgraphs (If, Loop) are imported by no handler, and the converter's
    // IR import trusts their scopes.
    bool subgraph = llvm::any_of(node.attribute(), [](const onnx::AttributeProto &attr) {
      return attr.has_g() || attr.graphs_size() > 0;
    });
    bool known = !subgraph && isDefaultDomain(node.domain()) &&
                 onnx::OpSchemaRegistry::Schema(node.op_type(), (int)opset, "");
    if (known) {
      // The adapters trust their node to fit its schema (input counts,
      // attribute types) and index by it: ONNX's checker sees to that first.
      try {
        onnx::checker::check_node(node, checker, scope);
      } catch (const std::exception &error) {
        ++unconvertible;
        std::string what = error.what();
        emitError(nodeLoc(i)) << node.op_type() << " (opset " << opset
                              << "): " << what.substr(0, what.find("\n"));
      }
    } else {
      ++unconvertible;
      int64_t version = opset;
      for (const onnx::OperatorSetIdProto &imp : model.opset_import())
        if (!isDefaultDomain(node.domain()) && imp.domain() == node.domain())
          version = imp.version();
      emitError(nodeLoc(i)) << "unsupported op '" << node.op_type() << "' (domain '"
                            << (node.domain().empty() ? "ai.onnx" : node.domain())
                            << "', opset " << version << ")";
    }
  }
  // The converter's IR import dereferences the value of every graph output
  // unchecked.
  for (const onnx::ValueInfoProto &output : model.graph().output())
    if (!defined.contains(output.name())) {
      ++unconvertible;
      emitError(fileLoc) << "graph output '" << output.name() << "' is never computed";
    }
  if (unconvertible)
    return emitError(fileLoc) << "the model imports opset " << opset << ", which nnc reads by "
                              << "upgrading it to opset " << kUpgradeTarget
                              << " with ONNX's version converter; " << unconvertible
                              << " problem(s) above keep it from converting";

  // The converter keeps dims in 32 bits.
  auto tooLarge = [](int64_t dim) { return dim > INT32_MAX; };
  for (const auto *list : {&model.graph().input(), &model.graph().output(),
                           &model.graph().value_info()})
    for (const onnx::ValueInfoProto &info : *list)
      for (const auto &dim : info.type().tensor_type().shape().dim())
        if (tooLarge(dim.dim_value()))
          return emitError(fileLoc) << "'" << info.name() << "' has a dim of " << dim.dim_value()
                                    << ", more than ONNX's version converter holds (2^31 - 1)";
  for (const onnx::TensorProto &weight : model.graph().initializer())
    if (llvm::any_of(weight.dims(), tooLarge))
      return emitError(fileLoc) << "tensor '" << weight.name() << "' has a dim of more than "
                                << "ONNX's version converter holds (2^31 - 1)";

  // What the converter sees: the model without its large weights' data. Each
  // weight is also declared a graph input, as IR version 3 requires and as
  // the converter reads the large ones' type and dims from.
  onnx::ModelProto stripped;
  {
    google::protobuf::RepeatedPtrField<onnx::TensorProto> held;
    held.Swap(model.mutable_graph()->mutable_initializer());
    stripped = model;
    held.Swap(model.mutable_graph()->mutable_initializer());
  }
  llvm::StringSet<> declared;
  for (const onnx::ValueInfoProto &input : model.graph().input())
    declared.insert(input.name());
  for (const onnx::TensorProto &weight : model.graph().initializer()) {
    if (!isLarge(weight))
      *stripped.mutable_graph()->add_initializer() = weight;
    if (declared.contains(weight.name()))
      continue;
    onnx::ValueInfoProto &input = *stripped.mutable_graph()->add_input();
    input.set_name(weight.name());
    onnx::TypeProto::Tensor &type = *input.mutable_type()->mutable_tensor_type();
    type.set_elem_type(weight.data_type());
    onnx::TensorShapeProto &shape = *type.mutable_shape();
    for (int64_t dim : weight.dims())
      shape.add_dim()->set_dim_value(dim);
  }
  // Pinned dims hold for the converter too: its broadcast checks want numbers.
  for (auto *list : {stripped.mutable_graph()->mutable_input(),
                     stripped.mutable_graph()->mutable_output(),
                     stripped.mutable_graph()->mutable_value_info()})
    for (onnx::ValueInfoProto &info : *list) {
      // A declaration without a shape keeps none: an empty one would say
      // rank 0, and shape inference would throw at the conflict.
      if (!info.type().tensor_type().has_shape())
        continue;
      onnx::TensorShapeProto *shape = info.mutable_type()->mutable_tensor_type()->mutable_shape();
      auto pinned = options.inputShapes.find(info.name());
      if (pinned != options.inputShapes.end() &&
          (int64_t)pinned->second.size() == shape->dim_size()) {
        for (int i = 0; i < shape->dim_size(); ++i)
          shape->mutable_dim(i)->set_dim_value(pinned->second[i]);
        continue;
      }
      for (auto &dim : *shape->mutable_dim()) {
        auto it = options.dims.find(dim.dim_param());
        if (dim.has_dim_param() && it != options.dims.end())
          dim.set_dim_value(it->second);
      }
    }

  Upgrade upgraded = runIsolated(stripped, defined, opset);
  if (upgraded.failure) {
    int node = upgraded.failure->node;
    bool named = node >= 0 && node < model.graph().node_size();
    InFlightDiagnostic diag = emitError(named ? Location(nodeLoc(node)) : Location(fileLoc));
    if (named)
      diag << model.graph().node(node).op_type() << " (opset " << opset << "): ";
    return diag << upgraded.failure->message;
  }

  // The converter rewrote nodes only: the graph's interface, declared shapes
  // and weights (in their order, with any the converter added after) are the
  // model's own.
  onnx::GraphProto &result = *upgraded.model.mutable_graph();
  *result.mutable_input() = model.graph().input();
  *result.mutable_output() = model.graph().output();
  *result.mutable_value_info() = model.graph().value_info();
  google::protobuf::RepeatedPtrField<onnx::TensorProto> added;
  llvm::StringSet<> original;
  for (const onnx::TensorProto &weight : model.graph().initializer())
    original.insert(weight.name());
  for (onnx::TensorProto &weight : *result.mutable_initializer())
    if (!original.contains(weight.name()))
      added.Add()->Swap(&weight);
  result.mutable_initializer()->Swap(model.mutable_graph()->mutable_initializer());
  for (onnx::TensorProto &weight : added)
    result.add_initializer()->Swap(&weight);
  model = std::move(upgraded.model);
  return success();
}
