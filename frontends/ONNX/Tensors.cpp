//===- Tensors.cpp - ONNX TensorProto to elements attributes --------------===//
//
// Weights arrive as raw bytes (inline or in external files) or as typed
// repeated fields. Large raw buffers become dense resources that take over the
// bytes (moved out of the protobuf, or mapped from the external file), so a
// model's weights exist once in memory.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/NodeImporter.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdint>
#include <memory>

using namespace mlir;
using namespace nnc;
using namespace nnc::onnx_frontend;

/// Raw buffers up to this size become plain dense attributes; larger ones resources.
static constexpr size_t kResourceThreshold = 1024;

Type nnc::onnx_frontend::importElementType(MLIRContext &context, int64_t dataType) {
  using TP = onnx::TensorProto;
  Builder b(&context);
  switch (dataType) {
  case TP::FLOAT: return b.getF32Type();
  case TP::DOUBLE: return b.getF64Type();
  case TP::FLOAT16: return b.getF16Type();
  case TP::BFLOAT16: return b.getBF16Type();
  case TP::BOOL: return b.getI1Type();
  case TP::INT8: return b.getIntegerType(8);
  case TP::INT16: return b.getIntegerType(16);
  case TP::INT32: return b.getIntegerType(32);
  case TP::INT64: return b.getIntegerType(64);
  case TP::UINT8: return b.getIntegerType(8, /*isSigned=*/false);
  case TP::UINT16: return b.getIntegerType(16, false);
  case TP::UINT32: return b.getIntegerType(32, false);
  case TP::UINT64: return b.getIntegerType(64, false);
  default: return nullptr;
  }
}

Type nnc::onnx_frontend::importValueElementType(MLIRContext &context, int64_t dataType) {
  if (dataType == onnx::TensorProto::STRING)
    return nn::StringType::get(&context);
  return importElementType(context, dataType);
}

std::string nnc::onnx_frontend::dataTypeName(int64_t dataType) {
  // Attributes carry data types as int64: no truncation to protobuf's int.
  if (dataType >= INT32_MIN && dataType <= INT32_MAX &&
      onnx::TensorProto::DataType_IsValid((int)dataType))
    return onnx::TensorProto::DataType_Name((onnx::TensorProto::DataType)dataType);
  return "unknown data type " + std::to_string(dataType);
}

namespace {
/// Bytes per element of the buffer layout (bool is one byte per element).
size_t storageBytes(Type element) {
  return element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
}

/// An external data file mapped once and shared by every tensor in it.
struct MappedFile {
  std::unique_ptr<llvm::MemoryBuffer> buffer;
};

/// Whether `path` is `dir` or below it, compared by components.
bool isWithin(StringRef path, StringRef dir) {
  auto p = llvm::sys::path::begin(path), pe = llvm::sys::path::end(path);
  for (auto d = llvm::sys::path::begin(dir), de = llvm::sys::path::end(dir); d != de; ++d, ++p)
    if (p == pe || *p != *d)
      return false;
  return true;
}

/// A symbolic link on the way to external data may not lead out of the
/// model's folder either. The folder is taken both as given and where the
/// model file itself resolves to: a model linked from elsewhere (model hubs'
/// caches link every file into one blob folder) finds its weights there.
LogicalResult checkResolvesInside(Location loc, const onnx::TensorProto &tensor,
                                  StringRef location, StringRef modelPath, StringRef path) {
  llvm::SmallString<256> realPath, realModel, realDir;
  if (llvm::sys::fs::real_path(path, realPath))
    return success(); // missing: reported when it is read
  StringRef dir = llvm::sys::path::parent_path(modelPath);
  if (!llvm::sys::fs::real_path(dir.empty() ? "." : dir, realDir) && isWithin(realPath, realDir))
    return success();
  if (!llvm::sys::fs::real_path(modelPath, realModel) &&
      isWithin(realPath, llvm::sys::path::parent_path(realModel)))
    return success();
  return emitError(loc) << "tensor '" << tensor.name() << "': external data location '"
                        << location << "' leaves the model's folder through a symbolic link (to '"
                        << realPath << "')";
}

/// Reads the bytes of an external tensor; keeps mappings alive by file.
FailureOr<std::pair<ArrayRef<char>, std::shared_ptr<MappedFile>>>
readExternal(Location loc, const onnx::TensorProto &tensor, const std::string &modelPath) {
  static llvm::StringMap<std::weak_ptr<MappedFile>> cache;
  std::string location;
  std::optional<int64_t> offsetField, lengthField;
  for (const auto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
      continue;
    }
    if (entry.key() != "offset" && entry.key() != "length")
      continue;
    // The whole value must be a decimal integer in int64: strtoll's silent 0
    // for garbage and clamping for huge values would read other bytes.
    int64_t value;
    if (llvm::StringRef(entry.value()).getAsInteger(10, value) || value < 0)
      return emitError(loc) << "tensor '" << tensor.name() << "': external data " << entry.key()
                            << " '" << entry.value() << "' is not a non-negative integer";
    (entry.key() == "offset" ? offsetField : lengthField) = value;
  }
  if (location.empty())
    return emitError(loc) << "tensor '" << tensor.name()
                          << "' is marked external but names no location";
  if (llvm::sys::path::is_absolute(location))
    return emitError(loc) << "tensor '" << tensor.name() << "': external data location '"
                          << location << "' must be relative to the model";
  // Weights live in the model's folder or below it: a location that climbs out
  // (once 'a/..' pairs cancel) could make a model read any file.
  llvm::SmallString<256> normalized(location);
  llvm::sys::path::remove_dots(normalized, /*remove_dot_dot=*/true);
  if (llvm::sys::path::begin(normalized) != llvm::sys::path::end(normalized) &&
      *llvm::sys::path::begin(normalized) == "..")
    return emitError(loc) << "tensor '" << tensor.name() << "': external data location '"
                          << location << "' leaves the model's folder";
  llvm::SmallString<256> path(llvm::sys::path::parent_path(modelPath));
  llvm::sys::path::append(path, location);
  if (failed(checkResolvesInside(loc, tensor, location, modelPath, path)))
    return failure();
  std::shared_ptr<MappedFile> file = cache.lookup(path).lock();
  if (!file) {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer)
      return emitError(loc) << "tensor '" << tensor.name() << "': cannot read external data file '"
                            << path << "': " << buffer.getError().message();
    file = std::make_shared<MappedFile>(MappedFile{std::move(*buffer)});
    cache[path] = file;
  }
  int64_t size = file->buffer->getBufferSize();
  int64_t offset = offsetField.value_or(0);
  // Without a length the tensor runs to the end of the file.
  int64_t length = lengthField.value_or(std::max<int64_t>(0, size - offset));
  CheckedInt end = CheckedInt(offset) + length;
  if (!end.ok() || *end.get() > size) {
    InFlightDiagnostic diag = emitError(loc)
                              << "tensor '" << tensor.name() << "': external data file '" << path
                              << "' holds " << size << " bytes, fewer than offset " << offset;
    if (lengthField)
      diag << " + length " << length;
    return diag;
  }
  return std::make_pair(ArrayRef<char>(file->buffer->getBufferStart() + offset, length), file);
}

/// Builds a dense attribute from typed repeated fields.
template <typename T, typename Field>
DenseElementsAttr fromField(RankedTensorType type, const Field &field) {
  SmallVector<T> values(field.begin(), field.end());
  return DenseElementsAttr::get(type, ArrayRef<T>(values));
}

FailureOr<ElementsAttr> fromTypedFields(Location loc, RankedTensorType type,
                                        const onnx::TensorProto &tensor) {
  using TP = onnx::TensorProto;
  Type element = type.getElementType();
  int64_t count = type.getNumElements();
  auto check = [&](int64_t got) -> LogicalResult {
    if (got == count)
      return success();
    return emitError(loc) << "tensor '" << tensor.name() << "' holds " << got
                          << " values but its shape needs " << count;
  };
  switch (tensor.data_type()) {
  case TP::FLOAT:
    if (failed(check(tensor.float_data_size()))) return failure();
    return ElementsAttr(fromField<float>(type, tensor.float_data()));
  case TP::DOUBLE:
    if (failed(check(tensor.double_data_size()))) return failure();
    return ElementsAttr(fromField<double>(type, tensor.double_data()));
  case TP::INT64:
    if (failed(check(tensor.int64_data_size()))) return failure();
    return ElementsAttr(fromField<int64_t>(type, tensor.int64_data()));
  case TP::UINT32:
  case TP::UINT64: {
    if (failed(check(tensor.uint64_data_size()))) return failure();
    SmallVector<APInt> values;
    for (uint64_t v : tensor.uint64_data())
      values.push_back(APInt(element.getIntOrFloatBitWidth(), v, false, true));
    return ElementsAttr(DenseElementsAttr::get(type, values));
  }
  case TP::BOOL: {
    if (failed(check(tensor.int32_data_size()))) return failure();
    SmallVector<bool> values;
    for (int32_t v : tensor.int32_data())
      values.push_back(v != 0);
    return ElementsAttr(DenseElementsAttr::get(type, ArrayRef<bool>(values)));
  }
  case TP::FLOAT16:
  case TP::BFLOAT16: {
    // Stored as their 16-bit patterns in int32_data.
    if (failed(check(tensor.int32_data_size()))) return failure();
    SmallVector<APFloat> values;
    const llvm::fltSemantics &sem = cast<FloatType>(element).getFloatSemantics();
    for (int32_t v : tensor.int32_data())
      values.push_back(APFloat(sem, APInt(16, (uint64_t)v & 0xffff)));
    return ElementsAttr(DenseElementsAttr::get(type, values));
  }
  default: { // int8/16/32, uint8/16 in int32_data
    if (failed(check(tensor.int32_data_size()))) return failure();
    SmallVector<APInt> values;
    for (int32_t v : tensor.int32_data())
      values.push_back(APInt(element.getIntOrFloatBitWidth(), (uint64_t)(int64_t)v,
                             !element.isUnsignedInteger(), true));
    return ElementsAttr(DenseElementsAttr::get(type, values));
  }
  }
}
} // namespace

FailureOr<ElementsAttr> nnc::onnx_frontend::importTensor(MLIRContext &context, Location loc,
                                                         onnx::TensorProto &tensor,
                                                         const std::string &modelPath) {
  Type element = importElementType(context, tensor.data_type());
  if (!element)
    return emitError(loc) << "tensor '" << tensor.name() << "' has unsupported element type "
                          << dataTypeName(tensor.data_type());
  if (tensor.has_segment())
    return emitError(loc) << "tensor '" << tensor.name() << "' is segmented, which is unsupported";
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  // Checked before anything counts elements or bytes: dims whose count wraps
  // would otherwise match an empty buffer.
  if (std::optional<std::string> problem = tensorShapeProblem(shape, element))
    return emitError(loc) << "tensor '" << tensor.name() << "' has " << *problem;
  auto type = RankedTensorType::get(shape, element);
  // Fits: storageBytes(element) <= elementBytes(element), which the check used.
  size_t expected = type.getNumElements() * storageBytes(element);

  bool external = tensor.data_location() == onnx::TensorProto::EXTERNAL;
  if (!external && !tensor.has_raw_data())
    return fromTypedFields(loc, type, tensor);

  // Raw little-endian bytes, inline or external.
  ArrayRef<char> bytes;
  std::shared_ptr<MappedFile> mapping;
  if (external) {
    auto read = readExternal(loc, tensor, modelPath);
    if (failed(read))
      return failure();
    std::tie(bytes, mapping) = *read;
  } else {
    bytes = ArrayRef<char>(tensor.raw_data().data(), tensor.raw_data().size());
  }
  if (bytes.size() != expected)
    return emitError(loc) << "tensor '" << tensor.name() << "' holds " << bytes.size()
                          << " bytes but its shape and type need " << expected;

  if (element.isInteger(1)) {
    SmallVector<bool> values;
    for (char c : bytes)
      values.push_back(c != 0);
    return ElementsAttr(DenseElementsAttr::get(type, ArrayRef<bool>(values)));
  }
  size_t alignment = storageBytes(element);
  if (expected <= kResourceThreshold || (uintptr_t)bytes.data() % alignment != 0)
    return ElementsAttr(DenseElementsAttr::getFromRawBuffer(type, bytes));

  // The resource takes the bytes over: the external mapping stays alive through
  // the deleter, and inline bytes are moved out of the protobuf.
  AsmResourceBlob blob;
  if (mapping) {
    blob = AsmResourceBlob(bytes, alignment,
                           [mapping](void *, size_t, size_t) mutable { mapping.reset(); },
                           /*dataIsMutable=*/false);
  } else {
    auto *owned = new std::string(std::move(*tensor.mutable_raw_data()));
    blob = AsmResourceBlob(ArrayRef<char>(owned->data(), owned->size()), alignment,
                           [owned](void *, size_t, size_t) { delete owned; },
                           /*dataIsMutable=*/false);
  }
  std::string name = tensor.name().empty() ? std::string("tensor") : tensor.name();
  return ElementsAttr(DenseResourceElementsAttr::get(type, name, std::move(blob)));
}
