//===- FuzzModel.cpp - fuzz the ONNX loader, importer and graph stage ------===//
//
// Input: a model's bytes, in ONNX's text format when they start with '<' (as
// every text model does: `<ir_version: ...>`), else a binary ModelProto. A
// model is loaded, imported and put through the graph stage, as `nnc
// --emit=nn` does; errors are expected, crashes, hangs, leaks and sanitizer
// reports are findings. External data is looked up in an empty folder.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"
#include "dialects/NN/IR/NNOps.h"
#include "frontends/ONNX/Importer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace mlir;

namespace {
/// An empty folder the model "lives" in, made once per process.
const std::string &modelPath() {
  static const std::string path = [] {
    char folder[] = "/tmp/nnc-fuzz-model-XXXXXX";
    if (!mkdtemp(folder))
      abort();
    return std::string(folder) + "/model.onnx";
  }();
  return path;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  DialectRegistry registry;
  registry.insert<nnc::nn::NNDialect, func::FuncDialect>();
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  // Errors are the expected outcome of most inputs; keep the log quiet.
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) { return success(); });

  bool text = size > 0 && data[0] == '<';
  std::string bytes(reinterpret_cast<const char *>(data), size); // NUL-terminated
  onnx::ModelProto model;
  Location loc = FileLineColLoc::get(&context, modelPath(), 0, 0);
  if (failed(nnc::onnx_frontend::parseModel(loc, bytes, text, model)))
    return 0;
  OwningOpRef<ModuleOp> module =
      nnc::onnx_frontend::importModel(context, model, modelPath(), {});
  if (!module)
    return 0;
  PassManager pm(&context);
  nnc::buildGraphPipeline(pm, nnc::CompileOptions());
  (void)pm.run(*module);
  return 0;
}
