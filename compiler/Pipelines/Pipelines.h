//===- Pipelines.h - nnc's stage pipelines ----------------------*- C++ -*-===//
//
// The one place where the order of passes is written down.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_PIPELINES_PIPELINES_H
#define NNC_COMPILER_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace nnc {

/// What the driver asks of the compiler.
struct CompileOptions {
  std::string target = "cpu";
};

/// Graph stage: `nn` in, `nn` out, with static shapes wherever the inputs allow.
void buildGraphPipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// Registers the pipelines with the pass registry (`--nnc-graph` in nnc-opt).
void registerPipelines();

} // namespace nnc

#endif // NNC_COMPILER_PIPELINES_PIPELINES_H
