//===- nnc-run.cpp - run, check and benchmark a compiled module -----------===//
//
// Loads a module with the runtime, binds inputs (an ONNX test data set, .pb
// files, or seeded random data), runs one function, compares its outputs with
// the reference outputs of the test data set, and optionally benchmarks it.
// Every invocation runs the function twice and checks that the second run
// gives bit-identical outputs and that neither run wrote an input. Training
// modules have modes of their own (Training.h): --check-gradients, --train.
// Exit codes: 0 success, 1 outputs out of tolerance (or differing between
// runs, or an input written), 2 any other error.
//
//===----------------------------------------------------------------------===//

#include "tools/nnc-run/Compare.h"
#include "tools/nnc-run/HostTensor.h"
#include "tools/nnc-run/Training.h"

#include "nnc/runtime.hpp"

#include <algorithm>
#include <iterator>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace nnc::run;

namespace {

constexpr uint64_t kSeed = 1;

const char *const kUsage = R"(usage: nnc-run MODULE.so [options]

Runs one function of a module compiled by nnc and checks or times it.

  --function NAME       the function to run (default: main)
  --test-data DIR       an ONNX test data set: inputs from DIR/input_<i>.pb, and
                        outputs compared with DIR/output_<i>.pb
  --inputs A.pb,B.pb    input tensors, one file per input in order (default
                        without --test-data: random data from a fixed seed)
  --rtol R, --atol A    tolerance: an element passes if
                        |got - expected| <= atol + rtol * |expected|
                        (default rtol 1e-4, atol 1e-5; both 1e-2 for a module
                        compiled with --precision=tf32 or f16, 5e-2
                        with bf16);
                        integer and bool outputs must match exactly
  --bench N             time N runs and print the median and minimum latency
  --profile N           time each kernel over N runs and print the median per
                        kernel beside nnc's estimate (a module compiled with
                        nnc --profile; on cuda timed by CUDA events, with
                        the kernels launched one by one)
  --warmup W            untimed runs before the timed ones (default 3)
  --threads T           threads of the runtime (default 0: one per core)
  --device D            where the function runs: cpu (default) for modules
                        compiled for the CPU, cuda or cuda:<ordinal> for
                        modules compiled for CUDA, cuda-emulated to run
                        those kernels on this CPU (no GPU needed;
                        NNC_CUDA_EMULATED_CHECK=1 also checks for races)
  --print-outputs       print the output values
  --save-outputs DIR    write the outputs as DIR/output_<i>.pb (ONNX
                        TensorProto files, as in test data sets)
  --help                print this help

Inputs are bound by position. The function always runs twice: the second
run's outputs must equal the first's bit for bit, and the input buffers must
be unchanged after both (compiled code never writes its inputs).

Training modules (nnc --train, docs/training.md) run through the runtime's
trainer on one batch: DIR/input_<i>.pb holds the model's inputs in order, then
the labels as the next file (input_0.pb and input_1.pb for a model of one
input; no separate labels when the loss is the model's own, --loss=model).

  --check-gradients DIR compare the loss and every parameter's gradient with
                        DIR/loss.pb and DIR/grad_<parameter>.pb (parameter:
                        the initializer's name); a missing reference, or one
                        for no parameter, fails like a mismatch. Default
                        tolerance rtol 1e-3, atol 1e-5 (as --rtol's for
                        tf32, bf16 and f16 modules). Runs twice, and the
                        second run must repeat the first bit for bit
  --train DIR           take optimizer steps on the batch and print
                        "step K loss X" for each (K counts from the loaded
                        checkpoint's step, else from 1)
  --steps N             steps to take (default 1)
  --load-checkpoint P   with --train: start from checkpoint P
  --save-checkpoint P   with --train: save a checkpoint to P at the end

--device and --threads apply to these modes too.

Exit code 0: success; 1: an output (or the loss or a gradient) is out of
tolerance or has no reference, differs between the two runs, or an input was
written; 2: any other error.
)";

struct Options {
  std::string module;
  std::string function = "main";
  std::string device = "cpu";
  std::string testData;
  std::vector<std::string> inputs;
  double rtol = -1, atol = -1; // -1: the mode's default
  long bench = 0, profile = 0, warmup = -1;
  long threads = 0;
  bool printOutputs = false;
  std::string saveOutputs;
  // The training modes.
  std::string checkGradients, train;
  long steps = -1;
  std::string loadCheckpoint, saveCheckpoint;
  std::vector<std::string> runOnly; // options given that only run a function
};

/// For option errors, before anything is allocated.
[[noreturn]] void fail(const std::string &message) { std::exit(error(message)); }

bool parseDouble(const std::string &text, double &value) {
  char *end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0' && errno == 0 && std::isfinite(value) && value >= 0;
}

bool parseLong(const std::string &text, long lowest, long &value) {
  char *end = nullptr;
  errno = 0;
  value = std::strtol(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0' && errno == 0 && value >= lowest;
}

Options parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (arg == "--print-outputs") {
      options.printOutputs = true;
      options.runOnly.push_back(arg);
      continue;
    }
    if (arg.rfind("-", 0) != 0) {
      if (!options.module.empty())
        fail("more than one module given ('" + options.module + "' and '" + arg + "')");
      options.module = arg;
      continue;
    }
    // --name value or --name=value
    std::string name = arg, value;
    size_t equals = arg.find('=');
    if (equals != std::string::npos)
      name = arg.substr(0, equals);
    static const char *const kValueOptions[] = {
        "--function", "--test-data", "--save-outputs", "--check-gradients", "--train",
        "--steps",    "--load-checkpoint", "--save-checkpoint", "--inputs", "--rtol",
        "--atol",     "--profile",   "--bench",        "--warmup",          "--device",
        "--threads"};
    if (std::find(std::begin(kValueOptions), std::end(kValueOptions), name) ==
        std::end(kValueOptions))
      fail("unknown option '" + name + "' (see --help)");
    if (equals != std::string::npos) {
      value = arg.substr(equals + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      fail("option '" + arg + "' needs a value (see --help)");
    }
    auto invalid = [&](const char *what) {
      fail("invalid value '" + value + "' for " + name + " (expected " + what + ")");
    };
    if (name == "--function" || name == "--test-data" || name == "--inputs" ||
        name == "--bench" || name == "--profile" || name == "--warmup" ||
        name == "--save-outputs")
      options.runOnly.push_back(name);
    if (name == "--function") {
      options.function = value;
    } else if (name == "--test-data") {
      options.testData = value;
    } else if (name == "--save-outputs") {
      options.saveOutputs = value;
    } else if (name == "--check-gradients") {
      options.checkGradients = value;
    } else if (name == "--train") {
      options.train = value;
    } else if (name == "--steps") {
      if (!parseLong(value, 1, options.steps))
        invalid("a number of steps >= 1");
    } else if (name == "--load-checkpoint") {
      options.loadCheckpoint = value;
    } else if (name == "--save-checkpoint") {
      options.saveCheckpoint = value;
    } else if (name == "--inputs") {
      options.inputs.clear();
      for (size_t start = 0; start <= value.size();) {
        size_t comma = std::min(value.find(',', start), value.size());
        if (comma == start)
          invalid("a comma-separated list of files");
        options.inputs.push_back(value.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (name == "--rtol") {
      if (!parseDouble(value, options.rtol))
        invalid("a finite number >= 0");
    } else if (name == "--atol") {
      if (!parseDouble(value, options.atol))
        invalid("a finite number >= 0");
    } else if (name == "--profile") {
      if (!parseLong(value, 1, options.profile))
        fail("--profile expects a number of runs >= 1 (got '" + value + "')");
    } else if (name == "--bench") {
      if (!parseLong(value, 1, options.bench))
        invalid("a number of runs >= 1");
    } else if (name == "--warmup") {
      if (!parseLong(value, 0, options.warmup))
        invalid("a number of runs >= 0");
    } else if (name == "--device") {
      options.device = value; // the runtime checks it and explains a bad one
    } else if (name == "--threads") {
      if (!parseLong(value, 0, options.threads) || options.threads > NNC_RUNTIME_MAX_THREADS)
        invalid("a thread count in [0, 1024]; 0: one per core");
    } else {
      fail("unknown option '" + name + "' (see --help)");
    }
  }
  if (options.module.empty())
    fail("no module given (usage: nnc-run MODULE.so [options]; see --help)");
  bool training = !options.checkGradients.empty() || !options.train.empty();
  if (!options.checkGradients.empty() && !options.train.empty())
    fail("--check-gradients and --train cannot be used together");
  if (training && !options.runOnly.empty())
    fail(options.runOnly[0] + " cannot be used with " +
         (options.train.empty() ? "--check-gradients" : "--train"));
  struct {
    const char *name;
    bool given;
  } trainOnly[] = {{"--steps", options.steps > 0},
                   {"--load-checkpoint", !options.loadCheckpoint.empty()},
                   {"--save-checkpoint", !options.saveCheckpoint.empty()}};
  for (const auto &option : trainOnly)
    if (option.given && options.train.empty())
      fail(std::string(option.name) + " needs --train");
  if (!options.testData.empty() && !options.inputs.empty())
    fail("--inputs and --test-data cannot be used together");
  if (options.warmup >= 0 && options.bench == 0 && options.profile == 0)
    fail("--warmup needs --bench or --profile");
  if (options.warmup < 0)
    options.warmup = 3;
  // Unset tolerances (-1) take the module's defaults (defaultTolerance).
  return options;
}

/// DIR/<kind>_<i>.pb for every tensor of the function; each must exist and no
/// further one may. Returns an error message or "".
std::string testDataFiles(const std::string &dir, const char *kind, int32_t count,
                          const char *function, std::vector<std::string> &files) {
  for (int32_t i = 0; i <= count; ++i) {
    std::string path = dir + "/" + kind + "_" + std::to_string(i) + ".pb";
    bool present = exists(path);
    if (i < count && !present)
      return "missing '" + path + "' (function '" + function + "' has " +
             std::to_string(count) + " " + kind + "s)";
    if (i == count && present)
      return "test data has more " + std::string(kind) + "s than function '" + function +
             "' (" + std::to_string(count) + "): found '" + path + "'";
    if (i < count)
      files.push_back(path);
  }
  return "";
}

/// An output as a run produced it: the declared tensor with the run's shape
/// (a dynamic dim's size is known then).
nnc_tensor_info_t runInfo(const nnc_tensor_info_t &declared, const nnc_tensor_view_t &view) {
  nnc_tensor_info_t info = declared;
  info.shape = view.shape;
  info.element_count = 1;
  for (int32_t d = 0; d < view.rank; ++d)
    info.element_count *= view.shape[d];
  info.byte_size = static_cast<size_t>(info.element_count) * nnc_dtype_size(info.dtype);
  return info;
}

/// Compares one output with its reference; prints a line and returns whether
/// it passed.
bool compareOutput(int32_t index, const nnc_tensor_info_t &declared, const nnc_tensor_view_t &got,
                   const HostTensor &expected, const Options &options) {
  std::string what = "output " + std::to_string(index) + " '" + declared.name + "'";
  nnc_tensor_info_t info = runInfo(declared, got);
  if (!std::equal(expected.shape.begin(), expected.shape.end(), got.shape, got.shape + got.rank)) {
    std::printf("%s (%s): FAIL\n  the reference has shape %s\n", what.c_str(),
                typeString(info.dtype, info.rank, info.shape).c_str(),
                typeString(expected.dtype, static_cast<int32_t>(expected.shape.size()),
                           expected.shape.data()).c_str());
    return false;
  }
  // A copy's strings are addressed anew (view()).
  HostTensor reference = expected;
  return compareTensor(what, info, got.data, reference.view().data, {options.rtol, options.atol},
                       "FAIL");
}

/// Runs the session a second time and checks it against the first: the
/// outputs must be bit-identical (compiled code is deterministic) and no input
/// byte may have changed (compiled code never writes its inputs; a scatter
/// that updated its data input in place gave different results on each run).
/// `pristine` holds the inputs' bytes from before the first run and `first`
/// the first run's outputs. Returns the number of problems, printed.
int checkRepeatRun(nnc::Session &session, const nnc::Function &function,
                   const std::vector<HostTensor> &inputs,
                   const std::vector<std::vector<unsigned char>> &pristine,
                   std::vector<HostTensor> &first, std::string &failure) {
  if (nnc::Status status = session.run(); !status.ok()) {
    failure = std::string("second run: ") + status.message();
    return 0;
  }
  int problems = 0;
  for (int32_t i = 0; i < function.outputCount(); ++i) {
    nnc::Result<nnc_tensor_view_t> view = session.output(i);
    if (!view.ok()) {
      failure = view.status().message();
      return problems;
    }
    nnc_tensor_info_t info = runInfo(*function.output(i), *view);
    if (!std::equal(first[i].shape.begin(), first[i].shape.end(), info.shape,
                    info.shape + info.rank)) {
      std::printf("output %d '%s': FAIL: the second run gave shape %s\n", i, info.name,
                  typeString(info.dtype, info.rank, info.shape).c_str());
      ++problems;
      continue;
    }
    const void *before = first[i].view().data;
    int64_t element = firstDifferentElement(info, view->data, before);
    if (element >= 0) {
      std::printf("output %d '%s': FAIL: the second run differs from the first at %s: %s, "
                  "then %s\n",
                  i, info.name, indexString(element, info.rank, info.shape).c_str(),
                  elementString(info.dtype, before, element).c_str(),
                  elementString(info.dtype, view->data, element).c_str());
      ++problems;
    }
  }
  for (int32_t i = 0; i < function.inputCount(); ++i) {
    nnc_tensor_info_t info = *function.input(i);
    info.shape = inputs[i].shape.data();
    int64_t at = firstDifference(inputs[i].bytes.data(), pristine[i].data(), pristine[i].size());
    if (at >= 0) {
      int64_t element = at / static_cast<int64_t>(nnc_dtype_size(info.dtype));
      std::printf("input %d '%s': FAIL: written by the compiled code at %s: was %s, now %s\n", i,
                  info.name, indexString(element, info.rank, info.shape).c_str(),
                  elementString(info.dtype, pristine[i].data(), element).c_str(),
                  elementString(info.dtype, inputs[i].bytes.data(), element).c_str());
      ++problems;
    }
  }
  if (problems == 0)
    std::printf("repeat run: outputs identical, inputs unchanged\n");
  return problems;
}

/// All values, one line per innermost row.
void printValues(int32_t index, const nnc_tensor_info_t &info, const nnc_tensor_view_t &view) {
  std::printf("output %d '%s' (%s):\n", index, info.name,
              typeString(info.dtype, info.rank, info.shape).c_str());
  int64_t row = info.rank ? info.shape[info.rank - 1] : 1;
  for (int64_t i = 0; i < info.element_count; ++i) {
    std::printf("%s%s", i % row == 0 ? "  " : " ",
                elementString(info.dtype, view.data, i).c_str());
    if ((i + 1) % row == 0)
      std::printf("\n");
  }
}

std::string formatSeconds(double seconds) {
  char buffer[64];
  if (seconds < 1e-3)
    std::snprintf(buffer, sizeof(buffer), "%.2f us", seconds * 1e6);
  else if (seconds < 1)
    std::snprintf(buffer, sizeof(buffer), "%.3f ms", seconds * 1e3);
  else
    std::snprintf(buffer, sizeof(buffer), "%.3f s", seconds);
  return buffer;
}

/// Times options.bench runs after options.warmup untimed ones; returns an
/// error message or "".
std::string bench(nnc::Session &session, const Options &options) {
  for (long i = 0; i < options.warmup; ++i) {
    if (nnc::Status status = session.run(); !status.ok())
      return status.message();
  }
  std::vector<double> seconds;
  seconds.reserve(options.bench);
  for (long i = 0; i < options.bench; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (nnc::Status status = session.run(); !status.ok())
      return status.message();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  size_t n = seconds.size();
  double median = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  std::printf("bench: %ld runs after %ld warm-up: median %s, min %s\n", options.bench,
              options.warmup, formatSeconds(median).c_str(), formatSeconds(seconds[0]).c_str());
  return "";
}

/// Times each kernel over options.profile runs after options.warmup untimed
/// ones and prints nnc --report's table with the median times; returns an
/// error message or "".
std::string profile(nnc::Session &session, const Options &options) {
  nnc::Function function = session.function();
  for (long i = 0; i < options.warmup; ++i)
    if (nnc::Status status = session.run(); !status.ok())
      return status.message();
  int32_t count = function.kernelCount();
  std::vector<std::vector<double>> samples(count);
  for (long i = 0; i < options.profile; ++i) {
    if (nnc::Status status = session.run(); !status.ok())
      return status.message();
    nnc::Result<std::vector<double>> seconds = session.kernelSeconds();
    if (!seconds.ok())
      return seconds.status().message();
    for (int32_t k = 0; k < count; ++k)
      samples[k].push_back((*seconds)[k]);
  }
  std::vector<double> medians(count);
  double total = 0, estimatedTotal = 0;
  for (int32_t k = 0; k < count; ++k) {
    std::sort(samples[k].begin(), samples[k].end());
    size_t n = samples[k].size();
    medians[k] = n % 2 ? samples[k][n / 2] : (samples[k][n / 2 - 1] + samples[k][n / 2]) / 2;
    total += medians[k];
    estimatedTotal += function.kernel(k)->estimated_seconds;
  }
  std::printf("profile: %ld runs after %ld warm-up, median per kernel (a kernel's time runs "
              "to the next one's start)\n",
              options.profile, options.warmup);
  std::printf("  %4s  %-16s %9s %9s %10s %10s %8s %6s  %s\n", "#", "kernel", "FLOP", "bytes",
              "est. us", "us", "GFLOP/s", "time%", "nodes");
  auto scaled = [](double value) {
    const char *suffixes[] = {"", "k", "M", "G", "T"};
    int i = 0;
    while (value >= 1000 && i < 4) {
      value /= 1000;
      ++i;
    }
    char text[32];
    std::snprintf(text, sizeof(text), i == 0 ? "%.0f%s" : "%.3g%s", value, suffixes[i]);
    return std::string(text);
  };
  for (int32_t k = 0; k < count; ++k) {
    const nnc_kernel_info_t &kernel = *function.kernel(k);
    std::string kind = std::string(kernel.kind).substr(0, 16);
    std::string nodes = *kernel.nodes ? kernel.nodes : "-";
    if (nodes.size() > 60)
      nodes = nodes.substr(0, 57) + "...";
    char estimate[32] = "-";
    if (kernel.estimated_seconds > 0)
      std::snprintf(estimate, sizeof(estimate), "%.2f", kernel.estimated_seconds * 1e6);
    std::printf("  %4d  %-16s %9s %9s %10s %10.2f %8.1f %6.1f  %s\n", k, kind.c_str(),
                scaled(kernel.flops).c_str(),
                scaled(kernel.bytes_read + kernel.bytes_written).c_str(), estimate,
                medians[k] * 1e6, medians[k] > 0 ? kernel.flops / medians[k] * 1e-9 : 0.0,
                total > 0 ? 100 * medians[k] / total : 0.0, nodes.c_str());
  }
  std::printf("  total: %.2f us measured", total * 1e6);
  if (estimatedTotal > 0)
    std::printf(", %.2f us estimated", estimatedTotal * 1e6);
  std::printf("\n");
  return "";
}

/// Everything after option parsing. Errors return (rather than exit) so that
/// every handle is released.
int runModule(Options options) {
  nnc::Result<nnc::Runtime> runtime = nnc::Runtime::create(static_cast<int32_t>(options.threads));
  if (!runtime.ok())
    return error(runtime.status().message());
  nnc::Result<nnc::Module> module = nnc::Module::load(options.module.c_str());
  if (!module.ok())
    return error(module.status().message());
  std::string precision = module->precision();
  Tolerance tolerance = defaultTolerance(precision, false, {options.rtol, options.atol});
  options.rtol = tolerance.rtol;
  options.atol = tolerance.atol;
  nnc::Result<nnc::Session> session =
      nnc::Session::create(*runtime, *module, options.function.c_str(), options.device.c_str(),
                           /*profile=*/options.profile > 0);
  if (!session.ok()) {
    bool trainingModule = module->findFunction("train_step").ok();
    return error(session.status().message() +
                 std::string(trainingModule && options.function == "main"
                                 ? "; a training module runs with --train DIR or "
                                   "--check-gradients DIR (see --help)"
                                 : ""));
  }
  nnc::Function function = session->function();
  const char *name = function.name();

  // Inputs: the test data set's, the given files, or random.
  std::vector<std::string> inputFiles = options.inputs;
  if (!options.testData.empty()) {
    std::string message =
        testDataFiles(options.testData, "input", function.inputCount(), name, inputFiles);
    if (!message.empty())
      return error(message);
  }
  if (!inputFiles.empty() && static_cast<int32_t>(inputFiles.size()) != function.inputCount())
    return error("--inputs has " + std::to_string(inputFiles.size()) + " files but function '" +
                 name + "' has " + std::to_string(function.inputCount()) + " inputs");
  std::vector<HostTensor> inputs(function.inputCount()); // bound in place: never resized
  std::mt19937_64 rng(kSeed);
  for (int32_t i = 0; i < function.inputCount(); ++i) {
    std::string message;
    if (inputFiles.empty())
      inputs[i] = randomTensor(*function.input(i), rng);
    else if (!readTensorFile(inputFiles[i], inputs[i], message))
      return error(message);
    acceptBF16Bits(inputs[i], function.input(i)->dtype);
    nnc::Status status = session->bindInput(i, inputs[i].view());
    if (!status.ok())
      return error((inputFiles.empty() ? "" : "'" + inputFiles[i] + "': ") + status.message());
  }

  // References are read before running, so that a bad file is reported early.
  std::vector<HostTensor> expected;
  if (!options.testData.empty()) {
    std::vector<std::string> files;
    std::string message =
        testDataFiles(options.testData, "output", function.outputCount(), name, files);
    if (!message.empty())
      return error(message);
    expected.resize(files.size());
    for (int32_t i = 0; i < function.outputCount(); ++i) {
      const nnc_tensor_info_t &info = *function.output(i);
      message = readTensorFor(files[i], info, "output '" + std::string(info.name) + "' of the module",
                              "the reference is", expected[i]);
      if (!message.empty())
        return error(message);
    }
  }

  std::string source = !options.testData.empty() ? "test data '" + options.testData + "'"
                       : !options.inputs.empty() ? "input files"
                                                 : "random (seed " + std::to_string(kSeed) + ")";
  std::printf("nnc-run: '%s' function '%s' on %s, %d thread%s, inputs: %s\n",
              options.module.c_str(), name, session->device(), runtime->numThreads(),
              runtime->numThreads() == 1 ? "" : "s", source.c_str());
  if (precision != "f32")
    std::printf("nnc-run: products in %s on the tensor cores (tolerance atol %g, rtol %g)\n",
                precision.c_str(), options.atol, options.rtol);
  std::vector<std::vector<unsigned char>> pristine;
  for (const HostTensor &input : inputs)
    pristine.push_back(input.bytes);
  if (nnc::Status status = session->run(); !status.ok())
    return error(status.message());

  int32_t failures = 0;
  std::vector<HostTensor> first;
  for (int32_t i = 0; i < function.outputCount(); ++i) {
    nnc::Result<nnc_tensor_view_t> view = session->output(i);
    if (!view.ok())
      return error(view.status().message());
    nnc_tensor_info_t info = runInfo(*function.output(i), *view);
    if (options.printOutputs)
      printValues(i, info, *view);
    if (!options.saveOutputs.empty()) {
      std::string path = options.saveOutputs + "/output_" + std::to_string(i) + ".pb", message;
      if (!writeTensorFile(path, info.name, info.dtype, info.rank, info.shape, view->data,
                           info.byte_size, message))
        return error(message);
    }
    if (!expected.empty() && !compareOutput(i, *function.output(i), *view, expected[i], options))
      ++failures;
    first.push_back(copyOf(info, view->data));
  }
  std::string failure;
  int problems = checkRepeatRun(*session, function, inputs, pristine, first, failure);
  if (!failure.empty())
    return error(failure);
  if (options.bench) {
    std::string message = bench(*session, options);
    if (!message.empty())
      return error(message);
  }
  if (options.profile) {
    std::string message = profile(*session, options);
    if (!message.empty())
      return error(message);
  }
  if (failures)
    std::printf("nnc-run: %d of %d outputs out of tolerance\n", failures, function.outputCount());
  if (problems)
    std::printf("nnc-run: %d output(s) or input(s) changed on a second run\n", problems);
  return failures || problems ? kOutOfTolerance : 0;
}

} // namespace

int main(int argc, char **argv) {
  Options options = parseOptions(argc, argv);
  if (options.checkGradients.empty() && options.train.empty())
    return runModule(options);
  TrainingOptions training;
  training.module = options.module;
  training.device = options.device;
  training.threads = static_cast<int32_t>(options.threads);
  training.batch = options.train.empty() ? options.checkGradients : options.train;
  training.tolerance = {options.rtol, options.atol};
  training.steps = options.steps > 0 ? options.steps : 1;
  training.loadCheckpoint = options.loadCheckpoint;
  training.saveCheckpoint = options.saveCheckpoint;
  return options.train.empty() ? checkGradients(training) : train(training);
}
