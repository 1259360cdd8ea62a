//===- Strings.h - a session's string hooks and the strings they return -*- C++ -*-===//
//
// What compiled code reaches through nnc_abi_context_t.strings (abi.h): Cast
// between numbers and text, and StringNormalizer's case mapping and stopword
// test. Each CPU session owns one store; the strings its hooks return live in
// the store until the session's next run starts (or its release).
//
//===----------------------------------------------------------------------===//

#ifndef NNC_RUNTIME_SRC_STRINGS_H
#define NNC_RUNTIME_SRC_STRINGS_H

#include "nnc/abi.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nnc::runtime {

class StringStore {
public:
  StringStore();
  ~StringStore();
  StringStore(const StringStore &) = delete;
  StringStore &operator=(const StringStore &) = delete;

  /// The hook table handed to compiled code; its state is this store.
  const nnc_abi_strings_t *hooks() const { return &table; }

  /// Starts a run: the strings of the last one are dropped (their memory is
  /// kept for this run's) and its failure forgotten.
  void startRun();
  /// The first failure a hook reported since startRun; empty when none.
  const std::string &failure() const { return firstFailure; }
  /// Whether `text` points into a string returned since the last startRun
  /// (which the next startRun frees).
  bool owns(const char *text) const;

  /// The hooks' work, for the hooks and for tests; failures are recorded.
  const char *format(int32_t dtype, const void *value);
  int32_t parse(int32_t dtype, const char *text, void *value);
  int32_t isStopword(const char *text, const char *stopwords, int64_t count,
                     int32_t caseSensitive);
  const char *changeCase(const char *text, int32_t action);

private:
  /// size bytes from the arena; null (with a failure recorded) when the
  /// memory cannot be had.
  char *allocate(size_t size);
  /// A copy of `size` bytes at `text`, NUL-terminated.
  const char *keep(const char *text, size_t size);
  void fail(const std::string &message);

  struct Block {
    char *data;
    size_t size;
  };
  nnc_abi_strings_t table;
  // A bump allocator over blocks kept from run to run, so that a session's
  // runs stop allocating once the blocks cover the largest run's strings.
  std::vector<Block> blocks;
  size_t current = 0; // the block being filled
  size_t used = 0;    // bytes of it handed out
  std::string firstFailure;
  // The blocks in use (up to `current`) by address, for owns(): a run's
  // check of n input strings against b blocks is n log b. Built on first
  // use after the blocks change.
  mutable std::vector<Block> sorted;
  mutable bool sortedValid = false;
};

} // namespace nnc::runtime

#endif // NNC_RUNTIME_SRC_STRINGS_H
