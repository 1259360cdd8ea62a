//===- Training.h - nnc-run's modes for training modules ---------*- C++ -*-===//
//
// --check-gradients and --train run a module compiled with nnc --train
// (docs/training.md) through the runtime's trainer, on one batch read from a
// directory: DIR/input_<i>.pb for the model's inputs in order, then the
// labels as the next input_<i>.pb.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_TOOLS_NNC_RUN_TRAINING_H
#define NNC_TOOLS_NNC_RUN_TRAINING_H

#include "tools/nnc-run/Compare.h"

#include <cstdint>
#include <string>

namespace nnc::run {

struct TrainingOptions {
  std::string module;
  std::string device;
  int32_t threads = 0;
  std::string batch; // the directory
  Tolerance tolerance{}; // --check-gradients
  long steps = 1;        // --train
  std::string loadCheckpoint, saveCheckpoint; // --train; empty: none
};

/// Runs loss_and_gradients twice on the batch and compares the loss and each
/// parameter's gradient with DIR/loss.pb and DIR/grad_<parameter>.pb, and the
/// second run with the first. Returns the exit code.
int checkGradients(const TrainingOptions &options);

/// Takes options.steps optimizer steps on the batch, printing each loss, with
/// a checkpoint loaded before and saved after when asked. Returns the exit
/// code.
int train(const TrainingOptions &options);

} // namespace nnc::run

#endif // NNC_TOOLS_NNC_RUN_TRAINING_H
