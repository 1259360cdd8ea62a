//===- HostTensor.cpp - tensors in host memory for nnc-run ---------------===//

#include "tools/nnc-run/HostTensor.h"

#include <onnx/onnx_pb.h>

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace nnc::run;

int64_t HostTensor::elementCount() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

nnc_tensor_view_t HostTensor::view() {
  if (dtype == NNC_DTYPE_STRING) {
    bytes.resize(strings.size() * sizeof(const char *));
    for (size_t i = 0; i < strings.size(); ++i) {
      const char *text = strings[i].c_str();
      std::memcpy(bytes.data() + i * sizeof(text), &text, sizeof(text));
    }
  }
  return {bytes.data(), bytes.size(), dtype, static_cast<int32_t>(shape.size()), shape.data()};
}

namespace {
const char *textAt(const void *data, int64_t index) {
  const char *text;
  std::memcpy(&text, static_cast<const unsigned char *>(data) + index * sizeof(text), sizeof(text));
  return text;
}
} // namespace

HostTensor nnc::run::copyOf(const nnc_tensor_info_t &info, const void *data) {
  HostTensor copy;
  copy.dtype = info.dtype;
  copy.shape.assign(info.shape, info.shape + info.rank);
  if (info.dtype == NNC_DTYPE_STRING) {
    for (int64_t i = 0; i < info.element_count; ++i)
      copy.strings.push_back(textAt(data, i) ? textAt(data, i) : "");
    copy.view();
  } else {
    auto *bytes = static_cast<const unsigned char *>(data);
    copy.bytes.assign(bytes, bytes + info.byte_size);
  }
  return copy;
}

bool nnc::run::sameElement(int32_t dtype, const void *a, const void *b, int64_t index) {
  if (dtype == NNC_DTYPE_STRING) {
    const char *x = textAt(a, index), *y = textAt(b, index);
    return x && y ? std::strcmp(x, y) == 0 : x == y;
  }
  size_t size = nnc_dtype_size(dtype);
  return std::memcmp(static_cast<const unsigned char *>(a) + index * size,
                     static_cast<const unsigned char *>(b) + index * size, size) == 0;
}

int64_t nnc::run::firstDifferentElement(const nnc_tensor_info_t &info, const void *a,
                                        const void *b) {
  for (int64_t i = 0; i < info.element_count; ++i)
    if (!sameElement(info.dtype, a, b, i))
      return i;
  return -1;
}

std::string nnc::run::shapeString(int32_t rank, const int64_t *shape) {
  if (rank == 0)
    return "scalar";
  std::string text;
  for (int32_t i = 0; i < rank; ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

namespace {
std::string dataTypeName(int32_t dataType) {
  if (onnx::TensorProto::DataType_IsValid(dataType))
    return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(dataType)) +
           " (" + std::to_string(dataType) + ")";
  return std::to_string(dataType);
}

/// Copies a typed repeated field into bytes as elements of type T.
template <typename T, typename Field>
void storeAs(const Field &field, std::vector<unsigned char> &bytes) {
  bytes.resize(field.size() * sizeof(T));
  T *out = reinterpret_cast<T *>(bytes.data());
  for (int i = 0; i < field.size(); ++i)
    out[i] = static_cast<T>(field.Get(i));
}

/// Decodes the typed field that holds proto's data type; returns the number
/// of values the field held and the field's name.
std::pair<int64_t, const char *> readTypedField(const onnx::TensorProto &proto,
                                                std::vector<unsigned char> &bytes) {
  using TP = onnx::TensorProto;
  switch (proto.data_type()) {
  case TP::FLOAT: storeAs<float>(proto.float_data(), bytes); return {proto.float_data_size(), "float_data"};
  case TP::DOUBLE: storeAs<double>(proto.double_data(), bytes); return {proto.double_data_size(), "double_data"};
  case TP::INT64: storeAs<int64_t>(proto.int64_data(), bytes); return {proto.int64_data_size(), "int64_data"};
  case TP::UINT32: storeAs<uint32_t>(proto.uint64_data(), bytes); return {proto.uint64_data_size(), "uint64_data"};
  case TP::UINT64: storeAs<uint64_t>(proto.uint64_data(), bytes); return {proto.uint64_data_size(), "uint64_data"};
  case TP::INT32: storeAs<int32_t>(proto.int32_data(), bytes); break;
  // int32_data holds the narrower integers, bools, and f16/bf16 bit patterns.
  case TP::INT16: storeAs<int16_t>(proto.int32_data(), bytes); break;
  case TP::INT8: storeAs<int8_t>(proto.int32_data(), bytes); break;
  case TP::UINT16:
  case TP::FLOAT16:
  case TP::BFLOAT16: storeAs<uint16_t>(proto.int32_data(), bytes); break;
  case TP::UINT8: storeAs<uint8_t>(proto.int32_data(), bytes); break;
  case TP::BOOL:
    bytes.resize(proto.int32_data_size());
    for (int i = 0; i < proto.int32_data_size(); ++i)
      bytes[i] = proto.int32_data(i) != 0;
    break;
  }
  return {proto.int32_data_size(), "int32_data"};
}

float halfToFloat(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1f, mantissa = half & 0x3ff;
  if (exponent == 0) // zero or subnormal: mantissa * 2^-24
    return (sign ? -1.0f : 1.0f) * std::ldexp(static_cast<float>(mantissa), -24);
  uint32_t bits = exponent == 0x1f ? sign | 0x7f800000 | (mantissa << 13) // inf, nan
                                   : sign | ((exponent + 112) << 23) | (mantissa << 13);
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// For the values randomTensor makes (zero or |v| in [2^-6, 1] with at most 7
/// significant bits), which f16 represents exactly.
uint16_t floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  if ((bits & 0x7fffffff) == 0)
    return sign;
  uint32_t exponent = ((bits >> 23) & 0xff) - 112;
  return static_cast<uint16_t>(sign | (exponent << 10) | ((bits >> 13) & 0x3ff));
}

template <typename T>
T load(const void *data, int64_t index) {
  T value;
  std::memcpy(&value, static_cast<const unsigned char *>(data) + index * sizeof(T), sizeof(T));
  return value;
}
} // namespace

bool nnc::run::writeTensorFile(const std::string &path, const std::string &name, int32_t dtype,
                               int32_t rank, const int64_t *shape, const void *data,
                               uint64_t bytes, std::string &error) {
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(dtype);
  for (int32_t i = 0; i < rank; ++i)
    proto.add_dims(shape[i]);
  if (dtype == NNC_DTYPE_STRING) {
    for (uint64_t i = 0; i < bytes / sizeof(const char *); ++i)
      proto.add_string_data(textAt(data, i) ? textAt(data, i) : "");
  } else {
    proto.set_raw_data(data, bytes);
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file || !proto.SerializeToOstream(&file) || !file.flush()) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

bool nnc::run::readTensorFile(const std::string &path, HostTensor &tensor, std::string &error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::stringstream contents;
  contents << file.rdbuf();
  return readTensorBytes(contents.str(), path, tensor, error);
}

bool nnc::run::readTensorBytes(const std::string &bytes, const std::string &path,
                               HostTensor &tensor, std::string &error) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) {
    error = "'" + path + "' is not a valid ONNX TensorProto file";
    return false;
  }
  std::string where = "'" + path + "'";
  if (nnc_dtype_size(proto.data_type()) == 0) {
    error = where + ": unsupported data type " + dataTypeName(proto.data_type());
    return false;
  }
  if (proto.data_location() == onnx::TensorProto::EXTERNAL || proto.has_segment()) {
    error = where + ": external or segmented data is not supported";
    return false;
  }
  tensor.dtype = proto.data_type();
  tensor.shape.assign(proto.dims().begin(), proto.dims().end());
  tensor.strings.clear();
  int64_t count = 1;
  for (int64_t dim : tensor.shape) {
    if (dim < 0 || __builtin_mul_overflow(count, dim, &count)) {
      error = where + ": invalid dims";
      return false;
    }
  }
  std::string shape = shapeString(static_cast<int32_t>(tensor.shape.size()), tensor.shape.data());
  size_t elementSize = nnc_dtype_size(tensor.dtype);
  // Strings are texts in string_data (raw_data cannot hold them).
  if (tensor.dtype == NNC_DTYPE_STRING) {
    if (proto.has_raw_data() || proto.string_data_size() != count) {
      error = where + ": string " + shape + " needs " + std::to_string(count) +
              " texts in string_data, which holds " + std::to_string(proto.string_data_size()) +
              (proto.has_raw_data() ? " (and raw_data cannot hold strings)" : "");
      return false;
    }
    for (const std::string &text : proto.string_data()) {
      if (text.find('\0') != std::string::npos) {
        error = where + ": a string holds a NUL character, which a C string cannot";
        return false;
      }
      tensor.strings.push_back(text);
    }
    tensor.view();
    return true;
  }
  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (raw.size() / elementSize != static_cast<uint64_t>(count) || raw.size() % elementSize) {
      error = where + ": raw_data holds " + std::to_string(raw.size()) + " bytes but " +
              nnc_dtype_name(tensor.dtype) + " " + shape + " needs " +
              std::to_string(count * elementSize);
      return false;
    }
    tensor.bytes.assign(raw.begin(), raw.end());
    return true;
  }
  auto [values, field] = readTypedField(proto, tensor.bytes);
  if (values != count) {
    error = where + ": " + field + " holds " + std::to_string(values) + " values but " +
            nnc_dtype_name(tensor.dtype) + " " + shape + " needs " + std::to_string(count);
    return false;
  }
  return true;
}

bool nnc::run::exists(const std::string &path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

void nnc::run::acceptBF16Bits(HostTensor &tensor, int32_t expectedDtype) {
  if (tensor.dtype == NNC_DTYPE_U16 && expectedDtype == NNC_DTYPE_BF16)
    tensor.dtype = NNC_DTYPE_BF16;
}

std::string nnc::run::elementString(int32_t dtype, const void *data, int64_t index) {
  if (dtype == NNC_DTYPE_STRING) {
    const char *text = textAt(data, index);
    return text ? "'" + std::string(text) + "'" : "NULL";
  }
  char buffer[64];
  const char *format = !isFloat(dtype) ? "%.0Lf" : dtype == NNC_DTYPE_F64 ? "%.17Lg" : "%.9Lg";
  std::snprintf(buffer, sizeof(buffer), format, elementAt(dtype, data, index));
  return buffer;
}

HostTensor nnc::run::randomTensor(const nnc_tensor_info_t &info, std::mt19937_64 &rng) {
  HostTensor tensor;
  tensor.dtype = info.dtype;
  // A dynamic dim is given size 1.
  int64_t count = 1;
  for (int32_t d = 0; d < info.rank; ++d) {
    tensor.shape.push_back(info.shape[d] < 0 ? 1 : info.shape[d]);
    count *= tensor.shape.back();
  }
  tensor.bytes.resize(count * nnc_dtype_size(info.dtype));
  // Plain modulo rather than std::uniform_*_distribution, whose results differ
  // between standard libraries: the data must be the same everywhere.
  for (int64_t i = 0; i < count; ++i) {
    unsigned char *at = tensor.bytes.data() + i * nnc_dtype_size(info.dtype);
    auto store = [&](auto value) { std::memcpy(at, &value, sizeof(value)); };
    uint64_t random = rng();
    float real = static_cast<float>(static_cast<int>(random % 129) - 64) / 64;
    int digit = static_cast<int>(random % 10);
    switch (info.dtype) {
    case NNC_DTYPE_F32: store(real); break;
    case NNC_DTYPE_F64: store(static_cast<double>(real)); break;
    case NNC_DTYPE_F16: store(floatToHalf(real)); break;
    case NNC_DTYPE_BF16: { // exact: the values need at most 7 significant bits
      uint32_t bits;
      std::memcpy(&bits, &real, sizeof(bits));
      store(static_cast<uint16_t>(bits >> 16));
      break;
    }
    case NNC_DTYPE_BOOL: store(static_cast<uint8_t>(random % 2)); break;
    case NNC_DTYPE_I8: store(static_cast<int8_t>(digit)); break;
    case NNC_DTYPE_U8: store(static_cast<uint8_t>(digit)); break;
    case NNC_DTYPE_I16: store(static_cast<int16_t>(digit)); break;
    case NNC_DTYPE_U16: store(static_cast<uint16_t>(digit)); break;
    case NNC_DTYPE_I32: store(static_cast<int32_t>(digit)); break;
    case NNC_DTYPE_U32: store(static_cast<uint32_t>(digit)); break;
    case NNC_DTYPE_I64: store(static_cast<int64_t>(digit)); break;
    case NNC_DTYPE_U64: store(static_cast<uint64_t>(digit)); break;
    case NNC_DTYPE_STRING: tensor.strings.push_back(std::to_string(digit)); break;
    }
  }
  if (info.dtype == NNC_DTYPE_STRING)
    tensor.view();
  return tensor;
}

bool nnc::run::isFloat(int32_t dtype) {
  return dtype == NNC_DTYPE_F32 || dtype == NNC_DTYPE_F64 || dtype == NNC_DTYPE_F16 ||
         dtype == NNC_DTYPE_BF16;
}

long double nnc::run::elementAt(int32_t dtype, const void *data, int64_t index) {
  switch (dtype) {
  case NNC_DTYPE_F32: return load<float>(data, index);
  case NNC_DTYPE_F64: return load<double>(data, index);
  case NNC_DTYPE_F16: return halfToFloat(load<uint16_t>(data, index));
  case NNC_DTYPE_BF16: {
    uint32_t bits = static_cast<uint32_t>(load<uint16_t>(data, index)) << 16;
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }
  case NNC_DTYPE_I8: return load<int8_t>(data, index);
  case NNC_DTYPE_U8:
  case NNC_DTYPE_BOOL: return load<uint8_t>(data, index);
  case NNC_DTYPE_I16: return load<int16_t>(data, index);
  case NNC_DTYPE_U16: return load<uint16_t>(data, index);
  case NNC_DTYPE_I32: return load<int32_t>(data, index);
  case NNC_DTYPE_U32: return load<uint32_t>(data, index);
  case NNC_DTYPE_I64: return load<int64_t>(data, index);
  case NNC_DTYPE_U64: return load<uint64_t>(data, index);
  }
  return 0;
}
