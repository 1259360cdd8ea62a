//===- Strings.cpp - Cast to and from text, case mapping, stopwords ------===//
//
// The hooks of nnc_abi_strings_t (abi.h) with libc alone: numbers through
// <charconv> (shortest round-trip digits, correctly rounded reads), case
// through the C library's UTF-8 locale. Floats are written as NumPy's str()
// writes them, so that a model's Cast to string gives what onnxruntime and
// the ONNX reference give.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/Strings.h"

#include "nnc/runtime.h"

#include <locale.h>
#include <wctype.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

using namespace nnc::runtime;

namespace {

//===- UTF-8 ---------------------------------------------------------------===//

/// Decodes the code point at s[0], of at most `size` bytes. Returns its
/// length, or 0 for invalid UTF-8 with the reason in `why`.
size_t decode(const unsigned char *s, size_t size, char32_t &code, const char *&why) {
  unsigned char lead = s[0];
  if (lead < 0x80) {
    code = lead;
    return 1;
  }
  size_t length;
  char32_t minimum;
  if (lead < 0xC0) {
    why = "a continuation byte without a lead byte";
    return 0;
  } else if (lead < 0xE0) {
    length = 2, minimum = 0x80, code = lead & 0x1F;
  } else if (lead < 0xF0) {
    length = 3, minimum = 0x800, code = lead & 0x0F;
  } else if (lead < 0xF8) {
    length = 4, minimum = 0x10000, code = lead & 0x07;
  } else {
    why = "a byte that never occurs in UTF-8";
    return 0;
  }
  for (size_t i = 1; i < length; ++i) {
    if (i >= size || (s[i] & 0xC0) != 0x80) {
      why = "a truncated sequence";
      return 0;
    }
    code = code << 6 | (s[i] & 0x3F);
  }
  if (code < minimum)
    why = "an overlong encoding";
  else if (code >= 0xD800 && code <= 0xDFFF)
    why = "a surrogate";
  else if (code > 0x10FFFF)
    why = "a code point beyond U+10FFFF";
  else
    return length;
  return 0;
}

size_t encodedLength(char32_t code) {
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

char *encode(char32_t code, char *out) {
  if (code < 0x80) {
    *out++ = static_cast<char>(code);
  } else if (code < 0x800) {
    *out++ = static_cast<char>(0xC0 | code >> 6);
    *out++ = static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    *out++ = static_cast<char>(0xE0 | code >> 12);
    *out++ = static_cast<char>(0x80 | (code >> 6 & 0x3F));
    *out++ = static_cast<char>(0x80 | (code & 0x3F));
  } else {
    *out++ = static_cast<char>(0xF0 | code >> 18);
    *out++ = static_cast<char>(0x80 | (code >> 12 & 0x3F));
    *out++ = static_cast<char>(0x80 | (code >> 6 & 0x3F));
    *out++ = static_cast<char>(0x80 | (code & 0x3F));
  }
  return out;
}

/// `text` quoted for a message: at most 48 bytes of it (then "..."), control
/// characters and bytes that are not UTF-8 as \xNN.
std::string quote(const char *text) {
  if (!text)
    return "NULL";
  constexpr size_t kShown = 48;
  const auto *s = reinterpret_cast<const unsigned char *>(text);
  size_t size = std::strlen(text), at = 0;
  std::string out = "'";
  while (at < size && at < kShown) {
    char32_t code;
    const char *why;
    size_t length = decode(s + at, size - at, code, why);
    if (length == 0 || code < 0x20 || code == 0x7F) {
      static const char kHex[] = "0123456789ABCDEF";
      out += "\\x";
      out += kHex[s[at] >> 4];
      out += kHex[s[at] & 0xF];
      at += 1;
      continue;
    }
    out.append(text + at, length);
    at += length;
  }
  return out + (at < size ? "'..." : "'");
}

/// The C library's UTF-8 locale for towlower_l/towupper_l, made once; null
/// when the system has none.
locale_t utf8Locale() {
  static const locale_t locale = [] {
    for (const char *name : {"C.UTF-8", "C.utf8", "en_US.UTF-8"})
      if (locale_t found = newlocale(LC_CTYPE_MASK, name, static_cast<locale_t>(0)))
        return found;
    return static_cast<locale_t>(0);
  }();
  return locale;
}

enum CaseAction { kAsIs = 0, kLower = 1, kUpper = 2 };

/// `code` mapped by `action`; false for a non-ASCII code point when there is
/// no UTF-8 locale to map it with.
bool mapCase(char32_t code, int32_t action, char32_t &mapped) {
  mapped = code;
  if (action == kAsIs)
    return true;
  if (code < 0x80) {
    if (action == kLower && code >= 'A' && code <= 'Z')
      mapped = code + ('a' - 'A');
    else if (action == kUpper && code >= 'a' && code <= 'z')
      mapped = code - ('a' - 'A');
    return true;
  }
  locale_t locale = utf8Locale();
  if (!locale)
    return false;
  wint_t result = action == kLower ? towlower_l(static_cast<wint_t>(code), locale)
                                   : towupper_l(static_cast<wint_t>(code), locale);
  // A mapping the C library got wrong must not make invalid UTF-8.
  if (result != 0 && result <= 0x10FFFF && !(result >= 0xD800 && result <= 0xDFFF))
    mapped = static_cast<char32_t>(result);
  return true;
}

const char kNoLocale[] = "no UTF-8 locale is available (tried C.UTF-8 and en_US.UTF-8) to "
                         "change the case of characters beyond ASCII";

//===- Numbers -------------------------------------------------------------===//

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool equalsIgnoringCase(const char *begin, const char *end, const char *word) {
  size_t size = static_cast<size_t>(end - begin);
  if (size != std::strlen(word))
    return false;
  for (size_t i = 0; i < size; ++i) {
    char c = begin[i];
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c + ('a' - 'A'));
    if (c != word[i])
      return false;
  }
  return true;
}

/// The decimal exponent of the leading nonzero digit of the number in
/// [begin, end) (as from_chars read it), saturated: >= 0 when its magnitude
/// is at least 1.
int64_t decimalMagnitude(const char *begin, const char *end) {
  const char *at = begin;
  int64_t integerDigits = 0, leading = std::numeric_limits<int64_t>::min();
  for (; at < end && *at >= '0' && *at <= '9'; ++at, ++integerDigits)
    if (*at != '0' && leading == std::numeric_limits<int64_t>::min())
      leading = integerDigits;
  int64_t magnitude = 0;
  if (leading != std::numeric_limits<int64_t>::min()) {
    magnitude = integerDigits - leading - 1;
  } else {
    int64_t position = 0;
    if (at < end && *at == '.')
      for (++at; at < end && *at >= '0' && *at <= '9'; ++at) {
        ++position;
        if (*at != '0' && leading == std::numeric_limits<int64_t>::min())
          leading = position;
      }
    magnitude = leading == std::numeric_limits<int64_t>::min() ? 0 : -leading;
  }
  while (at < end && *at != 'e' && *at != 'E')
    ++at;
  if (at < end) {
    ++at;
    bool negative = at < end && *at == '-';
    if (at < end && (*at == '-' || *at == '+'))
      ++at;
    int64_t exponent = 0;
    for (; at < end && *at >= '0' && *at <= '9'; ++at)
      exponent = std::min<int64_t>(exponent * 10 + (*at - '0'), int64_t(1) << 40);
    magnitude += negative ? -exponent : exponent;
  }
  return magnitude;
}

enum class Read { kOk, kInvalid, kOutOfRange };

/// Reads a float of type F from [begin, end), whitespace already trimmed.
template <typename F>
Read readFloat(const char *begin, const char *end, F &value) {
  bool negative = begin < end && *begin == '-';
  if (begin < end && (*begin == '-' || *begin == '+'))
    ++begin;
  F magnitude;
  if (equalsIgnoringCase(begin, end, "inf") || equalsIgnoringCase(begin, end, "infinity")) {
    magnitude = std::numeric_limits<F>::infinity();
  } else if (equalsIgnoringCase(begin, end, "nan")) {
    magnitude = std::numeric_limits<F>::quiet_NaN();
  } else {
    // from_chars would take "nan(...)", "infinity" and a second sign too.
    if (begin == end || !((*begin >= '0' && *begin <= '9') || *begin == '.'))
      return Read::kInvalid;
    std::from_chars_result result = std::from_chars(begin, end, magnitude);
    if (result.ptr != end || result.ec == std::errc::invalid_argument)
      return Read::kInvalid;
    // Out of range: the value rounds to infinity or to zero (libstdc++
    // leaves it unset), which is what rounding to nearest gives.
    if (result.ec == std::errc::result_out_of_range)
      magnitude = decimalMagnitude(begin, end) >= 0 ? std::numeric_limits<F>::infinity() : F(0);
  }
  value = negative ? -magnitude : magnitude;
  return Read::kOk;
}

/// Reads an integer of type T from [begin, end), whitespace already trimmed:
/// an optional sign and decimal digits.
template <typename T>
Read readInteger(const char *begin, const char *end, T &value) {
  bool negative = begin < end && *begin == '-';
  if (begin < end && (*begin == '-' || *begin == '+'))
    ++begin;
  if (begin == end || *begin < '0' || *begin > '9')
    return Read::kInvalid;
  uint64_t magnitude;
  std::from_chars_result result = std::from_chars(begin, end, magnitude);
  if (result.ptr != end)
    return Read::kInvalid;
  if (result.ec == std::errc::result_out_of_range)
    return Read::kOutOfRange;
  if (result.ec != std::errc())
    return Read::kInvalid;
  if (std::is_signed<T>::value) {
    uint64_t limit = static_cast<uint64_t>(std::numeric_limits<T>::max()) + (negative ? 1 : 0);
    if (magnitude > limit)
      return Read::kOutOfRange;
    // Two's complement, without overflowing on the most negative value.
    value = static_cast<T>(negative ? 0 - magnitude : magnitude);
  } else {
    if (magnitude > static_cast<uint64_t>(std::numeric_limits<T>::max()) ||
        (negative && magnitude != 0))
      return Read::kOutOfRange;
    value = static_cast<T>(magnitude);
  }
  return Read::kOk;
}

template <typename T>
Read readInto(Read (*read)(const char *, const char *, T &), const char *begin, const char *end,
              void *value) {
  T result;
  Read status = read(begin, end, result);
  if (status == Read::kOk)
    std::memcpy(value, &result, sizeof(T));
  return status;
}

/// Writes `value` as NumPy's str() does (scalartypes.c.src, Dragon4 with
/// the shortest unique digits): positional from 1e-4 up to 1e16 (with at
/// least one digit after the point), scientific with at least two exponent
/// digits outside. Returns the end of the text written to out (64 bytes).
template <typename F>
char *writeFloat(F value, char *out) {
  if (std::isnan(value))
    return std::copy_n("nan", 3, out);
  if (std::isinf(value))
    return value < 0 ? std::copy_n("-inf", 4, out) : std::copy_n("inf", 3, out);
  // The shortest digits that read back as value, and the decimal exponent
  // of the first: "d.ddde+XX".
  char scientific[64];
  std::to_chars_result result = std::to_chars(scientific, scientific + sizeof(scientific), value,
                                              std::chars_format::scientific);
  const char *at = scientific, *end = result.ptr;
  bool negative = *at == '-';
  if (negative)
    ++at;
  char digits[32];
  size_t count = 0;
  for (; at < end && *at != 'e'; ++at)
    if (*at != '.')
      digits[count++] = *at;
  int exponent = 0;
  std::from_chars(at + (at[1] == '+' ? 2 : 1), end, exponent);

  char *p = out;
  if (negative)
    *p++ = '-';
  // NumPy compares in long double, as here.
  long double magnitude = std::fabs(static_cast<long double>(value));
  if (magnitude == 0 || (1e-4L <= magnitude && magnitude < 1e16L)) {
    if (exponent >= 0) {
      size_t integer = static_cast<size_t>(exponent) + 1;
      for (size_t i = 0; i < integer; ++i)
        *p++ = i < count ? digits[i] : '0';
      *p++ = '.';
      if (count > integer)
        p = std::copy(digits + integer, digits + count, p);
      else
        *p++ = '0';
    } else {
      *p++ = '0';
      *p++ = '.';
      p = std::fill_n(p, -exponent - 1, '0');
      p = std::copy(digits, digits + count, p);
    }
    return p;
  }
  *p++ = digits[0];
  if (count > 1) {
    *p++ = '.';
    p = std::copy(digits + 1, digits + count, p);
  }
  *p++ = 'e';
  *p++ = exponent < 0 ? '-' : '+';
  int absolute = exponent < 0 ? -exponent : exponent;
  if (absolute < 10)
    *p++ = '0';
  return std::to_chars(p, out + 64, absolute).ptr;
}

template <typename T>
char *writeInteger(const void *value, char *out) {
  T integer;
  std::memcpy(&integer, value, sizeof(T));
  return std::to_chars(out, out + 64, integer).ptr;
}

} // namespace

//===- The store ---------------------------------------------------------===//

namespace {
/// Strings are carved from blocks of this size (a longer one gets its own).
constexpr size_t kBlockSize = 64 * 1024;

const char *formatHook(void *state, int32_t dtype, const void *value) {
  return static_cast<StringStore *>(state)->format(dtype, value);
}
int32_t parseHook(void *state, int32_t dtype, const char *text, void *value) {
  return static_cast<StringStore *>(state)->parse(dtype, text, value);
}
int32_t isStopwordHook(void *state, const char *text, const char *stopwords, int64_t count,
                       int32_t caseSensitive) {
  return static_cast<StringStore *>(state)->isStopword(text, stopwords, count, caseSensitive);
}
const char *changeCaseHook(void *state, const char *text, int32_t action) {
  return static_cast<StringStore *>(state)->changeCase(text, action);
}
} // namespace

StringStore::StringStore()
    : table{this, formatHook, parseHook, isStopwordHook, changeCaseHook} {}

StringStore::~StringStore() {
  for (Block &block : blocks)
    std::free(block.data);
}

void StringStore::startRun() {
  // Blocks the last run did not reach are given back, so a run with many
  // strings does not hold its memory for the session's life.
  for (size_t i = current + 1; i < blocks.size(); ++i)
    std::free(blocks[i].data);
  if (!blocks.empty())
    blocks.resize(std::min(blocks.size(), current + 1));
  current = 0;
  used = 0;
  firstFailure.clear();
  sortedValid = false;
}

bool StringStore::owns(const char *text) const {
  if (!sortedValid) {
    sorted.assign(blocks.begin(), blocks.begin() + std::min(blocks.size(), current + 1));
    std::sort(sorted.begin(), sorted.end(), [](const Block &a, const Block &b) {
      return reinterpret_cast<uintptr_t>(a.data) < reinterpret_cast<uintptr_t>(b.data);
    });
    sortedValid = true;
  }
  auto address = reinterpret_cast<uintptr_t>(text);
  // The last block starting at or before the address.
  auto after = std::upper_bound(sorted.begin(), sorted.end(), address,
                                [](uintptr_t a, const Block &block) {
                                  return a < reinterpret_cast<uintptr_t>(block.data);
                                });
  if (after == sorted.begin())
    return false;
  const Block &block = *(after - 1);
  return address - reinterpret_cast<uintptr_t>(block.data) < block.size;
}

void StringStore::fail(const std::string &message) {
  if (firstFailure.empty())
    firstFailure = message;
}

char *StringStore::allocate(size_t size) {
  while (current < blocks.size() && blocks[current].size - used < size) {
    ++current;
    used = 0;
  }
  if (current == blocks.size()) {
    size_t bytes = std::max(kBlockSize, size);
    auto *data = static_cast<char *>(std::malloc(bytes));
    if (!data) {
      fail("cannot allocate " + std::to_string(size) + " bytes for a string");
      return nullptr;
    }
    blocks.push_back({data, bytes});
    used = 0;
  }
  sortedValid = false;
  char *memory = blocks[current].data + used;
  used += size;
  return memory;
}

const char *StringStore::keep(const char *text, size_t size) {
  if (size == SIZE_MAX) {
    fail("cannot allocate a string of " + std::to_string(size) + " bytes");
    return nullptr;
  }
  char *copy = allocate(size + 1);
  if (!copy)
    return nullptr;
  std::memcpy(copy, text, size);
  copy[size] = '\0';
  return copy;
}

const char *StringStore::format(int32_t dtype, const void *value) {
  if (!value) {
    fail("cannot format a " + std::string(nnc_dtype_name(dtype)) + " value: its address is NULL");
    return nullptr;
  }
  char text[64];
  char *end;
  switch (dtype) {
  case NNC_DTYPE_F32: {
    float x;
    std::memcpy(&x, value, sizeof(x));
    end = writeFloat(x, text);
    break;
  }
  case NNC_DTYPE_F64: {
    double x;
    std::memcpy(&x, value, sizeof(x));
    end = writeFloat(x, text);
    break;
  }
  case NNC_DTYPE_I8: end = writeInteger<int8_t>(value, text); break;
  case NNC_DTYPE_U8: end = writeInteger<uint8_t>(value, text); break;
  case NNC_DTYPE_I16: end = writeInteger<int16_t>(value, text); break;
  case NNC_DTYPE_U16: end = writeInteger<uint16_t>(value, text); break;
  case NNC_DTYPE_I32: end = writeInteger<int32_t>(value, text); break;
  case NNC_DTYPE_U32: end = writeInteger<uint32_t>(value, text); break;
  case NNC_DTYPE_I64: end = writeInteger<int64_t>(value, text); break;
  case NNC_DTYPE_U64: end = writeInteger<uint64_t>(value, text); break;
  default:
    fail("cannot format a value of dtype " + std::string(nnc_dtype_name(dtype)) + " (" +
         std::to_string(dtype) +
         ") as a string: only f32, f64 and integers of 8 to 64 bits can be");
    return nullptr;
  }
  return keep(text, static_cast<size_t>(end - text));
}

int32_t StringStore::parse(int32_t dtype, const char *text, void *value) {
  const char *name = nnc_dtype_name(dtype);
  if (!value) {
    fail("cannot read " + quote(text) + " as " + name + ": the value's address is NULL");
    return 1;
  }
  const char *begin = text ? text : "", *end = begin + std::strlen(begin);
  while (begin < end && isSpace(*begin))
    ++begin;
  while (end > begin && isSpace(end[-1]))
    --end;
  Read status;
  switch (dtype) {
  case NNC_DTYPE_F32: status = readInto<float>(readFloat<float>, begin, end, value); break;
  case NNC_DTYPE_F64: status = readInto<double>(readFloat<double>, begin, end, value); break;
  case NNC_DTYPE_I8: status = readInto<int8_t>(readInteger<int8_t>, begin, end, value); break;
  case NNC_DTYPE_U8: status = readInto<uint8_t>(readInteger<uint8_t>, begin, end, value); break;
  case NNC_DTYPE_I16: status = readInto<int16_t>(readInteger<int16_t>, begin, end, value); break;
  case NNC_DTYPE_U16:
    status = readInto<uint16_t>(readInteger<uint16_t>, begin, end, value);
    break;
  case NNC_DTYPE_I32: status = readInto<int32_t>(readInteger<int32_t>, begin, end, value); break;
  case NNC_DTYPE_U32:
    status = readInto<uint32_t>(readInteger<uint32_t>, begin, end, value);
    break;
  case NNC_DTYPE_I64: status = readInto<int64_t>(readInteger<int64_t>, begin, end, value); break;
  case NNC_DTYPE_U64:
    status = readInto<uint64_t>(readInteger<uint64_t>, begin, end, value);
    break;
  default:
    fail("cannot read a string as dtype " + std::string(name) + " (" + std::to_string(dtype) +
         "): only f32, f64 and integers of 8 to 64 bits can be read");
    return 1;
  }
  if (status == Read::kOk)
    return 0;
  fail("cannot read " + quote(text ? text : "") + " as " + name +
       (status == Read::kOutOfRange ? " (out of range)" : ""));
  return 1;
}

namespace {
/// Checks that text[0, size) is UTF-8; returns "" or why not.
std::string checkUtf8(const char *text, size_t size) {
  const auto *s = reinterpret_cast<const unsigned char *>(text);
  for (size_t at = 0; at < size;) {
    char32_t code;
    const char *why;
    size_t length = decode(s + at, size - at, code, why);
    if (length == 0)
      return "invalid UTF-8 at byte " + std::to_string(at) + " (" + why + ")";
    at += length;
  }
  return "";
}

/// Whether two valid UTF-8 texts are equal once lower-cased; -1 when a
/// non-ASCII character needs the locale there is not.
int32_t equalLowered(const char *a, size_t aSize, const char *b, size_t bSize) {
  const auto *s = reinterpret_cast<const unsigned char *>(a);
  const auto *t = reinterpret_cast<const unsigned char *>(b);
  size_t i = 0, j = 0;
  while (i < aSize && j < bSize) {
    char32_t x, y, lowerX, lowerY;
    const char *why;
    i += decode(s + i, aSize - i, x, why);
    j += decode(t + j, bSize - j, y, why);
    if (x == y)
      continue;
    if (!mapCase(x, kLower, lowerX) || !mapCase(y, kLower, lowerY))
      return -1;
    if (lowerX != lowerY)
      return 0;
  }
  return i == aSize && j == bSize;
}
} // namespace

int32_t StringStore::isStopword(const char *text, const char *stopwords, int64_t count,
                                int32_t caseSensitive) {
  if (count < 0 || (count > 0 && !stopwords)) {
    fail("is_stopword: invalid stopword list (count " + std::to_string(count) + ")");
    return -1;
  }
  if (!text)
    text = "";
  size_t size = std::strlen(text);
  std::string invalid = checkUtf8(text, size);
  if (!invalid.empty()) {
    fail("cannot compare " + quote(text) + " with stopwords: " + invalid);
    return -1;
  }
  const char *word = stopwords;
  for (int64_t k = 0; k < count; ++k) {
    size_t wordSize = std::strlen(word);
    if (caseSensitive) {
      if (wordSize == size && std::memcmp(word, text, size) == 0)
        return 1;
    } else {
      invalid = checkUtf8(word, wordSize);
      if (!invalid.empty()) {
        fail("stopword " + std::to_string(k) + " " + quote(word) + ": " + invalid);
        return -1;
      }
      int32_t equal = equalLowered(text, size, word, wordSize);
      if (equal < 0) {
        fail("cannot compare " + quote(text) + " with stopword " + quote(word) + ": " +
             kNoLocale);
        return -1;
      }
      if (equal)
        return 1;
    }
    word += wordSize + 1;
  }
  return 0;
}

const char *StringStore::changeCase(const char *text, int32_t action) {
  if (action != kAsIs && action != kLower && action != kUpper) {
    fail("change_case: unknown action " + std::to_string(action) +
         " (expected 0: as is, 1: lower case, 2: upper case)");
    return nullptr;
  }
  if (!text)
    text = "";
  const auto *s = reinterpret_cast<const unsigned char *>(text);
  size_t size = std::strlen(text), mappedSize = 0;
  // Two passes: check and measure, then write into exactly enough bytes.
  for (size_t at = 0; at < size;) {
    char32_t code, mapped;
    const char *why;
    size_t length = decode(s + at, size - at, code, why);
    if (length == 0) {
      fail("cannot change the case of " + quote(text) + ": invalid UTF-8 at byte " +
           std::to_string(at) + " (" + why + ")");
      return nullptr;
    }
    if (!mapCase(code, action, mapped)) {
      fail("cannot change the case of " + quote(text) + ": " + kNoLocale);
      return nullptr;
    }
    mappedSize += encodedLength(mapped);
    at += length;
  }
  if (action == kAsIs)
    return keep(text, size);
  if (mappedSize == SIZE_MAX) {
    fail("cannot allocate a string of " + std::to_string(mappedSize) + " bytes");
    return nullptr;
  }
  char *out = allocate(mappedSize + 1), *p = out;
  if (!out)
    return nullptr;
  for (size_t at = 0; at < size;) {
    char32_t code, mapped;
    const char *why;
    at += decode(s + at, size - at, code, why);
    mapCase(code, action, mapped);
    p = encode(mapped, p);
  }
  *p = '\0';
  return out;
}
