//===- Status.cpp - status objects and element types ---------------------===//

#include "runtime/src/Status.h"

#include <cstdlib>
#include <cstring>
#include <new>

struct nnc_status {
  nnc_status_code_t code;
  const char *message; // points into the same allocation
};

namespace {
// Returned when a status itself cannot be allocated: failing to report a
// failure must not read as success (NULL).
nnc_status outOfMemory{NNC_STATUS_RESOURCE_EXHAUSTED, "out of memory"};
} // namespace

nnc_status_t nnc::runtime::makeStatus(nnc_status_code_t code, const std::string &message) {
  void *memory = std::malloc(sizeof(nnc_status) + message.size() + 1);
  if (!memory)
    return &outOfMemory;
  char *text = static_cast<char *>(memory) + sizeof(nnc_status);
  std::memcpy(text, message.c_str(), message.size() + 1);
  return new (memory) nnc_status{code, text};
}

std::string nnc::runtime::shapeString(int32_t rank, const int64_t *shape) {
  if (rank == 0)
    return "scalar";
  std::string text;
  for (int32_t i = 0; i < rank; ++i) {
    if (i)
      text += 'x';
    text += shape[i] < 0 ? "?" : std::to_string(shape[i]);
  }
  return text;
}

nnc_status_code_t nnc_status_code(nnc_status_t status) {
  return status ? status->code : NNC_STATUS_OK;
}

const char *nnc_status_message(nnc_status_t status) { return status ? status->message : "ok"; }

void nnc_status_free(nnc_status_t status) {
  if (status != &outOfMemory)
    std::free(status);
}

const char *nnc_dtype_name(int32_t dtype) {
  switch (dtype) {
  case NNC_DTYPE_F32: return "f32";
  case NNC_DTYPE_U8: return "u8";
  case NNC_DTYPE_I8: return "i8";
  case NNC_DTYPE_U16: return "u16";
  case NNC_DTYPE_I16: return "i16";
  case NNC_DTYPE_I32: return "i32";
  case NNC_DTYPE_I64: return "i64";
  case NNC_DTYPE_STRING: return "string";
  case NNC_DTYPE_BOOL: return "bool";
  case NNC_DTYPE_F16: return "f16";
  case NNC_DTYPE_F64: return "f64";
  case NNC_DTYPE_U32: return "u32";
  case NNC_DTYPE_U64: return "u64";
  case NNC_DTYPE_BF16: return "bf16";
  }
  return "unknown";
}

size_t nnc_dtype_size(int32_t dtype) {
  switch (dtype) {
  case NNC_DTYPE_U8:
  case NNC_DTYPE_I8:
  case NNC_DTYPE_BOOL: return 1;
  case NNC_DTYPE_U16:
  case NNC_DTYPE_I16:
  case NNC_DTYPE_F16:
  case NNC_DTYPE_BF16: return 2;
  case NNC_DTYPE_F32:
  case NNC_DTYPE_I32:
  case NNC_DTYPE_U32: return 4;
  case NNC_DTYPE_I64:
  case NNC_DTYPE_F64:
  case NNC_DTYPE_U64: return 8;
  case NNC_DTYPE_STRING: return sizeof(const char *);
  }
  return 0;
}
