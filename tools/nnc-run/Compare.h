//===- Compare.h - results against references, for nnc-run -----*- C++ -*-===//
//
// What nnc-run's modes share when they check results: element-wise
// comparison within a tolerance, the one-line reports, and the exit codes.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_TOOLS_NNC_RUN_COMPARE_H
#define NNC_TOOLS_NNC_RUN_COMPARE_H

#include "nnc/runtime.h"

#include <cstdint>
#include <string>

namespace nnc::run {

struct HostTensor;

/// Exit codes: 0 success, kOutOfTolerance when results disagree with the
/// references or between runs, kError for anything else.
constexpr int kOutOfTolerance = 1;
constexpr int kError = 2;

/// Prints "nnc-run: error: <message>"; returns kError.
int error(const std::string &message);

/// An element passes if |got - expected| <= atol + rtol * |expected|.
struct Tolerance {
  double rtol, atol;
};

/// The tolerance results of a module computing in `precision`
/// (nnc_module_precision) are compared with: `given`'s values where they are
/// set (not negative), else f32's rtol 1e-4 (1e-3 for `gradients`, which sum
/// the rounding of a whole backward pass) and atol 1e-5; products in tf32 or
/// f16 (about 1e-3 of each term) 1e-2 for both, in bf16 (8e-3) 5e-2.
Tolerance defaultTolerance(const std::string &precision, bool gradients, Tolerance given);

/// Compares a tensor shaped like info with its reference (integers and bools
/// exactly, NaN and inf only with themselves) and prints one line,
/// "<what> (f32 2x3): max abs error A, max rel error R: ok", or with
/// `failure` instead of ok and a second line naming the first bad element.
/// Returns whether every element passed.
bool compareTensor(const std::string &what, const nnc_tensor_info_t &info, const void *got,
                   const void *expected, const Tolerance &tolerance, const char *failure);

/// "[1, 2]" for a flat index into shape.
std::string indexString(int64_t flat, int32_t rank, const int64_t *shape);

/// "f32 2x3".
std::string typeString(int32_t dtype, int32_t rank, const int64_t *shape);

/// Reads `path` as the tensor `info` describes (bf16 bit patterns taken as
/// bf16). Returns "" or an error: unreadable, or of another type, worded
/// "'<path>': <what> is <info's type> but <holder> <the file's type>".
std::string readTensorFor(const std::string &path, const nnc_tensor_info_t &info,
                          const std::string &what, const char *holder, HostTensor &tensor);

/// The index of the first byte where a and b differ, or -1.
int64_t firstDifference(const unsigned char *a, const unsigned char *b, size_t size);

} // namespace nnc::run

#endif // NNC_TOOLS_NNC_RUN_COMPARE_H
