//===- Checkpoint.cpp - trained weights back into an ONNX model -----------===//
//
// Reads a training checkpoint (docs/training.md: the trainer writes it) and
// replaces each `param:<name>` initializer of the model with its trained
// value, and each batch norm's running statistic (`state:running:<name>`)
// with its updated one, so the trained model runs anywhere ONNX does. A
// statistic whose initializer something else reads too (an exporter merges
// equal initializers: several batch norms' statistics, a fresh variance and
// a scale) is `state:running:<name>@K`, the K-th batch norm statistic read of
// it in node order (mean before variance), and becomes an initializer of its
// own, `<name>@K`, for that read. Optimizer state is
// not part of a model and is skipped. Everything is checked before the model
// changes: a tensor the model lacks, or one of another type or shape, is an
// error naming it.
//
//===----------------------------------------------------------------------===//

#include "tools/nnc/Checkpoint.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstring>

namespace {

/// Little-endian reads from the checkpoint's bytes, failing past the end.
struct Reader {
  llvm::StringRef data;
  size_t at = 0;
  bool take(size_t n, llvm::StringRef &out) {
    if (n > data.size() - at)
      return false;
    out = data.substr(at, n);
    at += n;
    return true;
  }
  template <typename T> bool read(T &value) {
    llvm::StringRef bytes;
    if (!take(sizeof(T), bytes))
      return false;
    std::memcpy(&value, bytes.data(), sizeof(T));
    return true;
  }
};

struct Tensor {
  std::string name;
  int32_t dtype;
  std::vector<int64_t> dims;
  llvm::StringRef bytes;
};

} // namespace

bool nnc::applyCheckpoint(onnx::ModelProto &model, const std::string &path, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = "cannot read checkpoint '" + path + "': " + buffer.getError().message();
    return false;
  }
  Reader in{(*buffer)->getBuffer()};
  auto corrupt = [&](const std::string &what) {
    error = "checkpoint '" + path + "' is not a valid nnc checkpoint (" + what + ")";
    return false;
  };
  llvm::StringRef magic;
  uint64_t signature;
  uint32_t count;
  if (!in.take(8, magic) || magic != "NNCCKPT1" || !in.read(signature) || !in.read(count))
    return corrupt("bad header");
  std::vector<Tensor> tensors;
  for (uint32_t i = 0; i < count; ++i) {
    Tensor t;
    uint32_t nameLength, rank;
    uint64_t bytes;
    llvm::StringRef name;
    if (!in.read(nameLength) || !in.take(nameLength, name) || !in.read(t.dtype) ||
        !in.read(rank) || rank > 64)
      return corrupt("tensor " + std::to_string(i) + " is truncated");
    t.name = name.str();
    t.dims.resize(rank);
    for (int64_t &d : t.dims)
      if (!in.read(d) || d < 0)
        return corrupt("tensor '" + t.name + "' has bad dims");
    if (!in.read(bytes) || !in.take(bytes, t.bytes))
      return corrupt("tensor '" + t.name + "' is truncated");
    tensors.push_back(std::move(t));
  }
  if (in.at != in.data.size())
    return corrupt("bytes after the last tensor");

  onnx::GraphProto &graph = *model.mutable_graph();
  llvm::StringMap<onnx::TensorProto *> initializers;
  for (onnx::TensorProto &t : *graph.mutable_initializer())
    initializers[t.name()] = &t;
  // The batch norms' reads of each initializer, in node order: (node, input),
  // seen through the Identity nodes exporters give merged initializers.
  llvm::StringMap<std::string> identities;
  for (const onnx::NodeProto &node : graph.node())
    if (node.op_type() == "Identity" && node.input_size() == 1 && node.output_size() == 1)
      identities[node.output(0)] = node.input(0);
  auto source = [&](std::string name) {
    for (int hops = 0; identities.count(name) && hops < graph.node_size(); ++hops)
      name = identities.lookup(name);
    return name;
  };
  llvm::StringMap<std::vector<std::pair<int, int>>> statReads;
  for (int i = 0; i < graph.node_size(); ++i)
    if (graph.node(i).op_type() == "BatchNormalization")
      for (int input : {3, 4})
        if (input < graph.node(i).input_size())
          statReads[source(graph.node(i).input(input))].push_back({i, input});
  std::vector<std::pair<onnx::TensorProto *, const Tensor *>> updates;
  // Merged statistics split per batch norm: (the shared one, read, tensor).
  struct Split {
    onnx::TensorProto *shared;
    std::pair<int, int> read;
    std::string name;
    const Tensor *tensor;
  };
  std::vector<Split> splits;
  for (const Tensor &t : tensors) {
    llvm::StringRef name(t.name);
    bool isStat = name.consume_front("state:running:");
    if (!isStat && !name.consume_front("param:"))
      continue; // optimizer state
    const char *what = isStat ? "running statistic '" : "parameter '";
    llvm::StringRef base = name, suffix;
    if (isStat && !initializers.count(name))
      std::tie(base, suffix) = name.rsplit('@');
    onnx::TensorProto *init = initializers.lookup(base);
    if (!init) {
      error = "checkpoint '" + path + "' has " + what + name.str() +
              "', which is no initializer of the model";
      return false;
    }
    if (!suffix.empty()) {
      unsigned k;
      const std::vector<std::pair<int, int>> &reads = statReads[base];
      if (suffix.getAsInteger(10, k) || k >= reads.size()) {
        error = "checkpoint '" + path + "' has " + what + name.str() +
                "', which no batch norm of the model reads";
        return false;
      }
      if (init->data_type() == t.dtype &&
          std::equal(init->dims().begin(), init->dims().end(), t.dims.begin(), t.dims.end()))
        splits.push_back({init, reads[k], name.str(), &t});
    }
    if (init->data_type() != t.dtype ||
        !std::equal(init->dims().begin(), init->dims().end(), t.dims.begin(), t.dims.end())) {
      error = "checkpoint '" + path + "': " + what + name.str() +
              "' has another type or shape than the model's initializer";
      return false;
    }
    if (suffix.empty())
      updates.push_back({init, &t});
  }
  for (const Split &split : splits)
    if (initializers.count(split.name)) {
      error = "checkpoint '" + path + "': the model already has an initializer '" + split.name +
              "'";
      return false;
    }
  for (const Split &split : splits) {
    // A copy of the shared initializer's header, its own name and values.
    onnx::TensorProto *own = graph.add_initializer();
    own->set_name(split.name);
    own->set_data_type(split.shared->data_type());
    for (int64_t d : split.shared->dims())
      own->add_dims(d);
    own->set_raw_data(split.tensor->bytes.data(), split.tensor->bytes.size());
    graph.mutable_node(split.read.first)->set_input(split.read.second, split.name);
    // Before IR version 4, every initializer is also a graph input.
    if (model.ir_version() < 4) {
      onnx::ValueInfoProto *input = graph.add_input();
      input->set_name(split.name);
      onnx::TypeProto_Tensor *type = input->mutable_type()->mutable_tensor_type();
      type->set_elem_type(split.shared->data_type());
      for (int64_t d : split.shared->dims())
        type->mutable_shape()->add_dim()->set_dim_value(d);
    }
  }
  if (updates.empty() && splits.empty()) {
    error = "checkpoint '" + path + "' holds no parameters";
    return false;
  }
  for (auto [init, t] : updates) {
    // Only the raw bytes remain: typed fields and external data are dropped.
    std::string name = init->name();
    int32_t dtype = init->data_type();
    std::vector<int64_t> dims(init->dims().begin(), init->dims().end());
    init->Clear();
    init->set_name(name);
    init->set_data_type(dtype);
    for (int64_t d : dims)
      init->add_dims(d);
    init->set_raw_data(t->bytes.data(), t->bytes.size());
  }
  return true;
}
