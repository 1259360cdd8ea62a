//===- nnc-run.cpp - run, check and benchmark a compiled module -----------===//
//
// Loads a module with the runtime, binds inputs (an ONNX test data set, .pb
// files, or seeded random data), runs one function, compares its outputs with
// the reference outputs of the test data set, and optionally benchmarks it.
// Every invocation runs the function twice and checks that the second run
// gives bit-identical outputs and that neither run wrote an input.
// Exit codes: 0 success, 1 outputs out of tolerance (or differing between
// runs, or an input written), 2 any other error.
//
//===----------------------------------------------------------------------===//

#include "tools/nnc-run/HostTensor.h"

#include "nnc/runtime.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace nnc::run;

namespace {

constexpr int kOutOfTolerance = 1;
constexpr int kError = 2;
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
                        (default rtol 1e-4, atol 1e-5); integer and bool
                        outputs must match exactly
  --bench N             time N runs and print the median and minimum latency
  --warmup W            untimed runs before the timed ones (default 3)
  --threads T           threads of the runtime (default 0: one per core)
  --device D            where the function runs: cpu (default) for modules
                        compiled for the CPU, cuda or cuda:<ordinal> for
                        modules compiled for CUDA, cuda-emulated to run
                        those kernels on this CPU (no GPU needed;
                        NNC_CUDA_EMULATED_CHECK=1 also checks for races)
  --print-outputs       print the output values
  --help                print this help

Inputs are bound by position. The function always runs twice: the second
run's outputs must equal the first's bit for bit, and the input buffers must
be unchanged after both (compiled code never writes its inputs).

Exit code 0: success; 1: an output is out of tolerance, differs between the
two runs, or an input was written; 2: any other error.
)";

struct Options {
  std::string module;
  std::string function = "main";
  std::string device = "cpu";
  std::string testData;
  std::vector<std::string> inputs;
  double rtol = 1e-4, atol = 1e-5;
  long bench = 0, warmup = -1;
  long threads = 0;
  bool printOutputs = false;
};

/// Prints an error; returns the exit code for it.
int error(const std::string &message) {
  std::fprintf(stderr, "nnc-run: error: %s\n", message.c_str());
  return kError;
}

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
    if (equals != std::string::npos) {
      name = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      fail("option '" + arg + "' needs a value (see --help)");
    }
    auto invalid = [&](const char *what) {
      fail("invalid value '" + value + "' for " + name + " (expected " + what + ")");
    };
    if (name == "--function") {
      options.function = value;
    } else if (name == "--test-data") {
      options.testData = value;
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
  if (!options.testData.empty() && !options.inputs.empty())
    fail("--inputs and --test-data cannot be used together");
  if (options.warmup >= 0 && options.bench == 0)
    fail("--warmup needs --bench");
  if (options.warmup < 0)
    options.warmup = 3;
  return options;
}

bool exists(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

std::string typeString(int32_t dtype, int32_t rank, const int64_t *shape) {
  return std::string(nnc_dtype_name(dtype)) + " " + shapeString(rank, shape);
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

/// "[1, 2]" for a flat index into shape.
std::string indexString(int64_t flat, int32_t rank, const int64_t *shape) {
  std::vector<int64_t> index(rank);
  for (int32_t d = rank - 1; d >= 0; --d) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string text = "[";
  for (int32_t d = 0; d < rank; ++d)
    text += (d ? ", " : "") + std::to_string(index[d]);
  return text + "]";
}

/// Compares one output with its reference; prints a line and returns whether
/// it passed.
bool compareOutput(int32_t index, const nnc_tensor_info_t &info, const nnc_tensor_view_t &got,
                   const HostTensor &expected, const Options &options) {
  // Integers and bools must be equal; compared as bytes, exactly everywhere.
  bool exact = !isFloat(info.dtype);
  size_t elementSize = nnc_dtype_size(info.dtype);
  long double maxAbs = 0, maxRel = 0;
  int64_t bad = 0, nanMismatches = 0, firstBad = -1;
  for (int64_t i = 0; i < info.element_count; ++i) {
    long double g = elementAt(info.dtype, got.data, i);
    long double e = elementAt(info.dtype, expected.bytes.data(), i);
    bool pass;
    if (exact) {
      pass = std::memcmp(static_cast<const unsigned char *>(got.data) + i * elementSize,
                         expected.bytes.data() + i * elementSize, elementSize) == 0;
    } else if (std::isnan(g) || std::isnan(e)) {
      pass = std::isnan(g) && std::isnan(e);
      nanMismatches += !pass;
    } else if (std::isinf(g) || std::isinf(e)) {
      pass = g == e;
    } else {
      pass = std::fabs(g - e) <= options.atol + options.rtol * std::fabs(e);
    }
    if (!std::isnan(g) && !std::isnan(e)) {
      long double diff = g == e ? 0 : std::fabs(g - e);
      maxAbs = std::max(maxAbs, diff);
      if (e != 0)
        maxRel = std::max(maxRel, diff / std::fabs(e));
    }
    if (!pass && bad++ == 0)
      firstBad = i;
  }
  std::printf("output %d '%s' (%s): max abs error %.3Lg, max rel error %.3Lg", index, info.name,
              typeString(info.dtype, info.rank, info.shape).c_str(), maxAbs, maxRel);
  if (bad == 0) {
    std::printf(": ok\n");
    return true;
  }
  char tolerance[128];
  if (exact)
    std::snprintf(tolerance, sizeof(tolerance), "%s must match exactly",
                  nnc_dtype_name(info.dtype));
  else
    std::snprintf(tolerance, sizeof(tolerance), "atol %g, rtol %g", options.atol, options.rtol);
  std::printf(": FAIL\n  %lld of %lld elements out of tolerance (%s)", static_cast<long long>(bad),
              static_cast<long long>(info.element_count), tolerance);
  if (nanMismatches)
    std::printf(", %lld NaN mismatches", static_cast<long long>(nanMismatches));
  std::printf("; first at %s: got %s, expected %s\n",
              indexString(firstBad, info.rank, info.shape).c_str(),
              elementString(info.dtype, got.data, firstBad).c_str(),
              elementString(info.dtype, expected.bytes.data(), firstBad).c_str());
  return false;
}

/// The index of the first byte where a and b differ, or -1.
int64_t firstDifference(const unsigned char *a, const unsigned char *b, size_t size) {
  for (size_t i = 0; i < size; ++i)
    if (a[i] != b[i])
      return static_cast<int64_t>(i);
  return -1;
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
                   const std::vector<std::vector<unsigned char>> &first, std::string &failure) {
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
    const nnc_tensor_info_t &info = *function.output(i);
    int64_t at = firstDifference(static_cast<const unsigned char *>(view->data),
                                 first[i].data(), info.byte_size);
    if (at >= 0) {
      int64_t element = at / static_cast<int64_t>(nnc_dtype_size(info.dtype));
      std::printf("output %d '%s': FAIL: the second run differs from the first at %s: %s, "
                  "then %s\n",
                  i, info.name, indexString(element, info.rank, info.shape).c_str(),
                  elementString(info.dtype, first[i].data(), element).c_str(),
                  elementString(info.dtype, view->data, element).c_str());
      ++problems;
    }
  }
  for (int32_t i = 0; i < function.inputCount(); ++i) {
    const nnc_tensor_info_t &info = *function.input(i);
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

/// ONNX 1.12's numpy helpers write bfloat16 test data as uint16 bit patterns:
/// take those as the bf16 tensor the module expects.
void acceptBF16Bits(HostTensor &tensor, int32_t expectedDtype) {
  if (tensor.dtype == NNC_DTYPE_U16 && expectedDtype == NNC_DTYPE_BF16)
    tensor.dtype = NNC_DTYPE_BF16;
}

/// Everything after option parsing. Errors return (rather than exit) so that
/// every handle is released.
int runModule(const Options &options) {
  nnc::Result<nnc::Runtime> runtime = nnc::Runtime::create(static_cast<int32_t>(options.threads));
  if (!runtime.ok())
    return error(runtime.status().message());
  nnc::Result<nnc::Module> module = nnc::Module::load(options.module.c_str());
  if (!module.ok())
    return error(module.status().message());
  nnc::Result<nnc::Session> session = nnc::Session::create(
      *runtime, *module, options.function.c_str(), options.device.c_str());
  if (!session.ok())
    return error(session.status().message());
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
      const HostTensor &reference = expected[i];
      if (!readTensorFile(files[i], expected[i], message))
        return error(message);
      acceptBF16Bits(expected[i], info.dtype);
      int32_t rank = static_cast<int32_t>(reference.shape.size());
      if (reference.dtype != info.dtype || rank != info.rank ||
          !std::equal(reference.shape.begin(), reference.shape.end(), info.shape))
        return error("'" + files[i] + "': output '" + info.name + "' of the module is " +
                     typeString(info.dtype, info.rank, info.shape) + " but the reference is " +
                     typeString(reference.dtype, rank, reference.shape.data()));
    }
  }

  std::string source = !options.testData.empty() ? "test data '" + options.testData + "'"
                       : !options.inputs.empty() ? "input files"
                                                 : "random (seed " + std::to_string(kSeed) + ")";
  std::printf("nnc-run: '%s' function '%s' on %s, %d thread%s, inputs: %s\n",
              options.module.c_str(), name, session->device(), runtime->numThreads(),
              runtime->numThreads() == 1 ? "" : "s", source.c_str());
  std::vector<std::vector<unsigned char>> pristine;
  for (const HostTensor &input : inputs)
    pristine.push_back(input.bytes);
  if (nnc::Status status = session->run(); !status.ok())
    return error(status.message());

  int32_t failures = 0;
  std::vector<std::vector<unsigned char>> first;
  for (int32_t i = 0; i < function.outputCount(); ++i) {
    nnc::Result<nnc_tensor_view_t> view = session->output(i);
    if (!view.ok())
      return error(view.status().message());
    if (options.printOutputs)
      printValues(i, *function.output(i), *view);
    if (!expected.empty() && !compareOutput(i, *function.output(i), *view, expected[i], options))
      ++failures;
    auto *bytes = static_cast<const unsigned char *>(view->data);
    first.emplace_back(bytes, bytes + function.output(i)->byte_size);
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
  if (failures)
    std::printf("nnc-run: %d of %d outputs out of tolerance\n", failures, function.outputCount());
  if (problems)
    std::printf("nnc-run: %d output(s) or input(s) changed on a second run\n", problems);
  return failures || problems ? kOutOfTolerance : 0;
}

} // namespace

int main(int argc, char **argv) { return runModule(parseOptions(argc, argv)); }
