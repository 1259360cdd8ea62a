//===- FuzzTensor.cpp - fuzz nnc-run's reader of ONNX test-data tensors ---===//
//
// Input: the bytes of a TensorProto file (.pb). The reader either fills a
// tensor whose bytes match its dtype and shape, or says why not.
//
//===----------------------------------------------------------------------===//

#include "tools/nnc-run/HostTensor.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nnc::run::HostTensor tensor;
  std::string error;
  std::string bytes(reinterpret_cast<const char *>(data), size);
  if (!nnc::run::readTensorBytes(bytes, "input.pb", tensor, error)) {
    if (error.empty())
      abort(); // a failure must say why
    return 0;
  }
  // Accepted: the bytes are exactly the dtype's size times the element count.
  if (tensor.bytes.size() != static_cast<uint64_t>(tensor.elementCount()) *
                                 nnc_dtype_size(tensor.dtype))
    abort();
  for (int64_t i = 0, n = tensor.elementCount(); i < n && i < 64; ++i)
    (void)nnc::run::elementString(tensor.dtype, tensor.bytes.data(), i);
  return 0;
}
