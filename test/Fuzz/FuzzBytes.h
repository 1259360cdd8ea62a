//===- FuzzBytes.h - reading a fuzzer's input as a stream of choices -------===//
//
// Structure-aware targets decode their input into API calls and data. Every
// read past the end yields zero, and zero always decodes to the typical,
// valid choice, so the empty input is a valid case and each byte the fuzzer
// sets is a corruption of it.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_TEST_FUZZ_FUZZBYTES_H
#define NNC_TEST_FUZZ_FUZZBYTES_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

namespace nnc::fuzz {

class Bytes {
public:
  Bytes(const uint8_t *data, size_t size) : data(data), size(size) {}

  bool empty() const { return size == 0; }

  uint8_t byte() {
    if (size == 0)
      return 0;
    --size;
    return *data++;
  }

  uint64_t u64() {
    uint64_t value = 0;
    for (int i = 0; i < 8; ++i)
      value |= static_cast<uint64_t>(byte()) << (8 * i);
    return value;
  }

  /// `typical` shifted by a signed byte: small corruptions of counts and ranks.
  int32_t near(int32_t typical) { return typical + static_cast<int8_t>(byte()); }

  /// A dim: `typical`, or after a nonzero selector a small one (-2..13), an
  /// arbitrary 64-bit one, or one of the limits.
  int64_t dim(int64_t typical) {
    uint8_t choice = byte();
    if (choice == 0)
      return typical;
    if (choice < 0xf0)
      return static_cast<int64_t>(choice % 16) - 2;
    if (choice < 0xf8)
      return static_cast<int64_t>(u64());
    return choice < 0xfc ? INT64_MAX : INT64_MIN;
  }

  /// A string the fuzzer controls: `typical`, NULL, or up to 31 arbitrary bytes.
  const char *string(const char *typical) {
    uint8_t choice = byte();
    if (choice == 0)
      return typical;
    if (choice == 1)
      return nullptr;
    std::string text;
    for (int i = 0, n = choice % 32; i < n; ++i)
      text += static_cast<char>(byte() | 1); // no NUL inside
    return keep(text);
  }

  /// Storage that lives as long as this object.
  const char *keep(const std::string &text) { return strings.emplace_back(text).c_str(); }

  /// An array of exactly `count` Ts (NULL for zero), owned by this object, so
  /// the sanitizer sees any read past its end.
  template <typename T> T *array(int64_t count) {
    if (count <= 0)
      return nullptr;
    blocks.emplace_back(static_cast<size_t>(count) * sizeof(T));
    return reinterpret_cast<T *>(blocks.back().data());
  }

private:
  const uint8_t *data;
  size_t size;
  std::deque<std::string> strings;
  std::deque<std::vector<unsigned char>> blocks;
};

} // namespace nnc::fuzz

#endif // NNC_TEST_FUZZ_FUZZBYTES_H
