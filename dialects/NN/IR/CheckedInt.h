//===- CheckedInt.h - int64 size arithmetic that cannot wrap ----*- C++ -*-===//
//
// Dims, sizes, strides, pads, offsets and byte counts all come from model
// files, so any of them may be hostile. Arithmetic on them goes through
// CheckedInt: an overflow or a zero divisor leaves the result invalid instead
// of wrapping or trapping, and the caller reports it at the node or op.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_DIALECTS_NN_IR_CHECKEDINT_H
#define NNC_DIALECTS_NN_IR_CHECKEDINT_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace nnc {

/// An int64 value, or the reason it could not be computed. Once invalid, every
/// result computed from it stays invalid (with the first reason), so a whole
/// formula is written as usual and checked once:
///
///   CheckedInt out = (CheckedInt(in) + pad - (CheckedInt(k) - 1) * dilation - 1) / stride + 1;
///   if (!out.ok()) return fail("output size " + out.problem());
///
/// The left operand of the first operation must be a CheckedInt, or the
/// arithmetic happens on plain int64 first.
class CheckedInt {
public:
  enum class Error : uint8_t { None, Overflow, DivisionByZero };

  constexpr CheckedInt(int64_t value) : value(value) {}
  static constexpr CheckedInt invalid(Error error) {
    CheckedInt c(0);
    c.error = error;
    return c;
  }

  /// `x` truncated toward zero; invalid when NaN or outside int64.
  static CheckedInt fromDouble(double x) {
    if (!(x >= -0x1p63 && x < 0x1p63))
      return invalid(Error::Overflow);
    return (int64_t)x;
  }

  bool ok() const { return error == Error::None; }
  /// The value when valid.
  std::optional<int64_t> get() const {
    if (!ok())
      return std::nullopt;
    return value;
  }
  /// The value when valid, else `otherwise`.
  int64_t valueOr(int64_t otherwise) const { return ok() ? value : otherwise; }
  /// Why the value is invalid, phrased to follow the quantity's name in a
  /// diagnostic ("output size overflows int64"); empty when valid.
  llvm::StringRef problem() const {
    switch (error) {
    case Error::None: return "";
    case Error::Overflow: return "overflows int64";
    case Error::DivisionByZero: return "divides by zero";
    }
    return "";
  }

  friend CheckedInt operator+(CheckedInt a, CheckedInt b) {
    if (!a.ok() || !b.ok())
      return a.ok() ? b : a;
    int64_t r;
    if (llvm::AddOverflow(a.value, b.value, r))
      return invalid(Error::Overflow);
    return r;
  }
  friend CheckedInt operator-(CheckedInt a, CheckedInt b) {
    if (!a.ok() || !b.ok())
      return a.ok() ? b : a;
    int64_t r;
    if (llvm::SubOverflow(a.value, b.value, r))
      return invalid(Error::Overflow);
    return r;
  }
  friend CheckedInt operator*(CheckedInt a, CheckedInt b) {
    if (!a.ok() || !b.ok())
      return a.ok() ? b : a;
    int64_t r;
    if (llvm::MulOverflow(a.value, b.value, r))
      return invalid(Error::Overflow);
    return r;
  }
  /// C++ division (truncating toward zero).
  friend CheckedInt operator/(CheckedInt a, CheckedInt b) {
    if (!a.ok() || !b.ok())
      return a.ok() ? b : a;
    if (CheckedInt bad = checkDivisor(a.value, b.value); !bad.ok())
      return bad;
    return a.value / b.value;
  }
  /// Division rounding toward positive infinity (found by argument-dependent
  /// lookup: pass a CheckedInt).
  friend CheckedInt ceilDiv(CheckedInt a, CheckedInt b) {
    if (!a.ok() || !b.ok())
      return a.ok() ? b : a;
    if (CheckedInt bad = checkDivisor(a.value, b.value); !bad.ok())
      return bad;
    return llvm::divideCeilSigned(a.value, b.value);
  }
  CheckedInt &operator+=(CheckedInt b) { return *this = *this + b; }
  CheckedInt &operator-=(CheckedInt b) { return *this = *this - b; }
  CheckedInt &operator*=(CheckedInt b) { return *this = *this * b; }

private:
  static CheckedInt checkDivisor(int64_t a, int64_t b) {
    if (b == 0)
      return invalid(Error::DivisionByZero);
    if (b == -1 && a == std::numeric_limits<int64_t>::min())
      return invalid(Error::Overflow);
    return 0;
  }

  int64_t value;
  Error error = Error::None;
};

/// The product of `dims` (all static); invalid when it overflows. A zero dim
/// makes it 0 whatever the others are.
inline CheckedInt checkedProduct(llvm::ArrayRef<int64_t> dims) {
  if (llvm::is_contained(dims, 0))
    return 0;
  CheckedInt p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// Bytes per element of `element` in memory: i1 takes a byte, as in buffers.
inline int64_t elementBytes(mlir::Type element) {
  if (auto complex = llvm::dyn_cast<mlir::ComplexType>(element))
    return 2 * elementBytes(complex.getElementType());
  if (element.isIntOrFloat())
    return (element.getIntOrFloatBitWidth() + 7) / 8;
  return 8; // index and pointer-like types
}

/// `x` truncated toward zero and clamped to int64; NaN gives 0.
inline int64_t saturatingInt64(double x) {
  if (x != x)
    return 0;
  if (x >= 0x1p63)
    return std::numeric_limits<int64_t>::max();
  if (x < -0x1p63)
    return std::numeric_limits<int64_t>::min();
  return (int64_t)x;
}

/// The most dims a tensor may have (numpy's limit). Loop nests, affine maps
/// and index lists are built per dim, some quadratic in the rank, so an
/// unbounded rank from a model file would hang compilation.
constexpr int64_t kMaxRank = 64;

/// Why no tensor can have `shape` and `element`, or nullopt when one can: the
/// rank must be at most kMaxRank; dynamic dims aside, each dim must be
/// non-negative and the bytes of the static dims must fit in int64, so that
/// every byte offset into the tensor does (an empty tensor has none). The
/// reason reads after "has" ("tensor 'w' has a negative dim '-3'").
inline std::optional<std::string> tensorShapeProblem(llvm::ArrayRef<int64_t> shape,
                                                     mlir::Type element) {
  if ((int64_t)shape.size() > kMaxRank)
    return "rank " + std::to_string(shape.size()) + ", above the supported " +
           std::to_string(kMaxRank);
  llvm::SmallVector<int64_t> sizes{elementBytes(element)};
  std::string dims;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      dims += "x";
    if (mlir::ShapedType::isDynamic(d)) {
      dims += "?";
      continue;
    }
    if (d < 0)
      return "a negative dim '" + std::to_string(d) + "'";
    dims += std::to_string(d);
    sizes.push_back(d);
  }
  if (checkedProduct(sizes).ok())
    return std::nullopt;
  std::string type;
  llvm::raw_string_ostream os(type);
  os << element;
  return "more than 2^63 - 1 bytes (shape '" + dims + "' of '" + type + "')";
}

} // namespace nnc

#endif // NNC_DIALECTS_NN_IR_CHECKEDINT_H
