//===- Training.cpp - nnc-run's modes for training modules ---------------===//

#include "tools/nnc-run/Training.h"

#include "tools/nnc-run/HostTensor.h"

#include "nnc/runtime.hpp"

#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace nnc::run;

namespace {

/// A trainer, what it needs alive, and the batch bound to it.
struct Training {
  nnc::Runtime runtime;
  nnc::Module module;
  nnc::Trainer trainer;
  std::vector<HostTensor> batch; // the model's inputs, then the labels (if separate)
  std::vector<nnc_tensor_view_t> views;
};

/// "input_0.pb 'x', input_1.pb 'labels'": which file holds which input.
std::string batchLayout(const nnc::Trainer &trainer) {
  std::string layout;
  for (int32_t i = 0; i < trainer.inputCount(); ++i)
    layout += (i ? ", input_" : "input_") + std::to_string(i) + ".pb '" +
              trainer.input(i)->name + "'";
  return layout;
}

/// Creates the trainer and reads the batch; returns an error message or "".
std::string open(const TrainingOptions &options, Training &out) {
  nnc::Result<nnc::Runtime> runtime = nnc::Runtime::create(options.threads);
  if (!runtime.ok())
    return runtime.status().message();
  out.runtime = std::move(*runtime);
  nnc::Result<nnc::Module> module = nnc::Module::load(options.module.c_str());
  if (!module.ok())
    return module.status().message();
  out.module = std::move(*module);
  nnc::Result<nnc::Trainer> trainer =
      nnc::Trainer::create(out.runtime, out.module, options.device.c_str());
  if (!trainer.ok())
    return trainer.status().message();
  out.trainer = std::move(*trainer);

  int32_t count = out.trainer.inputCount();
  std::string layout = std::string(" (the batch is the model's inputs") +
                       (out.trainer.hasLabels() ? ", then the labels: " : ": ") +
                       batchLayout(out.trainer) + ")";
  std::string extra = options.batch + "/input_" + std::to_string(count) + ".pb";
  if (exists(extra))
    return "'" + extra + "' is one input too many" + layout;
  out.batch.resize(count); // bound in place: never resized again
  for (int32_t i = 0; i < count; ++i) {
    const nnc_tensor_info_t &info = *out.trainer.input(i);
    std::string path = options.batch + "/input_" + std::to_string(i) + ".pb";
    if (!exists(path))
      return "missing '" + path + "' for '" + info.name + "'" + layout;
    HostTensor &tensor = out.batch[i];
    std::string message = readTensorFor(path, info, "input '" + std::string(info.name) +
                                                        "' of the batch",
                                        "the file holds", tensor);
    if (!message.empty())
      return message;
    out.views.push_back(tensor.view());
  }
  return "";
}

std::string threadsString(const nnc::Runtime &runtime) {
  int32_t threads = runtime.numThreads();
  return std::to_string(threads) + (threads == 1 ? " thread" : " threads");
}

/// A reference tensor for the loss or a gradient, checked against what the
/// trainer produces: found (or not) and shaped like info. Returns an error
/// message or "".
std::string readReference(const std::string &path, const nnc_tensor_info_t &info,
                          const std::string &what, HostTensor &tensor, bool &found) {
  found = exists(path);
  if (!found)
    return "";
  return readTensorFor(path, info, what, "the reference is", tensor);
}

/// The parameter names that DIR/grad_<name>.pb files refer to, in directory
/// order; false with message set when DIR cannot be read.
bool gradientFiles(const std::string &dir, std::vector<std::string> &names,
                   std::string &message) {
  DIR *stream = opendir(dir.c_str());
  if (!stream) {
    message = "cannot read directory '" + dir + "': " + std::strerror(errno);
    return false;
  }
  while (const dirent *entry = readdir(stream)) {
    std::string file = entry->d_name;
    if (file.size() > 8 && file.compare(0, 5, "grad_") == 0 &&
        file.compare(file.size() - 3, 3, ".pb") == 0)
      names.push_back(file.substr(5, file.size() - 8));
  }
  closedir(stream);
  std::sort(names.begin(), names.end()); // directory order is arbitrary
  return true;
}

/// One result of loss_and_gradients: the loss, then each parameter's
/// gradient, as bytes.
std::vector<std::vector<unsigned char>> results(nnc::Trainer &trainer, float loss,
                                                std::string &message) {
  std::vector<std::vector<unsigned char>> out;
  auto *bytes = reinterpret_cast<const unsigned char *>(&loss);
  out.emplace_back(bytes, bytes + sizeof(loss));
  for (int32_t i = 0; i < trainer.parameterCount(); ++i) {
    const nnc_tensor_info_t &info = *trainer.parameter(i);
    out.emplace_back(info.byte_size);
    if (nnc::Status status = trainer.readGradient(info.name, out.back().data(), info.byte_size);
        !status.ok()) {
      message = status.message();
      return {};
    }
  }
  return out;
}

/// Every parameter's value, as bytes.
std::vector<std::vector<unsigned char>> parameters(nnc::Trainer &trainer) {
  std::vector<std::vector<unsigned char>> out;
  for (int32_t i = 0; i < trainer.parameterCount(); ++i) {
    const nnc_tensor_info_t &info = *trainer.parameter(i);
    out.emplace_back(info.byte_size);
    // Cannot fail: the name and size are the trainer's own.
    nnc::Status status = trainer.readParameter(info.name, out.back().data(), info.byte_size);
    (void)status;
  }
  return out;
}
} // namespace

int nnc::run::checkGradients(const TrainingOptions &options) {
  Training training;
  if (std::string message = open(options, training); !message.empty())
    return error(message);
  nnc::Trainer &trainer = training.trainer;

  // The references, read before running so that a bad file is reported
  // early. A missing one fails the check (exit code 1), as a mismatch does.
  static const int64_t kNoDims[1] = {0};
  const nnc_tensor_info_t lossInfo = {"loss", NNC_DTYPE_F32, 0, kNoDims, 1, sizeof(float)};
  int32_t tensors = trainer.parameterCount() + 1;
  std::vector<HostTensor> references(tensors);
  std::vector<std::string> paths(tensors);
  std::vector<bool> found(tensors);
  for (int32_t i = 0; i < tensors; ++i) {
    const nnc_tensor_info_t &info = i == 0 ? lossInfo : *trainer.parameter(i - 1);
    paths[i] = options.batch + (i == 0 ? "/loss.pb" : "/grad_" + std::string(info.name) + ".pb");
    std::string what = i == 0 ? "the loss" : "the gradient of '" + std::string(info.name) + "'";
    bool present;
    if (std::string message = readReference(paths[i], info, what, references[i], present);
        !message.empty())
      return error(message);
    found[i] = present;
  }
  std::vector<std::string> gradientNames, unknown;
  std::string message;
  if (!gradientFiles(options.batch, gradientNames, message))
    return error(message);
  for (const std::string &name : gradientNames) {
    bool known = false;
    for (int32_t i = 0; i < trainer.parameterCount(); ++i)
      known |= name == trainer.parameter(i)->name;
    if (!known)
      unknown.push_back(name);
  }

  std::printf("nnc-run: '%s' loss_and_gradients on %s, %s, batch '%s'\n", options.module.c_str(),
              trainer.device(), threadsString(training.runtime).c_str(), options.batch.c_str());
  std::string precision = training.module.precision();
  Tolerance tolerance = defaultTolerance(precision, true, options.tolerance);
  if (precision != "f32")
    std::printf("nnc-run: products in %s on the tensor cores (tolerance atol %g, rtol %g)\n",
                precision.c_str(), tolerance.atol, tolerance.rtol);
  std::vector<std::vector<unsigned char>> pristineInputs, pristineParameters = parameters(trainer);
  for (const HostTensor &input : training.batch)
    pristineInputs.push_back(input.bytes);
  nnc::Result<float> loss =
      trainer.lossAndGradients(training.views.data(), static_cast<int32_t>(training.views.size()));
  if (!loss.ok())
    return error(loss.status().message());
  std::vector<std::vector<unsigned char>> first = results(trainer, *loss, message);
  if (!message.empty())
    return error(message);

  int failures = 0, missing = 0;
  for (int32_t i = 0; i < tensors; ++i) {
    const nnc_tensor_info_t &info = i == 0 ? lossInfo : *trainer.parameter(i - 1);
    std::string what = i == 0 ? "loss" : "gradient '" + std::string(info.name) + "'";
    if (!found[i]) {
      std::printf("%s (%s): MISMATCH: no reference '%s'\n", what.c_str(),
                  typeString(info.dtype, info.rank, info.shape).c_str(), paths[i].c_str());
      ++missing;
      continue;
    }
    if (!compareTensor(what, info, first[i].data(), references[i].bytes.data(), tolerance,
                       "MISMATCH"))
      ++failures;
  }
  for (const std::string &name : unknown) {
    std::printf("'%s/grad_%s.pb': MISMATCH: the module has no parameter '%s' (parameters: ",
                options.batch.c_str(), name.c_str(), name.c_str());
    for (int32_t i = 0; i < trainer.parameterCount(); ++i)
      std::printf("%s'%s'", i ? ", " : "", trainer.parameter(i)->name);
    std::printf(")\n");
    ++missing;
  }

  // A second run must give the same bits and leave inputs and parameters
  // as they were (compiled code is deterministic and never writes its
  // inputs).
  loss =
      trainer.lossAndGradients(training.views.data(), static_cast<int32_t>(training.views.size()));
  if (!loss.ok())
    return error("second run: " + std::string(loss.status().message()));
  std::vector<std::vector<unsigned char>> second = results(trainer, *loss, message);
  if (!message.empty())
    return error(message);
  int problems = 0;
  for (int32_t i = 0; i < tensors; ++i) {
    const nnc_tensor_info_t &info = i == 0 ? lossInfo : *trainer.parameter(i - 1);
    int64_t at = firstDifference(first[i].data(), second[i].data(), first[i].size());
    if (at < 0)
      continue;
    int64_t element = at / static_cast<int64_t>(nnc_dtype_size(info.dtype));
    std::string what = i == 0 ? "loss" : "gradient '" + std::string(info.name) + "'";
    std::printf("%s: FAIL: the second run differs from the first at %s: %s, then %s\n",
                what.c_str(), indexString(element, info.rank, info.shape).c_str(),
                elementString(info.dtype, first[i].data(), element).c_str(),
                elementString(info.dtype, second[i].data(), element).c_str());
    ++problems;
  }
  for (size_t i = 0; i < training.batch.size(); ++i) {
    if (training.batch[i].bytes != pristineInputs[i]) {
      std::printf("input %zu '%s': FAIL: written by the compiled code\n", i,
                  trainer.input(static_cast<int32_t>(i))->name);
      ++problems;
    }
  }
  std::vector<std::vector<unsigned char>> after = parameters(trainer);
  for (int32_t i = 0; i < trainer.parameterCount(); ++i) {
    if (after[i] != pristineParameters[i]) {
      std::printf("parameter '%s': FAIL: changed by loss_and_gradients\n",
                  trainer.parameter(i)->name);
      ++problems;
    }
  }
  if (problems == 0)
    std::printf("repeat run: loss and gradients identical, inputs and parameters unchanged\n");

  if (failures)
    std::printf("nnc-run: %d of %d tensors out of tolerance\n", failures, tensors);
  if (missing)
    std::printf("nnc-run: %d reference file(s) missing or for no parameter\n", missing);
  if (problems)
    std::printf("nnc-run: %d tensor(s) changed on a second run\n", problems);
  return failures || missing || problems ? kOutOfTolerance : 0;
}

int nnc::run::train(const TrainingOptions &options) {
  Training training;
  if (std::string message = open(options, training); !message.empty())
    return error(message);
  nnc::Trainer &trainer = training.trainer;
  std::printf("nnc-run: '%s' train_step on %s, %s, batch '%s'\n", options.module.c_str(),
              trainer.device(), threadsString(training.runtime).c_str(), options.batch.c_str());
  if (!options.loadCheckpoint.empty()) {
    if (nnc::Status status = trainer.loadCheckpoint(options.loadCheckpoint.c_str()); !status.ok())
      return error(status.message());
    std::printf("loaded checkpoint '%s' (step %lld)\n", options.loadCheckpoint.c_str(),
                static_cast<long long>(trainer.steps()));
  }
  std::vector<double> times;
  for (long i = 0; i < options.steps; ++i) {
    auto start = std::chrono::steady_clock::now();
    nnc::Result<float> loss =
        trainer.step(training.views.data(), static_cast<int32_t>(training.views.size()));
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                              start)
                        .count());
    if (!loss.ok())
      return error(loss.status().message());
    // Nine significant digits tell every f32 apart: losses compare with a
    // reference framework's at any tolerance.
    std::printf("step %lld loss %.9g\n", static_cast<long long>(trainer.steps()),
                static_cast<double>(*loss));
  }
  // The first step pays for first-touch page faults and (CUDA) graph capture.
  if (times.size() >= 3) {
    std::vector<double> timed(times.begin() + 1, times.end());
    std::sort(timed.begin(), timed.end());
    std::printf("step time: median %.3f ms, min %.3f ms (steps 2-%zu)\n", timed[timed.size() / 2],
                timed.front(), times.size());
  }
  if (!options.saveCheckpoint.empty()) {
    if (nnc::Status status = trainer.saveCheckpoint(options.saveCheckpoint.c_str()); !status.ok())
      return error(status.message());
    std::printf("saved checkpoint '%s' (step %lld)\n", options.saveCheckpoint.c_str(),
                static_cast<long long>(trainer.steps()));
  }
  return 0;
}
