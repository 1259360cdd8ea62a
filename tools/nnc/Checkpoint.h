//===- Checkpoint.h - trained weights back into an ONNX model --*- C++ -*-===//

#ifndef NNC_TOOLS_NNC_CHECKPOINT_H
#define NNC_TOOLS_NNC_CHECKPOINT_H

#include <onnx/onnx_pb.h>

#include <string>

namespace nnc {

/// Replaces the model's initializers by the `param:` tensors of the training
/// checkpoint at `path`. On failure returns false, sets `error` and leaves the
/// model unchanged.
bool applyCheckpoint(onnx::ModelProto &model, const std::string &path, std::string &error);

} // namespace nnc

#endif // NNC_TOOLS_NNC_CHECKPOINT_H
