//===- ModelLoader.cpp - read ONNX model files ----------------------------===//
//
// Binary models go through protobuf's stream parser with the format's 2 GiB
// ceiling made explicit; text models go through ONNX's own parser, which the
// lit tests use so that no binary model sits in the test tree.
//
//===----------------------------------------------------------------------===//

#include "frontends/ONNX/Importer.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/defs/parser.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <climits>
#include <exception>

using namespace mlir;

namespace {
constexpr int64_t kMaxTextNesting = 100;

/// The deepest nesting of `{` in ONNX text, outside strings and comments.
int64_t braceDepth(llvm::StringRef text) {
  int64_t depth = 0, deepest = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') { // a string: up to the closing quote, escapes skipped
      for (++i; i < text.size() && text[i] != '"'; ++i)
        i += text[i] == '\\';
    } else if (c == '#') { // a comment: to the end of the line
      i = std::min(text.find('\n', i), text.size());
    } else if (c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}') {
      --depth;
    }
  }
  return deepest;
}
} // namespace

LogicalResult nnc::onnx_frontend::loadModel(MLIRContext &context, const std::string &path,
                                            onnx::ModelProto &model) {
  Location loc = FileLineColLoc::get(&context, path, 0, 0);
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false,
                                                   /*RequiresNullTerminator=*/true);
  if (!buffer)
    return emitError(loc) << "cannot read model file: " << buffer.getError().message();
  llvm::StringRef ext = llvm::sys::path::extension(path);
  return parseModel(loc, (*buffer)->getBuffer(), ext == ".onnxtext" || ext == ".txt", model);
}

LogicalResult nnc::onnx_frontend::parseModel(Location loc, llvm::StringRef bytes, bool text,
                                             onnx::ModelProto &model) {
  if (text) {
    // ONNX's parser reads up to a NUL; a NUL inside the text would hide the rest.
    if (bytes.data()[bytes.size()] != '\0' || bytes.contains('\0'))
      return emitError(loc) << "cannot parse ONNX text model: it contains a NUL byte";
    // ONNX's parser recurses into graph-valued attributes without a bound;
    // the binary path stops at protobuf's 100 nested messages, the text one
    // stops at as many nested braces.
    if (int64_t depth = braceDepth(bytes); depth > kMaxTextNesting)
      return emitError(loc) << "cannot parse ONNX text model: it nests " << depth
                            << " levels of braces, more than the " << kMaxTextNesting
                            << " this parser allows";
    // ONNX's parser reports most errors as a status, but throws from
    // std::stoll/std::stof on numbers it cannot convert ("1e999",
    // "99999999999999999999"): this file alone is compiled with exceptions
    // (CMakeLists.txt) to turn those into errors too.
    onnx::Common::Status status;
    std::string thrown;
    try {
      status = onnx::OnnxParser::Parse(model, bytes.data());
    } catch (const std::exception &error) {
      thrown = error.what();
    }
    if (!thrown.empty())
      return emitError(loc) << "cannot parse ONNX text model: a number is malformed or out of "
                               "range (" << thrown << ")";
    if (!status.IsOK())
      return emitError(loc) << "cannot parse ONNX text model: " << status.ErrorMessage();
    return success();
  }

  if (bytes.size() > (size_t)INT_MAX)
    return emitError(loc) << "model file is " << bytes.size()
                          << " bytes; protobuf cannot hold more than 2 GiB, so models this "
                             "large must keep their weights as external data";
  google::protobuf::io::ArrayInputStream stream(bytes.data(), (int)bytes.size());
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage())
    return emitError(loc) << "not a valid ONNX model (the protobuf is truncated or corrupt, or "
                             "nests messages deeper than protobuf's limit of 100)";
  if (!model.has_graph())
    return emitError(loc) << "not a valid ONNX model (it has no graph)";
  return success();
}
