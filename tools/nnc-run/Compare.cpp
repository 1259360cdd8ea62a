//===- Compare.cpp - results against references, for nnc-run -------------===//

#include "tools/nnc-run/Compare.h"

#include "tools/nnc-run/HostTensor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace nnc::run;

int nnc::run::error(const std::string &message) {
  std::fprintf(stderr, "nnc-run: error: %s\n", message.c_str());
  return kError;
}

std::string nnc::run::typeString(int32_t dtype, int32_t rank, const int64_t *shape) {
  return std::string(nnc_dtype_name(dtype)) + " " + shapeString(rank, shape);
}

std::string nnc::run::indexString(int64_t flat, int32_t rank, const int64_t *shape) {
  std::vector<int64_t> index(rank);
  for (int32_t d = rank - 1; d >= 0; --d) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string text = "[";
  for (int32_t d = 0; d < rank; ++d)
    text += (d ? ", " : "") + std::to_string(index[d]);
  return text + "]";
}

int64_t nnc::run::firstDifference(const unsigned char *a, const unsigned char *b, size_t size) {
  for (size_t i = 0; i < size; ++i)
    if (a[i] != b[i])
      return static_cast<int64_t>(i);
  return -1;
}

bool nnc::run::compareTensor(const std::string &what, const nnc_tensor_info_t &info,
                             const void *got, const void *expected, const Tolerance &tolerance,
                             const char *failure) {
  if (info.dtype == NNC_DTYPE_STRING) {
    int64_t firstBad = firstDifferentElement(info, got, expected);
    std::printf("%s (%s)", what.c_str(), typeString(info.dtype, info.rank, info.shape).c_str());
    if (firstBad < 0) {
      std::printf(": texts equal: ok\n");
      return true;
    }
    int64_t bad = 0;
    for (int64_t i = firstBad; i < info.element_count; ++i)
      bad += !sameElement(info.dtype, got, expected, i);
    std::printf(": %s\n  %lld of %lld texts differ; first at %s: got %s, expected %s\n", failure,
                static_cast<long long>(bad), static_cast<long long>(info.element_count),
                indexString(firstBad, info.rank, info.shape).c_str(),
                elementString(info.dtype, got, firstBad).c_str(),
                elementString(info.dtype, expected, firstBad).c_str());
    return false;
  }
  // Integers and bools must be equal; compared as bytes, exactly everywhere.
  bool exact = !isFloat(info.dtype);
  size_t elementSize = nnc_dtype_size(info.dtype);
  long double maxAbs = 0, maxRel = 0;
  int64_t bad = 0, nanMismatches = 0, firstBad = -1;
  for (int64_t i = 0; i < info.element_count; ++i) {
    long double g = elementAt(info.dtype, got, i);
    long double e = elementAt(info.dtype, expected, i);
    bool pass;
    if (exact) {
      pass = std::memcmp(static_cast<const unsigned char *>(got) + i * elementSize,
                         static_cast<const unsigned char *>(expected) + i * elementSize,
                         elementSize) == 0;
    } else if (std::isnan(g) || std::isnan(e)) {
      pass = std::isnan(g) && std::isnan(e);
      nanMismatches += !pass;
    } else if (std::isinf(g) || std::isinf(e)) {
      pass = g == e;
    } else {
      pass = std::fabs(g - e) <= tolerance.atol + tolerance.rtol * std::fabs(e);
    }
    if (!std::isnan(g) && !std::isnan(e)) {
      long double diff = g == e ? 0 : std::fabs(g - e);
      maxAbs = std::max(maxAbs, diff);
      if (e != 0)
        maxRel = std::max(maxRel, diff / std::fabs(e));
    }
    if (!pass && bad++ == 0)
      firstBad = i;
  }
  std::printf("%s (%s): max abs error %.3Lg, max rel error %.3Lg", what.c_str(),
              typeString(info.dtype, info.rank, info.shape).c_str(), maxAbs, maxRel);
  if (bad == 0) {
    std::printf(": ok\n");
    return true;
  }
  char limits[128];
  if (exact)
    std::snprintf(limits, sizeof(limits), "%s must match exactly", nnc_dtype_name(info.dtype));
  else
    std::snprintf(limits, sizeof(limits), "atol %g, rtol %g", tolerance.atol, tolerance.rtol);
  std::printf(": %s\n  %lld of %lld elements out of tolerance (%s)", failure,
              static_cast<long long>(bad), static_cast<long long>(info.element_count), limits);
  if (nanMismatches)
    std::printf(", %lld NaN mismatches", static_cast<long long>(nanMismatches));
  std::printf("; first at %s: got %s, expected %s\n",
              indexString(firstBad, info.rank, info.shape).c_str(),
              elementString(info.dtype, got, firstBad).c_str(),
              elementString(info.dtype, expected, firstBad).c_str());
  return false;
}

std::string nnc::run::readTensorFor(const std::string &path, const nnc_tensor_info_t &info,
                                    const std::string &what, const char *holder,
                                    HostTensor &tensor) {
  std::string message;
  if (!readTensorFile(path, tensor, message))
    return message;
  acceptBF16Bits(tensor, info.dtype);
  int32_t rank = static_cast<int32_t>(tensor.shape.size());
  // A dynamic dim (-1) takes any size.
  if (tensor.dtype != info.dtype || rank != info.rank ||
      !std::equal(tensor.shape.begin(), tensor.shape.end(), info.shape,
                  [](int64_t have, int64_t declared) { return declared == -1 || have == declared; }))
    return "'" + path + "': " + what + " is " + typeString(info.dtype, info.rank, info.shape) +
           " but " + holder + " " + typeString(tensor.dtype, rank, tensor.shape.data());
  return "";
}

Tolerance nnc::run::defaultTolerance(const std::string &precision, bool gradients,
                                     Tolerance given) {
  double loose = precision == "tf32" || precision == "f16" ? 1e-2 : precision == "bf16" ? 5e-2 : 0;
  Tolerance tolerance = given;
  if (tolerance.rtol < 0)
    tolerance.rtol = loose ? loose : gradients ? 1e-3 : 1e-4;
  if (tolerance.atol < 0)
    tolerance.atol = loose ? loose : 1e-5;
  return tolerance;
}
