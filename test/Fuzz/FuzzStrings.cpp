//===- FuzzStrings.cpp - fuzz the runtime's string hooks -----------------===//
//
// Input: a sequence of calls of a session's string hooks (runtime/src/
// Strings.h: Cast's format and parse, StringNormalizer's case change and
// stopword test) on texts and values the fuzzer chooses, as untrusted model
// inputs reach them. Each call either fails with a message or keeps the
// hooks' promises (abi.h): a number read back from its text is the same
// number, a case change gives valid UTF-8 and maps ASCII as ASCII does, a
// text is always a stopword of itself compared case-sensitively. Strings the
// hooks return are read to their end, so the sanitizer sees any overrun.
//
//===----------------------------------------------------------------------===//

#include "test/Fuzz/FuzzBytes.h"

#include "runtime/src/Strings.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using nnc::fuzz::Bytes;
using nnc::runtime::StringStore;

namespace {
void check(bool condition, const char *what, const std::string &detail = "") {
  if (!condition) {
    std::fprintf(stderr, "FuzzStrings: %s%s%s\n", what, detail.empty() ? "" : ": ", detail.c_str());
    std::abort();
  }
}

constexpr int32_t kDtypes[] = {NNC_DTYPE_F32, NNC_DTYPE_F64, NNC_DTYPE_I8,  NNC_DTYPE_U8,
                               NNC_DTYPE_I16, NNC_DTYPE_U16, NNC_DTYPE_I32, NNC_DTYPE_U32,
                               NNC_DTYPE_I64, NNC_DTYPE_U64, NNC_DTYPE_BOOL, 0};

/// A text of up to 255 bytes the fuzzer chooses (never a NUL inside).
std::string text(Bytes &in) {
  std::string s;
  for (size_t n = in.byte(); n > 0; --n)
    if (char c = static_cast<char>(in.byte()))
      s.push_back(c);
  return s;
}

/// Whether `s` is valid UTF-8 (no overlong forms, surrogates or code points
/// past U+10FFFF).
bool validUTF8(const char *s) {
  const auto *p = reinterpret_cast<const unsigned char *>(s);
  while (*p) {
    unsigned c = *p, n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : 9;
    if (n == 9)
      return false;
    uint32_t cp = n == 0 ? c : c & (0x3f >> n);
    for (unsigned k = 1; k <= n; ++k) {
      if ((p[k] & 0xc0) != 0x80)
        return false;
      cp = (cp << 6) | (p[k] & 0x3f);
    }
    static const uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    p += n + 1;
  }
  return true;
}

/// The bytes of a value of `dtype` (as the hooks read and write them).
size_t bytesOf(int32_t dtype) {
  switch (dtype) {
  case NNC_DTYPE_F64: case NNC_DTYPE_I64: case NNC_DTYPE_U64: return 8;
  case NNC_DTYPE_F32: case NNC_DTYPE_I32: case NNC_DTYPE_U32: return 4;
  case NNC_DTYPE_I16: case NNC_DTYPE_U16: return 2;
  default: return 1;
  }
}

/// Whether two values of `dtype` are the same number (NaNs of any payload
/// are the same).
bool same(int32_t dtype, const uint64_t &a, const uint64_t &b) {
  if (dtype == NNC_DTYPE_F32) {
    float x, y;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, 4) == 0;
  }
  if (dtype == NNC_DTYPE_F64) {
    double x, y;
    std::memcpy(&x, &a, 8);
    std::memcpy(&y, &b, 8);
    return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, 8) == 0;
  }
  return std::memcmp(&a, &b, bytesOf(dtype)) == 0;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Bytes in(data, size);
  StringStore store;
  for (int call = 0; call < 64 && (call == 0 || !in.empty()); ++call) {
    if (in.byte() % 8 == 0)
      store.startRun();
    int32_t dtype = kDtypes[in.byte() % (sizeof(kDtypes) / sizeof(kDtypes[0]))];
    bool known = dtype != 0 && dtype != NNC_DTYPE_BOOL;
    switch (in.byte() % 4) {
    case 0: { // a value to text and back
      uint64_t value = in.u64(), back = 0;
      const char *written = store.format(dtype, &value);
      check(!written == !known, "format succeeds exactly for the numeric dtypes");
      if (!written)
        break;
      check(store.parse(dtype, written, &back) == 0, "format's text reads back", written);
      check(same(dtype, value, back), "format's text reads back to the same number", written);
      break;
    }
    case 1: { // text to a value, and its text back to the same value
      std::string s = text(in);
      uint64_t value = 0, again = 0;
      if (store.parse(dtype, s.c_str(), &value) != 0)
        break;
      check(known, "parse succeeds only for the numeric dtypes");
      const char *written = store.format(dtype, &value);
      check(written != nullptr, "a parsed value formats");
      check(store.parse(dtype, written, &again) == 0 && same(dtype, value, again),
            "a parsed value's text reads back to it", s + " -> " + written);
      break;
    }
    case 2: { // a case change
      std::string s = text(in);
      int32_t action = static_cast<int32_t>(in.byte() % 4); // 3: not an action
      const char *changed = store.changeCase(s.c_str(), action);
      bool valid = validUTF8(s.c_str());
      check(!changed == (!valid || action == 3), "a case change fails exactly on bad text",
            s);
      if (!changed)
        break;
      check(validUTF8(changed), "a case change gives valid UTF-8", changed);
      // ASCII letters map as ASCII does; other ASCII bytes stay.
      bool ascii = true;
      for (char c : s)
        ascii &= static_cast<unsigned char>(c) < 0x80;
      if (ascii) {
        std::string expected = s;
        for (char &c : expected)
          c = action == 1 && c >= 'A' && c <= 'Z' ? c + 32 : action == 2 && c >= 'a' && c <= 'z' ? c - 32 : c;
        check(expected == changed, "ASCII case maps as ASCII", s);
      }
      if (action == 0)
        check(s == changed, "action 0 keeps the text", s);
      break;
    }
    case 3: { // stopwords
      std::string s = text(in), words;
      int64_t count = in.byte() % 4;
      for (int64_t k = 0; k < count; ++k)
        words += text(in) + '\0';
      words += s + '\0';
      int32_t sensitive = in.byte() % 2;
      int32_t found = store.isStopword(s.c_str(), words.c_str(), count + 1, sensitive);
      // Text that is not UTF-8 fails; compared case-insensitively, so may a
      // stopword before the text's own (each is lower-cased in turn).
      if (!validUTF8(s.c_str()))
        check(found == -1, "a stopword test of bad text fails", s);
      else if (sensitive)
        check(found == 1, "a text is a case-sensitive stopword of itself", s);
      else
        check(found == 1 || found == -1, "a valid text is a stopword of itself", s);
      break;
    }
    }
  }
  return 0;
}
