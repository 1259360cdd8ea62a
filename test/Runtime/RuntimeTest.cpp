//===- RuntimeTest.cpp - unit tests of the runtime C API and C++ wrapper ---===//
//
// Runs without the compiler: the modules are hand-written C (modules/), built
// next to this test, and CUDA runs against a fake driver (fake_cuda/). Every API function and every error status is exercised;
// the last line reads "N passed, M failed" and the exit code is non-zero on
// any failure.
//
//===----------------------------------------------------------------------===//

#include "nnc/runtime.h"
#include "nnc/runtime.hpp"

#include "fake_cuda/fake_cuda.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<bool> testOk{true}; // checks may fail on several threads at once
/// Set by a test that found nothing to check on this machine, saying why.
std::string skipped;

void check(bool condition, const char *text, const char *file, int line) {
  if (!condition) {
    std::fprintf(stderr, "%s:%d: check failed: %s\n", file, line, text);
    testOk = false;
  }
}

/// Consumes status; true when it has the code and its message contains text.
bool checkStatus(nnc_status_t status, nnc_status_code_t code, const char *text,
                 const char *expression, const char *file, int line) {
  bool ok = nnc_status_code(status) == code && std::strstr(nnc_status_message(status), text);
  if (!ok) {
    std::fprintf(stderr, "%s:%d: %s\n  returned code %d: %s\n  expected code %d containing: %s\n",
                 file, line, expression, nnc_status_code(status), nnc_status_message(status),
                 code, text);
    testOk = false;
  }
  nnc_status_free(status);
  return ok;
}

#define CHECK(condition) check((condition), #condition, __FILE__, __LINE__)
#define EXPECT_STATUS(expression, code, text)                                                  \
  checkStatus((expression), code, text, #expression, __FILE__, __LINE__)
#define EXPECT_OK(expression) EXPECT_STATUS(expression, NNC_STATUS_OK, "ok")
/// Ends the test when a call it depends on fails.
#define REQUIRE_OK(expression)                                                                 \
  do {                                                                                         \
    if (!EXPECT_OK(expression))                                                                \
      return;                                                                                  \
  } while (0)

std::string modulePath(const char *name) { return std::string(NNC_TEST_MODULE_DIR "/") + name; }

nnc_tensor_view_t viewOf(const nnc_tensor_info_t *info, void *data) {
  return {data, info->byte_size, info->dtype, info->rank, info->shape};
}

/// Owns the objects a test creates, so that early returns do not leak.
struct Objects {
  nnc_runtime_t *runtime = nullptr;
  nnc_module_t *module = nullptr;
  nnc_session_t *session = nullptr;
  ~Objects() {
    nnc_session_release(session);
    nnc_module_release(module);
    nnc_runtime_release(runtime);
  }
  /// Creates a runtime, loads a test module and opens a session on function.
  nnc_status_t open(const char *function, int32_t threads = 2,
                    const char *file = "test_module.so", const char *device = "cpu",
                    bool profile = false) {
    nnc_runtime_options_t options;
    nnc_runtime_options_initialize(&options);
    options.num_threads = threads;
    if (nnc_status_t status = nnc_runtime_create(&options, &runtime))
      return status;
    if (nnc_status_t status = nnc_module_load(modulePath(file).c_str(), &module))
      return status;
    nnc_session_options_t sessionOptions;
    nnc_session_options_initialize(&sessionOptions);
    sessionOptions.function = function;
    sessionOptions.device = device;
    sessionOptions.profile = profile;
    return nnc_session_create(runtime, module, &sessionOptions, &session);
  }
  const nnc_tensor_info_t *input(int32_t i) {
    return nnc_function_input(nnc_session_function(session), i);
  }
  const nnc_tensor_info_t *output(int32_t i) {
    return nnc_function_output(nnc_session_function(session), i);
  }
};

/// A directory for files the tests write, removed at exit.
struct TempDir {
  std::string path;
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/nnc-runtime-test-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()))
      path = buffer.data();
  }
  ~TempDir() {
    for (const std::string &file : files)
      unlink(file.c_str());
    if (!path.empty())
      rmdir(path.c_str());
  }
  std::string write(const char *name, const std::string &contents) {
    std::string file = path + "/" + name;
    if (FILE *out = std::fopen(file.c_str(), "wb")) {
      std::fwrite(contents.data(), 1, contents.size(), out);
      std::fclose(out);
    }
    files.push_back(file);
    return file;
  }
  std::vector<std::string> files;
};

//===----------------------------------------------------------------------===//
// Status and element types
//===----------------------------------------------------------------------===//

void testStatus() {
  CHECK(nnc_status_code(nullptr) == NNC_STATUS_OK);
  CHECK(std::strcmp(nnc_status_message(nullptr), "ok") == 0);
  nnc_status_free(nullptr);
  // A real error status carries its code and message until freed.
  nnc_runtime_t *runtime = nullptr;
  nnc_runtime_options_t options = {-1};
  nnc_status_t status = nnc_runtime_create(&options, &runtime);
  CHECK(nnc_status_code(status) == NNC_STATUS_INVALID_ARGUMENT);
  CHECK(std::strcmp(nnc_status_message(status),
                    "num_threads -1 is out of range [0, 1024] (0: one per core)") == 0);
  CHECK(runtime == nullptr); // out-parameters are untouched on failure
  nnc_status_free(status);
}

void testDtypes() {
  struct {
    nnc_dtype_t dtype;
    const char *name;
    size_t size;
  } expected[] = {{NNC_DTYPE_F32, "f32", 4},  {NNC_DTYPE_U8, "u8", 1},     {NNC_DTYPE_I8, "i8", 1},
                  {NNC_DTYPE_U16, "u16", 2},  {NNC_DTYPE_I16, "i16", 2},   {NNC_DTYPE_I32, "i32", 4},
                  {NNC_DTYPE_I64, "i64", 8},  {NNC_DTYPE_BOOL, "bool", 1}, {NNC_DTYPE_F16, "f16", 2},
                  {NNC_DTYPE_F64, "f64", 8},  {NNC_DTYPE_U32, "u32", 4},   {NNC_DTYPE_U64, "u64", 8},
                  {NNC_DTYPE_BF16, "bf16", 2},  {NNC_DTYPE_STRING, "string", sizeof(const char *)}};
  for (const auto &e : expected) {
    CHECK(std::strcmp(nnc_dtype_name(e.dtype), e.name) == 0);
    CHECK(nnc_dtype_size(e.dtype) == e.size);
  }
  for (int32_t unknown : {0, 14, 42, -1}) {
    CHECK(std::strcmp(nnc_dtype_name(unknown), "unknown") == 0);
    CHECK(nnc_dtype_size(unknown) == 0);
  }
}

//===----------------------------------------------------------------------===//
// Runtime
//===----------------------------------------------------------------------===//

void testRuntime() {
  nnc_runtime_options_t options;
  options.num_threads = 7;
  nnc_runtime_options_initialize(&options);
  CHECK(options.num_threads == 0);

  nnc_runtime_t *runtime = nullptr;
  REQUIRE_OK(nnc_runtime_create(nullptr, &runtime)); // defaults: one thread per core
  int32_t cores = static_cast<int32_t>(sysconf(_SC_NPROCESSORS_ONLN));
  CHECK(nnc_runtime_num_threads(runtime) >= 1 && nnc_runtime_num_threads(runtime) <= cores);
  nnc_runtime_release(runtime);

  for (int32_t threads : {1, 3}) {
    options.num_threads = threads;
    REQUIRE_OK(nnc_runtime_create(&options, &runtime));
    CHECK(nnc_runtime_num_threads(runtime) == threads);
    nnc_runtime_release(runtime);
  }
  nnc_runtime_release(nullptr);

  options.num_threads = NNC_RUNTIME_MAX_THREADS + 1;
  EXPECT_STATUS(nnc_runtime_create(&options, &runtime), NNC_STATUS_INVALID_ARGUMENT,
                "num_threads 1025 is out of range [0, 1024]");
  EXPECT_STATUS(nnc_runtime_create(nullptr, nullptr), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_runtime_create: out_runtime is NULL");
}

//===----------------------------------------------------------------------===//
// Module loading and introspection
//===----------------------------------------------------------------------===//

void testModuleIntrospection() {
  nnc_module_t *module = nullptr;
  std::string path = modulePath("test_module.so");
  REQUIRE_OK(nnc_module_load(path.c_str(), &module));
  CHECK(nnc_module_path(module) == path);
  CHECK(std::strcmp(nnc_module_producer(module), "nnc-test 1.0") == 0);
  CHECK(std::strcmp(nnc_module_target(module), "cpu") == 0);
  CHECK(std::strcmp(nnc_module_target_cpu(module), "generic") == 0);
  // A descriptor without a precision (NULL) computes in f32.
  CHECK(std::strcmp(nnc_module_precision(module), "f32") == 0);
  CHECK(nnc_module_function_count(module) == 12);
  CHECK(nnc_module_function(module, -1) == nullptr);
  CHECK(nnc_module_function(module, 12) == nullptr);

  const nnc_function_t *main = nnc_module_function(module, 0);
  CHECK(std::strcmp(nnc_function_name(main), "main") == 0);
  CHECK(nnc_function_input_count(main) == 2);
  CHECK(nnc_function_output_count(main) == 1);
  CHECK(nnc_function_workspace_size(main) == 24);
  const nnc_tensor_info_t *b = nnc_function_input(main, 1);
  CHECK(std::strcmp(b->name, "b") == 0);
  CHECK(b->dtype == NNC_DTYPE_F32 && b->rank == 2 && b->shape[0] == 2 && b->shape[1] == 3);
  CHECK(b->element_count == 6 && b->byte_size == 24);
  CHECK(std::strcmp(nnc_function_output(main, 0)->name, "c") == 0);
  CHECK(nnc_function_input(main, 2) == nullptr && nnc_function_input(main, -1) == nullptr);
  CHECK(nnc_function_output(main, 1) == nullptr);

  const nnc_function_t *found = nullptr;
  REQUIRE_OK(nnc_module_find_function(module, "scale", &found));
  CHECK(found == nnc_module_function(module, 1));
  const nnc_tensor_info_t *k = nnc_function_input(found, 1);
  CHECK(k->rank == 0 && k->element_count == 1 && k->byte_size == 4 && k->dtype == NNC_DTYPE_I32);
  EXPECT_STATUS(nnc_module_find_function(module, "train_step", &found), NNC_STATUS_NOT_FOUND,
                "has no function 'train_step' (functions: 'main', 'scale', 'large', 'nested', "
                "'types', 'fail', 'dynamic', 'writes_input', 'unsteady', 'profiled', 'profile_gap', 'take')");
  EXPECT_STATUS(nnc_module_find_function(module, nullptr, &found), NNC_STATUS_INVALID_ARGUMENT,
                "must not be NULL");

  int32_t index = -1;
  REQUIRE_OK(nnc_function_find_input(main, "b", &index));
  CHECK(index == 1);
  REQUIRE_OK(nnc_function_find_output(found, "total", &index));
  CHECK(index == 1);
  EXPECT_STATUS(nnc_function_find_input(main, "q", &index), NNC_STATUS_NOT_FOUND,
                "function 'main' has no input 'q' (inputs: 'a', 'b')");
  EXPECT_STATUS(nnc_function_find_output(main, "a", &index), NNC_STATUS_NOT_FOUND,
                "function 'main' has no output 'a' (outputs: 'c')");
  EXPECT_STATUS(nnc_function_find_input(main, "a", nullptr), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_function_find_input: function, name and out_index must not be NULL");
  EXPECT_STATUS(nnc_function_find_output(nullptr, "c", &index), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_function_find_output");
  const nnc_function_t *failing = nnc_module_function(module, 5);
  CHECK(nnc_function_input_count(failing) == 0);
  EXPECT_STATUS(nnc_function_find_input(failing, "x", &index), NNC_STATUS_NOT_FOUND,
                "(inputs: none)");

  // A dynamic dim is -1, with no element count or size.
  const nnc_tensor_info_t *dynamic = nnc_function_input(nnc_module_function(module, 6), 0);
  CHECK(dynamic->shape[0] == -1 && dynamic->element_count == -1 && dynamic->byte_size == 0);
  nnc_module_release(module);
  nnc_module_release(nullptr);
}

void testModuleLoadErrors() {
  nnc_module_t *module = nullptr;
  EXPECT_STATUS(nnc_module_load(nullptr, &module), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_module_load: path and out_module must not be NULL");
  EXPECT_STATUS(nnc_module_load(modulePath("test_module.so").c_str(), nullptr),
                NNC_STATUS_INVALID_ARGUMENT, "must not be NULL");
  EXPECT_STATUS(nnc_module_load("/nonexistent/model.so", &module), NNC_STATUS_NOT_FOUND,
                "cannot open module '/nonexistent/model.so': No such file or directory");
  // Without a slash the name is a file in the current directory; it is never
  // looked up in the library path (which would find the real libc).
  EXPECT_STATUS(nnc_module_load("libc.so.6", &module), NNC_STATUS_NOT_FOUND,
                "cannot open module 'libc.so.6': No such file or directory");
  EXPECT_STATUS(nnc_module_load(NNC_TEST_MODULE_DIR, &module), NNC_STATUS_INVALID_ARGUMENT,
                "cannot load module '" NNC_TEST_MODULE_DIR "': ");

  TempDir temp;
  CHECK(!temp.path.empty());
  std::string text = temp.write("text.so", "this is a text file renamed .so\n");
  EXPECT_STATUS(nnc_module_load(text.c_str(), &module), NNC_STATUS_INVALID_ARGUMENT,
                ("cannot load module '" + text + "': ").c_str());
  std::string empty = temp.write("empty.so", "");
  EXPECT_STATUS(nnc_module_load(empty.c_str(), &module), NNC_STATUS_INVALID_ARGUMENT,
                "cannot load module");

  std::string plain = modulePath("not_nnc.so");
  EXPECT_STATUS(nnc_module_load(plain.c_str(), &module), NNC_STATUS_INVALID_ARGUMENT,
                ("'" + plain + "' is not an nnc module: it does not export 'nnc_module_v1'").c_str());
  EXPECT_STATUS(nnc_module_load(modulePath("bad_version.so").c_str(), &module),
                NNC_STATUS_FAILED_PRECONDITION,
                ("bad_version.so' was built for ABI version 99, this runtime supports " +
                 std::to_string(NNC_ABI_VERSION) + " (recompile it with a matching nnc)")
                    .c_str());
  EXPECT_STATUS(nnc_module_load(modulePath("bad_unresolved.so").c_str(), &module),
                NNC_STATUS_INVALID_ARGUMENT, "undefined symbol: nnc_test_undefined_symbol");
  EXPECT_STATUS(nnc_module_load(modulePath("bad_null_descriptor.so").c_str(), &module),
                NNC_STATUS_INVALID_ARGUMENT, "bad_null_descriptor.so': nnc_module_v1() returned NULL");
  EXPECT_STATUS(nnc_module_load(modulePath("bad_cpu_features.so").c_str(), &module),
                NNC_STATUS_FAILED_PRECONDITION,
                "bad_cpu_features.so' was compiled for CPU 'generic' and needs extensions this "
                "runtime does not know, which this CPU lacks (recompile it for this CPU: nnc "
                "without -cpu)");

  struct {
    const char *file, *message;
  } malformed[] = {
      {"bad_no_target.so", "producer, target or target_cpu is NULL"},
      {"bad_cpu_precision.so", "precision 'tf32' is not one a cpu module may have"},
      {"bad_no_entry.so", "function 'main' has no entry point"},
      {"bad_alignment.so", "function 'main' has workspace alignment 48, not a power of two"},
      {"bad_dtype.so", "function 'main' input 0 'x' has unknown dtype 42"},
      {"bad_dim.so", "function 'main' input 0 'x' has invalid dim -5"},
      {"bad_duplicate_name.so", "two functions are named 'main'"},
      {"bad_kernel_count.so", "function 'main' has an invalid kernel list (count -1)"},
      {"bad_kernel_table.so", "function 'main' kernel 0 has no kind or node list"},
      {"bad_shape_inputs.so", "function 'main' has an invalid shape input list (entry 0 is 1)"},
      {"bad_cuda_no_image.so", "no CUDA image (count 0) for its kernels (count 1)"},
      {"bad_cuda_chip.so",
       "CUDA image 0 has chip 'compute_90', expected sm_<digits> or sm_<digits>a"},
  };
  for (const auto &bad : malformed) {
    std::string message = bad.file + std::string("' has a malformed descriptor: ") + bad.message;
    EXPECT_STATUS(nnc_module_load(modulePath(bad.file).c_str(), &module),
                  NNC_STATUS_INVALID_ARGUMENT, message.c_str());
  }
  CHECK(module == nullptr);
}

void testModuleRelativePath() {
  char cwd[4096];
  CHECK(getcwd(cwd, sizeof(cwd)) != nullptr);
  CHECK(chdir(NNC_TEST_MODULE_DIR) == 0);
  nnc_module_t *module = nullptr;
  EXPECT_OK(nnc_module_load("test_module.so", &module));
  CHECK(chdir(cwd) == 0);
  if (module)
    CHECK(std::strcmp(nnc_module_path(module), "test_module.so") == 0);
  nnc_module_release(module);
}

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

void testSessionCreate() {
  Objects objects;
  REQUIRE_OK(objects.open("main"));
  nnc_session_options_t options;
  nnc_session_options_initialize(&options);
  CHECK(std::strcmp(options.function, "main") == 0 && std::strcmp(options.device, "cpu") == 0);

  // NULL options mean the defaults: function main on the cpu.
  nnc_session_t *session = nullptr;
  REQUIRE_OK(nnc_session_create(objects.runtime, objects.module, nullptr, &session));
  CHECK(nnc_session_function(session) == nnc_module_function(objects.module, 0));
  nnc_session_release(session);
  nnc_session_release(nullptr);
  session = nullptr;

  EXPECT_STATUS(nnc_session_create(nullptr, objects.module, &options, &session),
                NNC_STATUS_INVALID_ARGUMENT,
                "nnc_session_create: runtime, module and out_session must not be NULL");
  EXPECT_STATUS(nnc_session_create(objects.runtime, objects.module, &options, nullptr),
                NNC_STATUS_INVALID_ARGUMENT, "must not be NULL");
  options.device = nullptr;
  EXPECT_STATUS(nnc_session_create(objects.runtime, objects.module, &options, &session),
                NNC_STATUS_INVALID_ARGUMENT,
                "options.function and options.device must not be NULL");
  // A CPU module runs on the CPU or not at all (the CUDA tests cover the
  // other way round).
  for (const char *cuda : {"cuda", "cuda:0", "cuda-emulated"}) {
    options.device = cuda;
    EXPECT_STATUS(nnc_session_create(objects.runtime, objects.module, &options, &session),
                  NNC_STATUS_INVALID_ARGUMENT,
                  (std::string("test_module.so' was compiled for target 'cpu' and cannot run on "
                               "device '") +
                   cuda + "'")
                      .c_str());
  }
  options.device = "tpu";
  EXPECT_STATUS(nnc_session_create(objects.runtime, objects.module, &options, &session),
                NNC_STATUS_INVALID_ARGUMENT,
                "unknown device 'tpu' (devices: 'cpu', 'cuda', 'cuda:<ordinal>', "
                "'cuda-emulated')");
  options.device = "cpu";
  options.function = "eval";
  EXPECT_STATUS(nnc_session_create(objects.runtime, objects.module, &options, &session),
                NNC_STATUS_NOT_FOUND, "has no function 'eval' (functions: 'main', ");

  nnc_module_t *huge = nullptr;
  REQUIRE_OK(nnc_module_load(modulePath("bad_huge_workspace.so").c_str(), &huge));
  EXPECT_STATUS(nnc_session_create(objects.runtime, huge, nullptr, &session),
                NNC_STATUS_RESOURCE_EXHAUSTED,
                "function 'main' needs 4611686018427387928 bytes of host memory (workspace "
                "4611686018427387904 and outputs), more than this machine's ");
  nnc_module_release(huge);
}

void testBindErrors() {
  Objects objects;
  REQUIRE_OK(objects.open("main"));
  nnc_session_t *session = objects.session;
  float data[6] = {};
  nnc_tensor_view_t good = viewOf(objects.input(0), data);

  EXPECT_STATUS(nnc_session_bind_input(session, 0, nullptr), NNC_STATUS_INVALID_ARGUMENT,
                "input 'a': view is NULL");
  nnc_tensor_view_t view = good;
  view.data = nullptr;
  EXPECT_STATUS(nnc_session_bind_input(session, 0, &view), NNC_STATUS_INVALID_ARGUMENT,
                "input 'a': data is NULL");
  EXPECT_STATUS(nnc_session_bind_input(session, 2, &good), NNC_STATUS_OUT_OF_RANGE,
                "input index 2 is out of range (function 'main' has 2 inputs)");
  EXPECT_STATUS(nnc_session_bind_input(session, -1, &good), NNC_STATUS_OUT_OF_RANGE,
                "input index -1 is out of range");
  EXPECT_STATUS(nnc_session_bind_output(session, 1, &good), NNC_STATUS_OUT_OF_RANGE,
                "output index 1 is out of range (function 'main' has 1 outputs)");
  EXPECT_STATUS(nnc_session_bind_input(nullptr, 0, &good), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_session_bind_input: session is NULL");

  view = good;
  view.dtype = NNC_DTYPE_I64;
  EXPECT_STATUS(nnc_session_bind_input(session, 1, &view), NNC_STATUS_INVALID_ARGUMENT,
                "input 'b': expected dtype f32 (got i64)");
  view.dtype = 99;
  EXPECT_STATUS(nnc_session_bind_output(session, 0, &view), NNC_STATUS_INVALID_ARGUMENT,
                "output 'c': expected dtype f32 (got unknown)");

  const int64_t transposed[] = {3, 2};
  const int64_t longer[] = {2, 3, 1};
  view = good;
  view.shape = transposed;
  EXPECT_STATUS(nnc_session_bind_input(session, 0, &view), NNC_STATUS_INVALID_ARGUMENT,
                "input 'a': expected shape 2x3 (got 3x2)");
  view.rank = 3;
  view.shape = longer;
  EXPECT_STATUS(nnc_session_bind_input(session, 0, &view), NNC_STATUS_INVALID_ARGUMENT,
                "input 'a': expected shape 2x3 (got 2x3x1)");
  view.rank = 0;
  EXPECT_STATUS(nnc_session_bind_input(session, 0, &view), NNC_STATUS_INVALID_ARGUMENT,
                "input 'a': expected shape 2x3 (got scalar)");
  view.rank = -2;
  EXPECT_STATUS(nnc_session_bind_input(session, 0, &view), NNC_STATUS_INVALID_ARGUMENT,
                "input 'a': expected shape 2x3 (got rank -2)");
  view.rank = 2;
  view.shape = nullptr;
  EXPECT_STATUS(nnc_session_bind_input(session, 0, &view), NNC_STATUS_INVALID_ARGUMENT,
                "input 'a': shape is NULL for rank 2");

  view = good;
  view.byte_size = 20;
  EXPECT_STATUS(nnc_session_bind_input(session, 0, &view), NNC_STATUS_INVALID_ARGUMENT,
                "input 'a': buffer of 20 bytes is smaller than the tensor (24 bytes)");
  view.byte_size = 4096; // a larger buffer is fine: the tensor uses its start
  EXPECT_OK(nnc_session_bind_input(session, 0, &view));

  EXPECT_STATUS(nnc_session_bind_input_by_name(session, "x", &good), NNC_STATUS_NOT_FOUND,
                "function 'main' has no input 'x' (inputs: 'a', 'b')");
  EXPECT_STATUS(nnc_session_bind_output_by_name(session, "a", &good), NNC_STATUS_NOT_FOUND,
                "function 'main' has no output 'a' (outputs: 'c')");
  EXPECT_STATUS(nnc_session_bind_input_by_name(session, nullptr, &good),
                NNC_STATUS_INVALID_ARGUMENT,
                "nnc_session_bind_input_by_name: session and name must not be NULL");
  EXPECT_STATUS(nnc_session_bind_output_by_name(nullptr, "c", &good),
                NNC_STATUS_INVALID_ARGUMENT, "nnc_session_bind_output_by_name");
  view = good;
  view.dtype = NNC_DTYPE_F64;
  EXPECT_STATUS(nnc_session_bind_input_by_name(session, "b", &view), NNC_STATUS_INVALID_ARGUMENT,
                "input 'b': expected dtype f32 (got f64)");
}

void testRun() {
  Objects objects;
  REQUIRE_OK(objects.open("main"));
  nnc_session_t *session = objects.session;
  nnc_tensor_view_t result;
  EXPECT_STATUS(nnc_session_output(session, 0, &result), NNC_STATUS_FAILED_PRECONDITION,
                "output 'c' has no value: no successful run since the session was created");
  EXPECT_STATUS(nnc_session_run(session), NNC_STATUS_FAILED_PRECONDITION,
                "input 'a' (index 0) of function 'main' is not bound");

  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {10, 20, 30, 40, 50, 60};
  nnc_tensor_view_t viewA = viewOf(objects.input(0), a), viewB = viewOf(objects.input(1), b);
  REQUIRE_OK(nnc_session_bind_input(session, 0, &viewA));
  EXPECT_STATUS(nnc_session_run(session), NNC_STATUS_FAILED_PRECONDITION,
                "input 'b' (index 1) of function 'main' is not bound");
  REQUIRE_OK(nnc_session_bind_input_by_name(session, "b", &viewB));
  REQUIRE_OK(nnc_session_run(session));
  REQUIRE_OK(nnc_session_output(session, 0, &result));
  CHECK(result.dtype == NNC_DTYPE_F32 && result.rank == 2 && result.shape[0] == 2 &&
        result.shape[1] == 3 && result.byte_size == 24);
  CHECK(reinterpret_cast<uintptr_t>(result.data) % 64 == 0); // session-owned, aligned
  const float *c = static_cast<const float *>(result.data);
  for (int i = 0; i < 6; ++i)
    CHECK(c[i] == a[i] + b[i]);

  // Bindings are zero-copy and persist: new values in the same buffer.
  a[5] = 100;
  REQUIRE_OK(nnc_session_run(session));
  CHECK(c[5] == 160);

  // An output bound to the caller's buffer receives the next run's values.
  float mine[6] = {};
  nnc_tensor_view_t viewC = viewOf(objects.output(0), mine);
  REQUIRE_OK(nnc_session_bind_output_by_name(session, "c", &viewC));
  EXPECT_STATUS(nnc_session_output(session, 0, &result), NNC_STATUS_FAILED_PRECONDITION,
                "output 'c' has no value");
  REQUIRE_OK(nnc_session_run(session));
  REQUIRE_OK(nnc_session_output(session, 0, &result));
  CHECK(result.data == mine && mine[0] == 11 && mine[5] == 160);
  REQUIRE_OK(nnc_session_bind_output(session, 0, &viewC));

  EXPECT_STATUS(nnc_session_output(session, 1, &result), NNC_STATUS_OUT_OF_RANGE,
                "output index 1 is out of range (function 'main' has 1 outputs)");
  EXPECT_STATUS(nnc_session_output(session, 0, nullptr), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_session_output: session and out_view must not be NULL");
  EXPECT_STATUS(nnc_session_run(nullptr), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_session_run: session is NULL");
}

/// An output sized by an input's value: prepare runs again when the value
/// changes (not only when dims do), and its refusal shows the value.
void testShapeInputs() {
  Objects objects;
  REQUIRE_OK(objects.open("take"));
  nnc_session_t *session = objects.session;
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int64_t n = 3, xShape[] = {8}, nShape[] = {1};
  nnc_tensor_view_t vx{x, sizeof(x), NNC_DTYPE_F32, 1, xShape};
  nnc_tensor_view_t vn{&n, sizeof(n), NNC_DTYPE_I64, 1, nShape};
  REQUIRE_OK(nnc_session_bind_input(session, 0, &vx));
  REQUIRE_OK(nnc_session_bind_input(session, 1, &vn));
  nnc_tensor_view_t result;
  // The same buffer, rewritten between runs: each run sees its value.
  for (int64_t value : {3, 5, 5, 0, 8, 2}) {
    n = value;
    REQUIRE_OK(nnc_session_run(session));
    REQUIRE_OK(nnc_session_output(session, 0, &result));
    CHECK(result.rank == 1 && result.shape[0] == value && result.byte_size == size_t(value * 4));
    for (int64_t i = 0; i < value; ++i)
      CHECK(static_cast<const float *>(result.data)[i] == x[i]);
  }
  n = 9;
  EXPECT_STATUS(nnc_session_run(session), NNC_STATUS_INVALID_ARGUMENT,
                "function 'take' cannot run on these input values (input 'x' 8, input 'n' 1 = "
                "[9]): 'n' is outside [0, 8]");
  n = 4;
  REQUIRE_OK(nnc_session_run(session));
  REQUIRE_OK(nnc_session_output(session, 0, &result));
  CHECK(result.shape[0] == 4);
}

/// A function with dynamic dims: any size binds, prepare sizes the outputs
/// and the workspace (grown, never shrunk), and its checks fail the run with
/// their message.
void testDynamicDims() {
  Objects objects;
  REQUIRE_OK(objects.open("dynamic"));
  nnc_session_t *session = objects.session;
  CHECK(nnc_function_workspace_size(nnc_session_function(session)) == 0);
  auto bind = [&](float *x, int64_t rows, float *v, int64_t length) {
    int64_t xShape[] = {rows, 3}, vShape[] = {length};
    nnc_tensor_view_t vx{x, size_t(rows * 3 * 4), NNC_DTYPE_F32, 2, xShape};
    nnc_tensor_view_t vv{v, size_t(length * 4), NNC_DTYPE_F32, 1, vShape};
    nnc_status_t status = nnc_session_bind_input(session, 0, &vx);
    return status ? status : nnc_session_bind_input(session, 1, &vv);
  };
  std::vector<float> x(3000), v(1000);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = 1000.0f * float(i);
  nnc_tensor_view_t result;
  for (int64_t rows : {2, 5, 1, 5, 0, 3}) {
    REQUIRE_OK(bind(x.data(), rows, v.data(), rows));
    REQUIRE_OK(nnc_session_run(session));
    REQUIRE_OK(nnc_session_output(session, 0, &result));
    CHECK(result.rank == 2 && result.shape[0] == rows && result.shape[1] == 3 &&
          result.byte_size == size_t(rows * 12));
    const float *y = static_cast<const float *>(result.data);
    for (int64_t i = 0; i < rows * 3; ++i)
      CHECK(y[i] == x[i] + v[i / 3]);
  }

  // The checks of prepare, with their messages.
  REQUIRE_OK(bind(x.data(), 4, v.data(), 3));
  EXPECT_STATUS(nnc_session_run(session), NNC_STATUS_INVALID_ARGUMENT,
                "function 'dynamic' cannot run on these input shapes (input 'x' 4x3, input 'v' "
                "3): the rows of 'x' and the length of 'v' differ");
  EXPECT_STATUS(nnc_session_output(session, 0, &result), NNC_STATUS_FAILED_PRECONDITION,
                "no successful run");
  std::vector<float> big(1001 * 3);
  REQUIRE_OK(bind(big.data(), 1001, big.data(), 1001));
  EXPECT_STATUS(nnc_session_run(session), NNC_STATUS_INVALID_ARGUMENT,
                "'x' has more than 1000 rows");
  REQUIRE_OK(bind(big.data(), 998, big.data(), 998));
  EXPECT_STATUS(nnc_session_run(session), NNC_STATUS_RESOURCE_EXHAUSTED,
                "function 'dynamic' needs more than 2^62 bytes of workspace for these input "
                "shapes (input 'x' 998x3, input 'v' 998)");
  REQUIRE_OK(bind(big.data(), 999, big.data(), 999));
  EXPECT_STATUS(nnc_session_run(session), NNC_STATUS_RESOURCE_EXHAUSTED,
                "bytes of host memory for these input shapes (workspace 2305843009213693952");
  // A refused run leaves nothing behind: the dims of the last good run run
  // again, with their shape.
  REQUIRE_OK(bind(x.data(), 3, v.data(), 3));
  REQUIRE_OK(nnc_session_run(session));
  REQUIRE_OK(nnc_session_output(session, 0, &result));
  CHECK(result.shape[0] == 3 && result.byte_size == 36 &&
        static_cast<const float *>(result.data)[8] == x[8] + v[2]);

  // A static dim still binds only at its size, a dynamic one at any size.
  int64_t wrong[] = {2, 4};
  nnc_tensor_view_t bad{x.data(), x.size() * 4, NNC_DTYPE_F32, 2, wrong};
  EXPECT_STATUS(nnc_session_bind_input(session, 0, &bad), NNC_STATUS_INVALID_ARGUMENT,
                "input 'x': expected shape ?x3 (got 2x4)");
  int64_t negative[] = {-1, 3};
  bad.shape = negative;
  EXPECT_STATUS(nnc_session_bind_input(session, 0, &bad), NNC_STATUS_INVALID_ARGUMENT,
                "input 'x': expected shape ?x3 (got -1x3)");
  int64_t rows2[] = {2, 3};
  nnc_tensor_view_t small{x.data(), 20, NNC_DTYPE_F32, 2, rows2};
  EXPECT_STATUS(nnc_session_bind_input(session, 0, &small), NNC_STATUS_INVALID_ARGUMENT,
                "input 'x': buffer of 20 bytes is smaller than the tensor (24 bytes)");

  // A bound output must have the shape the inputs give.
  REQUIRE_OK(bind(x.data(), 2, v.data(), 2));
  float mine[6];
  nnc_tensor_view_t out{mine, sizeof(mine), NNC_DTYPE_F32, 2, rows2};
  REQUIRE_OK(nnc_session_bind_output(session, 0, &out));
  REQUIRE_OK(nnc_session_run(session));
  REQUIRE_OK(nnc_session_output(session, 0, &result));
  CHECK(result.data == mine && mine[5] == x[5] + v[1]);
  REQUIRE_OK(bind(x.data(), 1, v.data(), 1));
  EXPECT_STATUS(nnc_session_run(session), NNC_STATUS_INVALID_ARGUMENT,
                "output 'y': the bound buffer has shape 2x3 but these inputs give shape 1x3");
  // The inputs may not overlap the bound output at their run's sizes.
  REQUIRE_OK(bind(mine, 2, v.data(), 2));
  EXPECT_STATUS(nnc_session_run(session), NNC_STATUS_INVALID_ARGUMENT,
                "output 'y''s buffer overlaps input 'x''s");
  // Nor the session's own output buffer, even one that a larger run would
  // free: refused before it is freed and read. (The view claims more bytes
  // than the 1x3 buffer has; nothing reads them.)
  REQUIRE_OK(nnc_session_bind_output(session, 0, nullptr));
  REQUIRE_OK(bind(x.data(), 1, v.data(), 1));
  REQUIRE_OK(nnc_session_run(session));
  REQUIRE_OK(nnc_session_output(session, 0, &result));
  CHECK(result.data != mine && result.shape[0] == 1);
  REQUIRE_OK(bind(static_cast<float *>(result.data), 1000, v.data(), 1000));
  EXPECT_STATUS(nnc_session_run(session), NNC_STATUS_INVALID_ARGUMENT,
                "output 'y''s buffer overlaps input 'x''s");
}

/// Outputs may not share bytes with inputs or each other: the run fails
/// before the entry point writes anything.
void testAliasing() {
  Objects objects;
  REQUIRE_OK(objects.open("main"));
  nnc_session_t *session = objects.session;
  float buffer[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  nnc_tensor_view_t viewA = viewOf(objects.input(0), buffer),
                    viewB = viewOf(objects.input(1), buffer + 6);
  REQUIRE_OK(nnc_session_bind_input(session, 0, &viewA));
  REQUIRE_OK(nnc_session_bind_input(session, 1, &viewB));
  // An output over the second half of input 'a' and the first of 'b'.
  nnc_tensor_view_t viewC = viewOf(objects.output(0), buffer + 3);
  REQUIRE_OK(nnc_session_bind_output(session, 0, &viewC));
  EXPECT_STATUS(nnc_session_run(session), NNC_STATUS_INVALID_ARGUMENT,
                "output 'c''s buffer overlaps input 'a''s");
  CHECK(buffer[3] == 4 && buffer[8] == 9); // nothing written
  // Inputs may share a buffer: they are only read.
  REQUIRE_OK(nnc_session_bind_input(session, 1, &viewA));
  float c[6];
  viewC = viewOf(objects.output(0), c);
  REQUIRE_OK(nnc_session_bind_output(session, 0, &viewC));
  REQUIRE_OK(nnc_session_run(session));
  CHECK(c[0] == 2 && c[5] == 12);
  // A session-owned output fed back as an input of the next run.
  Objects fresh;
  REQUIRE_OK(fresh.open("main"));
  REQUIRE_OK(nnc_session_bind_input(fresh.session, 0, &viewA));
  REQUIRE_OK(nnc_session_bind_input(fresh.session, 1, &viewB));
  REQUIRE_OK(nnc_session_run(fresh.session));
  nnc_tensor_view_t owned;
  REQUIRE_OK(nnc_session_output(fresh.session, 0, &owned));
  REQUIRE_OK(nnc_session_bind_input(fresh.session, 1, &owned));
  EXPECT_STATUS(nnc_session_run(fresh.session), NNC_STATUS_INVALID_ARGUMENT,
                "output 'c''s buffer overlaps input 'b''s");
}

/// Kernel tables (nnc --profile) and the session's kernel clock.
void testProfile() {
  Objects plain;
  REQUIRE_OK(plain.open("profiled"));
  const nnc_function_t *function = nnc_session_function(plain.session);
  CHECK(nnc_function_kernel_count(function) == 2);
  const nnc_kernel_info_t *add = nnc_function_kernel(function, 0);
  CHECK(add && std::string(add->kind) == "serial loop" && std::string(add->nodes) == "add" &&
        add->flops == 3 && add->bytes_read == 12 && add->estimated_seconds == 1e-9);
  CHECK(!nnc_function_kernel(function, 2) && !nnc_function_kernel(function, -1));
  float x[3] = {1, 2, 3}, y[3] = {0, 0, 0};
  nnc_tensor_view_t viewX = viewOf(plain.input(0), x), viewY = viewOf(plain.output(0), y);
  // Without options.profile the marks find no hook and the run is as ever.
  REQUIRE_OK(nnc_session_bind_input(plain.session, 0, &viewX));
  REQUIRE_OK(nnc_session_bind_output(plain.session, 0, &viewY));
  REQUIRE_OK(nnc_session_run(plain.session));
  CHECK(y[0] == 2 && y[2] == 4);
  double seconds[2] = {-1, -1};
  EXPECT_STATUS(nnc_session_kernel_seconds(plain.session, seconds, 2),
                NNC_STATUS_FAILED_PRECONDITION, "created without options.profile");

  Objects profiled;
  REQUIRE_OK(profiled.open("profiled", 2, "test_module.so", "cpu", /*profile=*/true));
  EXPECT_STATUS(nnc_session_kernel_seconds(profiled.session, seconds, 2),
                NNC_STATUS_FAILED_PRECONDITION, "no successful run");
  REQUIRE_OK(nnc_session_bind_input(profiled.session, 0, &viewX));
  REQUIRE_OK(nnc_session_run(profiled.session));
  REQUIRE_OK(nnc_session_kernel_seconds(profiled.session, seconds, 2));
  CHECK(seconds[0] >= 0 && seconds[1] >= 0 && seconds[0] < 1 && seconds[1] < 1);
  EXPECT_STATUS(nnc_session_kernel_seconds(profiled.session, seconds, 1),
                NNC_STATUS_INVALID_ARGUMENT, "count 1 is not the function's 2 kernels");

  // A function without a kernel table cannot be profiled; one that skips a
  // mark fails its runs rather than report a made-up time.
  Objects unmarked;
  EXPECT_STATUS(unmarked.open("main", 2, "test_module.so", "cpu", /*profile=*/true),
                NNC_STATUS_FAILED_PRECONDITION,
                "was compiled without kernel marks (compile it with nnc --profile)");
  Objects gap;
  REQUIRE_OK(gap.open("profile_gap", 2, "test_module.so", "cpu", /*profile=*/true));
  REQUIRE_OK(nnc_session_bind_input(gap.session, 0, &viewX));
  EXPECT_STATUS(nnc_session_run(gap.session), NNC_STATUS_INTERNAL,
                "did not mark every kernel it describes");
  EXPECT_STATUS(nnc_session_kernel_seconds(gap.session, seconds, 2),
                NNC_STATUS_FAILED_PRECONDITION, "no successful run");
}

void testRunFailure() {
  Objects objects;
  REQUIRE_OK(objects.open("fail"));
  std::string message = "function 'fail' of module '" + modulePath("test_module.so") +
                        "' failed with code 7";
  EXPECT_STATUS(nnc_session_run(objects.session), NNC_STATUS_INTERNAL, message.c_str());
  nnc_tensor_view_t result;
  EXPECT_STATUS(nnc_session_output(objects.session, 0, &result), NNC_STATUS_FAILED_PRECONDITION,
                "output 'status' has no value");
}

void testScalarsAndOutputsByName() {
  Objects objects;
  REQUIRE_OK(objects.open("scale"));
  float x[4] = {1, 2, 3, 4.5f};
  int32_t k = 3;
  nnc_tensor_view_t viewX = viewOf(objects.input(0), x), viewK = viewOf(objects.input(1), &k);
  REQUIRE_OK(nnc_session_bind_input(objects.session, 0, &viewX));
  REQUIRE_OK(nnc_session_bind_input_by_name(objects.session, "k", &viewK));
  REQUIRE_OK(nnc_session_run(objects.session));
  int32_t index = -1;
  REQUIRE_OK(nnc_function_find_output(nnc_session_function(objects.session), "total", &index));
  nnc_tensor_view_t total;
  REQUIRE_OK(nnc_session_output(objects.session, index, &total));
  CHECK(total.dtype == NNC_DTYPE_F64 && total.rank == 0 && total.byte_size == 8);
  CHECK(*static_cast<const double *>(total.data) == 31.5);
}

void testAllDtypes() {
  Objects objects;
  REQUIRE_OK(objects.open("types"));
  const nnc_function_t *function = nnc_session_function(objects.session);
  int32_t count = nnc_function_input_count(function);
  CHECK(count == 13);
  std::vector<std::vector<uint8_t>> inputs(count);
  for (int32_t i = 0; i < count; ++i) {
    inputs[i].resize(objects.input(i)->byte_size);
    for (size_t j = 0; j < inputs[i].size(); ++j)
      inputs[i][j] = static_cast<uint8_t>(i * 16 + j);
    nnc_tensor_view_t view = viewOf(objects.input(i), inputs[i].data());
    REQUIRE_OK(nnc_session_bind_input(objects.session, i, &view));
  }
  REQUIRE_OK(nnc_session_run(objects.session));
  for (int32_t i = 0; i < count; ++i) {
    nnc_tensor_view_t out;
    REQUIRE_OK(nnc_session_output(objects.session, i, &out));
    CHECK(out.dtype == objects.input(i)->dtype && out.byte_size == inputs[i].size());
    CHECK(std::memcmp(out.data, inputs[i].data(), inputs[i].size()) == 0);
  }
}

/// Runs "large" on a fresh session; returns the number of ranges parallel_for made.
int32_t runLarge(int32_t threads) {
  Objects objects;
  if (!EXPECT_OK(objects.open("large", threads)))
    return -1;
  std::vector<float> x(4096), y(4096);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i) * 0.5f;
  nnc_tensor_view_t viewX = viewOf(objects.input(0), x.data());
  nnc_tensor_view_t viewY = viewOf(objects.output(0), y.data());
  EXPECT_OK(nnc_session_bind_input(objects.session, 0, &viewX));
  EXPECT_OK(nnc_session_bind_output(objects.session, 0, &viewY));
  uint64_t workspace = 0;
  int32_t ranges = -1;
  for (int run = 0; run < 3; ++run) {
    if (!EXPECT_OK(nnc_session_run(objects.session)))
      return -1;
    nnc_tensor_view_t out;
    EXPECT_OK(nnc_session_output(objects.session, 1, &out));
    ranges = *static_cast<const int32_t *>(out.data);
    EXPECT_OK(nnc_session_output(objects.session, 2, &out));
    uint64_t address = *static_cast<const uint64_t *>(out.data);
    // One workspace, allocated once and aligned; runs reuse it.
    CHECK(address % 64 == 0 && (run == 0 || address == workspace));
    workspace = address;
  }
  for (size_t i = 0; i < y.size(); ++i)
    CHECK(y[i] == 2 * x[i] + 1);
  return ranges;
}

void testParallelFor() {
  CHECK(runLarge(1) == 1); // one thread: the whole loop inline, one range
  CHECK(runLarge(4) > 1);  // split over the pool (the module checks the ranges)

  Objects objects;
  REQUIRE_OK(objects.open("nested", 3));
  float x[64], y[64];
  for (int i = 0; i < 64; ++i)
    x[i] = static_cast<float>(i);
  nnc_tensor_view_t viewX = viewOf(objects.input(0), x), viewY = viewOf(objects.output(0), y);
  REQUIRE_OK(nnc_session_bind_input(objects.session, 0, &viewX));
  REQUIRE_OK(nnc_session_bind_output(objects.session, 0, &viewY));
  REQUIRE_OK(nnc_session_run(objects.session)); // nested loops run inline, no deadlock
  for (int i = 0; i < 64; ++i)
    CHECK(y[i] == x[i] + 1);
}

void testReleaseOrder() {
  // A session keeps its runtime and module alive after the caller releases them.
  Objects objects;
  REQUIRE_OK(objects.open("main"));
  nnc_runtime_release(objects.runtime);
  nnc_module_release(objects.module);
  objects.runtime = nullptr;
  objects.module = nullptr;
  const nnc_function_t *function = nnc_session_function(objects.session);
  CHECK(std::strcmp(nnc_function_name(function), "main") == 0);
  float a[6] = {1, 1, 1, 1, 1, 1};
  nnc_tensor_view_t view = viewOf(nnc_function_input(function, 0), a);
  REQUIRE_OK(nnc_session_bind_input(objects.session, 0, &view));
  REQUIRE_OK(nnc_session_bind_input(objects.session, 1, &view));
  REQUIRE_OK(nnc_session_run(objects.session));
  nnc_tensor_view_t c;
  REQUIRE_OK(nnc_session_output(objects.session, 0, &c));
  CHECK(static_cast<const float *>(c.data)[3] == 2);
}

void testConcurrentSessions() {
  // One runtime and module shared by threads that each own sessions; half the
  // threads load their own module handle to exercise concurrent loading too.
  Objects shared;
  REQUIRE_OK(shared.open("main", 3));
  constexpr int kThreads = 6, kRuns = 40;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&shared, t] {
      nnc_module_t *module = shared.module;
      if (t % 2 && !EXPECT_OK(nnc_module_load(modulePath("test_module.so").c_str(), &module)))
        return;
      nnc_session_options_t options;
      nnc_session_options_initialize(&options);
      nnc_session_t *add = nullptr, *large = nullptr;
      EXPECT_OK(nnc_session_create(shared.runtime, module, &options, &add));
      options.function = "large";
      EXPECT_OK(nnc_session_create(shared.runtime, module, &options, &large));
      if (t % 2)
        nnc_module_release(module); // the sessions keep it loaded
      if (!add || !large) {
        nnc_session_release(add);
        nnc_session_release(large);
        return;
      }
      const nnc_function_t *addFunction = nnc_session_function(add);
      const nnc_function_t *largeFunction = nnc_session_function(large);
      float a[6], b[6];
      std::vector<float> x(4096);
      nnc_tensor_view_t viewA = viewOf(nnc_function_input(addFunction, 0), a);
      nnc_tensor_view_t viewB = viewOf(nnc_function_input(addFunction, 1), b);
      nnc_tensor_view_t viewX = viewOf(nnc_function_input(largeFunction, 0), x.data());
      EXPECT_OK(nnc_session_bind_input(add, 0, &viewA));
      EXPECT_OK(nnc_session_bind_input(add, 1, &viewB));
      EXPECT_OK(nnc_session_bind_input(large, 0, &viewX));
      for (int run = 0; run < kRuns; ++run) {
        for (int i = 0; i < 6; ++i) {
          a[i] = static_cast<float>(t * 1000 + run);
          b[i] = static_cast<float>(i);
        }
        for (size_t i = 0; i < x.size(); ++i)
          x[i] = static_cast<float>(t * 100 + run) + static_cast<float>(i) * 0.5f;
        if (!EXPECT_OK(nnc_session_run(add)) || !EXPECT_OK(nnc_session_run(large)))
          break;
        nnc_tensor_view_t c, y;
        EXPECT_OK(nnc_session_output(add, 0, &c));
        EXPECT_OK(nnc_session_output(large, 0, &y));
        for (int i = 0; i < 6; ++i)
          CHECK(static_cast<const float *>(c.data)[i] == a[i] + b[i]);
        for (size_t i = 0; i < x.size(); ++i)
          CHECK(static_cast<const float *>(y.data)[i] == 2 * x[i] + 1);
      }
      nnc_session_release(add);
      nnc_session_release(large);
    });
  }
  for (std::thread &thread : threads)
    thread.join();
}

//===----------------------------------------------------------------------===//
// String tensors (strings_module.c): the hooks of nnc_abi_strings_t
//===----------------------------------------------------------------------===//

/// A session of one function of strings_module.so whose scalar inputs and
/// outputs a test sets and reads one value at a time.
struct StringFunction {
  Objects objects;
  int32_t dtype = 0;
  uint64_t bits = 0;
  int32_t number = 0; // an i32 input: an action, case_sensitive
  const char *text = nullptr;

  nnc_status_t open(const char *function, const char *file = "strings_module.so") {
    return objects.open(function, 1, file);
  }
  /// Binds the function's inputs to the fields above, by dtype.
  nnc_status_t bindAll() {
    const nnc_function_t *function = nnc_session_function(objects.session);
    for (int32_t i = 0; i < nnc_function_input_count(function); ++i) {
      const nnc_tensor_info_t *info = nnc_function_input(function, i);
      void *data = info->dtype == NNC_DTYPE_STRING ? static_cast<void *>(&text)
                   : info->dtype == NNC_DTYPE_U64 ? static_cast<void *>(&bits)
                   : std::strcmp(info->name, "dtype") == 0 ? static_cast<void *>(&dtype)
                                                           : static_cast<void *>(&number);
      nnc_tensor_view_t view = viewOf(info, data);
      if (nnc_status_t status = nnc_session_bind_input(objects.session, i, &view))
        return status;
    }
    return nullptr;
  }
  nnc_status_t run() {
    if (nnc_status_t status = bindAll())
      return status;
    return nnc_session_run(objects.session);
  }
  /// Output index's value, as bytes of its size (a string output: its pointer).
  template <typename T>
  T output(int32_t index) {
    nnc_tensor_view_t view{};
    T value{};
    if (EXPECT_OK(nnc_session_output(objects.session, index, &view)) && view.byte_size == sizeof(T))
      std::memcpy(&value, view.data, sizeof(T));
    return value;
  }
  std::string outputText(int32_t index) {
    const char *result = output<const char *>(index);
    return result ? result : "(null)";
  }
};

/// What format(dtype, value) gives: the text, or "error: <message>".
std::string formatValue(StringFunction &format, int32_t dtype, uint64_t bits) {
  format.dtype = dtype;
  format.bits = bits;
  nnc_status_t status = format.run();
  std::string text = status ? std::string("error: ") + nnc_status_message(status)
                            : format.outputText(0);
  nnc_status_free(status);
  return text;
}

/// What parse(dtype, text) gives: the value's bits (zero-extended), or
/// "error: <message>".
std::string parseText(StringFunction &parse, int32_t dtype, const char *text) {
  parse.dtype = dtype;
  parse.text = text;
  nnc_status_t status = parse.run();
  std::string result;
  if (status) {
    result = std::string("error: ") + nnc_status_message(status);
  } else {
    char hex[32];
    unsigned long long bits = parse.output<uint64_t>(0);
    std::snprintf(hex, sizeof(hex), "%llx", bits);
    result = hex;
  }
  nnc_status_free(status);
  return result;
}

float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

template <typename T>
uint64_t bitsOf(T value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(value));
  return bits;
}

/// The strings of a string output view.
std::vector<std::string> stringsOf(const nnc_tensor_view_t &view) {
  std::vector<std::string> strings;
  for (size_t i = 0; i < view.byte_size / sizeof(const char *); ++i)
    strings.push_back(static_cast<const char *const *>(view.data)[i]);
  return strings;
}

void testStrings() {
  Objects objects;
  REQUIRE_OK(objects.open("main", 2, "strings_module.so"));
  CHECK(objects.input(0)->dtype == NNC_DTYPE_STRING && objects.input(0)->byte_size == 32);
  const char *text[4] = {"The", "\xC3\x89lan caf\xC3\xA9",               // Élan café
                         "\xCE\xA9\xCE\xBC\xCE\xAD\xCE\xB3\xCE\xB1 "  // Ωμέγα
                         "\xCE\xA3\xCE\x9F\xCE\xA6\xCE\x99\xCE\x91",  // ΣΟΦΙΑ
                         "\xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 " // привет
                         "\xD0\x9C\xD0\xB8\xD1\x80"};                      // Мир
  float x[4] = {0.5f, 100.0f, 1e-5f, -0.0f};
  nnc_tensor_view_t viewText = viewOf(objects.input(0), text);
  nnc_tensor_view_t viewX = viewOf(objects.input(1), x);
  REQUIRE_OK(nnc_session_bind_input(objects.session, 0, &viewText));
  REQUIRE_OK(nnc_session_bind_input(objects.session, 1, &viewX));
  REQUIRE_OK(nnc_session_run(objects.session));
  nnc_tensor_view_t upper, lower, formatted, stop;
  REQUIRE_OK(nnc_session_output(objects.session, 0, &upper));
  REQUIRE_OK(nnc_session_output(objects.session, 1, &lower));
  REQUIRE_OK(nnc_session_output(objects.session, 2, &formatted));
  REQUIRE_OK(nnc_session_output(objects.session, 3, &stop));
  CHECK(upper.dtype == NNC_DTYPE_STRING && upper.rank == 1 && upper.shape[0] == 4 &&
        upper.byte_size == 4 * sizeof(const char *));
  CHECK((stringsOf(upper) ==
         std::vector<std::string>{"THE", "\xC3\x89LAN CAF\xC3\x89", // ÉLAN CAFÉ
                                  // ΩΜΈΓΑ ΣΟΦΙΑ
                                  "\xCE\xA9\xCE\x9C\xCE\x88\xCE\x93\xCE\x91 "
                                  "\xCE\xA3\xCE\x9F\xCE\xA6\xCE\x99\xCE\x91",
                                  // ПРИВЕТ МИР
                                  "\xD0\x9F\xD0\xA0\xD0\x98\xD0\x92\xD0\x95\xD0\xA2 "
                                  "\xD0\x9C\xD0\x98\xD0\xA0"}));
  CHECK((stringsOf(lower) ==
         std::vector<std::string>{"the", "\xC3\xA9lan caf\xC3\xA9", // élan café
                                  // ωμέγα σοφια
                                  "\xCF\x89\xCE\xBC\xCE\xAD\xCE\xB3\xCE\xB1 "
                                  "\xCF\x83\xCE\xBF\xCF\x86\xCE\xB9\xCE\xB1",
                                  // привет мир
                                  "\xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 "
                                  "\xD0\xBC\xD0\xB8\xD1\x80"}));
  CHECK((stringsOf(formatted) == std::vector<std::string>{"0.5", "100.0", "1e-05", "-0.0"}));
  const auto *stops = static_cast<const uint8_t *>(stop.data);
  CHECK(stops[0] == 1 && stops[1] == 0 && stops[2] == 0 && stops[3] == 0);

  // The strings stay as they are until the next run, which replaces them in
  // the same output buffers.
  std::vector<std::string> first = stringsOf(upper);
  const char *const *firstPointers = static_cast<const char *const *>(upper.data);
  CHECK(stringsOf(upper) == first);
  const char *again[4] = {"a", "b", "\xC3\x9C" "BER", ""}; // ÜBER
  float y[4] = {1e16f, 123456789.0f, 3.4028235e38f, 0.0001f};
  viewText.data = again;
  viewX.data = y;
  REQUIRE_OK(nnc_session_bind_input(objects.session, 0, &viewText));
  REQUIRE_OK(nnc_session_bind_input(objects.session, 1, &viewX));
  REQUIRE_OK(nnc_session_run(objects.session));
  REQUIRE_OK(nnc_session_output(objects.session, 0, &upper));
  REQUIRE_OK(nnc_session_output(objects.session, 2, &formatted));
  REQUIRE_OK(nnc_session_output(objects.session, 3, &stop));
  CHECK(upper.data == firstPointers);
  CHECK((stringsOf(upper) == std::vector<std::string>{"A", "B", "\xC3\x9C" "BER", ""}));
  CHECK((stringsOf(formatted) ==
         std::vector<std::string>{"1e+16", "123456790.0", "3.4028235e+38", "1e-04"}));
  stops = static_cast<const uint8_t *>(stop.data);
  CHECK(stops[0] == 1 && stops[1] == 0 && stops[2] == 1 && stops[3] == 0);

  // A run's strings fed back to the same session: the run would free them.
  const char *fed[4];
  std::memcpy(fed, upper.data, sizeof(fed));
  viewText.data = fed;
  REQUIRE_OK(nnc_session_bind_input(objects.session, 0, &viewText));
  EXPECT_STATUS(nnc_session_run(objects.session), NNC_STATUS_INVALID_ARGUMENT,
                "input 'text': string element 0 is one this session's last run returned, which "
                "a new run frees (copy the string first)");

  // A NULL element is refused before the run.
  const char *missing[4] = {"a", nullptr, "c", "d"};
  viewText.data = missing;
  REQUIRE_OK(nnc_session_bind_input(objects.session, 0, &viewText));
  EXPECT_STATUS(nnc_session_run(objects.session), NNC_STATUS_INVALID_ARGUMENT,
                "input 'text': string element 1 is NULL");
  EXPECT_STATUS(nnc_session_output(objects.session, 0, &upper), NNC_STATUS_FAILED_PRECONDITION,
                "output 'upper' has no value");

  // A string the hooks refuse fails the run with their message; the next
  // good run succeeds.
  const char *invalid[4] = {"ok", "ab\xC3", "c", "d"};
  viewText.data = invalid;
  REQUIRE_OK(nnc_session_bind_input(objects.session, 0, &viewText));
  std::string message = "function 'main' of module '" + modulePath("strings_module.so") +
                        "': cannot change the case of 'ab\\xC3': invalid UTF-8 at byte 2 (a "
                        "truncated sequence)";
  EXPECT_STATUS(nnc_session_run(objects.session), NNC_STATUS_INVALID_ARGUMENT, message.c_str());
  EXPECT_STATUS(nnc_session_output(objects.session, 0, &upper), NNC_STATUS_FAILED_PRECONDITION,
                "output 'upper' has no value");
  viewText.data = text;
  REQUIRE_OK(nnc_session_bind_input(objects.session, 0, &viewText));
  REQUIRE_OK(nnc_session_run(objects.session));
  REQUIRE_OK(nnc_session_output(objects.session, 0, &upper));
  CHECK(stringsOf(upper) == first);

  // A caller's buffer bound for a string output receives the session's strings.
  const char *bound[4] = {};
  nnc_tensor_view_t viewBound = viewOf(objects.output(1), bound);
  REQUIRE_OK(nnc_session_bind_output(objects.session, 1, &viewBound));
  REQUIRE_OK(nnc_session_run(objects.session));
  CHECK(bound[0] && std::strcmp(bound[0], "the") == 0);
}

void testStringCase() {
  StringFunction change;
  REQUIRE_OK(change.open("case"));
  struct {
    int32_t action;
    const char *text, *expected;
  } cases[] = {
      {0, "MiXeD \xC3\xA9", "MiXeD \xC3\xA9"},
      {1, "ABC xyz 123", "abc xyz 123"},
      {2, "abc XYZ 123", "ABC XYZ 123"},
      {2, "\xC3\xA9", "\xC3\x89"},                          // é -> É
      {1, "\xC3\x89", "\xC3\xA9"},                          // É -> é
      {2, "\xCE\xB1\xCE\xB2\xCE\xB3", "\xCE\x91\xCE\x92\xCE\x93"}, // αβγ -> ΑΒΓ
      {1, "\xD0\x96\xD0\xA9", "\xD0\xB6\xD1\x89"},          // ЖЩ -> жщ
      {2, "\xC3\x9F", "\xC3\x9F"},                          // ß: no simple upper case
      {2, "\xC8\xBF", "\xE2\xB1\xBE"},                      // ȿ -> Ȿ, two bytes to three
      {1, "\xF0\x90\x90\x80", "\xF0\x90\x90\xA8"},          // 𐐀 -> 𐐨, beyond the BMP
      {2, "\xE4\xB8\xAD\xE6\x96\x87", "\xE4\xB8\xAD\xE6\x96\x87"}, // 中文: no case
      {2, "", ""},
  };
  for (const auto &c : cases) {
    change.number = c.action;
    change.text = c.text;
    if (!EXPECT_OK(change.run()))
      continue;
    std::string result = change.outputText(0);
    if (result != c.expected) {
      std::fprintf(stderr, "change_case(%d, '%s') gave '%s', expected '%s'\n", c.action, c.text,
                   result.c_str(), c.expected);
      CHECK(result == c.expected);
    }
  }
  // NULL reads as "".
  change.number = 2;
  change.text = nullptr;
  EXPECT_STATUS(change.run(), NNC_STATUS_INVALID_ARGUMENT,
                "input 'text': string element 0 is NULL");

  struct {
    const char *text, *message;
  } invalid[] = {
      {"\x80", "cannot change the case of '\\x80': invalid UTF-8 at byte 0 (a continuation byte "
               "without a lead byte)"},
      {"a\xC0\xAF", "invalid UTF-8 at byte 1 (an overlong encoding)"},
      {"\xE0\x80\xAF", "invalid UTF-8 at byte 0 (an overlong encoding)"},
      {"\xED\xA0\x80", "invalid UTF-8 at byte 0 (a surrogate)"},
      {"\xF4\x90\x80\x80", "invalid UTF-8 at byte 0 (a code point beyond U+10FFFF)"},
      {"\xF8\x88\x80\x80\x80", "invalid UTF-8 at byte 0 (a byte that never occurs in UTF-8)"},
      {"abc\xE2\x82", "invalid UTF-8 at byte 3 (a truncated sequence)"},
  };
  for (int32_t action : {0, 1, 2}) {
    change.number = action;
    for (const auto &c : invalid) {
      change.text = c.text;
      EXPECT_STATUS(change.run(), NNC_STATUS_INVALID_ARGUMENT, c.message);
    }
  }
  change.number = 3;
  change.text = "a";
  EXPECT_STATUS(change.run(), NNC_STATUS_INVALID_ARGUMENT,
                "change_case: unknown action 3 (expected 0: as is, 1: lower case, 2: upper case)");

  StringFunction stopword;
  REQUIRE_OK(stopword.open("stopword"));
  struct {
    const char *text;
    int32_t caseSensitive, expected;
  } words[] = {
      {"the", 1, 1},   {"The", 1, 0},  {"The", 0, 1},  {"THE", 0, 1},  {"a", 0, 1},
      {"an", 0, 0},    {"", 0, 0},     {"th", 0, 0},
      {"\xC3\x9C" "ber", 1, 1},               // Über, as written
      {"\xC3\xBC" "ber", 1, 0},               // über
      {"\xC3\xBC" "BER", 0, 1},               // üBER
      {"\xCF\x83\xCE\xBF\xCF\x86\xCE\xAF\xCE\xB1", 0, 1}, // σοφία against ΣΟΦΊΑ
      {"\xCF\x83\xCE\xBF\xCF\x86\xCE\xB9\xCE\xB1", 0, 0}, // σοφια: no tonos
  };
  for (const auto &w : words) {
    stopword.text = w.text;
    stopword.number = w.caseSensitive;
    if (EXPECT_OK(stopword.run()) && stopword.output<int32_t>(0) != w.expected) {
      std::fprintf(stderr, "is_stopword('%s', case_sensitive %d) is not %d\n", w.text,
                   w.caseSensitive, w.expected);
      CHECK(false);
    }
  }
  stopword.text = "\xFF";
  for (int32_t caseSensitive : {0, 1}) {
    stopword.number = caseSensitive;
    EXPECT_STATUS(stopword.run(), NNC_STATUS_INVALID_ARGUMENT,
                  "cannot compare '\\xFF' with stopwords: invalid UTF-8 at byte 0");
  }
}

void testStringNumbers() {
  StringFunction format, parse;
  REQUIRE_OK(format.open("format"));
  REQUIRE_OK(parse.open("parse"));
  struct {
    int32_t dtype;
    uint64_t bits;
    const char *expected;
  } formats[] = {
      {NNC_DTYPE_I8, bitsOf<int8_t>(-128), "-128"},
      {NNC_DTYPE_U8, 255, "255"},
      {NNC_DTYPE_I16, bitsOf<int16_t>(-32768), "-32768"},
      {NNC_DTYPE_U16, 65535, "65535"},
      {NNC_DTYPE_I32, bitsOf<int32_t>(-2147483647 - 1), "-2147483648"},
      {NNC_DTYPE_U32, 4294967295u, "4294967295"},
      {NNC_DTYPE_I64, bitsOf<int64_t>(INT64_MIN), "-9223372036854775808"},
      {NNC_DTYPE_U64, UINT64_MAX, "18446744073709551615"},
      {NNC_DTYPE_F32, bitsOf(0.1f), "0.1"},
      {NNC_DTYPE_F32, bitsOf(-1.5e-7f), "-1.5e-07"},
      {NNC_DTYPE_F32, bitsOf(INFINITY), "inf"},
      {NNC_DTYPE_F32, bitsOf(-INFINITY), "-inf"},
      {NNC_DTYPE_F32, bitsOf(-NAN), "nan"},
      {NNC_DTYPE_F64, bitsOf(0.1), "0.1"},
      {NNC_DTYPE_F64, bitsOf(1e16), "1e+16"},
      {NNC_DTYPE_F64, bitsOf(9999999999999998.0), "9999999999999998.0"},
      {NNC_DTYPE_F64, bitsOf(1e-4), "0.0001"},
      {NNC_DTYPE_F64, bitsOf(5e-324), "5e-324"},
      {NNC_DTYPE_F64, bitsOf(1.7976931348623157e308), "1.7976931348623157e+308"},
  };
  for (const auto &f : formats) {
    std::string text = formatValue(format, f.dtype, f.bits);
    if (text != f.expected) {
      std::fprintf(stderr, "format(%s, %llx) gave '%s', expected '%s'\n", nnc_dtype_name(f.dtype),
                   static_cast<unsigned long long>(f.bits), text.c_str(), f.expected);
      CHECK(false);
    }
  }
  CHECK(formatValue(format, NNC_DTYPE_F16, 0) ==
        "error: function 'format' of module '" + modulePath("strings_module.so") +
            "': cannot format a value of dtype f16 (10) as a string: only f32, f64 and integers "
            "of 8 to 64 bits can be");

  struct {
    int32_t dtype;
    const char *text;
    uint64_t expected;
  } reads[] = {
      {NNC_DTYPE_F32, "  1.5\t\n", bitsOf(1.5f)},
      {NNC_DTYPE_F32, "+0.1", bitsOf(0.1f)},
      {NNC_DTYPE_F32, "-0", bitsOf(-0.0f)},
      {NNC_DTYPE_F32, "1e-05", bitsOf(1e-5f)},
      {NNC_DTYPE_F32, ".5", bitsOf(0.5f)},
      {NNC_DTYPE_F32, "3.4028235e+38", bitsOf(3.4028235e38f)},
      {NNC_DTYPE_F32, "1e50", bitsOf(INFINITY)},
      {NNC_DTYPE_F32, "-1e50", bitsOf(-INFINITY)},
      {NNC_DTYPE_F32, "1e-50", bitsOf(0.0f)},
      {NNC_DTYPE_F32, "-1e-50", bitsOf(-0.0f)},
      {NNC_DTYPE_F32, "1e-45", 1},
      // Just above halfway between 1 and the next float: read as a double
      // first, it would round to halfway and then to 1 (even).
      {NNC_DTYPE_F32, "1.00000005960464477539062501", 0x3f800001},
      {NNC_DTYPE_F32, "inf", bitsOf(INFINITY)},
      {NNC_DTYPE_F32, "+INF", bitsOf(INFINITY)},
      {NNC_DTYPE_F32, "-Infinity", bitsOf(-INFINITY)},
      {NNC_DTYPE_F64, "0.1", bitsOf(0.1)},
      {NNC_DTYPE_F64, "1e400", bitsOf(HUGE_VAL)},
      {NNC_DTYPE_F64, "4.9406564584124654e-324", 1},
      {NNC_DTYPE_I8, "-128", 0x80},
      {NNC_DTYPE_I8, "+127", 127},
      {NNC_DTYPE_U8, " 255 ", 255},
      {NNC_DTYPE_U8, "-0", 0},
      {NNC_DTYPE_I16, "-00032768", 0x8000},
      {NNC_DTYPE_U16, "65535", 65535},
      {NNC_DTYPE_I32, "-2147483648", 0x80000000u},
      {NNC_DTYPE_U32, "4294967295", 0xffffffffu},
      {NNC_DTYPE_I64, "-9223372036854775808", 0x8000000000000000ull},
      {NNC_DTYPE_I64, "9223372036854775807", 0x7fffffffffffffffull},
      {NNC_DTYPE_U64, "18446744073709551615", UINT64_MAX},
  };
  for (const auto &r : reads) {
    std::string bits = parseText(parse, r.dtype, r.text);
    char expected[32];
    std::snprintf(expected, sizeof(expected), "%llx", static_cast<unsigned long long>(r.expected));
    if (bits != expected) {
      std::fprintf(stderr, "parse(%s, '%s') gave %s, expected %s\n", nnc_dtype_name(r.dtype),
                   r.text, bits.c_str(), expected);
      CHECK(false);
    }
  }
  for (const char *nan : {"nan", "NaN", "-nan", " NAN "}) {
    parse.dtype = NNC_DTYPE_F32;
    parse.text = nan;
    if (EXPECT_OK(parse.run()))
      CHECK(std::isnan(bitsToFloat(static_cast<uint32_t>(parse.output<uint64_t>(0)))));
  }

  struct {
    int32_t dtype;
    const char *text, *message;
  } refused[] = {
      {NNC_DTYPE_F32, "abc", "cannot read 'abc' as f32"},
      {NNC_DTYPE_F32, "", "cannot read '' as f32"},
      {NNC_DTYPE_F32, "   ", "cannot read '   ' as f32"},
      {NNC_DTYPE_F32, "1.5x", "cannot read '1.5x' as f32"},
      {NNC_DTYPE_F32, "1e", "cannot read '1e' as f32"},
      {NNC_DTYPE_F32, "0x10", "cannot read '0x10' as f32"},
      {NNC_DTYPE_F32, "+-1", "cannot read '+-1' as f32"},
      {NNC_DTYPE_F32, "nan(1)", "cannot read 'nan(1)' as f32"},
      {NNC_DTYPE_F32, "1 2", "cannot read '1 2' as f32"},
      {NNC_DTYPE_F64, "infinit", "cannot read 'infinit' as f64"},
      {NNC_DTYPE_I8, "128", "cannot read '128' as i8 (out of range)"},
      {NNC_DTYPE_I8, "-129", "cannot read '-129' as i8 (out of range)"},
      {NNC_DTYPE_U8, "256", "cannot read '256' as u8 (out of range)"},
      {NNC_DTYPE_U8, "-1", "cannot read '-1' as u8 (out of range)"},
      {NNC_DTYPE_I32, "1.0", "cannot read '1.0' as i32"},
      {NNC_DTYPE_I32, "1e3", "cannot read '1e3' as i32"},
      {NNC_DTYPE_I64, "9223372036854775808",
       "cannot read '9223372036854775808' as i64 (out of range)"},
      {NNC_DTYPE_U64, "18446744073709551616",
       "cannot read '18446744073709551616' as u64 (out of range)"},
      {NNC_DTYPE_U64, "99999999999999999999999", "(out of range)"},
      {NNC_DTYPE_I32, "\x01\xFF", "cannot read '\\x01\\xFF' as i32"},
      {NNC_DTYPE_BOOL, "1", "cannot read a string as dtype bool (9): only f32, f64 and integers of "
                            "8 to 64 bits can be read"},
  };
  for (const auto &r : refused) {
    std::string message = "function 'parse' of module '" + modulePath("strings_module.so") + "': ";
    std::string result = parseText(parse, r.dtype, r.text);
    if (result.find(message) == std::string::npos || result.find(r.message) == std::string::npos) {
      std::fprintf(stderr, "parse(%s, '%s') gave '%s', expected an error with '%s'\n",
                   nnc_dtype_name(r.dtype), r.text, result.c_str(), r.message);
      CHECK(false);
    }
  }
  // A long text is shown in part.
  std::string longText(200, '7');
  longText += "x";
  std::string result = parseText(parse, NNC_DTYPE_I32, longText.c_str());
  CHECK(result.find("cannot read '" + std::string(48, '7') + "'... as i32") != std::string::npos);
  // The module went on after the failed read (parse returns 0): the run
  // fails all the same, and a good read then succeeds.
  CHECK(parseText(parse, NNC_DTYPE_I32, " 42 ") == "2a");
}

void testStringDevices() {
  // A GPU session cannot hand compiled code host strings.
  for (const char *device : {"cuda", "cuda:1", "cuda-emulated"}) {
    Objects objects;
    std::string message = "function 'main' of module '" + modulePath("strings_cuda.so") +
                          "' has string input 'text', and string tensors run on the CPU only "
                          "(device '" + device + "')";
    EXPECT_STATUS(objects.open("main", 1, "strings_cuda.so", device), NNC_STATUS_UNIMPLEMENTED,
                  message.c_str());
  }
  Objects objects;
  EXPECT_STATUS(objects.open("format", 1, "strings_cuda.so", "cuda-emulated"),
                NNC_STATUS_UNIMPLEMENTED, "has string output 'text'");
  // Nor does the trainer take them.
  nnc_runtime_t *runtime = nullptr;
  nnc_module_t *module = nullptr;
  REQUIRE_OK(nnc_runtime_create(nullptr, &runtime));
  if (EXPECT_OK(nnc_module_load(modulePath("strings_training.so").c_str(), &module))) {
    nnc_trainer_t *trainer = nullptr;
    std::string message = "training module '" + modulePath("strings_training.so") +
                          "': function 'init' has string input 'text', and the trainer runs "
                          "numeric tensors only";
    EXPECT_STATUS(nnc_trainer_create(runtime, module, nullptr, &trainer), NNC_STATUS_UNIMPLEMENTED,
                  message.c_str());
    CHECK(trainer == nullptr);
  }
  nnc_module_release(module);
  nnc_runtime_release(runtime);
}

void testStringConcurrentSessions() {
  // Sessions in two threads at once, each with its own strings.
  Objects shared;
  REQUIRE_OK(shared.open("case", 2, "strings_module.so"));
  constexpr int kRuns = 300;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&shared, t] {
      nnc_session_options_t options;
      nnc_session_options_initialize(&options);
      options.function = "case";
      nnc_session_t *session = nullptr;
      if (!EXPECT_OK(nnc_session_create(shared.runtime, shared.module, &options, &session)))
        return;
      const nnc_function_t *function = nnc_session_function(session);
      int32_t action = t == 0 ? 2 : 1;
      const char *text = nullptr;
      nnc_tensor_view_t viewAction = viewOf(nnc_function_input(function, 0), &action);
      nnc_tensor_view_t viewText = viewOf(nnc_function_input(function, 1), &text);
      EXPECT_OK(nnc_session_bind_input(session, 0, &viewAction));
      EXPECT_OK(nnc_session_bind_input(session, 1, &viewText));
      for (int run = 0; run < kRuns; ++run) {
        // "Ünïcödé <run>" in mixed case, a different length each run.
        std::string input = "\xC3\x9Cn\xC3\xAF" "C\xC3\xB6" "d\xC3\xA9 " + std::to_string(run) +
                            std::string(run % 17, t == 0 ? 'x' : 'X');
        text = input.c_str();
        if (!EXPECT_OK(nnc_session_run(session)))
          break;
        nnc_tensor_view_t out;
        if (!EXPECT_OK(nnc_session_output(session, 0, &out)))
          break;
        std::string expected = t == 0 ? "\xC3\x9CN\xC3\x8F" "C\xC3\x96" "D\xC3\x89 "  // ÜNÏCÖDÉ
                                      : "\xC3\xBCn\xC3\xAF" "c\xC3\xB6" "d\xC3\xA9 "; // ünïcödé
        expected += std::to_string(run) + std::string(run % 17, t == 0 ? 'X' : 'x');
        CHECK(expected == *static_cast<const char *const *>(out.data));
      }
      nnc_session_release(session);
    });
  }
  for (std::thread &thread : threads)
    thread.join();
}

/// `nnc-runtime-tests --strings-io`: reads "format <dtype> <hex bits>" and
/// "parse <dtype> <text>" lines and writes, a line each, what the session's
/// hooks give (the text, or the bits in hex), or "error: <message>". The
/// lit test strings-numpy.test compares them with NumPy's str().
int stringsIo() {
  StringFunction format, parse;
  if (nnc_status_t status = format.open("format")) {
    std::fprintf(stderr, "%s\n", nnc_status_message(status));
    return 1;
  }
  if (nnc_status_t status = parse.open("parse")) {
    std::fprintf(stderr, "%s\n", nnc_status_message(status));
    return 1;
  }
  char line[4096];
  while (std::fgets(line, sizeof(line), stdin)) {
    std::string text = line;
    if (!text.empty() && text.back() == '\n')
      text.pop_back();
    char command[16];
    int dtype = 0, consumed = 0;
    if (std::sscanf(text.c_str(), "%15s %d %n", command, &dtype, &consumed) < 2) {
      std::fprintf(stderr, "--strings-io: cannot read '%s'\n", text.c_str());
      return 1;
    }
    std::string rest = text.substr(static_cast<size_t>(consumed));
    std::string result = std::strcmp(command, "format") == 0
                             ? formatValue(format, dtype, std::strtoull(rest.c_str(), nullptr, 16))
                             : parseText(parse, dtype, rest.c_str());
    std::printf("%s\n", result.c_str());
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// The CUDA device, against the fake driver (fake_cuda/) and cuda_module.c
//===----------------------------------------------------------------------===//

/// Environment variables set for a test's duration, restored at the end.
struct Environment {
  ~Environment() {
    for (auto saved = values.rbegin(); saved != values.rend(); ++saved) {
      if (saved->second.first)
        setenv(saved->first.c_str(), saved->second.second.c_str(), 1);
      else
        unsetenv(saved->first.c_str());
    }
  }
  /// Sets (or with NULL, removes) name until the end.
  void set(const char *name, const char *value) {
    if (!values.count(name)) {
      const char *old = std::getenv(name);
      values[name] = {old != nullptr, old ? old : ""};
    }
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  std::map<std::string, std::pair<bool, std::string>> values; // name: (was set, old value)
};

/// The fake CUDA driver, in use while the object lives: NNC_CUDA_DRIVER
/// points at it and NNC_FAKE_CUDA_KERNELS at cuda_module.so's host kernels;
/// its other settings start cleared; its log starts empty. The environment
/// is restored at the end.
struct FakeCuda {
  explicit FakeCuda(const char *library = "libfakecuda.so")
      : path(std::string(NNC_FAKE_CUDA_DIR "/") + library) {
    set("NNC_CUDA_DRIVER", path.c_str());
    set("NNC_FAKE_CUDA_KERNELS", modulePath("cuda_module.so").c_str());
    for (const char *name :
         {"NNC_FAKE_CUDA_FAIL", "NNC_FAKE_CUDA_CC", "NNC_FAKE_CUDA_DEVICES", "NNC_FAKE_CUDA_LOG"})
      set(name, nullptr);
    // The same library instance as the runtime's: dlopen finds it loaded.
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    CHECK(handle != nullptr);
    if (handle) {
      resetLog = reinterpret_cast<decltype(resetLog)>(dlsym(handle, "nnc_fake_cuda_reset"));
      readLog = reinterpret_cast<decltype(readLog)>(dlsym(handle, "nnc_fake_cuda_log"));
      countCalls = reinterpret_cast<decltype(countCalls)>(dlsym(handle, "nnc_fake_cuda_calls"));
      countLive = reinterpret_cast<decltype(countLive)>(dlsym(handle, "nnc_fake_cuda_live"));
    }
    CHECK(resetLog && readLog && countCalls && countLive);
    reset();
  }
  ~FakeCuda() {
    if (handle)
      dlclose(handle);
  }
  /// Sets (or with NULL, removes) an environment variable until the end.
  void set(const char *name, const char *value) { environment.set(name, value); }
  void reset() {
    if (resetLog)
      resetLog();
  }
  std::string log() const { return readLog ? readLog() : ""; }
  /// A driver entry point of the fake library, for the test's own calls.
  template <typename F> F symbol(const char *name) const {
    void *address = handle ? dlsym(handle, name) : nullptr;
    CHECK(address != nullptr);
    return reinterpret_cast<F>(address);
  }
  long calls(const char *call) const { return countCalls ? countCalls(call) : -1; }
  long live(const char *kind) const { return countLive ? countLive(kind) : -1; }
  /// True when every driver object the runtime made has been released.
  bool released() const {
    for (const char *kind :
         {"allocations", "streams", "modules", "contexts", "graphs", "graph_execs", "events"})
      if (live(kind) != 0)
        return false;
    return true;
  }
  /// How many lines of the log contain text.
  int lines(const std::string &text) const {
    int count = 0;
    std::string all = log();
    for (size_t start = 0, end; start < all.size(); start = end + 1) {
      end = all.find('\n', start);
      if (end == std::string::npos)
        end = all.size();
      count += all.substr(start, end - start).find(text) != std::string::npos;
    }
    return count;
  }

  std::string path;
  void *handle = nullptr;
  decltype(&nnc_fake_cuda_reset) resetLog = nullptr;
  decltype(&nnc_fake_cuda_log) readLog = nullptr;
  decltype(&nnc_fake_cuda_calls) countCalls = nullptr;
  decltype(&nnc_fake_cuda_live) countLive = nullptr;
  Environment environment;
};

constexpr int kCudaN = 1000; // cuda_module.c's N

/// cuda_module.c's main on the host: y = relu(scale * x * w + b) with its
/// constants w and b, and the count of positive y. The test's values are
/// exact in f32 (halves and quarters), so the comparison is exact.
void cudaMainReference(const std::vector<float> &x, float scale, std::vector<float> &y,
                       int32_t &positives) {
  y.resize(x.size());
  positives = 0;
  for (int i = 0; i < kCudaN; ++i) {
    float w = static_cast<float>(i % 7 - 3), b = 0.25f * static_cast<float>(i % 5) - 0.5f;
    float t = scale * x[i] * w + b;
    y[i] = t > 0 ? t : 0;
    positives += t > 0;
  }
}

/// Inputs and outputs of cuda_module.c's main, bound to a session.
struct CudaMain {
  std::vector<float> x = std::vector<float>(kCudaN);
  float scale = 2;
  bool bind(Objects &objects) {
    for (int i = 0; i < kCudaN; ++i)
      x[i] = 0.5f * static_cast<float>(i % 11 - 5);
    nnc_tensor_view_t viewX = viewOf(objects.input(0), x.data());
    nnc_tensor_view_t viewScale = viewOf(objects.input(1), &scale);
    return EXPECT_OK(nnc_session_bind_input(objects.session, 0, &viewX)) &&
           EXPECT_OK(nnc_session_bind_input(objects.session, 1, &viewScale));
  }
  /// True when the session's outputs are main's for the bound inputs.
  bool matches(Objects &objects) {
    std::vector<float> y;
    int32_t positives;
    cudaMainReference(x, scale, y, positives);
    nnc_tensor_view_t outY, outPositives;
    if (!EXPECT_OK(nnc_session_output(objects.session, 0, &outY)) ||
        !EXPECT_OK(nnc_session_output(objects.session, 1, &outPositives)))
      return false;
    bool same = outY.byte_size == kCudaN * sizeof(float) &&
                std::memcmp(outY.data, y.data(), outY.byte_size) == 0 &&
                *static_cast<const int32_t *>(outPositives.data) == positives;
    CHECK(same);
    return same;
  }
};

void testCudaRun() {
  FakeCuda fake;
  {
    Objects objects;
    REQUIRE_OK(objects.open("main", 1, "cuda_module.so", "cuda"));
    CHECK(std::string(nnc_session_device(objects.session)) ==
          "cuda 'Fake CUDA Device' (compute capability 9.0, image sm_90a, driver 13.0)");
    // Everything at creation: the constants uploaded, the workspace, two
    // inputs and two outputs on the device, one stream, one context.
    CHECK(fake.live("allocations") == 6 && fake.live("streams") == 1);
    CHECK(fake.live("modules") == 1 && fake.live("contexts") == 1);
    CHECK(fake.lines("cuModuleLoadDataEx target=sm_90a -> 0") == 1);
    CHECK(fake.lines("cuMemcpyHtoDAsync_v2 8000 -> 0") == 1); // the constants
    for (const char *kernel : {"zero_count", "affine", "relu_count", "fill"})
      CHECK(fake.lines(std::string("cuModuleGetFunction ") + kernel + " -> 0") == 1);

    CudaMain main;
    if (!main.bind(objects))
      return;
    fake.reset();
    REQUIRE_OK(nnc_session_run(objects.session));
    main.matches(objects);
    // Inputs in, three launches in program order, outputs out, one wait.
    std::string first = fake.log();
    size_t zero = first.find("cuLaunchKernel zero_count grid=1,1,1 block=1,1,1 shared=0 -> 0");
    size_t affine = first.find("cuLaunchKernel affine grid=8,1,1 block=128,1,1 shared=0 -> 0");
    size_t relu = first.find("cuLaunchKernel relu_count grid=8,1,1 block=128,1,1 shared=0 -> 0");
    CHECK(zero != std::string::npos && zero < affine && affine < relu &&
          relu != std::string::npos);
    CHECK(fake.lines("cuMemcpyHtoDAsync_v2 4000 -> 0") == 1 &&
          fake.lines("cuMemcpyHtoDAsync_v2 4 -> 0") == 1);
    CHECK(fake.lines("cuMemcpyDtoHAsync_v2") == 2 && fake.calls("cuStreamSynchronize") == 1);

    // The second run captures the launches into a graph and replays it:
    // same outputs, inputs untouched.
    std::vector<float> x = main.x;
    fake.reset();
    REQUIRE_OK(nnc_session_run(objects.session));
    main.matches(objects);
    CHECK(main.x == x && main.scale == 2);
    CHECK(fake.calls("cuStreamBeginCapture_v2") == 1 && fake.lines(" captured -> 0") == 3);
    CHECK(fake.calls("cuGraphInstantiateWithFlags") == 1);
    CHECK(fake.lines("cuGraphLaunch 3 launches -> 0") == 1);

    // Later runs replay it alone, on the new input values.
    fake.reset();
    main.scale = -1.5f;
    for (int i = 0; i < kCudaN; i += 3)
      main.x[i] = 4;
    REQUIRE_OK(nnc_session_run(objects.session));
    main.matches(objects);
    CHECK(fake.calls("cuGraphLaunch") == 1 && fake.calls("cuLaunchKernel") == 0 &&
          fake.calls("cuStreamBeginCapture_v2") == 0);

    // A bound output receives the copy instead of the session's buffer.
    std::vector<float> mine(kCudaN, -1);
    nnc_tensor_view_t viewY = viewOf(objects.output(0), mine.data());
    REQUIRE_OK(nnc_session_bind_output(objects.session, 0, &viewY));
    REQUIRE_OK(nnc_session_run(objects.session));
    nnc_tensor_view_t outY;
    REQUIRE_OK(nnc_session_output(objects.session, 0, &outY));
    CHECK(outY.data == mine.data());
    main.matches(objects);

    // Runs allocated nothing, on the device or for graphs beyond the one.
    CHECK(fake.calls("cuMemAlloc_v2") == 0 && fake.live("allocations") == 6);
    CHECK(fake.live("graph_execs") == 1 && fake.live("graphs") == 0);

    // Release frees all of it, the context reference included.
    fake.reset();
    nnc_session_release(objects.session);
    objects.session = nullptr;
    CHECK(fake.released());
    CHECK(fake.calls("cuModuleUnload") == 1 && fake.calls("cuMemFree_v2") == 6 &&
          fake.calls("cuStreamDestroy_v2") == 1 && fake.calls("cuGraphExecDestroy") == 1 &&
          fake.calls("cuDevicePrimaryCtxRelease_v2") == 1);
    std::string release = fake.log();
    CHECK(release.find("cuModuleUnload") < release.find("cuMemFree_v2") &&
          release.find("cuMemFree_v2") < release.find("cuStreamDestroy_v2") &&
          release.find("cuStreamDestroy_v2") < release.find("cuDevicePrimaryCtxRelease_v2"));
  }
  CHECK(fake.released());
}

/// Device memory from the fake driver, as an application's own CUDA
/// allocations are: in the device's primary context. (The fake driver's
/// device memory is host memory, so the test reads and writes it directly.)
struct FakeDeviceMemory {
  // The driver API's types, as the fake library declares them.
  using CUresult = int;
  using CUcontext = void *;
  using CUdeviceptr = unsigned long long;
  using Retain = CUresult (*)(CUcontext *, int);
  using Release = CUresult (*)(int);
  using Push = CUresult (*)(CUcontext);
  using Pop = CUresult (*)(CUcontext *);
  using Alloc = CUresult (*)(CUdeviceptr *, size_t);
  using Free = CUresult (*)(CUdeviceptr);
  explicit FakeDeviceMemory(const FakeCuda &fake) : fake(fake) {
    retained = fake.symbol<Retain>("cuDevicePrimaryCtxRetain")(&context, 0) == 0;
    CHECK(retained);
  }
  ~FakeDeviceMemory() {
    for (CUdeviceptr address : allocations)
      inContext([&] { fake.symbol<Free>("cuMemFree_v2")(address); });
    if (retained)
      fake.symbol<Release>("cuDevicePrimaryCtxRelease_v2")(0);
  }
  template <typename F> void inContext(F &&f) {
    fake.symbol<Push>("cuCtxPushCurrent_v2")(context);
    f();
    CUcontext popped;
    fake.symbol<Pop>("cuCtxPopCurrent_v2")(&popped);
  }
  float *allocate(size_t count) {
    CUdeviceptr address = 0;
    inContext([&] { CHECK(fake.symbol<Alloc>("cuMemAlloc_v2")(&address, count * 4) == 0); });
    allocations.push_back(address);
    return reinterpret_cast<float *>(static_cast<uintptr_t>(address));
  }
  const FakeCuda &fake;
  CUcontext context = nullptr;
  bool retained = false;
  std::vector<CUdeviceptr> allocations;
};

/// Inputs and outputs bound to device memory run without copies; a new
/// address records the graph again; host bindings and NULL views undo them.
void testCudaDeviceMemory() {
  FakeCuda fake;
  {
    Objects objects;
    REQUIRE_OK(objects.open("main", 1, "cuda_module.so", "cuda"));
    CudaMain main;
    if (!main.bind(objects))
      return;
    FakeDeviceMemory memory(fake);
    float *x = memory.allocate(kCudaN), *y = memory.allocate(kCudaN);
    std::copy(main.x.begin(), main.x.end(), x);
    nnc_tensor_view_t viewX = viewOf(objects.input(0), x), viewY = viewOf(objects.output(0), y);
    REQUIRE_OK(nnc_session_bind_device_input(objects.session, 0, &viewX));
    REQUIRE_OK(nnc_session_bind_device_output(objects.session, 0, &viewY));
    std::vector<float> expected;
    int32_t positives;
    cudaMainReference(main.x, main.scale, expected, positives);
    for (int run = 0; run < 3; ++run) {
      fake.reset();
      std::fill(y, y + kCudaN, -7.0f);
      REQUIRE_OK(nnc_session_run(objects.session));
      // Only the scale goes in and the count comes out; y is written in
      // place, and the session describes it there.
      CHECK(fake.lines("cuMemcpyHtoDAsync_v2 4000") == 0 &&
            fake.lines("cuMemcpyHtoDAsync_v2 4 -> 0") == 1);
      CHECK(fake.calls("cuMemcpyDtoHAsync_v2") == 1);
      CHECK(std::equal(expected.begin(), expected.end(), y));
      nnc_tensor_view_t outY, outCount;
      REQUIRE_OK(nnc_session_output(objects.session, 0, &outY));
      REQUIRE_OK(nnc_session_output(objects.session, 1, &outCount));
      CHECK(outY.data == y && *static_cast<int32_t *>(outCount.data) == positives);
    }
    CHECK(fake.calls("cuGraphLaunch") == 1); // the third run replayed

    // Another input address: the graph is recorded again, with it.
    float *x2 = memory.allocate(kCudaN);
    for (int i = 0; i < kCudaN; ++i)
      x2[i] = main.x[i] * -2.0f + 1.0f;
    std::vector<float> x2Host(x2, x2 + kCudaN);
    cudaMainReference(x2Host, main.scale, expected, positives);
    viewX.data = x2;
    fake.reset();
    REQUIRE_OK(nnc_session_bind_device_input(objects.session, 0, &viewX));
    CHECK(fake.calls("cuGraphExecDestroy") == 1);
    REQUIRE_OK(nnc_session_run(objects.session));
    CHECK(fake.calls("cuStreamBeginCapture_v2") == 1 && fake.calls("cuGraphLaunch") == 1);
    CHECK(std::equal(expected.begin(), expected.end(), y));
    fake.reset();
    REQUIRE_OK(nnc_session_run(objects.session)); // replays the new graph
    CHECK(fake.calls("cuGraphLaunch") == 1 && fake.calls("cuStreamBeginCapture_v2") == 0);
    CHECK(std::equal(expected.begin(), expected.end(), y));

    // Host buffers again: the copies come back, and so does the session's
    // own output buffer.
    nnc_tensor_view_t hostX = viewOf(objects.input(0), main.x.data());
    REQUIRE_OK(nnc_session_bind_input(objects.session, 0, &hostX));
    REQUIRE_OK(nnc_session_bind_device_output(objects.session, 0, nullptr));
    fake.reset();
    std::fill(y, y + kCudaN, -7.0f);
    REQUIRE_OK(nnc_session_run(objects.session));
    CHECK(fake.lines("cuMemcpyHtoDAsync_v2 4000 -> 0") == 1 &&
          fake.calls("cuMemcpyDtoHAsync_v2") == 2);
    main.matches(objects);
    CHECK(y[0] == -7.0f);

    // A NULL device input view unbinds the input.
    REQUIRE_OK(nnc_session_bind_device_input(objects.session, 0, nullptr));
    EXPECT_STATUS(nnc_session_run(objects.session), NNC_STATUS_FAILED_PRECONDITION,
                  "is not bound");
    // The view is checked as for host memory.
    nnc_tensor_view_t wrong = viewOf(objects.input(1), x);
    EXPECT_STATUS(nnc_session_bind_device_input(objects.session, 0, &wrong),
                  NNC_STATUS_INVALID_ARGUMENT, "expected shape");
  }
  CHECK(fake.released());
  // On the CPU there is no device memory to bind.
  Objects cpu;
  REQUIRE_OK(cpu.open("main", 1));
  std::vector<float> data(16);
  nnc_tensor_view_t view = viewOf(cpu.input(0), data.data());
  EXPECT_STATUS(nnc_session_bind_device_input(cpu.session, 0, &view),
                NNC_STATUS_INVALID_ARGUMENT,
                "nnc_session_bind_device_input: device memory binds only in a session on a CUDA "
                "device; this one runs on 'cpu'");
}

/// Profiling on a GPU: events at each kernel's start time the kernels (the
/// fake GPU takes a microsecond per block), runs launch one by one, and a
/// failed run leaves nothing behind for the next.
void testCudaProfile() {
  FakeCuda fake;
  {
    Objects objects;
    REQUIRE_OK(objects.open("profiled", 1, "cuda_module.so", "cuda", /*profile=*/true));
    CHECK(fake.live("events") == 4);
    CudaMain main;
    if (!main.bind(objects))
      return;
    auto timesAreRight = [&] {
      double seconds[3] = {-1, -1, -1};
      if (!EXPECT_OK(nnc_session_kernel_seconds(objects.session, seconds, 3)))
        return false;
      // zero_count: 1 block; affine and relu_count: 8 blocks.
      const double expected[3] = {1e-6, 8e-6, 8e-6};
      bool right = true;
      for (int k = 0; k < 3; ++k)
        right = right && std::fabs(seconds[k] - expected[k]) < 1e-9;
      return right;
    };
    for (int run = 0; run < 3; ++run) {
      REQUIRE_OK(nnc_session_run(objects.session));
      main.matches(objects);
      CHECK(timesAreRight());
    }
    CHECK(fake.calls("cuStreamBeginCapture_v2") == 0 && fake.calls("cuGraphLaunch") == 0);
    // A run failing after its first marks, then a good one: the good one
    // records all of its own events.
    fake.reset();
    fake.set("NNC_FAKE_CUDA_FAIL", "cuLaunchKernel:700@2");
    EXPECT_STATUS(nnc_session_run(objects.session), NNC_STATUS_INTERNAL, "cuLaunchKernel failed");
    fake.set("NNC_FAKE_CUDA_FAIL", nullptr);
    REQUIRE_OK(nnc_session_run(objects.session));
    CHECK(timesAreRight());
    // A failed event record fails its run only.
    fake.reset();
    fake.set("NNC_FAKE_CUDA_FAIL", "cuEventRecord:700@1");
    EXPECT_STATUS(nnc_session_run(objects.session), NNC_STATUS_INTERNAL, "cuEventRecord failed");
    fake.set("NNC_FAKE_CUDA_FAIL", nullptr);
    REQUIRE_OK(nnc_session_run(objects.session));
    CHECK(timesAreRight());
  }
  CHECK(fake.released() && fake.live("events") == 0);
}

void testCudaImageChoice() {
  FakeCuda fake;
  struct {
    const char *capability, *image;
  } cases[] = {{"8.0", "sm_80"}, {"8.6", "sm_80"},  {"8.9", "sm_80"},
               {"9.0", "sm_90a"}, {"10.0", "sm_90"}, {"12.0", "sm_90"}};
  for (const auto &c : cases) {
    fake.set("NNC_FAKE_CUDA_CC", c.capability);
    fake.reset();
    Objects objects;
    // The fake's JIT also refuses PTX for a newer chip than the device's.
    if (!EXPECT_OK(objects.open("main", 1, "cuda_module.so", "cuda")))
      continue;
    std::string device = nnc_session_device(objects.session);
    CHECK(device.find(std::string("compute capability ") + c.capability + ", image " + c.image +
                      ",") != std::string::npos);
    CHECK(fake.lines(std::string("cuModuleLoadDataEx target=") + c.image + " -> 0") == 1);
    CudaMain main;
    if (main.bind(objects) && EXPECT_OK(nnc_session_run(objects.session)))
      main.matches(objects);
  }

  // Too old for every image: named with the device and the images, before
  // anything is taken from the driver.
  fake.set("NNC_FAKE_CUDA_CC", "7.5");
  Objects objects;
  EXPECT_STATUS(objects.open("main", 1, "cuda_module.so", "cuda"),
                NNC_STATUS_FAILED_PRECONDITION,
                "cuda_module.so' has no CUDA image for device 'cuda' ('Fake CUDA Device', "
                "compute capability 7.5): its images are for 'sm_80', 'sm_90', 'sm_90a' "
                "(recompile it for this GPU's chip)");
  CHECK(fake.released());
}

void testCudaUnavailable() {
  FakeCuda fake;
  nnc_runtime_t *runtime = nullptr;
  nnc_module_t *module = nullptr;
  REQUIRE_OK(nnc_runtime_create(nullptr, &runtime));
  std::unique_ptr<nnc_runtime_t, void (*)(nnc_runtime_t *)> runtimeOwner(runtime,
                                                                          nnc_runtime_release);
  REQUIRE_OK(nnc_module_load(modulePath("cuda_module.so").c_str(), &module));
  std::unique_ptr<nnc_module_t, void (*)(nnc_module_t *)> moduleOwner(module,
                                                                      nnc_module_release);
  nnc_session_options_t options;
  nnc_session_options_initialize(&options);
  options.device = "cuda";
  nnc_session_t *session = nullptr;
  auto create = [&] { return nnc_session_create(runtime, module, &options, &session); };

  // No driver library: never a fallback to the CPU.
  fake.set("NNC_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  EXPECT_STATUS(create(), NNC_STATUS_UNAVAILABLE,
                "device 'cuda': cannot load the CUDA driver /nonexistent/libcuda.so.1: "
                "/nonexistent/libcuda.so.1: cannot open shared object file");
  // A library that is not a CUDA driver.
  std::string plain = modulePath("not_nnc.so");
  fake.set("NNC_CUDA_DRIVER", plain.c_str());
  EXPECT_STATUS(create(), NNC_STATUS_UNAVAILABLE,
                ("device 'cuda': the CUDA driver " + plain +
                 " does not export 'cuInit' (this runtime needs a driver for CUDA 11 or newer)")
                    .c_str());

  // cuInit failing, as on a machine with a driver and no GPU. Loaded under
  // another path, since a driver that initialized is kept for the process.
  TempDir temp;
  std::string link = temp.path + "/libcuda.so.1";
  CHECK(symlink(fake.path.c_str(), link.c_str()) == 0);
  temp.files.push_back(link);
  fake.set("NNC_CUDA_DRIVER", link.c_str());
  fake.set("NNC_FAKE_CUDA_FAIL", "cuInit:100");
  EXPECT_STATUS(create(), NNC_STATUS_UNAVAILABLE,
                "device 'cuda': cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is "
                "detected)");
  // A failed initialization is not kept: the next session tries again.
  fake.set("NNC_FAKE_CUDA_FAIL", nullptr);
  if (EXPECT_OK(create()))
    nnc_session_release(session);
  fake.set("NNC_CUDA_DRIVER", fake.path.c_str());

  // A driver and no GPU.
  fake.set("NNC_FAKE_CUDA_DEVICES", "0");
  EXPECT_STATUS(create(), NNC_STATUS_UNAVAILABLE,
                ("device 'cuda': no CUDA device found (driver " + fake.path + ")").c_str());

  // Device ordinals.
  fake.set("NNC_FAKE_CUDA_DEVICES", "2");
  options.device = "cuda:2";
  EXPECT_STATUS(create(), NNC_STATUS_UNAVAILABLE,
                "device 'cuda:2': there is no CUDA device 2 (this machine has 2)");
  options.device = "cuda:1";
  if (EXPECT_OK(create())) {
    CHECK(std::strncmp(nnc_session_device(session), "cuda:1 'Fake CUDA Device'", 25) == 0);
    CHECK(fake.lines("cuDevicePrimaryCtxRetain 1 -> 0") == 1);
    nnc_session_release(session);
  }
  for (const char *bad : {"cuda:", "cuda:x", "cuda:-1", "cuda:1234567"}) {
    options.device = bad;
    EXPECT_STATUS(create(), NNC_STATUS_INVALID_ARGUMENT,
                  (std::string("device '") + bad +
                   "': expected 'cuda:' followed by a device ordinal")
                      .c_str());
  }
  CHECK(fake.released());
}

void testCudaDeviceMismatch() {
  FakeCuda fake;
  nnc_runtime_t *runtime = nullptr;
  nnc_module_t *cpu = nullptr, *cuda = nullptr;
  REQUIRE_OK(nnc_runtime_create(nullptr, &runtime));
  EXPECT_OK(nnc_module_load(modulePath("test_module.so").c_str(), &cpu));
  EXPECT_OK(nnc_module_load(modulePath("cuda_module.so").c_str(), &cuda));
  nnc_session_options_t options;
  nnc_session_options_initialize(&options);
  nnc_session_t *session = nullptr;
  if (cpu && cuda) {
    CHECK(std::strcmp(nnc_module_target(cuda), "cuda") == 0);
    EXPECT_STATUS(nnc_session_create(runtime, cuda, nullptr, &session),
                  NNC_STATUS_INVALID_ARGUMENT,
                  "cuda_module.so' was compiled for target 'cuda' and cannot run on device "
                  "'cpu'");
    options.device = "cuda";
    EXPECT_STATUS(nnc_session_create(runtime, cpu, &options, &session),
                  NNC_STATUS_INVALID_ARGUMENT,
                  "test_module.so' was compiled for target 'cpu' and cannot run on device "
                  "'cuda'");
    options.device = "cuda-emulated";
    EXPECT_STATUS(nnc_session_create(runtime, cpu, &options, &session),
                  NNC_STATUS_INVALID_ARGUMENT,
                  "test_module.so' was compiled for target 'cpu' and cannot run on device "
                  "'cuda-emulated'");
    // Decided from the options and the module alone: the driver is not asked.
    CHECK(fake.log().empty());
  }
  CHECK(session == nullptr);
  nnc_module_release(cpu);
  nnc_module_release(cuda);
  nnc_runtime_release(runtime);
}

void testCudaDriverFailures() {
  FakeCuda fake;
  // Failures while a session is created: each names the call and the
  // driver's error, and leaves nothing behind.
  struct {
    const char *failure;
    nnc_status_code_t code;
    const char *message;
  } creation[] = {
      {"cuDevicePrimaryCtxRetain:2", NNC_STATUS_RESOURCE_EXHAUSTED,
       "device 'cuda': cuDevicePrimaryCtxRetain failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"},
      {"cuCtxPushCurrent_v2:201", NNC_STATUS_INTERNAL,
       "device 'cuda': cuCtxPushCurrent_v2 failed: CUDA_ERROR_INVALID_CONTEXT (invalid device "
       "context)"},
      {"cuStreamCreate", NNC_STATUS_INTERNAL,
       "device 'cuda': cuStreamCreate failed: CUDA_ERROR_UNKNOWN (unknown error)"},
      {"cuModuleGetFunction:500@3", NNC_STATUS_INVALID_ARGUMENT,
       "cuda_module.so', image sm_90a, kernel 'relu_count': cuModuleGetFunction failed: "
       "CUDA_ERROR_NOT_FOUND (named symbol not found)"},
      {"cuMemAlloc_v2:2@3", NNC_STATUS_RESOURCE_EXHAUSTED,
       "device 'cuda': cannot allocate 4000 bytes for input 'x': cuMemAlloc_v2 failed: "
       "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"},
      {"cuMemcpyHtoDAsync_v2", NNC_STATUS_INTERNAL,
       "device 'cuda', uploading the constants: cuMemcpyHtoDAsync_v2 failed: CUDA_ERROR_UNKNOWN"},
      {"cuStreamSynchronize:700", NNC_STATUS_INTERNAL,
       "device 'cuda', uploading the constants: cuStreamSynchronize failed: "
       "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)"},
  };
  for (const auto &c : creation) {
    fake.reset();
    fake.set("NNC_FAKE_CUDA_FAIL", c.failure);
    Objects objects;
    EXPECT_STATUS(objects.open("main", 1, "cuda_module.so", "cuda"), c.code, c.message);
    CHECK(objects.session == nullptr);
    if (!fake.released())
      std::fprintf(stderr, "driver objects left after failing %s\n", c.failure);
    CHECK(fake.released());
  }

  // Failures during a run: the run reports the call, has no outputs, and the
  // session runs again once the driver recovers.
  struct {
    const char *failure, *message;
  } running[] = {
      {"cuMemcpyHtoDAsync_v2:1",
       "device 'cuda', input 'x': cuMemcpyHtoDAsync_v2 failed: CUDA_ERROR_INVALID_VALUE "
       "(invalid argument)"},
      {"cuLaunchKernel:719@2",
       "function 'main' of module '" NNC_TEST_MODULE_DIR "/cuda_module.so' failed with code "
       "719: cuLaunchKernel failed for kernel 'affine' (grid 8x1x1, block 128x1x1, 0 dynamic "
       "shared bytes): CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)"},
      {"cuMemcpyDtoHAsync_v2@2",
       "device 'cuda', output 'positives': cuMemcpyDtoHAsync_v2 failed: CUDA_ERROR_UNKNOWN"},
      {"cuStreamSynchronize:700",
       "device 'cuda', function 'main': cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS"},
  };
  fake.set("NNC_FAKE_CUDA_FAIL", nullptr);
  Objects objects;
  REQUIRE_OK(objects.open("main", 1, "cuda_module.so", "cuda"));
  CudaMain main;
  if (!main.bind(objects))
    return;
  for (const auto &c : running) {
    fake.reset();
    fake.set("NNC_FAKE_CUDA_FAIL", c.failure);
    EXPECT_STATUS(nnc_session_run(objects.session), NNC_STATUS_INTERNAL, c.message);
    nnc_tensor_view_t out;
    EXPECT_STATUS(nnc_session_output(objects.session, 0, &out), NNC_STATUS_FAILED_PRECONDITION,
                  "output 'y' has no value");
    // The stream was drained before the error was returned.
    CHECK(fake.calls("cuStreamSynchronize") == 1);
    fake.set("NNC_FAKE_CUDA_FAIL", nullptr);
  }
  // No run succeeded yet, so none captured a graph.
  CHECK(fake.live("graphs") == 0 && fake.live("graph_execs") == 0);
  REQUIRE_OK(nnc_session_run(objects.session));
  main.matches(objects);

  // Failures while capturing (the second successful run) and replaying.
  struct {
    const char *failure, *message;
  } capturing[] = {
      {"cuStreamBeginCapture_v2",
       "device 'cuda', function 'main', capturing a graph: cuStreamBeginCapture_v2 failed: "
       "CUDA_ERROR_UNKNOWN"},
      {"cuLaunchKernel:1@2",
       "failed with code 1: cuLaunchKernel failed for kernel 'affine' (grid 8x1x1, block "
       "128x1x1, 0 dynamic shared bytes): CUDA_ERROR_INVALID_VALUE (invalid argument)"},
      {"cuStreamEndCapture",
       "device 'cuda', function 'main', capturing a graph: cuStreamEndCapture failed: "
       "CUDA_ERROR_UNKNOWN"},
      {"cuGraphInstantiateWithFlags",
       "device 'cuda', function 'main', capturing a graph: cuGraphInstantiateWithFlags failed: "
       "CUDA_ERROR_UNKNOWN"},
  };
  for (const auto &c : capturing) {
    fake.reset();
    fake.set("NNC_FAKE_CUDA_FAIL", c.failure);
    EXPECT_STATUS(nnc_session_run(objects.session), NNC_STATUS_INTERNAL, c.message);
    // No graph is left over, and the stream left capture mode (it synchronized).
    CHECK(fake.live("graphs") == 0 && fake.live("graph_execs") == 0);
    CHECK(fake.lines("cuStreamSynchronize -> 0") == 1);
    fake.set("NNC_FAKE_CUDA_FAIL", nullptr);
  }
  fake.reset();
  REQUIRE_OK(nnc_session_run(objects.session)); // captures now
  main.matches(objects);
  CHECK(fake.calls("cuGraphLaunch") == 1 && fake.live("graph_execs") == 1);
  fake.set("NNC_FAKE_CUDA_FAIL", "cuGraphLaunch:719");
  EXPECT_STATUS(nnc_session_run(objects.session), NNC_STATUS_INTERNAL,
                "device 'cuda', function 'main': cuGraphLaunch failed: CUDA_ERROR_LAUNCH_FAILED");
  fake.set("NNC_FAKE_CUDA_FAIL", nullptr);
  REQUIRE_OK(nnc_session_run(objects.session));
  main.matches(objects);
}

void testCudaJitLog() {
  FakeCuda fake;
  // The sm_80 image of cuda_mislabeled.so holds sm_90 PTX: the JIT of an
  // sm_86 device refuses it, and its log is in the status.
  fake.set("NNC_FAKE_CUDA_CC", "8.6");
  {
    Objects objects;
    EXPECT_STATUS(objects.open("main", 1, "cuda_mislabeled.so", "cuda"),
                  NNC_STATUS_INVALID_ARGUMENT,
                  "device 'cuda', module '" NNC_TEST_MODULE_DIR "/cuda_mislabeled.so', image "
                  "sm_80: cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT "
                  "compilation failed); JIT log:\nptxas application ptx input, line 1; fatal   "
                  ": SM version specified by .target (sm_90) is higher than default SM version "
                  "assumed (sm_86)");
  }
  CHECK(fake.released());
  // Any failure of the JIT carries its log.
  fake.set("NNC_FAKE_CUDA_CC", nullptr);
  fake.set("NNC_FAKE_CUDA_FAIL", "cuModuleLoadDataEx:218");
  {
    Objects objects;
    EXPECT_STATUS(objects.open("main", 1, "cuda_module.so", "cuda"),
                  NNC_STATUS_INVALID_ARGUMENT,
                  "image sm_90a: cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT "
                  "compilation failed); JIT log:\nptxas application ptx input, line 1; fatal   "
                  ": simulated failure (NNC_FAKE_CUDA_FAIL)");
  }
  CHECK(fake.released());
}

void testCudaLaunches() {
  FakeCuda fake;
  {
    // More than 48 KiB of dynamic shared memory: the kernel is opted in once.
    Objects objects;
    REQUIRE_OK(objects.open("shared", 1, "cuda_module.so", "cuda"));
    for (int run = 0; run < 3; ++run) { // eager, captured, replayed
      REQUIRE_OK(nnc_session_run(objects.session));
      nnc_tensor_view_t y;
      REQUIRE_OK(nnc_session_output(objects.session, 0, &y));
      const float *values = static_cast<const float *>(y.data);
      CHECK(values[0] == 2.5f && values[3] == 2.5f);
    }
    CHECK(fake.lines("cuFuncSetAttribute fill 8=65536 -> 0") == 1);
    CHECK(fake.lines("cuLaunchKernel fill grid=1,1,1 block=32,1,1 shared=65536") == 2);
  }
  struct {
    const char *function, *message;
  } failing[] = {
      {"bad_kernel", "failed with code 1: kernel index 4 is out of range (the module has 4 "
                     "kernels)"},
      {"bad_launch", "failed with code 1: cuLaunchKernel failed for kernel 'fill' (grid 1x1x1, "
                     "block 2048x1x1, 0 dynamic shared bytes): CUDA_ERROR_INVALID_VALUE "
                     "(invalid argument)"},
      {"fail", "function 'fail' of module '" NNC_TEST_MODULE_DIR "/cuda_module.so' failed with "
               "code 7"},
      {"ignored_failure", "failed with code 1: cuLaunchKernel failed for kernel 'fill' (grid "
                          "1x1x1, block 2048x1x1, 0 dynamic shared bytes): "
                          "CUDA_ERROR_INVALID_VALUE (invalid argument)"},
  };
  fake.reset();
  for (const auto &f : failing) {
    Objects objects;
    if (!EXPECT_OK(objects.open(f.function, 1, "cuda_module.so", "cuda")))
      continue;
    for (int run = 0; run < 2; ++run) // failed runs never lead to a capture
      EXPECT_STATUS(nnc_session_run(objects.session), NNC_STATUS_INTERNAL, f.message);
  }
  CHECK(fake.calls("cuStreamBeginCapture_v2") == 0);
  CHECK(fake.released());
}

/// Runs main four times and checks each result; returns false on a failure.
bool runCudaMainFourTimes(Objects &objects) {
  CudaMain main;
  if (!main.bind(objects))
    return false;
  for (int run = 0; run < 4; ++run) {
    main.scale = static_cast<float>(run) - 1.5f;
    if (!EXPECT_OK(nnc_session_run(objects.session)) || !main.matches(objects))
      return false;
  }
  return true;
}

void testCudaWithoutGraphs() {
  {
    // The driver cannot capture this stream: runs go on launching.
    FakeCuda fake;
    fake.set("NNC_FAKE_CUDA_FAIL", "cuStreamBeginCapture_v2:801");
    Objects objects;
    REQUIRE_OK(objects.open("main", 1, "cuda_module.so", "cuda"));
    CHECK(runCudaMainFourTimes(objects));
    CHECK(fake.calls("cuStreamBeginCapture_v2") == 1 && fake.calls("cuGraphLaunch") == 0);
    CHECK(fake.lines(" captured") == 0 && fake.calls("cuLaunchKernel") == 12);
  }
  {
    // A launch the driver cannot capture (the fourth launch, the second
    // run's first): that run goes on without a graph.
    FakeCuda fake;
    fake.set("NNC_FAKE_CUDA_FAIL", "cuLaunchKernel:900@4");
    Objects objects;
    REQUIRE_OK(objects.open("main", 1, "cuda_module.so", "cuda"));
    CHECK(runCudaMainFourTimes(objects));
    CHECK(fake.calls("cuStreamBeginCapture_v2") == 1 && fake.calls("cuStreamEndCapture") == 1);
    CHECK(fake.calls("cuGraphLaunch") == 0 && fake.calls("cuLaunchKernel") == 13);
    CHECK(fake.live("graphs") == 0);
  }
  {
    // A driver without the graph entry points at all.
    FakeCuda fake("libfakecuda-nographs.so");
    Objects objects;
    REQUIRE_OK(objects.open("main", 1, "cuda_module.so", "cuda"));
    CHECK(runCudaMainFourTimes(objects));
    CHECK(fake.calls("cuLaunchKernel") == 12);
    nnc_session_release(objects.session);
    objects.session = nullptr;
    CHECK(fake.released());
  }
}

void testCudaRealDriver() {
  // The same module on this machine's driver and GPU, where there is one:
  // the PTX kernels compute what the host versions do.
  Environment environment;
  environment.set("NNC_CUDA_DRIVER", nullptr);
  Objects objects;
  nnc_status_t status = objects.open("main", 1, "cuda_module.so", "cuda");
  if (nnc_status_code(status) == NNC_STATUS_UNAVAILABLE) {
    skipped = nnc_status_message(status);
    nnc_status_free(status);
    return;
  }
  REQUIRE_OK(status);
  std::string device = nnc_session_device(objects.session);
  std::printf("  %s\n", device.c_str());
  CHECK(device.compare(0, 6, "cuda '") == 0 && device.find(", image sm_") != std::string::npos);
  CHECK(runCudaMainFourTimes(objects)); // eager, captured, replayed twice

  Objects shared;
  REQUIRE_OK(shared.open("shared", 1, "cuda_module.so", "cuda"));
  for (int run = 0; run < 3; ++run) {
    REQUIRE_OK(nnc_session_run(shared.session));
    nnc_tensor_view_t y;
    REQUIRE_OK(nnc_session_output(shared.session, 0, &y));
    CHECK(static_cast<const float *>(y.data)[0] == 2.5f &&
          static_cast<const float *>(y.data)[3] == 2.5f);
  }
  Objects badLaunch;
  REQUIRE_OK(badLaunch.open("bad_launch", 1, "cuda_module.so", "cuda"));
  EXPECT_STATUS(nnc_session_run(badLaunch.session), NNC_STATUS_INTERNAL,
                "cuLaunchKernel failed for kernel 'fill' (grid 1x1x1, block 2048x1x1, 0 dynamic "
                "shared bytes): CUDA_ERROR_INVALID_VALUE");
  Objects badKernel;
  REQUIRE_OK(badKernel.open("bad_kernel", 1, "cuda_module.so", "cuda"));
  EXPECT_STATUS(nnc_session_run(badKernel.session), NNC_STATUS_INTERNAL,
                "kernel index 4 is out of range (the module has 4 kernels)");
  Objects missing;
  EXPECT_STATUS(missing.open("main", 1, "cuda_module.so", "cuda:64"), NNC_STATUS_UNAVAILABLE,
                "device 'cuda:64': there is no CUDA device 64");
}

void testCudaConcurrentSessions() {
  // Sessions on several threads share the driver and the primary context;
  // each makes it current around its own calls.
  FakeCuda fake;
  Objects shared;
  REQUIRE_OK(shared.open("main", 1, "cuda_module.so", "cuda"));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&shared] {
      Objects objects;
      objects.runtime = shared.runtime;
      objects.module = shared.module;
      nnc_runtime_t *runtime = shared.runtime;
      nnc_module_t *module = shared.module;
      nnc_session_options_t options;
      nnc_session_options_initialize(&options);
      options.device = "cuda";
      EXPECT_OK(nnc_session_create(runtime, module, &options, &objects.session));
      if (objects.session)
        for (int round = 0; round < 5 && runCudaMainFourTimes(objects); ++round) {
        }
      // shared owns the runtime and module.
      objects.runtime = nullptr;
      objects.module = nullptr;
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  CHECK(fake.live("contexts") == 1); // shared's session only
}

//===----------------------------------------------------------------------===//
// The C++ wrapper
//===----------------------------------------------------------------------===//

void testCppWrapper() {
  nnc::Result<nnc::Runtime> runtime = nnc::Runtime::create(2);
  CHECK(runtime.ok() && runtime->numThreads() == 2);
  nnc::Result<nnc::Runtime> badRuntime = nnc::Runtime::create(-3);
  CHECK(!badRuntime.ok() && badRuntime.status().code() == NNC_STATUS_INVALID_ARGUMENT);

  nnc::Result<nnc::Module> missing = nnc::Module::load("/nonexistent.so");
  CHECK(!missing.ok() && missing.status().code() == NNC_STATUS_NOT_FOUND);
  CHECK(std::strstr(missing.status().message(), "cannot open module '/nonexistent.so'"));

  nnc::Result<nnc::Module> module = nnc::Module::load(modulePath("test_module.so").c_str());
  if (!runtime.ok() || !module.ok())
    return;
  CHECK(module->path() == modulePath("test_module.so"));
  CHECK(std::strcmp(module->producer(), "nnc-test 1.0") == 0);
  CHECK(std::strcmp(module->target(), "cpu") == 0);
  CHECK(std::strcmp(module->targetCpu(), "generic") == 0);
  CHECK(module->functionCount() == 12 && !module->function(12));
  std::optional<nnc::Function> scale = module->function(1);
  CHECK(scale && std::strcmp(scale->name(), "scale") == 0);
  CHECK(scale->inputCount() == 2 && scale->outputCount() == 2 && scale->workspaceSize() == 0);
  CHECK(scale->input(2) == nullptr && std::strcmp(scale->output(1)->name, "total") == 0);
  CHECK(scale->findInput("k").ok() && *scale->findInput("k") == 1);
  CHECK(scale->findOutput("y").ok() && *scale->findOutput("y") == 0);
  CHECK(scale->findInput("z").status().code() == NNC_STATUS_NOT_FOUND);
  CHECK(scale->findOutput("z").status().code() == NNC_STATUS_NOT_FOUND);
  CHECK(module->findFunction("main").ok() && module->findFunction("main")->get() ==
                                                 nnc_module_function(module->get(), 0));
  CHECK(module->findFunction("nope").status().code() == NNC_STATUS_NOT_FOUND);

  nnc::Result<nnc::Session> cuda = nnc::Session::create(*runtime, *module, "main", "cuda");
  CHECK(cuda.status().code() == NNC_STATUS_INVALID_ARGUMENT);

  nnc::Result<nnc::Session> session = nnc::Session::create(*runtime, *module, "scale");
  if (!session.ok())
    return;
  nnc::Session moved = std::move(*session); // handles are move-only
  CHECK(session->get() == nullptr && moved.get() != nullptr);
  CHECK(std::strcmp(moved.device(), "cpu") == 0);
  nnc::Function function = moved.function();
  float x[4] = {1, 2, 3, 4}, y[4] = {};
  int32_t k = 2;
  CHECK(moved.bindInput(0, nnc::viewOf(*function.input(0), x, sizeof(x))).ok());
  CHECK(moved.bindInput("k", nnc::viewOf(*function.input(1), &k, sizeof(k))).ok());
  CHECK(moved.bindOutput("y", nnc::viewOf(*function.output(0), y, sizeof(y))).ok());
  nnc::Status bad = moved.bindOutput(1, nnc::viewOf(*function.output(0), y, sizeof(y)));
  CHECK(bad.code() == NNC_STATUS_INVALID_ARGUMENT);
  CHECK(std::strcmp(bad.message(), "output 'total': expected dtype f64 (got f32)") == 0);
  nnc::Status other = std::move(bad);
  CHECK(bad.ok() && !other.ok());
  CHECK(moved.run().ok());
  CHECK(y[3] == 8);
}

//===----------------------------------------------------------------------===//
// The cuda-emulated device, with cuda_module.c and emulated_module.c
//===----------------------------------------------------------------------===//

/// Runs `function` of emulated_module.so on cuda-emulated, with x (if the
/// function has an input) bound; the status of the run.
nnc_status_t runEmulated(Objects &objects, const char *function, std::vector<float> x = {},
                         int32_t threads = 2) {
  if (nnc_status_t status = objects.open(function, threads, "emulated_module.so", "cuda-emulated"))
    return status;
  if (nnc_function_input_count(nnc_session_function(objects.session)) > 0) {
    nnc_tensor_view_t view = viewOf(objects.input(0), x.data());
    view.byte_size = x.size() * sizeof(float);
    if (nnc_status_t status = nnc_session_bind_input(objects.session, 0, &view))
      return status;
  }
  return nnc_session_run(objects.session);
}

template <typename T>
std::vector<T> outputOf(Objects &objects) {
  nnc_tensor_view_t view;
  if (!EXPECT_OK(nnc_session_output(objects.session, 0, &view)))
    return {};
  const T *data = static_cast<const T *>(view.data);
  return std::vector<T>(data, data + view.byte_size / sizeof(T));
}

std::vector<float> iota(int n) {
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i)
    x[i] = static_cast<float>(i);
  return x;
}

void testEmulatedRun() {
  // No driver is involved: a missing one changes nothing.
  Environment environment;
  environment.set("NNC_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  environment.set("NNC_CUDA_EMULATED_CHECK", nullptr);
  for (int32_t threads : {1, 2}) {
    Objects objects;
    REQUIRE_OK(objects.open("main", threads, "cuda_module.so", "cuda-emulated"));
    CHECK(std::string(nnc_session_device(objects.session)) ==
          "cuda-emulated (kernels on the host CPU, " + std::to_string(threads) + " threads)");
    CudaMain main;
    if (!main.bind(objects))
      return;
    std::vector<float> x = main.x;
    REQUIRE_OK(nnc_session_run(objects.session));
    main.matches(objects);
    CHECK(main.x == x);
    // Runs are independent: new inputs, new outputs (the count restarts).
    main.scale = -1.5f;
    REQUIRE_OK(nnc_session_run(objects.session));
    main.matches(objects);
    // A bound output receives the copy.
    std::vector<float> mine(kCudaN, -1);
    nnc_tensor_view_t viewY = viewOf(objects.output(0), mine.data());
    REQUIRE_OK(nnc_session_bind_output(objects.session, 0, &viewY));
    REQUIRE_OK(nnc_session_run(objects.session));
    main.matches(objects);
    CHECK(mine[1] != -1);
  }
  // The same launch errors as on a GPU.
  for (const char *function : {"bad_kernel", "bad_launch", "fail", "ignored_failure"}) {
    Objects objects;
    REQUIRE_OK(objects.open(function, 1, "cuda_module.so", "cuda-emulated"));
    nnc_status_t status = nnc_session_run(objects.session);
    std::string message = nnc_status_message(status);
    CHECK(nnc_status_code(status) == NNC_STATUS_INTERNAL);
    nnc_status_free(status);
    CHECK(message.find(std::string("function '") + function + "' of module '") == 0);
    if (std::strcmp(function, "bad_kernel") == 0)
      CHECK(message.find("failed with code 1: kernel index 4 is out of range (the module has 4 "
                         "kernels)") != std::string::npos);
    // The host code ignoring the failed launch changes nothing.
    if (std::strcmp(function, "bad_launch") == 0 || std::strcmp(function, "ignored_failure") == 0)
      CHECK(message.find("failed with code 1: kernel 'fill' (grid 1x1x1, block 2048x1x1, 0 "
                         "dynamic shared bytes): block 2048x1x1 is outside the launch bounds "
                         "the kernel's code was compiled for (block 1x1x1 to 1024x1024x64)") !=
            std::string::npos);
    if (std::strcmp(function, "fail") == 0)
      CHECK(message.find("failed with code 7") != std::string::npos);
  }
  // A module without host images cannot run here.
  Objects objects;
  EXPECT_STATUS(objects.open("main", 1, "cuda_no_host_image.so", "cuda-emulated"),
                NNC_STATUS_FAILED_PRECONDITION,
                "cuda_no_host_image.so' has no host image of its kernels, which device "
                "'cuda-emulated' runs");
}

/// Device memory is host memory on cuda-emulated: bound buffers are read and
/// written in place, in the checking mode too.
void testEmulatedDeviceMemory() {
  Environment environment;
  for (const char *checking : {"0", "1"}) {
    environment.set("NNC_CUDA_EMULATED_CHECK", checking);
    Objects objects;
    REQUIRE_OK(objects.open("main", 2, "cuda_module.so", "cuda-emulated"));
    CudaMain main;
    if (!main.bind(objects))
      return;
    std::vector<float> x = main.x, y(kCudaN, -7.0f);
    nnc_tensor_view_t viewX = viewOf(objects.input(0), x.data());
    nnc_tensor_view_t viewY = viewOf(objects.output(0), y.data());
    REQUIRE_OK(nnc_session_bind_device_input(objects.session, 0, &viewX));
    REQUIRE_OK(nnc_session_bind_device_output(objects.session, 0, &viewY));
    std::vector<float> expected;
    int32_t positives;
    cudaMainReference(x, main.scale, expected, positives);
    REQUIRE_OK(nnc_session_run(objects.session));
    CHECK(y == expected && x == main.x);
    nnc_tensor_view_t outY;
    REQUIRE_OK(nnc_session_output(objects.session, 0, &outY));
    CHECK(outY.data == y.data());
    // Back to the session's buffer: the same values arrive there.
    REQUIRE_OK(nnc_session_bind_device_output(objects.session, 0, nullptr));
    std::fill(y.begin(), y.end(), -7.0f);
    REQUIRE_OK(nnc_session_run(objects.session));
    main.matches(objects);
    CHECK(y[0] == -7.0f);
  }
  // Rebinding one output moves only its own watched region, even when two
  // outputs were bound to one address in between (allowed until a run).
  {
    environment.set("NNC_CUDA_EMULATED_CHECK", "1");
    Objects objects;
    REQUIRE_OK(objects.open("main", 2, "cuda_module.so", "cuda-emulated"));
    CudaMain main;
    if (!main.bind(objects))
      return;
    std::vector<float> y(kCudaN, -7.0f);
    int32_t count = -1;
    nnc_tensor_view_t viewY = viewOf(objects.output(0), y.data());
    nnc_tensor_view_t sameY = viewOf(objects.output(1), y.data());
    nnc_tensor_view_t viewCount = viewOf(objects.output(1), &count);
    REQUIRE_OK(nnc_session_bind_device_output(objects.session, 0, &viewY));
    REQUIRE_OK(nnc_session_bind_device_output(objects.session, 1, &sameY));
    REQUIRE_OK(nnc_session_bind_device_output(objects.session, 1, &viewCount));
    REQUIRE_OK(nnc_session_run(objects.session));
    std::vector<float> expected;
    int32_t positives;
    cudaMainReference(main.x, main.scale, expected, positives);
    CHECK(y == expected && count == positives);
  }
  // The checking mode watches a device-bound output: it finds the race.
  Objects racy;
  REQUIRE_OK(racy.open("racy_shift", 2, "emulated_module.so", "cuda-emulated"));
  std::vector<float> x(64), y(64);
  for (int i = 0; i < 64; ++i)
    x[i] = static_cast<float>(i);
  nnc_tensor_view_t viewX = viewOf(racy.input(0), x.data()), viewY = viewOf(racy.output(0), y.data());
  REQUIRE_OK(nnc_session_bind_device_input(racy.session, 0, &viewX));
  REQUIRE_OK(nnc_session_bind_device_output(racy.session, 0, &viewY));
  EXPECT_STATUS(nnc_session_run(racy.session), NNC_STATUS_INTERNAL,
                "the results depend on the order the threads run in: output 'y' differs");
}

void testEmulatedCollectives() {
  Environment environment;
  environment.set("NNC_CUDA_EMULATED_CHECK", nullptr);
  for (int32_t threads : {1, 2}) {
    // Shuffles, shared memory and a barrier: the sums of 0..127, 128..255.
    Objects reduce;
    REQUIRE_OK(runEmulated(reduce, "reduce", iota(256), threads));
    CHECK(outputOf<float>(reduce) == std::vector<float>({8128, 24512}));
  }
  // Each collective's result per lane, as PTX defines it.
  Objects collectives;
  REQUIRE_OK(runEmulated(collectives, "collectives"));
  std::vector<int32_t> results = outputOf<int32_t>(collectives);
  if (results.size() != 7 * 32)
    return CHECK(results.size() == 7 * 32);
  uint32_t ballot = 0;
  for (int lane = 0; lane < 32; lane += 3)
    ballot |= 1u << lane;
  for (int lane = 0; lane < 32; ++lane) {
    CHECK(results[lane] == (lane >= 3 ? lane - 3 : lane) * 10);             // up 3
    CHECK(results[32 + lane] == (lane + 5 <= 31 ? lane + 5 : lane) * 10);   // down 5
    CHECK(results[64 + lane] == (lane + 5 <= 31));                          // in range
    CHECK(results[96 + lane] == 70);                                        // idx 7
    CHECK(results[128 + lane] == ((lane & ~7) + 2) * 10);                   // idx 2, width 8
    CHECK(static_cast<uint32_t>(results[160 + lane]) == ballot);            // ballot
    CHECK(results[192 + lane] == 1 + 2);                                    // all, any, not uni
  }
  // A warp that exits as a whole does not hold up a barrier.
  Objects warpExit;
  REQUIRE_OK(runEmulated(warpExit, "warp_exit"));
  std::vector<float> y = outputOf<float>(warpExit);
  CHECK(y.size() == 64 && y[0] == 2 && y[31] == 2);
  // The barrier orders the writes and reads of shared memory.
  Objects synced;
  REQUIRE_OK(runEmulated(synced, "synced_shift", iota(64)));
  y = outputOf<float>(synced);
  CHECK(y.size() == 64 && y[0] == 1 && y[62] == 63 && y[63] == 0);
}

void testEmulatedErrors() {
  Environment environment;
  environment.set("NNC_CUDA_EMULATED_CHECK", nullptr);
  struct Case {
    const char *function;
    const char *message;
  } cases[] = {
      {"early_exit",
       "failed with code 719: kernel 'early_exit' (grid 1x1x1, block 64x1x1, 0 dynamic shared "
       "bytes): block (0,0,0), barrier divergence: thread (16,0,0) waits at barrier 0 (call site "
       "1), which thread (0,0,0) of the same warp exited without reaching (__syncthreads must be "
       "reached by every thread of a warp)"},
      {"two_barriers",
       "kernel 'two_barriers' (grid 1x1x1, block 64x1x1, 0 dynamic shared bytes): block "
       "(0,0,0), barrier divergence: thread (0,0,0) waits at barrier 0 (call site 3) while "
       "thread (32,0,0) waits at barrier 0 (call site 4)"},
      {"divided_warp",
       "kernel 'divided_warp' (grid 1x1x1, block 32x1x1, 0 dynamic shared bytes): block "
       "(0,0,0), warp divergence: thread (0,0,0) waits at shfl.sync.bfly (member mask "
       "0xffffffff) for thread (16,0,0), which waits at barrier 0"},
      {"oversized",
       "failed with code 1: kernel 'block_sum' (grid 1x1x1, block 256x1x1, 0 dynamic shared "
       "bytes): block 256x1x1 is outside the launch bounds the kernel's code was compiled for "
       "(block 128x1x1 to 128x1x1)"},
  };
  for (const Case &c : cases) {
    Objects objects;
    EXPECT_STATUS(runEmulated(objects, c.function, iota(256)), NNC_STATUS_INTERNAL, c.message);
    // A failed run leaves no result to read.
    nnc_tensor_view_t view;
    EXPECT_STATUS(nnc_session_output(objects.session, 0, &view), NNC_STATUS_FAILED_PRECONDITION,
                  "has no value");
  }
}

void testEmulatedCheck() {
  Environment environment;
  // Run as it comes, the race goes unnoticed: the threads happen to run in
  // order, and each reads its neighbour's slot before it was written. (In
  // reversed order y[0] = 1.0f, whose first two bytes are zeros too.)
  environment.set("NNC_CUDA_EMULATED_CHECK", nullptr);
  {
    Objects objects;
    REQUIRE_OK(runEmulated(objects, "racy_shift", iota(64)));
    CHECK(outputOf<float>(objects)[0] == 0);
  }
  environment.set("NNC_CUDA_EMULATED_CHECK", "1");
  {
    Objects objects;
    EXPECT_STATUS(runEmulated(objects, "racy_shift", iota(64)), NNC_STATUS_INTERNAL,
                  "kernel 'racy_shift' (grid 1x1x1, block 64x1x1, 0 dynamic shared bytes): "
                  "the results depend on the order the threads run in: output 'y' differs at "
                  "byte 2 when they run in reversed order with poisoned shared memory (a race, "
                  "or a read of shared memory that no thread wrote)");
    CHECK(std::string(nnc_session_device(objects.session)) ==
          "cuda-emulated (kernels on the host CPU, 2 threads, each launch checked in reversed "
          "order)");
  }
  // Correct kernels pass the check, with the same results.
  Objects synced, reduce, main;
  REQUIRE_OK(runEmulated(synced, "synced_shift", iota(64)));
  CHECK(outputOf<float>(synced)[0] == 1);
  REQUIRE_OK(runEmulated(reduce, "reduce", iota(256)));
  CHECK(outputOf<float>(reduce) == std::vector<float>({8128, 24512}));
  REQUIRE_OK(main.open("main", 2, "cuda_module.so", "cuda-emulated"));
  CudaMain inputs;
  if (!inputs.bind(main))
    return;
  REQUIRE_OK(nnc_session_run(main.session));
  inputs.matches(main);
  // "0" turns the check off.
  environment.set("NNC_CUDA_EMULATED_CHECK", "0");
  Objects racy;
  REQUIRE_OK(runEmulated(racy, "racy_shift", iota(64)));
}

//===----------------------------------------------------------------------===//
// The trainer, with the training modules of modules/train_module.c
//===----------------------------------------------------------------------===//

/// The linear layer of train_module.c: y = x @ w + b, x 4x3, w 3x2, b 2.
constexpr int kRows = 4, kIn = 3, kOut = 2;
constexpr double kLearningRate = 0.1, kMomentum = 0.9;
const float kBatchX[kRows * kIn] = {0.5f, -1, 2, 1.5f, 0.25f, -0.5f, -2, 1, 0.75f, 1, 1, -1};
const float kBatchLabels[kRows * kOut] = {1, -1, 0.5f, 2, -1.5f, 0.25f, 0, 1};
const float kInitialW[kIn * kOut] = {0.125f, -0.125f, 0.375f, 0.125f, 0.625f, 0.375f};
const float kInitialB[kOut] = {0.5f, -0.25f};

/// The layer's parameters in double, for the closed-form updates.
struct Linear {
  std::vector<double> w{kInitialW, kInitialW + kIn * kOut}, b{kInitialB, kInitialB + kOut};

  std::vector<double> forward() const {
    std::vector<double> y(kRows * kOut);
    for (int n = 0; n < kRows; ++n)
      for (int m = 0; m < kOut; ++m) {
        y[n * kOut + m] = b[m];
        for (int k = 0; k < kIn; ++k)
          y[n * kOut + m] += kBatchX[n * kIn + k] * w[k * kOut + m];
      }
    return y;
  }
  /// The MSE loss on the batch; its gradients into gw and gb.
  double lossAndGradients(std::vector<double> &gw, std::vector<double> &gb) const {
    std::vector<double> y = forward(), dy(y.size());
    double loss = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      loss += (y[i] - kBatchLabels[i]) * (y[i] - kBatchLabels[i]) / y.size();
      dy[i] = 2 * (y[i] - kBatchLabels[i]) / y.size();
    }
    gw.assign(kIn * kOut, 0);
    gb.assign(kOut, 0);
    for (int n = 0; n < kRows; ++n)
      for (int m = 0; m < kOut; ++m) {
        gb[m] += dy[n * kOut + m];
        for (int k = 0; k < kIn; ++k)
          gw[k * kOut + m] += kBatchX[n * kIn + k] * dy[n * kOut + m];
      }
    return loss;
  }
};

bool near(double got, double expected) {
  return std::fabs(got - expected) <= 1e-6 + 1e-5 * std::fabs(expected);
}

bool allNear(const std::vector<float> &got, const std::vector<double> &expected) {
  if (got.size() != expected.size())
    return false;
  for (size_t i = 0; i < got.size(); ++i)
    if (!near(got[i], expected[i]))
      return false;
  return true;
}

/// A trainer on one of the training modules, its runtime and module.
struct TrainerObjects {
  nnc_runtime_t *runtime = nullptr;
  nnc_module_t *module = nullptr;
  nnc_trainer_t *trainer = nullptr;
  // The batch, copied so that a test may change it; views in step order.
  std::vector<float> x{kBatchX, kBatchX + kRows * kIn};
  std::vector<float> labels{kBatchLabels, kBatchLabels + kRows * kOut};
  nnc_tensor_view_t batch[2] = {};

  ~TrainerObjects() {
    nnc_trainer_release(trainer);
    nnc_module_release(module);
    nnc_runtime_release(runtime);
  }
  nnc_status_t open(const char *file = "train_module.so") {
    nnc_runtime_options_t options;
    nnc_runtime_options_initialize(&options);
    options.num_threads = 2;
    if (nnc_status_t status = nnc_runtime_create(&options, &runtime))
      return status;
    if (nnc_status_t status = nnc_module_load(modulePath(file).c_str(), &module))
      return status;
    if (nnc_status_t status = nnc_trainer_create(runtime, module, nullptr, &trainer))
      return status;
    batch[0] = viewOf(nnc_trainer_input(trainer, 0), x.data());
    batch[1] = viewOf(nnc_trainer_input(trainer, 1), labels.data());
    return nullptr;
  }
  std::vector<float> parameter(const char *name, size_t count) {
    std::vector<float> value(count);
    EXPECT_OK(nnc_trainer_read_parameter(trainer, name, value.data(), count * sizeof(float)));
    return value;
  }
  std::vector<float> w() { return parameter("fc.weight", kIn * kOut); }
  std::vector<float> b() { return parameter("fc.bias", kOut); }
};

std::string readFile(const std::string &path) {
  std::string contents;
  if (FILE *in = std::fopen(path.c_str(), "rb")) {
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), in)) > 0;)
      contents.append(buffer, n);
    std::fclose(in);
  }
  return contents;
}

/// The trainer's checkpoint, as bytes (written through a file in temp).
std::string checkpointOf(nnc_trainer_t *trainer, TempDir &temp) {
  std::string path = temp.path + "/snapshot.ckpt";
  temp.files.push_back(path);
  if (!EXPECT_OK(nnc_trainer_save_checkpoint(trainer, path.c_str())))
    return "";
  return readFile(path);
}

template <typename T>
void appendBytes(std::string &out, T value) {
  out.append(reinterpret_cast<const char *>(&value), sizeof(value));
}

/// The checkpoint of train_module.so as docs/training.md lays it out,
/// written independently of the runtime.
std::string expectedCheckpoint(const std::vector<float> &w, const std::vector<float> &b,
                               float step) {
  struct Tensor {
    std::string name;
    std::vector<int64_t> dims;
    std::vector<float> data;
  } tensors[] = {{"param:fc.weight", {kIn, kOut}, w},
                 {"param:fc.bias", {kOut}, b},
                 {"state:step", {}, {step}}};
  std::string signed_; // the bytes the signature hashes
  for (const Tensor &t : tensors) {
    signed_ += t.name + '\0';
    appendBytes<int32_t>(signed_, NNC_DTYPE_F32);
    appendBytes<uint32_t>(signed_, static_cast<uint32_t>(t.dims.size()));
    for (int64_t dim : t.dims)
      appendBytes<int64_t>(signed_, dim);
  }
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : signed_)
    hash = (hash ^ c) * 0x100000001b3ull;
  std::string out = "NNCCKPT1";
  appendBytes<uint64_t>(out, hash);
  appendBytes<uint32_t>(out, 3);
  for (const Tensor &t : tensors) {
    appendBytes<uint32_t>(out, static_cast<uint32_t>(t.name.size()));
    out += t.name;
    appendBytes<int32_t>(out, NNC_DTYPE_F32);
    appendBytes<uint32_t>(out, static_cast<uint32_t>(t.dims.size()));
    for (int64_t dim : t.dims)
      appendBytes<int64_t>(out, dim);
    appendBytes<uint64_t>(out, t.data.size() * sizeof(float));
    out.append(reinterpret_cast<const char *>(t.data.data()), t.data.size() * sizeof(float));
  }
  return out;
}

void testTrainerCreate() {
  TrainerObjects objects;
  REQUIRE_OK(objects.open());
  nnc_trainer_t *trainer = objects.trainer;
  CHECK(std::strcmp(nnc_trainer_device(trainer), "cpu") == 0);
  CHECK(nnc_trainer_steps(trainer) == 0);
  CHECK(nnc_trainer_input_count(trainer) == 2);
  CHECK(std::strcmp(nnc_trainer_input(trainer, 0)->name, "x") == 0);
  CHECK(std::strcmp(nnc_trainer_input(trainer, 1)->name, "labels") == 0);
  CHECK(nnc_trainer_input(trainer, 2) == nullptr && nnc_trainer_input(trainer, -1) == nullptr);

  CHECK(nnc_trainer_parameter_count(trainer) == 2);
  const nnc_tensor_info_t *w = nnc_trainer_parameter(trainer, 0);
  const nnc_tensor_info_t *b = nnc_trainer_parameter(trainer, 1);
  CHECK(std::strcmp(w->name, "fc.weight") == 0 && std::strcmp(b->name, "fc.bias") == 0);
  CHECK(w->dtype == NNC_DTYPE_F32 && w->rank == 2 && w->shape[0] == kIn && w->shape[1] == kOut);
  CHECK(w->element_count == 6 && w->byte_size == 24);
  CHECK(b->rank == 1 && b->shape[0] == kOut && b->byte_size == 8);
  CHECK(nnc_trainer_parameter(trainer, 2) == nullptr &&
        nnc_trainer_parameter(trainer, -1) == nullptr);
  // init's values.
  CHECK(objects.w() == std::vector<float>(kInitialW, kInitialW + 6));
  CHECK(objects.b() == std::vector<float>(kInitialB, kInitialB + 2));

  nnc_trainer_t *other = nullptr;
  EXPECT_STATUS(nnc_trainer_create(nullptr, objects.module, nullptr, &other),
                NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_create: runtime, module and out_trainer must not be NULL");
  EXPECT_STATUS(nnc_trainer_create(objects.runtime, objects.module, nullptr, nullptr),
                NNC_STATUS_INVALID_ARGUMENT, "must not be NULL");
  nnc_session_options_t options;
  nnc_session_options_initialize(&options);
  options.device = "cuda";
  EXPECT_STATUS(nnc_trainer_create(objects.runtime, objects.module, &options, &other),
                NNC_STATUS_INVALID_ARGUMENT,
                "train_module.so' was compiled for target 'cpu' and cannot run on device 'cuda'");
  options.device = nullptr;
  EXPECT_STATUS(nnc_trainer_create(objects.runtime, objects.module, &options, &other),
                NNC_STATUS_INVALID_ARGUMENT, "options.device must not be NULL");
  // The function option is not the trainer's to use.
  options.device = "cpu";
  options.function = "eval";
  REQUIRE_OK(nnc_trainer_create(objects.runtime, objects.module, &options, &other));
  CHECK(nnc_trainer_input_count(other) == 2);
  nnc_trainer_release(other);
  nnc_trainer_release(nullptr);
}

void testTrainerRefusesModules() {
  struct Case {
    const char *file;
    nnc_status_code_t code;
    const char *message;
  } cases[] = {
      {"test_module.so", NNC_STATUS_FAILED_PRECONDITION,
       "test_module.so' is not a training module: it has no function 'init', 'train_step', "
       "'loss_and_gradients', 'eval' (compile it with nnc --train)"},
      {"train_no_eval.so", NNC_STATUS_FAILED_PRECONDITION,
       "train_no_eval.so' is not a training module: it has no function 'eval' (compile it with "
       "nnc --train)"},
      {"train_no_labels.so", NNC_STATUS_INVALID_ARGUMENT,
       "train_no_labels.so' is inconsistent: function 'train_step' takes 'targets' last, which "
       "eval does not take: the labels must be called 'labels'"},
      {"train_grad_shape.so", NNC_STATUS_INVALID_ARGUMENT,
       "train_grad_shape.so' is inconsistent: function 'loss_and_gradients': 'grad:fc.weight' "
       "is f32 2x3 where train_step's 'param:fc.weight' is f32 3x2"},
      {"train_eval_order.so", NNC_STATUS_INVALID_ARGUMENT,
       "train_eval_order.so' is inconsistent: function 'eval' takes parameters 'param:fc.bias', "
       "'param:fc.weight' where train_step takes 'param:fc.weight', 'param:fc.bias'"},
      {"train_eval_state.so", NNC_STATUS_INVALID_ARGUMENT,
       "train_eval_state.so' is inconsistent: function 'eval' takes state "
       "'state:running:nosuch', which train_step does not take"},
      {"train_loss_shape.so", NNC_STATUS_INVALID_ARGUMENT,
       "train_loss_shape.so' is inconsistent: function 'train_step' returns 'loss' as f32 1, "
       "expected f32 scalar"},
  };
  for (const Case &c : cases) {
    TrainerObjects objects;
    EXPECT_STATUS(objects.open(c.file), c.code, c.message);
    CHECK(objects.trainer == nullptr);
  }
}

void testTrainerStep() {
  TrainerObjects objects;
  REQUIRE_OK(objects.open());
  nnc_trainer_t *trainer = objects.trainer;
  Linear reference;
  float previous = INFINITY;
  for (int step = 1; step <= 20; ++step) {
    float loss = -1;
    REQUIRE_OK(nnc_trainer_step(trainer, objects.batch, 2, &loss));
    std::vector<double> gw, gb;
    CHECK(near(loss, reference.lossAndGradients(gw, gb)));
    for (size_t i = 0; i < gw.size(); ++i)
      reference.w[i] -= kLearningRate * gw[i];
    for (size_t i = 0; i < gb.size(); ++i)
      reference.b[i] -= kLearningRate * gb[i];
    CHECK(allNear(objects.w(), reference.w) && allNear(objects.b(), reference.b));
    CHECK(loss < previous);
    CHECK(nnc_trainer_steps(trainer) == step);
    previous = loss;
  }
  REQUIRE_OK(nnc_trainer_step(trainer, objects.batch, 2, nullptr)); // the loss is optional
  CHECK(nnc_trainer_steps(trainer) == 21);
}

void testTrainerStepErrors() {
  TrainerObjects objects;
  REQUIRE_OK(objects.open());
  nnc_trainer_t *trainer = objects.trainer;
  TempDir temp;
  REQUIRE_OK(nnc_trainer_step(trainer, objects.batch, 2, nullptr));
  std::string before = checkpointOf(trainer, temp);
  float loss = -1;
  EXPECT_STATUS(nnc_trainer_step(trainer, objects.batch, 1, &loss), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_step: expected 2 inputs ('x', 'labels'), got 1");
  EXPECT_STATUS(nnc_trainer_step(trainer, objects.batch, 3, &loss), NNC_STATUS_INVALID_ARGUMENT,
                "expected 2 inputs ('x', 'labels'), got 3");
  EXPECT_STATUS(nnc_trainer_step(trainer, nullptr, 2, &loss), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_step: inputs is NULL");
  EXPECT_STATUS(nnc_trainer_step(nullptr, objects.batch, 2, &loss), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_step: trainer is NULL");
  nnc_tensor_view_t bad[2] = {objects.batch[0], objects.batch[1]};
  const int64_t transposed[] = {kOut, kRows};
  bad[1].shape = transposed;
  EXPECT_STATUS(nnc_trainer_step(trainer, bad, 2, &loss), NNC_STATUS_INVALID_ARGUMENT,
                "input 'labels': expected shape 4x2 (got 2x4)");
  bad[1] = objects.batch[1];
  bad[0].dtype = NNC_DTYPE_F64;
  EXPECT_STATUS(nnc_trainer_step(trainer, bad, 2, &loss), NNC_STATUS_INVALID_ARGUMENT,
                "input 'x': expected dtype f32 (got f64)");
  // The module fails midway, after writing its outputs: the step is undone.
  objects.x[0] = -999;
  EXPECT_STATUS(nnc_trainer_step(trainer, objects.batch, 2, &loss), NNC_STATUS_INTERNAL,
                "function 'train_step' of module '" NNC_TEST_MODULE_DIR
                "/train_module.so' failed with code 5");
  CHECK(loss == -1); // out-parameters are written only on success
  CHECK(nnc_trainer_steps(trainer) == 1);
  CHECK(checkpointOf(trainer, temp) == before);
  // ... and the next step goes on from where the last good one left off.
  objects.x[0] = kBatchX[0];
  Linear reference;
  std::vector<double> gw, gb;
  reference.lossAndGradients(gw, gb);
  for (size_t i = 0; i < gw.size(); ++i)
    reference.w[i] -= kLearningRate * gw[i];
  for (size_t i = 0; i < gb.size(); ++i)
    reference.b[i] -= kLearningRate * gb[i];
  REQUIRE_OK(nnc_trainer_step(trainer, objects.batch, 2, &loss));
  CHECK(near(loss, reference.lossAndGradients(gw, gb)));
  CHECK(nnc_trainer_steps(trainer) == 2);
}

void testTrainerMomentum() {
  TrainerObjects objects;
  REQUIRE_OK(objects.open("train_momentum.so"));
  Linear reference;
  std::vector<double> bufferW(kIn * kOut, 0), bufferB(kOut, 0);
  for (int step = 1; step <= 5; ++step) {
    float loss = -1;
    REQUIRE_OK(nnc_trainer_step(objects.trainer, objects.batch, 2, &loss));
    std::vector<double> gw, gb;
    CHECK(near(loss, reference.lossAndGradients(gw, gb)));
    for (size_t i = 0; i < gw.size(); ++i) {
      bufferW[i] = kMomentum * bufferW[i] + gw[i];
      reference.w[i] -= kLearningRate * bufferW[i];
    }
    for (size_t i = 0; i < gb.size(); ++i) {
      bufferB[i] = kMomentum * bufferB[i] + gb[i];
      reference.b[i] -= kLearningRate * bufferB[i];
    }
    CHECK(allNear(objects.w(), reference.w) && allNear(objects.b(), reference.b));
  }
}

void testTrainerGradients() {
  TrainerObjects objects;
  REQUIRE_OK(objects.open());
  nnc_trainer_t *trainer = objects.trainer;
  std::vector<float> gw(kIn * kOut), gb(kOut);
  EXPECT_STATUS(nnc_trainer_read_gradient(trainer, "fc.weight", gw.data(), 24),
                NNC_STATUS_FAILED_PRECONDITION,
                "nnc_trainer_read_gradient: no gradients (nnc_trainer_loss_and_gradients has not "
                "succeeded since the trainer was created or since it last failed)");
  float loss = -1;
  REQUIRE_OK(nnc_trainer_loss_and_gradients(trainer, objects.batch, 2, &loss));
  std::vector<double> expectedW, expectedB;
  CHECK(near(loss, Linear().lossAndGradients(expectedW, expectedB)));
  REQUIRE_OK(nnc_trainer_read_gradient(trainer, "fc.weight", gw.data(), 24));
  REQUIRE_OK(nnc_trainer_read_gradient(trainer, "fc.bias", gb.data(), 8));
  CHECK(allNear(gw, expectedW) && allNear(gb, expectedB));
  // Nothing moved.
  CHECK(objects.w() == std::vector<float>(kInitialW, kInitialW + 6));
  CHECK(nnc_trainer_steps(trainer) == 0);

  EXPECT_STATUS(nnc_trainer_read_gradient(trainer, "fc.bias", gb.data(), 4),
                NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_read_gradient: parameter 'fc.bias' (f32 2) has 8 bytes, got 4");
  EXPECT_STATUS(nnc_trainer_read_gradient(trainer, "fc.w", gb.data(), 8), NNC_STATUS_NOT_FOUND,
                "nnc_trainer_read_gradient: no parameter 'fc.w' (parameters: 'fc.weight', "
                "'fc.bias')");
  EXPECT_STATUS(nnc_trainer_read_gradient(trainer, "param:fc.bias", gb.data(), 8),
                NNC_STATUS_NOT_FOUND, "; names go without the 'param:' prefix");
  EXPECT_STATUS(nnc_trainer_read_gradient(trainer, "fc.bias", nullptr, 8),
                NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_read_gradient: trainer, name and data must not be NULL");
  EXPECT_STATUS(nnc_trainer_loss_and_gradients(trainer, objects.batch, 1, &loss),
                NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_loss_and_gradients: expected 2 inputs ('x', 'labels'), got 1");
  // A failed call leaves no gradients to read.
  EXPECT_STATUS(nnc_trainer_read_gradient(trainer, "fc.bias", gb.data(), 8),
                NNC_STATUS_FAILED_PRECONDITION, "no gradients");
  REQUIRE_OK(nnc_trainer_loss_and_gradients(trainer, objects.batch, 2, nullptr));
  EXPECT_OK(nnc_trainer_read_gradient(trainer, "fc.bias", gb.data(), 8));
}

void testTrainerEval() {
  TrainerObjects objects;
  REQUIRE_OK(objects.open());
  nnc_trainer_t *trainer = objects.trainer;
  nnc_tensor_view_t y;
  EXPECT_STATUS(nnc_trainer_eval_output(trainer, 0, &y), NNC_STATUS_FAILED_PRECONDITION,
                "nnc_trainer_eval_output: no results (nnc_trainer_eval has not succeeded since "
                "the trainer was created or since it last failed)");
  EXPECT_STATUS(nnc_trainer_eval(trainer, objects.batch, 2), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_eval: expected 1 inputs ('x'), got 2");
  REQUIRE_OK(nnc_trainer_eval(trainer, objects.batch, 1));
  REQUIRE_OK(nnc_trainer_eval_output(trainer, 0, &y));
  CHECK(y.dtype == NNC_DTYPE_F32 && y.rank == 2 && y.shape[0] == kRows && y.byte_size == 32);
  const float *values = static_cast<const float *>(y.data);
  CHECK(allNear(std::vector<float>(values, values + 8), Linear().forward()));
  EXPECT_STATUS(nnc_trainer_eval_output(trainer, 1, &y), NNC_STATUS_OUT_OF_RANGE,
                "output index 1 is out of range (function 'eval' has 1 outputs)");
  EXPECT_STATUS(nnc_trainer_eval_output(trainer, 0, nullptr), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_eval_output: trainer and out_view must not be NULL");

  // eval sees the parameters as the steps left them.
  REQUIRE_OK(nnc_trainer_step(trainer, objects.batch, 2, nullptr));
  Linear reference;
  std::vector<double> gw, gb;
  reference.lossAndGradients(gw, gb);
  for (size_t i = 0; i < gw.size(); ++i)
    reference.w[i] -= kLearningRate * gw[i];
  for (size_t i = 0; i < gb.size(); ++i)
    reference.b[i] -= kLearningRate * gb[i];
  REQUIRE_OK(nnc_trainer_eval(trainer, objects.batch, 1));
  REQUIRE_OK(nnc_trainer_eval_output(trainer, 0, &y));
  values = static_cast<const float *>(y.data);
  CHECK(allNear(std::vector<float>(values, values + 8), reference.forward()));
  EXPECT_STATUS(nnc_trainer_eval(trainer, nullptr, 1), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_eval: inputs is NULL");
  EXPECT_STATUS(nnc_trainer_eval_output(trainer, 0, &y), NNC_STATUS_FAILED_PRECONDITION,
                "no results");
}

void testTrainerParameters() {
  TrainerObjects objects;
  REQUIRE_OK(objects.open());
  nnc_trainer_t *trainer = objects.trainer;
  Linear reference;
  reference.w = {1, -1, 0.5, 0.25, -0.75, 2};
  std::vector<float> w(reference.w.begin(), reference.w.end());
  REQUIRE_OK(nnc_trainer_write_parameter(trainer, "fc.weight", w.data(), 24));
  CHECK(objects.w() == w); // bit for bit
  CHECK(objects.b() == std::vector<float>(kInitialB, kInitialB + 2));
  // The next step starts from the written values.
  float loss = -1;
  REQUIRE_OK(nnc_trainer_step(trainer, objects.batch, 2, &loss));
  std::vector<double> gw, gb;
  CHECK(near(loss, reference.lossAndGradients(gw, gb)));
  for (size_t i = 0; i < gw.size(); ++i)
    reference.w[i] -= kLearningRate * gw[i];
  CHECK(allNear(objects.w(), reference.w));
  // ... after which a write still lands in the current set.
  REQUIRE_OK(nnc_trainer_write_parameter(trainer, "fc.weight", w.data(), 24));
  CHECK(objects.w() == w);

  EXPECT_STATUS(nnc_trainer_write_parameter(trainer, "fc.weight", w.data(), 28),
                NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_write_parameter: parameter 'fc.weight' (f32 3x2) has 24 bytes, got "
                "28");
  EXPECT_STATUS(nnc_trainer_read_parameter(trainer, "fc.weight", w.data(), 20),
                NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_read_parameter: parameter 'fc.weight' (f32 3x2) has 24 bytes, got 20");
  EXPECT_STATUS(nnc_trainer_write_parameter(trainer, "bias", w.data(), 8), NNC_STATUS_NOT_FOUND,
                "nnc_trainer_write_parameter: no parameter 'bias' (parameters: 'fc.weight', "
                "'fc.bias')");
  EXPECT_STATUS(nnc_trainer_read_parameter(nullptr, "fc.bias", w.data(), 8),
                NNC_STATUS_INVALID_ARGUMENT, "must not be NULL");
  EXPECT_STATUS(nnc_trainer_write_parameter(trainer, nullptr, w.data(), 8),
                NNC_STATUS_INVALID_ARGUMENT, "must not be NULL");
}

void testTrainerCheckpoint() {
  TempDir temp;
  CHECK(!temp.path.empty());
  std::string path = temp.path + "/model.ckpt";
  temp.files.push_back(path);
  TrainerObjects objects;
  REQUIRE_OK(objects.open());
  nnc_trainer_t *trainer = objects.trainer;
  for (int i = 0; i < 3; ++i)
    REQUIRE_OK(nnc_trainer_step(trainer, objects.batch, 2, nullptr));
  std::vector<float> w = objects.w(), b = objects.b();
  REQUIRE_OK(nnc_trainer_save_checkpoint(trainer, path.c_str()));
  CHECK(readFile(path) == expectedCheckpoint(w, b, 3));
  CHECK(access((path + ".tmp").c_str(), F_OK) != 0); // renamed into place
  float fourth = -1, fifth = -1;
  REQUIRE_OK(nnc_trainer_step(trainer, objects.batch, 2, &fourth));
  REQUIRE_OK(nnc_trainer_step(trainer, objects.batch, 2, &fifth));
  CHECK(objects.w() != w);

  // Loading restores the parameters, the state and the step count exactly:
  // the same steps follow, bit for bit.
  REQUIRE_OK(nnc_trainer_load_checkpoint(trainer, path.c_str()));
  CHECK(nnc_trainer_steps(trainer) == 3);
  CHECK(objects.w() == w && objects.b() == b);
  float loss = -1;
  REQUIRE_OK(nnc_trainer_step(trainer, objects.batch, 2, &loss));
  CHECK(loss == fourth);
  REQUIRE_OK(nnc_trainer_step(trainer, objects.batch, 2, &loss));
  CHECK(loss == fifth && nnc_trainer_steps(trainer) == 5);

  // Into a fresh trainer of the same module, and over an existing file.
  TrainerObjects fresh;
  REQUIRE_OK(fresh.open());
  REQUIRE_OK(nnc_trainer_load_checkpoint(fresh.trainer, path.c_str()));
  CHECK(fresh.w() == w && nnc_trainer_steps(fresh.trainer) == 3);
  REQUIRE_OK(nnc_trainer_save_checkpoint(trainer, path.c_str()));
  CHECK(readFile(path) == expectedCheckpoint(objects.w(), objects.b(), 5));

  EXPECT_STATUS(nnc_trainer_save_checkpoint(trainer, "/nonexistent/model.ckpt"),
                NNC_STATUS_NOT_FOUND,
                "cannot create checkpoint '/nonexistent/model.ckpt': No such file or directory");
  EXPECT_STATUS(nnc_trainer_save_checkpoint(trainer, nullptr), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_save_checkpoint: trainer and path must not be NULL");
}

void testTrainerCheckpointErrors() {
  TempDir temp;
  CHECK(!temp.path.empty());
  TrainerObjects objects, momentum;
  REQUIRE_OK(objects.open());
  REQUIRE_OK(momentum.open("train_momentum.so"));
  nnc_trainer_t *trainer = objects.trainer;
  REQUIRE_OK(nnc_trainer_step(trainer, objects.batch, 2, nullptr));
  std::string good = checkpointOf(trainer, temp);
  CHECK(good.size() == 178);
  REQUIRE_OK(nnc_trainer_step(trainer, objects.batch, 2, nullptr));
  std::string state = checkpointOf(trainer, temp);

  // Every refused file leaves the trainer as it was.
  auto refused = [&](const std::string &contents, nnc_status_code_t code, const char *message) {
    std::string path = temp.write("bad.ckpt", contents);
    EXPECT_STATUS(nnc_trainer_load_checkpoint(trainer, path.c_str()), code, message);
    CHECK(nnc_trainer_steps(trainer) == 2);
    CHECK(checkpointOf(trainer, temp) == state);
  };
  refused("", NNC_STATUS_INVALID_ARGUMENT, "bad.ckpt' is empty");
  for (size_t size = 1; size < good.size(); ++size)
    refused(good.substr(0, size), NNC_STATUS_INVALID_ARGUMENT,
            "bad.ckpt' is truncated: it ends in");
  refused(good.substr(0, 60), NNC_STATUS_INVALID_ARGUMENT,
          "bad.ckpt' is truncated: it ends in the dims of tensor 'param:fc.weight' (at byte 60)");
  refused(good + "x", NNC_STATUS_INVALID_ARGUMENT,
          "bad.ckpt': has trailing data after its last tensor (1 bytes)");
  refused("NNCCKPT0" + good.substr(8), NNC_STATUS_INVALID_ARGUMENT,
          "bad.ckpt' is not an nnc checkpoint (it does not start with 'NNCCKPT1')");
  refused("{\"weights\": []}", NNC_STATUS_INVALID_ARGUMENT, "is not an nnc checkpoint");

  // The layout: magic, signature, count, then tensor 0's name length at 20,
  // name at 24 (15 bytes), dtype at 39, rank at 43, dims at 47, bytes at 63.
  auto patched = [&](size_t offset, const std::string &bytes) {
    std::string contents = good;
    contents.replace(offset, bytes.size(), bytes);
    return contents;
  };
  auto encoded = [](auto value) {
    return std::string(reinterpret_cast<const char *>(&value), sizeof(value));
  };
  refused(patched(8, std::string(1, static_cast<char>(good[8] ^ 1))), NNC_STATUS_INVALID_ARGUMENT,
          "bad.ckpt' belongs to another model or optimizer (signature 0x");
  refused(patched(16, encoded(uint32_t{4})), NNC_STATUS_INVALID_ARGUMENT,
          "bad.ckpt': holds 4 tensors, expected 3");
  refused(patched(20, encoded(uint32_t{1u << 30})), NNC_STATUS_INVALID_ARGUMENT,
          "bad.ckpt': tensor 0 has a name of 1073741824 bytes, expected 'param:fc.weight'");
  refused(patched(38, "x"), NNC_STATUS_INVALID_ARGUMENT,
          "bad.ckpt': tensor 0 is 'param:fc.weighx', expected 'param:fc.weight'");
  refused(patched(39, encoded(int32_t{NNC_DTYPE_F64})), NNC_STATUS_INVALID_ARGUMENT,
          "bad.ckpt': tensor 'param:fc.weight' is f64 (11), expected f32");
  refused(patched(43, encoded(uint32_t{1})), NNC_STATUS_INVALID_ARGUMENT,
          "bad.ckpt': tensor 'param:fc.weight' has rank 1, expected 2 (3x2)");
  refused(patched(47, encoded(int64_t{2})), NNC_STATUS_INVALID_ARGUMENT,
          "bad.ckpt': tensor 'param:fc.weight' has shape 2x2, expected 3x2");
  refused(patched(63, encoded(uint64_t{28})), NNC_STATUS_INVALID_ARGUMENT,
          "bad.ckpt': tensor 'param:fc.weight' holds 28 bytes, expected 24");
  // Another optimizer's checkpoint of the same layer.
  refused(checkpointOf(momentum.trainer, temp), NNC_STATUS_INVALID_ARGUMENT,
          "bad.ckpt' belongs to another model or optimizer");

  EXPECT_STATUS(nnc_trainer_load_checkpoint(trainer, "/nonexistent/model.ckpt"),
                NNC_STATUS_NOT_FOUND,
                "cannot open checkpoint '/nonexistent/model.ckpt': No such file or directory");
  EXPECT_STATUS(nnc_trainer_load_checkpoint(trainer, temp.path.c_str()),
                NNC_STATUS_INVALID_ARGUMENT, "' is not a regular file");
  EXPECT_STATUS(nnc_trainer_load_checkpoint(nullptr, "x"), NNC_STATUS_INVALID_ARGUMENT,
                "nnc_trainer_load_checkpoint: trainer and path must not be NULL");
  CHECK(nnc_trainer_steps(trainer) == 2 && checkpointOf(trainer, temp) == state);
  // The good one still loads.
  std::string path = temp.write("good.ckpt", good);
  REQUIRE_OK(nnc_trainer_load_checkpoint(trainer, path.c_str()));
  CHECK(nnc_trainer_steps(trainer) == 1 && checkpointOf(trainer, temp) == good);
}

void testTrainerCppWrapper() {
  nnc::Result<nnc::Runtime> runtime = nnc::Runtime::create(1);
  nnc::Result<nnc::Module> module = nnc::Module::load(modulePath("train_module.so").c_str());
  nnc::Result<nnc::Module> plain = nnc::Module::load(modulePath("test_module.so").c_str());
  if (!runtime.ok() || !module.ok() || !plain.ok())
    return;
  nnc::Result<nnc::Trainer> refused = nnc::Trainer::create(*runtime, *plain);
  CHECK(refused.status().code() == NNC_STATUS_FAILED_PRECONDITION);
  nnc::Result<nnc::Trainer> created = nnc::Trainer::create(*runtime, *module);
  if (!created.ok())
    return;
  nnc::Trainer trainer = std::move(*created);
  // The trainer keeps the runtime and the module alive.
  *runtime = nnc::Runtime();
  *module = nnc::Module();
  CHECK(std::strcmp(trainer.device(), "cpu") == 0);
  CHECK(trainer.inputCount() == 2 && std::strcmp(trainer.input(1)->name, "labels") == 0);
  CHECK(trainer.parameterCount() == 2 && std::strcmp(trainer.parameter(1)->name, "fc.bias") == 0);
  std::vector<float> x(kBatchX, kBatchX + 12), labels(kBatchLabels, kBatchLabels + 8);
  nnc_tensor_view_t batch[] = {nnc::viewOf(*trainer.input(0), x.data(), 48),
                               nnc::viewOf(*trainer.input(1), labels.data(), 32)};
  std::vector<double> gw, gb;
  double expected = Linear().lossAndGradients(gw, gb);
  nnc::Result<float> loss = trainer.lossAndGradients(batch, 2);
  CHECK(loss.ok() && near(*loss, expected));
  float grad[2];
  CHECK(trainer.readGradient("fc.bias", grad, sizeof(grad)).ok() && near(grad[0], gb[0]));
  loss = trainer.step(batch, 2);
  CHECK(loss.ok() && near(*loss, expected) && trainer.steps() == 1);
  CHECK(trainer.step(batch, 1).status().code() == NNC_STATUS_INVALID_ARGUMENT);
  CHECK(trainer.eval(batch, 1).ok());
  nnc::Result<nnc_tensor_view_t> y = trainer.evalOutput(0);
  CHECK(y.ok() && y->byte_size == 32);
  CHECK(trainer.evalOutput(3).status().code() == NNC_STATUS_OUT_OF_RANGE);
  float bias[2] = {3, 4}, read[2] = {};
  CHECK(trainer.writeParameter("fc.bias", bias, sizeof(bias)).ok());
  CHECK(trainer.readParameter("fc.bias", read, sizeof(read)).ok() && read[1] == 4);
  TempDir temp;
  std::string path = temp.path + "/wrapper.ckpt";
  temp.files.push_back(path);
  CHECK(trainer.saveCheckpoint(path.c_str()).ok());
  CHECK(trainer.step(batch, 2).ok() && trainer.steps() == 2);
  CHECK(trainer.loadCheckpoint(path.c_str()).ok() && trainer.steps() == 1);
  CHECK(trainer.readParameter("fc.bias", read, sizeof(read)).ok() && read[0] == 3);
  CHECK(trainer.loadCheckpoint("/nonexistent.ckpt").code() == NNC_STATUS_NOT_FOUND);
}

struct Test {
  const char *name;
  void (*run)();
};

const Test kTests[] = {
    {"status", testStatus},
    {"dtypes", testDtypes},
    {"runtime", testRuntime},
    {"module-introspection", testModuleIntrospection},
    {"module-load-errors", testModuleLoadErrors},
    {"module-relative-path", testModuleRelativePath},
    {"session-create", testSessionCreate},
    {"bind-errors", testBindErrors},
    {"run", testRun},
    {"dynamic dims", testDynamicDims},
    {"shape inputs", testShapeInputs},
    {"aliasing", testAliasing},
    {"profile", testProfile},
    {"run-failure", testRunFailure},
    {"scalars-and-outputs-by-name", testScalarsAndOutputsByName},
    {"all-dtypes", testAllDtypes},
    {"parallel-for", testParallelFor},
    {"release-order", testReleaseOrder},
    {"concurrent-sessions", testConcurrentSessions},
    {"strings", testStrings},
    {"string-case", testStringCase},
    {"string-numbers", testStringNumbers},
    {"string-devices", testStringDevices},
    {"string-concurrent-sessions", testStringConcurrentSessions},
    {"cuda-run", testCudaRun},
    {"cuda-device-memory", testCudaDeviceMemory},
    {"cuda-profile", testCudaProfile},
    {"cuda-image-choice", testCudaImageChoice},
    {"cuda-unavailable", testCudaUnavailable},
    {"cuda-device-mismatch", testCudaDeviceMismatch},
    {"cuda-driver-failures", testCudaDriverFailures},
    {"cuda-jit-log", testCudaJitLog},
    {"cuda-launches", testCudaLaunches},
    {"cuda-without-graphs", testCudaWithoutGraphs},
    {"cuda-concurrent-sessions", testCudaConcurrentSessions},
    {"cuda-real-driver", testCudaRealDriver},
    {"emulated-run", testEmulatedRun},
    {"emulated-device-memory", testEmulatedDeviceMemory},
    {"emulated-collectives", testEmulatedCollectives},
    {"emulated-errors", testEmulatedErrors},
    {"emulated-check", testEmulatedCheck},
    {"cpp-wrapper", testCppWrapper},
    {"trainer-create", testTrainerCreate},
    {"trainer-refuses-modules", testTrainerRefusesModules},
    {"trainer-step", testTrainerStep},
    {"trainer-step-errors", testTrainerStepErrors},
    {"trainer-momentum", testTrainerMomentum},
    {"trainer-gradients", testTrainerGradients},
    {"trainer-eval", testTrainerEval},
    {"trainer-parameters", testTrainerParameters},
    {"trainer-checkpoint", testTrainerCheckpoint},
    {"trainer-checkpoint-errors", testTrainerCheckpointErrors},
    {"trainer-cpp-wrapper", testTrainerCppWrapper},
};

} // namespace

/// Runs every test, or those named on the command line.
int main(int argc, char **argv) {
  if (argc == 2 && std::strcmp(argv[1], "--strings-io") == 0)
    return stringsIo();
  int passed = 0, failed = 0, skips = 0;
  for (const Test &test : kTests) {
    bool named = argc == 1;
    for (int i = 1; i < argc; ++i)
      named |= std::strcmp(argv[i], test.name) == 0;
    if (!named)
      continue;
    testOk = true;
    skipped.clear();
    test.run();
    if (testOk && !skipped.empty()) {
      std::printf("SKIP: %s (%s)\n", test.name, skipped.c_str());
      ++skips;
      continue;
    }
    std::printf("%s: %s\n", testOk ? "PASS" : "FAIL", test.name);
    ++(testOk ? passed : failed);
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skips);
  return failed ? 1 : 0;
}
