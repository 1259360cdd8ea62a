//===- nnc.cpp - the nnc compiler driver ----------------------------------===//
//
// Parses flags, loads and imports the model, runs the stage pipelines up to
// the requested `--emit` stage and writes the result. Diagnostics name the
// model file and, where known, the ONNX node.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/CUDA.h"
#include "compiler/Codegen/Common/KernelReport.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/Artifact.h"
#include "frontends/ONNX/Importer.h"
#include "tools/nnc/Checkpoint.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Config/llvm-config.h"

#include <onnx/onnx_pb.h>

#include <chrono>
#include <optional>

using namespace mlir;
namespace cl = llvm::cl;

// nnc's own options, by task; --help shows only these (LLVM's and MLIR's stay
// usable and are listed by --help-hidden).
static cl::OptionCategory compileCategory("Compiling");
static cl::OptionCategory inspectCategory("Inspecting the stages");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx | model.onnxtext>"),
                                      cl::Required, cl::cat(compileCategory));
static cl::opt<std::string> outputFile("o", cl::desc("output file (default: stdout for IR, "
                                                     "model.so for the library)"),
                                       cl::value_desc("path"), cl::cat(compileCategory));

// The stages in pipeline order: --emit stops after one and prints it.
enum class Emit { ONNX, Import, NN, Linalg, Buffers, LLVMDialect, PTX, LLVMIR, Object, Library };
static cl::opt<Emit> emit(
    "emit", cl::desc("the stage to stop after (default: the shared library)"),
    cl::init(Emit::Library),
    cl::values(clEnumValN(Emit::ONNX, "onnx", "the ONNX model itself, with --checkpoint's "
                                              "trained weights, to -o"),
               clEnumValN(Emit::Import, "import", "nn as imported, before the graph stage"),
               clEnumValN(Emit::NN, "nn", "nn after the graph stage (shapes refined, folded)"),
               clEnumValN(Emit::Linalg, "linalg", "linalg/tensor/arith/math on tensors"),
               clEnumValN(Emit::Buffers, "buffers", "bufferized, intermediates in the workspace"),
               clEnumValN(Emit::LLVMDialect, "llvm-dialect", "MLIR's LLVM dialect"),
               clEnumValN(Emit::PTX, "ptx", "CUDA: the kernels' PTX, one <chip>.ptx per chip "
                                            "in the directory -o names"),
               clEnumValN(Emit::LLVMIR, "llvm", "LLVM IR with the ABI wrappers and descriptor"),
               clEnumValN(Emit::Object, "obj", "an object file"),
               clEnumValN(Emit::Library, "so", "the shared library the runtime loads")), cl::cat(inspectCategory));
static cl::opt<std::string> target("target", cl::desc("cpu or cuda"), cl::init("cpu"), cl::cat(compileCategory));
static cl::list<std::string> cudaArch(
    "cuda-arch", cl::desc("CUDA: the chips to emit PTX for (default sm_80,sm_90; sm_90a accepted)"),
    cl::CommaSeparated, cl::value_desc("sm_XY,..."), cl::cat(compileCategory));
static cl::opt<std::string> precision(
    "precision",
    cl::desc("CUDA: what matmuls' and convolutions' products are computed in: f32 (default, "
             "exact), tf32, bf16 or f16 (tensor cores, f32 sums)"),
    cl::init("f32"), cl::value_desc("f32|tf32|bf16|f16"), cl::cat(compileCategory));
static cl::opt<std::string> linker("linker",
                                   cl::desc("the ELF linker to use (default: ld.lld of LLVM 22)"),
                                   cl::value_desc("path"), cl::cat(compileCategory));
static cl::opt<std::string> cpu("cpu", cl::desc("the CPU to compile for (default: this machine's)"),
                                cl::value_desc("name"), cl::cat(compileCategory));
static cl::list<std::string> inputShapes(
    "input-shape", cl::desc("pin a graph input's shape: NAME:1x3x224x224 (repeatable)"),
    cl::value_desc("NAME:DIMS"), cl::cat(compileCategory));
static cl::list<std::string> dims("dim", cl::desc("pin a symbolic dim: SYMBOL=VALUE (repeatable)"),
                                  cl::value_desc("SYMBOL=VALUE"), cl::cat(compileCategory));
static cl::opt<bool> memoryReport("memory-report",
                                  cl::desc("print the workspace size against the sum of all "
                                           "intermediate buffers"), cl::cat(inspectCategory));
static cl::opt<bool> elideWeights("elide-weights",
                                  cl::desc("print large constants as elided resources"), cl::cat(inspectCategory));
// --report alone is --report=table.
static cl::opt<std::string> report(
    "report", cl::desc("print the kernels the model became (table or json) to stdout: the ONNX "
                       "nodes in each, FLOPs, bytes, a roofline estimate"),
    cl::ValueOptional, cl::value_desc("table|json"), cl::cat(inspectCategory));
static cl::opt<double> peakGFlops("peak-gflops",
                                  cl::desc("--report: the target's peak GFLOP/s (default: CUDA "
                                           "the H100's f32 rate, or its tensor cores' with "
                                           "--precision; CPU measured by nnc-peak)"),
                                  cl::init(0), cl::cat(inspectCategory));
static cl::opt<double> peakGBps("peak-gbps",
                                cl::desc("--report: the target's peak memory GB/s (default: "
                                         "CUDA the H100's, CPU measured by nnc-peak)"),
                                cl::init(0), cl::cat(inspectCategory));
static cl::opt<bool> profile(
    "profile", cl::desc("mark each kernel's start so that nnc-run --profile can time it (on "
                        "every device); embeds the kernels of --report, with estimates "
                        "for given or published peak rates"),
    cl::cat(inspectCategory));
static cl::opt<bool> verifyEach("verify-each",
                                cl::desc("verify the IR after every pass, not only after import "
                                         "and each stage: names the pass that broke it"),
                                cl::cat(inspectCategory));
static cl::opt<bool> quiet("q", cl::desc("no progress lines (printed per stage when stderr is "
                                         "a terminal)"),
                           cl::cat(compileCategory));

// Training (docs/training.md).
static cl::OptionCategory trainCategory("Training (--train)");
static cl::opt<bool> train("train", cl::desc("compile the training functions (init, train_step, "
                                             "loss_and_gradients, eval) instead of main"),
                           cl::cat(trainCategory));
static cl::opt<std::string> lossName(
    "loss",
    cl::desc("model (the model's first output is its loss), mse or cross-entropy (default: model "
             "when the first output is a scalar, else mse)"),
    cl::cat(trainCategory));
static cl::opt<std::string> optimizerName("optimizer", cl::desc("sgd, adam or adamw"),
                                          cl::init("sgd"), cl::cat(trainCategory));
static cl::opt<double> learningRate("lr", cl::desc("learning rate (default 0.01)"), cl::init(0.01),
                                    cl::cat(trainCategory));
static cl::opt<double> momentum("momentum", cl::desc("SGD momentum (default 0)"), cl::init(0),
                                cl::cat(trainCategory));
static cl::opt<double> weightDecay("weight-decay",
                                   cl::desc("L2 (sgd, adam) or decoupled (adamw) weight decay"),
                                   cl::init(0), cl::cat(trainCategory));
static cl::opt<double> beta1("beta1", cl::desc("Adam's beta1 (default 0.9)"), cl::init(0.9),
                             cl::cat(trainCategory));
static cl::opt<double> beta2("beta2", cl::desc("Adam's beta2 (default 0.999)"), cl::init(0.999),
                             cl::cat(trainCategory));
static cl::opt<double> epsilon("eps", cl::desc("Adam's epsilon (default 1e-8)"), cl::init(1e-8),
                               cl::cat(trainCategory));
static cl::opt<int64_t> seed("seed",
                            cl::desc("the seed of Dropout's random masks (default 0)"),
                            cl::init(0), cl::cat(trainCategory));
static cl::opt<std::string> checkpoint(
    "checkpoint", cl::desc("with --emit=onnx: a training checkpoint whose parameters replace "
                           "the model's initializers"),
    cl::value_desc("path"), cl::cat(trainCategory));
static cl::list<std::string> freeze("freeze", cl::desc("initializers to keep constant"),
                                    cl::CommaSeparated, cl::value_desc("NAME,..."),
                                    cl::cat(trainCategory));

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

/// Writes the kernels' PTX for each chip into the directory -o names.
static LogicalResult writePTX(ModuleOp module) {
  auto error = [](const Twine &message) {
    llvm::WithColor::error(llvm::errs(), "nnc") << message << "\n";
    return failure();
  };
  if (outputFile.empty())
    return error("--emit=ptx needs -o DIR");
  if (std::error_code ec = llvm::sys::fs::create_directories(outputFile))
    return error("cannot create '" + outputFile + "': " + ec.message());
  auto images = module->getAttrOfType<DictionaryAttr>(nnc::kCUDAImagesAttr);
  if (!images)
    return error("the module has no CUDA kernels");
  for (NamedAttribute image : images) {
    llvm::SmallString<128> path(outputFile.getValue());
    llvm::sys::path::append(path, image.getName().getValue() + ".ptx");
    std::string message;
    auto file = openOutputFile(path, &message);
    if (!file)
      return error(message);
    file->os() << cast<StringAttr>(image.getValue()).getValue();
    file->keep();
  }
  return success();
}

/// Writes the model with the checkpoint's parameters as its initializers.
static int exportTrained(onnx::ModelProto &model) {
  auto fail = [](const std::string &message) {
    llvm::WithColor::error(llvm::errs(), "nnc") << message << "\n";
    return 1;
  };
  for (const onnx::TensorProto &t : model.graph().initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      return fail("--emit=onnx: initializer '" + t.name() +
                  "' has external data, which exporting does not carry over");
  std::string error;
  if (!nnc::applyCheckpoint(model, checkpoint, error))
    return fail(error);
  std::string path = outputFile;
  std::string message;
  auto file = openOutputFile(path, &message);
  if (!file)
    return fail(message);
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return fail("cannot serialize the model (over 2 GiB?)");
  file->os() << bytes;
  file->keep();
  return 0;
}

/// Runs `nnc-peak ARG` from nnc's own directory and returns the number after
/// `key` in its output; 0 when the tool is missing or says nothing.
static double measureWithPeakTool(const char *argv0, StringRef arg, StringRef key) {
  std::string self = llvm::sys::fs::getMainExecutable(argv0, (void *)&measureWithPeakTool);
  llvm::SmallString<256> tool(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(tool, "nnc-peak");
  if (!llvm::sys::fs::can_execute(tool))
    return 0;
  llvm::SmallString<128> out;
  if (llvm::sys::fs::createTemporaryFile("nnc-peak", "txt", out))
    return 0;
  llvm::FileRemover remove(out);
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(out), StringRef("")};
  if (llvm::sys::ExecuteAndWait(tool, {tool, arg}, std::nullopt, redirects) != 0)
    return 0;
  auto text = llvm::MemoryBuffer::getFile(out);
  if (!text)
    return 0;
  StringRef rest = (*text)->getBuffer();
  size_t at = rest.find(key);
  if (at == StringRef::npos)
    return 0;
  double value = 0;
  rest.drop_front(at + key.size()).ltrim().split(' ').first.getAsDouble(value);
  return value;
}

/// The peak rates estimates are made against: the flags, else for CUDA the
/// reference chip's published rates (H100: f32 51 TFLOP/s, 3.0 TB/s; with
/// --precision, its tensor cores' 378 TFLOP/s for tf32, 756 for bf16 and f16, which
/// bound the contractions, the kernels that count), else
/// for the CPU, with `measure`, one core of this machine as nnc-peak
/// measures it (which takes seconds).
static nnc::PeakRates peakRates(const char *argv0, bool measure) {
  nnc::PeakRates peak;
  peak.flopsPerSecond = peakGFlops * 1e9;
  peak.bytesPerSecond = peakGBps * 1e9;
  std::vector<std::string> sources;
  if (peakGFlops.getNumOccurrences() || peakGBps.getNumOccurrences())
    sources.push_back("given");
  if (target == "cuda") {
    if (peak.flopsPerSecond <= 0)
      peak.flopsPerSecond = precision == "tf32" ? 378e12 : precision == "f32" ? 51e12 : 756e12;
    if (peak.bytesPerSecond <= 0)
      peak.bytesPerSecond = 3.0e12;
    if (!peakGFlops.getNumOccurrences() || !peakGBps.getNumOccurrences())
      sources.push_back(precision == "f32"
                            ? std::string("H100 f32 SIMT and HBM3 published rates")
                            : "H100 " + precision + " tensor-core and HBM3 published rates");
  } else if (measure) {
    bool tool = false;
    if (peak.flopsPerSecond <= 0)
      tool |= (peak.flopsPerSecond = measureWithPeakTool(argv0, "1", "threads 1:") * 1e9) > 0;
    if (peak.bytesPerSecond <= 0)
      tool |= (peak.bytesPerSecond = measureWithPeakTool(argv0, "--bandwidth", "bandwidth:") *
                                     1e9) > 0;
    if (tool)
      sources.push_back("one core, measured by nnc-peak");
  }
  peak.source = llvm::join(sources, "; ");
  return peak;
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
  if (!cudaArch.empty() && target != "cuda")
    return bad("--cuda-arch needs -target=cuda");
  if (precision != "f32" && precision != "tf32" && precision != "bf16" && precision != "f16")
    return bad("unknown precision '" + precision + "' (expected f32, tf32, bf16 or f16)");
  if (precision != "f32" && target != "cuda")
    return bad("--precision=" + precision +
               " needs -target=cuda (the CPU target computes in f32 only)");
  // f16's smallest value is 6e-8: a backward pass's small gradients would
  // become zeros without the loss scaling nnc does not do.
  if (precision == "f16" && train)
    return bad("--precision=f16 cannot train (small gradients would round to zero in f16 "
               "without loss scaling); use bf16 or tf32, which keep f32's range");
  for (const std::string &chip : cudaArch)
    if (chip != "sm_80" && chip != "sm_86" && chip != "sm_89" && chip != "sm_90" &&
        chip != "sm_90a")
      return bad("unknown CUDA chip '" + chip +
                 "' (expected sm_80, sm_86, sm_89, sm_90 or sm_90a)");
  if (emit == Emit::ONNX && (checkpoint.empty() || outputFile.empty()))
    return bad("--emit=onnx needs --checkpoint=PATH and -o PATH");
  if (!checkpoint.empty() && emit != Emit::ONNX)
    return bad("--checkpoint needs --emit=onnx");
  if (emit == Emit::PTX && target != "cuda")
    return bad("--emit=ptx needs -target=cuda");
  if (report.getNumOccurrences() && !report.empty() && report != "table" && report != "json")
    return bad("--report=" + report + ": expected table or json");
  if (report.getNumOccurrences() && emit < Emit::Buffers)
    return bad("--report needs the buffers stage (--emit=buffers or later)");
  if (report.getNumOccurrences() && emit != Emit::Library && outputFile.empty())
    return bad("--report prints to stdout: give -o for the IR");
  if ((peakGFlops.getNumOccurrences() || peakGBps.getNumOccurrences()) &&
      !report.getNumOccurrences() && !profile)
    return bad("--peak-gflops and --peak-gbps need --report or --profile");
  if ((peakGFlops.getNumOccurrences() && !(peakGFlops > 0)) ||
      (peakGBps.getNumOccurrences() && !(peakGBps > 0)))
    return bad("--peak-gflops and --peak-gbps must be positive");
  if (profile && emit < Emit::Buffers)
    return bad("--profile needs the buffers stage (--emit=buffers or later)");
  bool trainingFlag = lossName.getNumOccurrences() || optimizerName.getNumOccurrences() ||
                      learningRate.getNumOccurrences() || momentum.getNumOccurrences() ||
                      weightDecay.getNumOccurrences() || beta1.getNumOccurrences() ||
                      beta2.getNumOccurrences() || epsilon.getNumOccurrences() ||
                      seed.getNumOccurrences() || freeze.getNumOccurrences();
  if (trainingFlag && !train)
    return bad("--loss, --optimizer, --lr, --momentum, --weight-decay, --beta1, --beta2, --eps, "
               "--seed and --freeze need --train");
  if (momentum.getNumOccurrences() && optimizerName != "sgd")
    return bad("--momentum is an SGD setting (--optimizer=" + optimizerName + ")");
  if ((beta1.getNumOccurrences() || beta2.getNumOccurrences() || epsilon.getNumOccurrences()) &&
      optimizerName == "sgd")
    return bad("--beta1, --beta2 and --eps are Adam settings (--optimizer=sgd)");
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  // LLVM's post-register-allocation scheduler took a third of code generation
  // (ResNet-18: 8.4 s without it, 9.0 s with it, in alternating runs) for no
  // measured speed on the kernels nnc emits (1024^3 matmul, ResNet-18,
  // MobileNetV2 within noise).
  // Off by default; -disable-post-ra=false brings it back.
  if (auto *postRA = static_cast<cl::opt<bool> *>(
          cl::getRegisteredOptions().lookup("disable-post-ra")))
    postRA->setInitialValue(true);
  cl::HideUnrelatedOptions({&compileCategory, &inspectCategory, &trainCategory});
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "nnc " << NNC_VERSION << " (" << NNC_GIT_REVISION << "), LLVM " << LLVM_VERSION_STRING
       << "\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "nnc: compile ONNX models to a shared library the nnc runtime runs\n\n"
      "  nnc model.onnx -o model.so                      compile for this CPU\n"
      "  nnc model.onnx -target=cuda -o model.so         compile for NVIDIA GPUs (sm_80, sm_90)\n"
      "  nnc model.onnx --train --loss=cross-entropy --optimizer=adamw -o train.so\n"
      "  nnc model.onnx --emit=nn                        print a stage's IR\n\n"
      "LLVM's and MLIR's own options (-mlir-print-ir-after-all, -mlir-timing, ...) work\n"
      "too; --help-hidden lists them.\n");

  nnc::onnx_frontend::ImportOptions importOptions;
  if (failed(parseOptions(importOptions)))
    return 1;
  importOptions.markInitializers = train;

  DialectRegistry registry;
  nnc::registerCompilerDialects(registry);
  MLIRContext context(registry);
  // Diagnostics name the node; dumping the op's IR would only bury that.
  context.printOpOnDiagnostic(false);
  context.getDiagEngine().registerHandler([](Diagnostic &d) { printDiagnostic(d); });

  // On a terminal, a line per stage shows where a long compile is.
  bool progress = !quiet && llvm::errs().is_displayed();
  auto started = std::chrono::steady_clock::now();
  auto announce = [&](StringRef stage) {
    if (!progress)
      return;
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    llvm::errs() << llvm::format("nnc: %6.2f s  ", elapsed) << stage << "\n";
  };
  announce("loading and importing the model");
  onnx::ModelProto model;
  if (failed(nnc::onnx_frontend::loadModel(context, inputFile, model)))
    return 1;
  if (emit == Emit::ONNX)
    return exportTrained(model);
  OwningOpRef<ModuleOp> module =
      nnc::onnx_frontend::importModel(context, model, inputFile, importOptions);
  if (!module)
    return 1;

  nnc::CompileOptions compileOptions;
  compileOptions.target = target;
  compileOptions.profile = profile;
  if (train) {
    nnc::TrainOptions &t = compileOptions.train.emplace();
    t.loss = lossName;
    t.optimizer = optimizerName;
    t.learningRate = learningRate;
    t.momentum = momentum;
    t.weightDecay = weightDecay;
    t.beta1 = beta1;
    t.beta2 = beta2;
    t.epsilon = epsilon;
    t.seed = seed;
    t.freeze.assign(freeze.begin(), freeze.end());
  }
  if (!cudaArch.empty())
    compileOptions.cudaChips.assign(cudaArch.begin(), cudaArch.end());
  compileOptions.precision = precision;
  nnc::ArtifactOptions artifactOptions;
  artifactOptions.target = target;
  artifactOptions.cpu = cpu;
  artifactOptions.linker = linker;
  artifactOptions.precision = precision;
  if (target == "cpu") {
    // The register tiles are sized for the CPU's vector unit.
    std::string error;
    FailureOr<nnc::VectorUnit> unit = nnc::vectorUnitOf(artifactOptions, error);
    if (failed(unit)) {
      llvm::WithColor::error(llvm::errs(), "nnc") << error << "\n";
      return 1;
    }
    compileOptions.vectorBits = unit->bits;
    compileOptions.vectorRegisters = unit->registers;
  }
  // Runs one stage's pipeline on the module.
  auto runStage = [&](void (*build)(OpPassManager &, const nnc::CompileOptions &),
                      StringRef stage) {
    announce(stage);
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(pm);
    // The IR is verified once per stage, not after each of its passes
    // (unless --verify-each): verifying after every pass took 14% of
    // DenseNet-121's scheduling stage. nnc-opt, which the pass tests run,
    // verifies each pass.
    pm.enableVerifier(verifyEach);
    build(pm, compileOptions);
    if (failed(pm.run(*module)))
      return failure();
    return verify(*module);
  };
  if (emit >= Emit::NN && failed(runStage(nnc::buildGraphPipeline, "graph stage (shapes, folding)")))
    return 1;

  // What the runtime sees of each function is fixed by its nn signature.
  std::vector<nnc::FunctionInfo> functions;
  std::vector<nnc::KernelReport> kernels;
  if (emit >= Emit::Linalg) {
    functions = nnc::describeFunctions(*module);
    // The CUDA target has no prepare: every dim must be known when compiling.
    for (const nnc::FunctionInfo &info : functions)
      for (bool isInput : {true, false})
        for (const nnc::TensorInfo &t : isInput ? info.inputs : info.outputs)
          if (target == "cuda" && llvm::is_contained(t.shape, -1)) {
            llvm::WithColor::error(llvm::errs(), "nnc")
                << (isInput ? "graph input '" : "graph output '") << t.name
                << (isInput ? "' has dynamic dims, which the CUDA target does not support yet; "
                              "pin them with --dim or --input-shape\n"
                            : "' has dims computed from input values at run time, which the "
                              "CUDA target does not support yet (the CPU target does)\n");
            return 1;
          }
    if (failed(runStage(nnc::buildLowerPipeline, "lowering to linalg")))
      return 1;
  }
  // Reads a per-function size the codegen stages leave as an attribute.
  auto sizeOf = [&](const nnc::FunctionInfo &info, StringRef attr) -> uint64_t {
    auto func = module->lookupSymbol<func::FuncOp>(info.name);
    auto size = func ? func->getAttrOfType<IntegerAttr>(attr) : IntegerAttr();
    return size ? size.getInt() : 0;
  };
  bool cuda = target == "cuda";
  if (emit >= Emit::Buffers) {
    if (failed(runStage(cuda ? nnc::buildCUDABufferizePipeline : nnc::buildCPUBufferizePipeline,
                           "scheduling and bufferizing")))
      return 1;
    if (report.getNumOccurrences() || profile) {
      llvm::StringSet<> nodeNames;
      for (int i = 0; i < model.graph().node_size(); ++i)
        nodeNames.insert(nnc::onnx_frontend::nodeName(model.graph().node(i), i));
      kernels = nnc::collectKernels(*module, nodeNames);
    }
    for (nnc::FunctionInfo &info : functions) {
      info.workspaceSize = sizeOf(info, "nnc.workspace_size");
      if (auto func = module->lookupSymbol<func::FuncOp>(info.name)) {
        if (auto checks = func->getAttrOfType<ArrayAttr>("nnc.checks"))
          for (Attribute message : checks)
            info.checks.push_back(cast<StringAttr>(message).getValue().str());
        if (auto inputs = func->getAttrOfType<DenseI64ArrayAttr>("nnc.shape_inputs"))
          info.shapeInputs.assign(inputs.asArrayRef().begin(), inputs.asArrayRef().end());
        if (auto outputs = func->getAttrOfType<DenseI64ArrayAttr>("nnc.data_dependent_outputs"))
          info.dataDependentOutputs.assign(outputs.asArrayRef().begin(), outputs.asArrayRef().end());
      }
      if (!memoryReport)
        continue;
      int64_t all = sizeOf(info, "nnc.intermediates_size"), planned = info.workspaceSize;
      llvm::errs() << llvm::format("nnc: %s: workspace %lld bytes (%.2f MiB) for %lld bytes "
                                   "(%.2f MiB) of intermediates, %.0f%% saved by reuse\n",
                                   info.name.c_str(), (long long)planned, planned / 1048576.0,
                                   (long long)all, all / 1048576.0,
                                   // Alignment padding can make the plan a little larger.
                                   all > planned ? 100.0 * (all - planned) / all : 0.0);
    }
  }
  if (emit >= Emit::LLVMDialect) {
    if (cuda) {
      if (failed(runStage(nnc::buildCUDAKernelPipeline, "CUDA kernels to PTX")))
        return 1;
      for (nnc::FunctionInfo &info : functions)
        info.constantsSize = sizeOf(info, nnc::kConstantsSizeAttr);
      nnc::attachCUDALaunches(*module, kernels);
      if (failed(runStage(nnc::buildCUDAHostLLVMPipeline, "host code to the LLVM dialect")))
        return 1;
    } else if (failed(runStage(nnc::buildCPULLVMPipeline, "to the LLVM dialect"))) {
      return 1;
    }
  }

  // The report comes last, once the compile has succeeded.
  auto printReport = [&] {
    if (!report.getNumOccurrences())
      return;
    nnc::PeakRates peak = peakRates(argv[0], /*measure=*/true);
    if (report == "json")
      nnc::printKernelJSON(llvm::outs(), inputFile, target, kernels, peak);
    else
      nnc::printKernelTable(llvm::outs(), inputFile, target, kernels, peak);
  };
  std::string error;
  if (emit == Emit::PTX) {
    if (failed(writePTX(*module)))
      return 1;
    printReport();
    return 0;
  }
  if (emit >= Emit::LLVMIR) {
    if (profile) {
      // The kernel table nnc-run --profile prints beside its measurements.
      // Its estimates come from given or published rates only: a rate
      // measured here would make the library depend on this machine's load.
      nnc::PeakRates peak = peakRates(argv[0], /*measure=*/false);
      for (nnc::FunctionInfo &info : functions)
        for (const nnc::KernelReport &kernel : kernels) {
          if (kernel.function != info.name)
            continue;
          nnc::KernelInfo &k = info.kernels.emplace_back();
          k.kind = kernel.kind;
          k.nodes = llvm::join(kernel.nodes, ", ");
          k.flops = kernel.flops;
          k.bytesRead = kernel.bytesRead;
          k.bytesWritten = kernel.bytesWritten;
          k.estimatedSeconds = nnc::estimateSeconds(kernel, peak).value_or(0);
        }
    }
    announce("code generation and linking");
    std::string path = outputFile.empty() ? std::string(emit == Emit::Library ? "model.so" : "-")
                                          : outputFile.getValue();
    nnc::ArtifactKind kind = emit == Emit::LLVMIR   ? nnc::ArtifactKind::LLVMIR
                             : emit == Emit::Object ? nnc::ArtifactKind::Object
                                                    : nnc::ArtifactKind::SharedLibrary;
    // The module records the precision its kernels compute in: f32 where
    // no contraction took the tensor cores (all too small, or not f32), so
    // that results are compared as written.
    if (target == "cuda" && precision != "f32") {
      auto images = (*module)->getAttrOfType<DictionaryAttr>(nnc::kCUDAImagesAttr);
      bool tensorCores = images && llvm::any_of(images, [](NamedAttribute image) {
        auto ptx = dyn_cast<StringAttr>(image.getValue());
        return ptx && ptx.getValue().contains("mma.sync");
      });
      if (!tensorCores) {
        llvm::WithColor::note(llvm::errs(), "nnc")
            << "--precision=" << precision
            << ": no f32 contraction is large enough for the tensor cores; the module computes "
               "as written\n";
        artifactOptions.precision = "f32";
      }
    }
    if (failed(nnc::writeArtifact(*module, functions, artifactOptions, kind, path)))
      return 1;
    announce("done");
    printReport();
    return 0;
  }

  auto output = openOutputFile(outputFile.empty() ? std::string("-") : outputFile.getValue(), &error);
  if (!output) {
    llvm::WithColor::error(llvm::errs(), "nnc") << error << "\n";
    return 1;
  }
  OpPrintingFlags flags;
  // MLIR formats each resource as text before deciding to elide it, which
  // for a model's weights means gigabytes formatted only to be dropped:
  // elided output prints the module as a local scope, which has no resource
  // section (and no aliases) at all.
  if (elideWeights)
    flags.elideLargeElementsAttrs(16).useLocalScope();
  module->print(output->os(), flags);
  if (elideWeights)
    output->os() << "\n"; // a local scope ends without one
  output->keep();
  printReport();
  return 0;
}
