//===- Status.h - building status objects and messages ----------*- C++ -*-===//
//
// Internal helpers shared by the runtime's objects: status construction and
// the formatting every message uses for shapes and name lists.
//
//===----------------------------------------------------------------------===//

#ifndef NNC_RUNTIME_SRC_STATUS_H
#define NNC_RUNTIME_SRC_STATUS_H

#include "nnc/runtime.h"

#include <string>

namespace nnc::runtime {

/// A new status owned by the caller of the API function returning it.
nnc_status_t makeStatus(nnc_status_code_t code, const std::string &message);

/// "1x3x224x224"; "?" for a dynamic dim; "scalar" for rank 0.
std::string shapeString(int32_t rank, const int64_t *shape);

/// "'a', 'b'"; "none" for an empty list. Names come from getName(i).
template <typename GetName>
std::string nameList(int32_t count, GetName getName) {
  if (count == 0)
    return "none";
  std::string list;
  for (int32_t i = 0; i < count; ++i)
    list += (i ? ", '" : "'") + std::string(getName(i)) + "'";
  return list;
}

} // namespace nnc::runtime

#endif // NNC_RUNTIME_SRC_STATUS_H
