//===- FuzzBind.cpp - fuzz binding inputs and outputs of a session --------===//
//
// Input: a sequence of binds, runs and output reads on a session of the
// runtime tests' hand-written module (FuzzBytes.h: the empty input binds
// every input as declared and runs once). Views take arbitrary dtypes, ranks,
// shapes and sizes, NULL data, and buffers shared between outputs and inputs;
// every buffer is exactly as long as its view says, so the sanitizer sees any
// access past it. The runtime must refuse a bad view with a status; a run
// that succeeds must leave every input unchanged and report outputs that
// match the function's declaration.
//
//===----------------------------------------------------------------------===//

#include "test/Fuzz/FuzzBytes.h"

#include "nnc/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <algorithm>
#include <vector>

using nnc::fuzz::Bytes;

namespace {
constexpr uint64_t kMaxBytes = 1 << 20;

void check(bool condition, const char *what) {
  if (!condition) {
    std::fprintf(stderr, "FuzzBind: %s\n", what);
    std::abort();
  }
}

/// A view's storage: its buffer and shape, owned by the caller (the target).
struct Bound {
  std::vector<unsigned char> data;
  std::vector<int64_t> shape;
  nnc_tensor_view_t view = {};
};

/// A view of `info`, corrupted by the input; `share`, when not NULL, is a
/// buffer the view may point into instead of its own.
void makeView(Bytes &in, const nnc_tensor_info_t &info, const Bound *share, Bound &out) {
  out.view.dtype = NNC_DTYPE_F32 ^ in.byte() ^ (info.dtype ^ NNC_DTYPE_F32);
  out.view.rank = in.near(info.rank);
  if (out.view.rank > 0 && out.view.rank <= 64) {
    out.shape.resize(out.view.rank);
    for (int32_t d = 0; d < out.view.rank; ++d)
      out.shape[d] = in.dim(d < info.rank ? info.shape[d] : 1);
  }
  out.view.shape = out.shape.empty() ? nullptr : out.shape.data();
  if (out.view.rank > 64)
    out.view.rank = 0; // a rank must come with that many dims
  int64_t size = static_cast<int64_t>(info.byte_size) + static_cast<int8_t>(in.byte());
  out.data.assign(static_cast<size_t>(std::max<int64_t>(size, 0)), 0);
  for (unsigned char &b : out.data)
    b = in.byte();
  out.view.byte_size = out.data.size();
  out.view.data = out.data.empty() ? nullptr : out.data.data();
  uint8_t where = in.byte();
  if (where == 1)
    out.view.data = nullptr;
  else if (where == 2 && share && share->view.byte_size >= out.view.byte_size)
    out.view.data = share->view.data; // an output over an input's buffer
}
/// Whether a run's output view has the declared dtype and rank, the
/// declared size of each static dim, and for a static output its bytes.
bool matchesDeclaration(const nnc_tensor_view_t &view, const nnc_tensor_info_t &info) {
  if (view.dtype != info.dtype || view.rank != info.rank)
    return false;
  for (int32_t d = 0; d < info.rank; ++d)
    if (info.shape[d] >= 0 && view.shape[d] != info.shape[d])
      return false;
  return info.element_count < 0 || view.byte_size == info.byte_size;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static nnc_runtime_t *runtime = [] {
    nnc_runtime_options_t options;
    nnc_runtime_options_initialize(&options);
    options.num_threads = 2;
    nnc_runtime_t *r = nullptr;
    check(nnc_runtime_create(&options, &r) == nullptr, "runtime");
    return r;
  }();
  static nnc_module_t *module = [] {
    nnc_module_t *m = nullptr;
    check(nnc_module_load(NNC_TEST_MODULE, &m) == nullptr, "cannot load " NNC_TEST_MODULE);
    return m;
  }();

  Bytes in(data, size);
  const nnc_function_t *function =
      nnc_module_function(module, in.byte() % nnc_module_function_count(module));
  nnc_session_options_t options;
  nnc_session_options_initialize(&options);
  options.function = nnc_function_name(function);
  nnc_session_t *session = nullptr;
  // That function breaks the promise on purpose, for nnc-run's check of it.
  if (std::strcmp(options.function, "writes_input") == 0)
    return 0;
  if (nnc_status_t status = nnc_session_create(runtime, module, &options, &session)) {
    nnc_status_free(status); // a function the runtime cannot run (dynamic shapes)
    return 0;
  }
  int32_t numInputs = nnc_function_input_count(function);
  int32_t numOutputs = nnc_function_output_count(function);
  // Deques of views keep every buffer alive and in place until the session goes.
  std::deque<Bound> inputs, outputs;
  std::vector<const Bound *> boundInputs(numInputs), boundOutputs(numOutputs);

  auto bind = [&](bool isInput, int32_t index) {
    const nnc_tensor_info_t *info = nullptr;
    if (index >= 0 && index < (isInput ? numInputs : numOutputs))
      info = isInput ? nnc_function_input(function, index) : nnc_function_output(function, index);
    nnc_tensor_info_t missing = {"", NNC_DTYPE_F32, 0, nullptr, 1, 4};
    Bound &bound = isInput ? inputs.emplace_back() : outputs.emplace_back();
    const Bound *share = numInputs > 0 ? boundInputs[in.byte() % numInputs] : nullptr;
    makeView(in, info ? *info : missing, share, bound);
    nnc_status_t status = isInput ? nnc_session_bind_input(session, index, &bound.view)
                                  : nnc_session_bind_output(session, index, &bound.view);
    if (status) {
      check(nnc_status_message(status)[0] != '\0', "a refusal must say why");
      nnc_status_free(status);
      return;
    }
    check(info != nullptr, "bound an index out of range");
    check(bound.view.dtype == info->dtype && bound.view.rank == info->rank &&
              bound.view.byte_size >= info->byte_size,
          "accepted a view unlike the declaration");
    (isInput ? boundInputs : boundOutputs)[index] = &bound;
  };

  auto run = [&]() {
    // Inputs as they were bound, to check the run did not write them.
    std::vector<std::vector<unsigned char>> before;
    for (const Bound *bound : boundInputs)
      before.push_back(bound ? bound->data : std::vector<unsigned char>());
    nnc_status_t status = nnc_session_run(session);
    if (status) {
      nnc_status_free(status);
      return;
    }
    for (int32_t i = 0; i < numInputs; ++i)
      check(boundInputs[i] && boundInputs[i]->data == before[i], "a run wrote an input");
    for (int32_t i = 0; i < numOutputs; ++i) {
      nnc_tensor_view_t view;
      check(nnc_session_output(session, i, &view) == nullptr, "no output after a run");
      const nnc_tensor_info_t *info = nnc_function_output(function, i);
      check(matchesDeclaration(view, *info), "output view");
      if (boundOutputs[i])
        check(view.data == boundOutputs[i]->view.data, "output not in the bound buffer");
    }
  };

  for (int32_t i = 0; i < numInputs; ++i)
    bind(true, i);
  for (int32_t i = 0; i < numOutputs; ++i)
    if (in.byte() != 0)
      bind(false, i);
  run();
  // Then more binds (indices near the valid ones), runs and reads.
  for (int step = 0; step < 32 && !in.empty(); ++step) {
    switch (in.byte() % 4) {
    case 0: bind(true, in.near(0)); break;
    case 1: bind(false, in.near(0)); break;
    case 2: run(); break;
    case 3: {
      nnc_tensor_view_t view;
      if (nnc_status_t status = nnc_session_output(session, in.near(0), &view))
        nnc_status_free(status);
      break;
    }
    }
  }
  nnc_session_release(session);
  return 0;
}
