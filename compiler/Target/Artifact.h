//===- Artifact.h - writing the compiled module -----------------*- C++ -*-===//
//
// Turns the LLVM-dialect module into LLVM IR, adds the ABI entry wrappers and
// the module descriptor of runtime/include/nnc/abi.h, and writes LLVM IR, an
// object file, or the linked shared library.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_TARGET_ARTIFACT_H
#define NNC_COMPILER_TARGET_ARTIFACT_H

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace nnc {

/// A function input or output as the runtime sees it.
struct TensorInfo {
  std::string name;
  int32_t dtype; // nnc_dtype_t
  std::vector<int64_t> shape; // -1 for a dynamic dim
};

/// An entry function of the module: `@<name>` in the LLVM-dialect module, whose
/// memref arguments are the inputs, then the outputs, then the workspace, and
/// for the CUDA target the device constants (constantsSize bytes).
/// A kernel of a function compiled for profiling (nnc_abi_kernel_t).
struct KernelInfo {
  std::string kind, nodes;
  double flops = 0, bytesRead = 0, bytesWritten = 0, estimatedSeconds = 0;
};

struct FunctionInfo {
  std::string name;
  std::vector<TensorInfo> inputs, outputs;
  uint64_t workspaceSize = 0;
  uint64_t constantsSize = 0;
  /// With dynamic dims: the messages of the shape function's checks.
  std::vector<std::string> checks;
  /// With dynamic dims: the inputs whose values the shape function reads.
  std::vector<int32_t> shapeInputs;
  /// The outputs whose dims only the run computes (abi.h).
  std::vector<int32_t> dataDependentOutputs;
  std::vector<KernelInfo> kernels; // set with nnc --profile

  /// Whether a dim is dynamic: the function then has a shape function
  /// `@<name>__shapes` (compiler/Codegen/Passes.td) and a prepare entry.
  bool dynamic() const;
};

/// The public functions of an `nn` module as the runtime will see them: name,
/// inputs and outputs (named by their `nn.name` attributes), in module order.
std::vector<FunctionInfo> describeFunctions(mlir::ModuleOp module);

struct ArtifactOptions {
  std::string target = "cpu";
  std::string cpu;      // empty: the host CPU
  std::string features; // extra target features; the host's with the host CPU
  int optLevel = 3;
  std::string linker;   // empty: ld.lld found next to LLVM's tools or on PATH
  std::string precision = "f32"; // CompileOptions::precision, recorded for the runtime
};

/// The vector registers of the CPU `options` names (the host's when none):
/// their width in bits and their number, which size the CPU schedules'
/// register tiles. Fails, with `error` set, on a CPU name LLVM does not know.
struct VectorUnit {
  int64_t bits = 512;
  int64_t registers = 32;
};
llvm::FailureOr<VectorUnit> vectorUnitOf(const ArtifactOptions &options, std::string &error);

enum class ArtifactKind { LLVMIR, Object, SharedLibrary };

/// Writes `module` (LLVM dialect) with the entry functions in `functions`.
/// For the CUDA target the module carries its kernels' PTX and names as the
/// attributes nnc-cuda-lower-launches sets, and its constants in the global
/// `@nnc_constants`. Errors are emitted on the module.
llvm::LogicalResult writeArtifact(mlir::ModuleOp module, const std::vector<FunctionInfo> &functions,
                                  const ArtifactOptions &options, ArtifactKind kind,
                                  const std::string &outputPath);

} // namespace nnc

#endif // NNC_COMPILER_TARGET_ARTIFACT_H
