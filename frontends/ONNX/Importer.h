//===- Importer.h - ONNX models to the nn dialect ---------------*- C++ -*-===//
//
// The frontend's public entry points: load an ONNX model (binary or text
// format, with external data) and import it as `func.func @main` of nn ops.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_FRONTENDS_ONNX_IMPORTER_H
#define NNC_FRONTENDS_ONNX_IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
class NodeProto;
}

namespace nnc::onnx_frontend {

/// The oldest and newest default-domain opsets the frontend knows.
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 21;

struct ImportOptions {
  /// Pins a graph input's whole shape (`--input-shape=NAME:1x3x224x224`).
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Pins a symbolic dim wherever it appears (`--dim batch=1`).
  std::map<std::string, int64_t> dims;
  /// Marks each initializer's nn.constant with `nn.initializer` (its name),
  /// and folds nothing that reads a float one: training makes them parameters
  /// (but those read only as a loss's class weights, also marked
  /// `nn.loss_weight`).
  bool markInitializers = false;
};

/// Parses `path` into `model`: `.onnxtext`/`.txt` files with ONNX's text
/// parser, anything else as a binary ModelProto. Emits an error and fails on
/// unreadable, truncated or corrupt files.
llvm::LogicalResult loadModel(mlir::MLIRContext &context, const std::string &path,
                              onnx::ModelProto &model);

/// Parses a model held in memory, as loadModel does a file's bytes: `text`
/// selects ONNX's text format, whose bytes must be followed by a NUL.
/// Errors are reported at `loc`.
llvm::LogicalResult parseModel(mlir::Location loc, llvm::StringRef bytes, bool text,
                               onnx::ModelProto &model);

/// Upgrades a model that imports a default-domain opset older than 7 to
/// opset 7 with ONNX's version converter, in place; a newer one is left as it
/// is. On failure the error names the node that keeps the model from
/// converting, and `model` is unchanged. `options`' pinned dims hold for the
/// conversion too.
llvm::LogicalResult upgradeOpset(mlir::MLIRContext &context, onnx::ModelProto &model,
                                 const std::string &modelPath, const ImportOptions &options);

/// Imports `model` as a module holding `func.func @main`. Raw weight bytes are
/// moved out of `model` into the module, not copied. A model older than
/// opset 7 is upgraded first (upgradeOpset). External data files
/// are found beside `modelPath`. Every unsupported node is reported before failing.
mlir::OwningOpRef<mlir::ModuleOp> importModel(mlir::MLIRContext &context, onnx::ModelProto &model,
                                              const std::string &modelPath,
                                              const ImportOptions &options);

/// The name a node goes by in locations and diagnostics: its own, or `#i`
/// (its position in the graph) when it has none.
std::string nodeName(const onnx::NodeProto &node, int index);

} // namespace nnc::onnx_frontend

#endif // NNC_FRONTENDS_ONNX_IMPORTER_H
