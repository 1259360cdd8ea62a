//===- nnc.cpp - the nnc compiler driver ----------------------------------===//
//
// Parses flags, loads and imports the model, runs the stage pipelines up to
// the requested `--emit` stage and writes the result. Diagnostics name the
// model file and, where known, the ONNX node.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"
#include "frontends/ONNX/Importer.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx | model.onnxtext>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::desc("output file (default: stdout)"),
                                       cl::value_desc("path"), cl::init("-"));

enum class Emit { Import, NN };
static cl::opt<Emit> emit(
    "emit", cl::desc("the stage to stop after and print"), cl::Required,
    cl::values(clEnumValN(Emit::Import, "import", "nn as imported, before the graph stage"),
               clEnumValN(Emit::NN, "nn", "nn after the graph stage (shapes refined, folded)")));
static cl::opt<std::string> target("target", cl::desc("cpu or cuda"), cl::init("cpu"));
static cl::list<std::string> inputShapes(
    "input-shape", cl::desc("pin a graph input's shape: NAME:1x3x224x224 (repeatable)"),
    cl::value_desc("NAME:DIMS"));
static cl::list<std::string> dims("dim", cl::desc("pin a symbolic dim: SYMBOL=VALUE (repeatable)"),
                                  cl::value_desc("SYMBOL=VALUE"));
static cl::opt<bool> elideWeights("elide-weights",
                                  cl::desc("print large constants as elided resources"));

/// Prints diagnostics as `<file>: node '<name>': error: <message>`.
static void printDiagnostic(Diagnostic &diag) {
  std::string where;
  std::string node;
  diag.getLocation()->walk([&](Location loc) {
    if (auto name = dyn_cast<NameLoc>(loc); name && node.empty())
      node = name.getName().str();
    if (auto file = dyn_cast<FileLineColLoc>(loc); file && where.empty())
      where = file.getFilename().str();
    return WalkResult::advance();
  });
  llvm::raw_ostream &os = llvm::errs();
  os << (where.empty() ? std::string("nnc") : where) << ": ";
  if (!node.empty())
    os << "node '" << node << "': ";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error: os << "error: "; break;
  case DiagnosticSeverity::Warning: os << "warning: "; break;
  default: os << "note: "; break;
  }
  os << diag.str() << "\n";
  for (Diagnostic &note : diag.getNotes())
    os << "  note: " << note.str() << "\n";
}

static LogicalResult parseOptions(nnc::onnx_frontend::ImportOptions &options) {
  auto bad = [](const Twine &message) {
    llvm::WithColor::error(llvm::errs(), "nnc") << message << "\n";
    return failure();
  };
  for (const std::string &spec : inputShapes) {
    auto [name, shape] = llvm::StringRef(spec).rsplit(':');
    if (name.empty() || shape.empty())
      return bad("--input-shape expects NAME:DIMS such as input:1x3x224x224 (got '" + spec + "')");
    std::vector<int64_t> values;
    llvm::SmallVector<llvm::StringRef> parts;
    shape.split(parts, 'x');
    for (llvm::StringRef p : parts) {
      int64_t v;
      if (p.getAsInteger(10, v) || v < 0)
        return bad("--input-shape '" + spec + "': '" + p + "' is not a dim size");
      values.push_back(v);
    }
    options.inputShapes[name.str()] = values;
  }
  for (const std::string &spec : dims) {
    auto [name, value] = llvm::StringRef(spec).split('=');
    int64_t v;
    if (name.empty() || value.getAsInteger(10, v) || v < 0)
      return bad("--dim expects SYMBOL=VALUE such as batch=1 (got '" + spec + "')");
    options.dims[name.str()] = v;
  }
  if (target != "cpu" && target != "cuda")
    return bad("unknown target '" + target + "' (expected cpu or cuda)");
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv, "nnc: compile ONNX models to native code\n");

  nnc::onnx_frontend::ImportOptions importOptions;
  if (failed(parseOptions(importOptions)))
    return 1;

  MLIRContext context;
  context.getDiagEngine().registerHandler([](Diagnostic &d) { printDiagnostic(d); });

  onnx::ModelProto model;
  if (failed(nnc::onnx_frontend::loadModel(context, inputFile, model)))
    return 1;
  OwningOpRef<ModuleOp> module =
      nnc::onnx_frontend::importModel(context, model, inputFile, importOptions);
  if (!module)
    return 1;

  nnc::CompileOptions compileOptions;
  compileOptions.target = target;
  if (emit >= Emit::NN) {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return 1;
    applyDefaultTimingPassManagerCLOptions(pm);
    nnc::buildGraphPipeline(pm, compileOptions);
    if (failed(pm.run(*module)))
      return 1;
  }

  std::string error;
  auto output = openOutputFile(outputFile, &error);
  if (!output) {
    llvm::WithColor::error(llvm::errs(), "nnc") << error << "\n";
    return 1;
  }
  OpPrintingFlags flags;
  if (elideWeights)
    flags.elideLargeElementsAttrs(16).elideLargeResourceString(64);
  module->print(output->os(), flags);
  output->keep();
  return 0;
}
