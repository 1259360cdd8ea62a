//===- StressTest.cpp - many sessions on one module, and memory over runs --===//
//
//   nnc-stress MODULE [--function F] [--device D] [--threads T] [--runs N]
//              [--sizes S1,S2,...]
//
// 1. Concurrency: T threads, each with its own session of F on one shared
//    module and runtime, run N times each on the same inputs; every run's
//    outputs must equal, bit for bit, those of a first run made alone.
// 2. Memory: one session runs 10 times, then 990 more; resident anonymous
//    memory after the 1,000th run must equal that after the 10th (a run
//    allocates nothing, runtime.h), within a few pages of slack. On a CUDA
//    device, so must the device memory in use (the driver's total - free,
//    read through the driver the runtime loads: NNC_CUDA_DRIVER or
//    libcuda.so.1), exactly: the whole device's, so the check wants a GPU
//    that nothing else allocates on meanwhile. Its runtime
//    has one thread: a pool thread that first takes part late (on a loaded
//    machine) first touches its stack pages (and cuda-emulated's fiber
//    stacks) late, which is no leak but looked like one.
// A function with dynamic dims runs at each of --sizes in turn (every
// dynamic dim of the inputs takes the size), in both checks: each run must
// match the lone run at its size, and memory must not grow once every size
// has run (the session keeps buffers for the largest).
// Inputs are reproducible: floats k/64 in [-1, 1], integers in [0, 9].
// Prints one line per check; exits 1 on the first failure.
//
//===----------------------------------------------------------------------===//

#include "nnc/runtime.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {
[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "nnc-stress: error: %s\n", message.c_str());
  std::exit(1);
}

void require(nnc_status_t status, const char *what) {
  if (status) {
    std::string message = std::string(what) + ": " + nnc_status_message(status);
    nnc_status_free(status);
    fail(message);
  }
}

/// Resident anonymous memory (heap, stacks) in bytes, from /proc/self/status:
/// code and file pages are mapped in lazily as new paths run, and are not
/// what a leak grows.
long residentBytes() {
  long kilobytes = -1;
  if (FILE *status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof(line), status))
      if (std::sscanf(line, "RssAnon: %ld kB", &kilobytes) == 1)
        break;
    std::fclose(status);
  }
  if (kilobytes < 0)
    fail("cannot read RssAnon from /proc/self/status");
  return kilobytes * 1024;
}

/// Device memory in use on CUDA device `ordinal`, from the driver.
class DeviceMemory {
public:
  explicit DeviceMemory(int ordinal) {
    const char *override = std::getenv("NNC_CUDA_DRIVER");
    std::string path = override && *override ? override : "libcuda.so.1";
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      fail("cannot load the CUDA driver '" + path + "' to read device memory");
    resolve(init, "cuInit");
    resolve(deviceGet, "cuDeviceGet");
    resolve(retain, "cuDevicePrimaryCtxRetain");
    resolve(release, "cuDevicePrimaryCtxRelease_v2");
    resolve(push, "cuCtxPushCurrent_v2");
    resolve(pop, "cuCtxPopCurrent_v2");
    resolve(memGetInfo, "cuMemGetInfo_v2");
    check(init(0), "cuInit");
    check(deviceGet(&device, ordinal), "cuDeviceGet");
    check(retain(&context, device), "cuDevicePrimaryCtxRetain");
    used(); // whatever the driver allocates on a first query, before any measurement
  }
  ~DeviceMemory() {
    release(device);
    dlclose(handle);
  }
  long used() {
    size_t free = 0, total = 0;
    check(push(context), "cuCtxPushCurrent_v2");
    check(memGetInfo(&free, &total), "cuMemGetInfo_v2");
    void *popped = nullptr;
    check(pop(&popped), "cuCtxPopCurrent_v2");
    return static_cast<long>(total - free);
  }

private:
  // The driver API's types, as cuda.h declares them.
  using Result = int;
  using Context = void *;
  template <typename F> void resolve(F &f, const char *name) {
    f = reinterpret_cast<F>(dlsym(handle, name));
    if (!f)
      fail(std::string("the CUDA driver lacks ") + name);
  }
  static void check(Result result, const char *call) {
    if (result)
      fail(std::string(call) + " failed with CUDA error " + std::to_string(result));
  }
  void *handle = nullptr;
  int device = 0;
  Context context = nullptr;
  Result (*init)(unsigned) = nullptr;
  Result (*deviceGet)(int *, int) = nullptr;
  Result (*retain)(Context *, int) = nullptr;
  Result (*release)(int) = nullptr;
  Result (*push)(Context) = nullptr;
  Result (*pop)(Context *) = nullptr;
  Result (*memGetInfo)(size_t *, size_t *) = nullptr;
};

/// The CUDA device ordinal of a session device name ("cuda", "cuda:N"), or
/// -1 for any other device.
int cudaOrdinal(const std::string &device) {
  if (device == "cuda")
    return 0;
  if (device.rfind("cuda:", 0) == 0)
    return std::atoi(device.c_str() + 5);
  return -1;
}

/// An input's shape with its dynamic dims at `dynamic`.
std::vector<int64_t> shapeAt(const nnc_tensor_info_t &info, int64_t dynamic) {
  std::vector<int64_t> shape(info.shape, info.shape + info.rank);
  for (int64_t &d : shape)
    if (d < 0)
      d = dynamic;
  return shape;
}

/// Reproducible values of the input's dtype and `shape`.
std::vector<unsigned char> makeInput(const nnc_tensor_info_t &info,
                                     const std::vector<int64_t> &shape, std::mt19937_64 &rng) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  size_t size = nnc_dtype_size(info.dtype);
  std::vector<unsigned char> bytes(count * size);
  for (int64_t i = 0; i < count; ++i) {
    int k = static_cast<int>(rng() % 129) - 64;
    unsigned char *at = bytes.data() + i * size;
    switch (info.dtype) {
    case NNC_DTYPE_F32: { float v = k / 64.0f; std::memcpy(at, &v, 4); break; }
    case NNC_DTYPE_F64: { double v = k / 64.0; std::memcpy(at, &v, 8); break; }
    case NNC_DTYPE_BOOL: *at = k & 1; break;
    default: { int64_t v = (k + 64) % 10; std::memcpy(at, &v, size); break; } // little-endian
    }
  }
  return bytes;
}

struct Options {
  const char *module = nullptr, *function = "main", *device = "cpu";
  int threads = 8, runs = 200;
  std::vector<int64_t> sizes{1}; // for dynamic dims
};

/// The inputs at one size of the dynamic dims, and a lone run's outputs.
struct Case {
  std::vector<std::vector<unsigned char>> inputs;
  std::vector<std::vector<int64_t>> shapes;
  std::string reference;
};

/// One session of the function; outputs read after runs.
struct Runner {
  nnc_session_t *session = nullptr;
  Runner(nnc_runtime_t *runtime, nnc_module_t *module, const Options &options) {
    nnc_session_options_t sessionOptions;
    nnc_session_options_initialize(&sessionOptions);
    sessionOptions.function = options.function;
    sessionOptions.device = options.device;
    require(nnc_session_create(runtime, module, &sessionOptions, &session), "session");
  }
  ~Runner() { nnc_session_release(session); }
  /// Binds a case's inputs (binding allocates nothing).
  void bind(Case &c) {
    const nnc_function_t *function = nnc_session_function(session);
    for (int32_t i = 0; i < nnc_function_input_count(function); ++i) {
      const nnc_tensor_info_t *info = nnc_function_input(function, i);
      nnc_tensor_view_t view = {c.inputs[i].data(), c.inputs[i].size(), info->dtype, info->rank,
                                c.shapes[i].data()};
      require(nnc_session_bind_input(session, i, &view), "bind");
    }
  }
  /// Runs once; the outputs' bytes, concatenated.
  std::string run() {
    std::string bytes;
    runAndCompare(nullptr, &bytes);
    return bytes;
  }
  /// Runs a case and whether the outputs' bytes equal its reference,
  /// allocating nothing (the memory check measures the runtime, not this
  /// program).
  bool runMatches(Case &c) {
    bind(c);
    return runAndCompare(&c.reference, nullptr);
  }

private:
  bool runAndCompare(const std::string *expected, std::string *bytes) {
    require(nnc_session_run(session), "run");
    const nnc_function_t *function = nnc_session_function(session);
    size_t offset = 0;
    bool same = true;
    for (int32_t i = 0; i < nnc_function_output_count(function); ++i) {
      nnc_tensor_view_t view;
      require(nnc_session_output(session, i, &view), "output");
      if (bytes)
        bytes->append(static_cast<const char *>(view.data), view.byte_size);
      if (expected)
        same = same && offset + view.byte_size <= expected->size() &&
               std::memcmp(expected->data() + offset, view.data, view.byte_size) == 0;
      offset += view.byte_size;
    }
    return same && (!expected || offset == expected->size());
  }
};

/// Whether a sanitizer runs this program: its allocator's quarantine and
/// shadow memory make resident memory say nothing about leaks (LeakSanitizer
/// checks those there).
constexpr bool kSanitized =
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    true;
#else
    false;
#endif
#elif defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    true;
#else
    false;
#endif
} // namespace

int main(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc)
        fail(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--function")
      options.function = value();
    else if (arg == "--device")
      options.device = value();
    else if (arg == "--threads")
      options.threads = std::atoi(value());
    else if (arg == "--runs")
      options.runs = std::atoi(value());
    else if (arg == "--sizes") {
      options.sizes.clear();
      std::string list = value();
      for (size_t start = 0; start <= list.size();) {
        size_t end = std::min(list.find(',', start), list.size());
        std::string item = list.substr(start, end - start);
        char *rest = nullptr;
        errno = 0;
        long long size = std::strtoll(item.c_str(), &rest, 10);
        // A size beyond 2^20 is no stress test but an allocation failure.
        if (item.empty() || *rest || errno || size > (1 << 20))
          fail("--sizes expects sizes from 0 to 1048576 separated by commas (got '" + list + "')");
        options.sizes.push_back(size);
        start = end + 1;
      }
      for (int64_t size : options.sizes)
        if (size < 0)
          fail("--sizes takes sizes >= 0");
      if (options.sizes.empty())
        fail("--sizes needs at least one size");
    }
    else if (!options.module && arg[0] != '-')
      options.module = argv[i];
    else
      fail("unknown argument '" + arg + "'");
  }
  if (!options.module || options.threads < 1 || options.runs < 1)
    fail("usage: nnc-stress MODULE [--function F] [--device D] [--threads T] [--runs N] "
         "[--sizes S1,S2,...]");

  nnc_runtime_t *runtime = nullptr;
  require(nnc_runtime_create(nullptr, &runtime), "runtime");
  nnc_module_t *module = nullptr;
  require(nnc_module_load(options.module, &module), "module");
  const nnc_function_t *function = nullptr;
  require(nnc_module_find_function(module, options.function, &function), "function");
  // Sizes matter only where a dim is dynamic.
  bool dynamic = false;
  for (int32_t i = 0; i < nnc_function_input_count(function); ++i) {
    const nnc_tensor_info_t &info = *nnc_function_input(function, i);
    dynamic |= std::any_of(info.shape, info.shape + info.rank, [](int64_t d) { return d < 0; });
  }
  if (!dynamic)
    options.sizes.resize(1);
  std::mt19937_64 rng(1);
  std::vector<Case> cases(options.sizes.size());
  {
    Runner alone(runtime, module, options);
    for (size_t k = 0; k < cases.size(); ++k) {
      for (int32_t i = 0; i < nnc_function_input_count(function); ++i) {
        const nnc_tensor_info_t &info = *nnc_function_input(function, i);
        cases[k].shapes.push_back(shapeAt(info, options.sizes[k]));
        cases[k].inputs.push_back(makeInput(info, cases[k].shapes.back(), rng));
      }
      alone.bind(cases[k]);
      cases[k].reference = alone.run();
    }
  }

  // Each thread checks every one of its runs against the lone run's bytes,
  // the sizes in turn (each thread starting at another).
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < options.threads; ++t)
    threads.emplace_back([&, t] {
      Runner runner(runtime, module, options);
      for (int r = 0; r < options.runs; ++r)
        if (!runner.runMatches(cases[(t + r) % cases.size()]))
          ++mismatches;
    });
  for (std::thread &thread : threads)
    thread.join();
  if (mismatches)
    fail(std::to_string(mismatches.load()) + " of " +
         std::to_string(options.threads * options.runs) +
         " concurrent runs differ from a run made alone");
  std::printf("concurrency: %d threads x %d runs of '%s' match a run made alone", options.threads,
              options.runs, options.function);
  if (cases.size() > 1)
    std::printf(" (%zu sizes of the dynamic dims)", cases.size());
  std::printf("\n");

  // A sanitizer's allocator and shadow memory make resident memory say
  // nothing; the device's memory is the driver's count either way.
  int ordinal = cudaOrdinal(options.device);
  if (kSanitized && ordinal < 0) {
    std::printf("memory: not measured under a sanitizer\n");
  } else {
    nnc_runtime_options_t serial;
    nnc_runtime_options_initialize(&serial);
    serial.num_threads = 1;
    nnc_runtime_t *single = nullptr;
    require(nnc_runtime_create(&serial, &single), "runtime of one thread");
    Runner runner(single, module, options);
    std::unique_ptr<DeviceMemory> deviceMemory;
    if (ordinal >= 0)
      deviceMemory = std::make_unique<DeviceMemory>(ordinal);
    // Every size runs before the first measurement: the session's buffers
    // then hold the largest.
    int warmup = std::max<int>(10, cases.size());
    for (int r = 0; r < warmup; ++r)
      if (!runner.runMatches(cases[r % cases.size()]))
        fail("a run differs from the lone run at its size");
    long deviceAfter10 = deviceMemory ? deviceMemory->used() : 0;
    long after10 = residentBytes();
    for (int r = warmup; r < 1000; ++r)
      if (!runner.runMatches(cases[r % cases.size()]))
        fail("a run differs from the lone run at its size");
    long after1000 = residentBytes();
    if (deviceMemory) {
      long deviceAfter1000 = deviceMemory->used();
      if (deviceAfter1000 != deviceAfter10)
        fail("device memory in use went from " + std::to_string(deviceAfter10) +
             " bytes after 10 runs to " + std::to_string(deviceAfter1000) + " after 1000");
      std::printf("memory: device memory in use after 1000 runs - after 10 = 0 bytes (%ld in use)\n",
                  deviceAfter1000);
    }
    if (kSanitized) {
      std::printf("memory: resident memory not measured under a sanitizer\n");
    } else {
      // Slack for the allocator's and the C library's own pages, not per run.
      long slack = 16 * sysconf(_SC_PAGESIZE);
      if (after1000 > after10 + slack)
        fail("resident memory grew from " + std::to_string(after10) + " bytes after 10 runs to " +
             std::to_string(after1000) + " after 1000");
      std::printf("memory: resident after 1000 runs - after 10 = %ld bytes (allowed %ld)\n",
                  after1000 - after10, slack);
    }
    nnc_runtime_release(single); // the session keeps it until it goes
  }
  nnc_module_release(module);
  nnc_runtime_release(runtime);
  return 0;
}
