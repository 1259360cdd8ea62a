//===- KernelReport.h - the kernels a model became (nnc --report) -*- C++ -*-===//
//
// After bufferization every function of a module is a sequence of kernels: on
// the CPU each top-level loop nest (a parallel region on the runtime's pool or
// a serial loop), on CUDA each top-level linalg op (one launch each). The
// report lists them in execution order with the ONNX nodes whose ops they
// hold, the floating-point operations they execute and the bytes of the
// buffers they read and write, and gives each a roofline estimate against a
// target's peak rates. The counts are read off the IR the code generator
// emits, so they show what fusion and tiling did, not what the graph implies.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_COMPILER_CODEGEN_COMMON_KERNELREPORT_H
#define NNC_COMPILER_CODEGEN_COMMON_KERNELREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace nnc {

struct KernelReport {
  std::string function; // the module function the kernel belongs to
  std::string kind;     // what the kernel's root op is: "parallel loop", "linalg.matmul", ...
  std::vector<std::string> nodes; // ONNX node names, in order of first appearance
  double flops = 0;     // floating-point operations (an FMA counts 2)
  double bytesRead = 0; // sizes of the distinct buffers (or views of them) it reads
  double bytesWritten = 0;
  bool exact = true;    // false when a loop bound or a size was only bounded
  // CUDA: the launch, when it was matched to the kernel.
  std::string launchName;
  std::optional<std::array<int64_t, 3>> grid, block;
  int64_t sharedBytes = 0;       // dynamic shared memory of the launch
  int64_t staticSharedBytes = 0; // shared memory the kernel declares
};

/// The peak rates estimates are made against.
struct PeakRates {
  double flopsPerSecond = 0; // 0: unknown
  double bytesPerSecond = 0; // 0: unknown
  std::string source;        // where the numbers come from, for the header
};

/// The kernels of a bufferized function's body, in execution order: each a
/// group of its top-level ops (a loop nest, with the values hoisted out of it
/// and the stores of what it computed in registers). nnc-profile-kernels
/// marks the same groups that the report describes.
std::vector<llvm::SmallVector<mlir::Operation *>> kernelGroups(mlir::Block &body);

/// The kernels of every function of a bufferized module (the --emit=buffers
/// IR). `nodeNames` are the model's node names: other names in locations
/// (initializers) are not nodes.
std::vector<KernelReport> collectKernels(mlir::ModuleOp module,
                                         const llvm::StringSet<> &nodeNames);

/// Matches the CUDA launches of each function (after the kernel pipeline:
/// gpu.launch_func ops) to the kernels, in order, and records grid, block and
/// shared memory (static and dynamic). Leaves kernels unmatched when the counts differ.
void attachCUDALaunches(mlir::ModuleOp module, std::vector<KernelReport> &kernels);

/// A roofline estimate: the longer of compute at peak and traffic at peak
/// bandwidth; nullopt when the rate it needs is unknown.
std::optional<double> estimateSeconds(const KernelReport &kernel, const PeakRates &peak);

/// The report as a table for people, or as JSON for tools.
void printKernelTable(llvm::raw_ostream &os, llvm::StringRef model, llvm::StringRef target,
                      const std::vector<KernelReport> &kernels, const PeakRates &peak);
void printKernelJSON(llvm::raw_ostream &os, llvm::StringRef model, llvm::StringRef target,
                     const std::vector<KernelReport> &kernels, const PeakRates &peak);

} // namespace nnc

#endif // NNC_COMPILER_CODEGEN_COMMON_KERNELREPORT_H
