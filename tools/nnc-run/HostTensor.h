//===- HostTensor.h - tensors in host memory for nnc-run --------*- C++ -*-===//
//
// The inputs nnc-run binds and the reference outputs it compares against:
// read from ONNX TensorProto files (.pb, as in ONNX test data sets) or made
// up from a seed, and read back element by element.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_TOOLS_NNC_RUN_HOSTTENSOR_H
#define NNC_TOOLS_NNC_RUN_HOSTTENSOR_H

#include "nnc/runtime.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace nnc::run {

struct HostTensor {
  int32_t dtype = 0; // nnc_dtype_t
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes; // dense, row-major, little-endian
  // NNC_DTYPE_STRING: the texts, which `bytes` addresses (a `const char *`
  // per element, as the runtime takes them; view() sets them).
  std::vector<std::string> strings;

  int64_t elementCount() const;
  /// A view for binding; the tensor must outlive the binding, unmoved.
  nnc_tensor_view_t view();
};

/// A copy of a tensor a run gave (`data` as the view describes it): for
/// strings, of their texts, which the runtime frees at the next run.
HostTensor copyOf(const nnc_tensor_info_t &info, const void *data);

/// Whether element `index` of `a` and of `b` (of `dtype`) are the same: the
/// same bytes, or for strings the same text.
bool sameElement(int32_t dtype, const void *a, const void *b, int64_t index);

/// The first element where `a` and `b` (of info's type and count) differ,
/// strings by their texts; -1 when none does.
int64_t firstDifferentElement(const nnc_tensor_info_t &info, const void *a, const void *b);

/// Reads an ONNX TensorProto file (raw_data or typed fields). On failure
/// returns false and sets error to a message naming the file.
bool readTensorFile(const std::string &path, HostTensor &tensor, std::string &error);

/// readTensorFile on a file's contents; `path` names it in errors.
bool readTensorBytes(const std::string &bytes, const std::string &path, HostTensor &tensor,
                     std::string &error);

/// Writes a tensor as an ONNX TensorProto file (raw_data) named `name`. On
/// failure returns false and sets error to a message naming the file.
bool writeTensorFile(const std::string &path, const std::string &name, int32_t dtype,
                     int32_t rank, const int64_t *shape, const void *data, uint64_t bytes,
                     std::string &error);

/// Whether a file (or anything) exists at path.
bool exists(const std::string &path);

/// ONNX 1.12's numpy helpers write bfloat16 test data as uint16 bit patterns:
/// takes those as the bf16 tensor a module expects.
void acceptBF16Bits(HostTensor &tensor, int32_t expectedDtype);

/// A tensor shaped like info with reproducible values: floats k/64 in [-1, 1],
/// integers in [0, 9], bools 0 or 1.
HostTensor randomTensor(const nnc_tensor_info_t &info, std::mt19937_64 &rng);

bool isFloat(int32_t dtype);
/// Element index of data (of type dtype), f16 and bf16 decoded, for float
/// comparisons and reports. Exact for every dtype where long double has a
/// 64-bit mantissa (x86-64); elsewhere 64-bit integers may round.
long double elementAt(int32_t dtype, const void *data, int64_t index);

/// Element index as text: integers exactly, floats with enough digits to
/// round-trip, strings quoted.
std::string elementString(int32_t dtype, const void *data, int64_t index);

/// "2x3", "scalar".
std::string shapeString(int32_t rank, const int64_t *shape);

} // namespace nnc::run

#endif // NNC_TOOLS_NNC_RUN_HOSTTENSOR_H
