//===- Pipelines.h - nnc's stage pipelines ----------------------*- C++ -*-===//
//
// The one place where the order of passes is written down. Each stage is a
// pipeline of its own so the driver can stop after any of them (--emit) and
// nnc-opt can run each on its own.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_PIPELINES_PIPELINES_H
#define NNC_COMPILER_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

#include <optional>
#include <string>
#include <vector>

namespace nnc {

/// What --train asks for (docs/training.md); the fields of nn-autodiff.
struct TrainOptions {
  std::string loss; // empty: the model's own when its first output is a scalar, else mse
  std::string optimizer = "sgd";
  double learningRate = 0.01, momentum = 0, weightDecay = 0;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  int64_t seed = 0;
  std::vector<std::string> freeze;
};

/// What the driver asks of the compiler.
struct CompileOptions {
  std::string target = "cpu";
  /// The CPU's vector registers (nnc::vectorUnitOf): width in bits, number.
  int64_t vectorBits = 512;
  int64_t vectorRegisters = 32;
  /// CUDA: the chips to emit PTX for, one image each.
  std::vector<std::string> cudaChips = {"sm_80", "sm_90"};
  /// CUDA: what contractions' products are computed in (f32, tf32, bf16, f16).
  std::string precision = "f32";
  /// Set: compile the training functions of the model instead of @main.
  std::optional<TrainOptions> train;
  /// Calls of the runtime's profile hook around each kernel (nnc --profile).
  bool profile = false;
};

/// Graph stage: `nn` in, `nn` out, with static shapes wherever the inputs
/// allow; with options.train, @main replaced by the training functions.
void buildGraphPipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// Lower stage: `nn` to linalg/tensor/arith/math on tensors.
void buildLowerPipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// CPU codegen, first half: tensors to buffers in one planned workspace.
void buildCPUBufferizePipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// CPU codegen, second half: buffers and loops to the LLVM dialect.
void buildCPULLVMPipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// CUDA codegen, first half: tensors to buffers in one planned workspace.
void buildCUDABufferizePipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// CUDA codegen, second half: buffers to kernel launches and PTX (in module
/// attributes), host code in the LLVM dialect.
void buildCUDAKernelPipeline(mlir::OpPassManager &pm, const CompileOptions &options);
void buildCUDAHostLLVMPipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// Registers the dialects nnc's pipelines produce, with the interface
/// implementations (bufferization) they rely on.
void registerCompilerDialects(mlir::DialectRegistry &registry);

/// Registers the pipelines with the pass registry (`--nnc-graph`, `--nnc-lower`,
/// `--nnc-cpu-bufferize`, `--nnc-cpu-llvm` in nnc-opt).
void registerPipelines();

} // namespace nnc

#endif // NNC_COMPILER_PIPELINES_PIPELINES_H
