//===- Checkpoint.cpp - trained weights back into an ONNX model -----------===//
//
// Reads a training checkpoint (docs/training.md: the trainer writes it) and
// replaces each `param:<name>` initializer of the model with its trained
// value, so the trained model runs anywhere ONNX does. Optimizer state is
// not part of a model and is skipped. Everything is checked before the model
// changes: a parameter the model lacks, or one of another type or shape, is
// an error naming it.
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

  llvm::StringMap<onnx::TensorProto *> initializers;
  for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer())
    initializers[t.name()] = &t;
  std::vector<std::pair<onnx::TensorProto *, const Tensor *>> updates;
  for (const Tensor &t : tensors) {
    llvm::StringRef name(t.name);
    if (!name.consume_front("param:"))
      continue; // optimizer state
    onnx::TensorProto *init = initializers.lookup(name);
    if (!init) {
      error = "checkpoint '" + path + "' has parameter '" + name.str() +
              "', which is no initializer of the model";
      return false;
    }
    if (init->data_type() != t.dtype ||
        !std::equal(init->dims().begin(), init->dims().end(), t.dims.begin(), t.dims.end())) {
      error = "checkpoint '" + path + "': parameter '" + name.str() +
              "' has another type or shape than the model's initializer";
      return false;
    }
    updates.push_back({init, &t});
  }
  if (updates.empty()) {
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
