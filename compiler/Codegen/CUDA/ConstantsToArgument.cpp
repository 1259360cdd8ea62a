//===- ConstantsToArgument.cpp - a CUDA module's weights in one buffer ----===//
//
// Kernels read constants from device memory, which the runtime fills once
// per session from one host block (nnc_abi_module_t.constants). Here every
// constant global read by a public function gets its place in that block.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/CUDA.h"
#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/MathExtras.h"

namespace nnc {
#define GEN_PASS_DEF_CUDACONSTANTSTOARGUMENT
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
constexpr int64_t kAlignment = 64;

/// Bytes per element in the block: sub-byte types take a whole byte, as the
/// kernels address them.
int64_t storageBytes(Type type) {
  return std::max<int64_t>(1, llvm::divideCeil(type.getIntOrFloatBitWidth(), 8));
}

/// Appends the global's value, dense and row-major, to `block`.
LogicalResult appendValue(memref::GlobalOp global, std::vector<char> &block) {
  auto type = global.getType();
  Type element = type.getElementType();
  if (!element.isIntOrFloat())
    return global.emitOpError("cannot place constants of type ") << element << " on the device";
  int64_t bytes = storageBytes(element), count = type.getNumElements();
  auto value = global.getInitialValue();
  if (!value)
    return global.emitOpError("expected an initial value for a constant");
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(*value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return global.emitOpError("constant resource has no data");
    ArrayRef<char> data = blob->getData();
    if ((int64_t)data.size() != count * bytes)
      return global.emitOpError("constant resource holds ")
             << data.size() << " bytes, expected " << count * bytes;
    block.insert(block.end(), data.begin(), data.end());
    return success();
  }
  auto dense = dyn_cast<DenseElementsAttr>(*value);
  if (!dense)
    return global.emitOpError("unsupported constant initializer");
  // Little-endian, widened to whole bytes (an i1 is one byte, 0 or 1).
  auto append = [&](const APInt &bits) {
    APInt wide = bits.zext(bytes * 8);
    for (int64_t i = 0; i < bytes; ++i)
      block.push_back(static_cast<char>(wide.extractBitsAsZExtValue(8, 8 * i)));
  };
  auto appendOne = [&](int64_t index) {
    if (isa<FloatType>(element))
      append((*(dense.value_begin<APFloat>() + index)).bitcastToAPInt());
    else
      append(*(dense.value_begin<APInt>() + index));
  };
  for (int64_t i = 0; i < count; ++i)
    appendOne(dense.isSplat() ? 0 : i);
  return success();
}

struct ConstantsToArgument : nnc::impl::CUDAConstantsToArgumentBase<ConstantsToArgument> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SymbolTable symbols(module);
    std::vector<char> block;
    llvm::DenseMap<Operation *, int64_t> offsets;
    SmallVector<memref::GlobalOp> placed;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      SmallVector<memref::GetGlobalOp> reads;
      func.walk([&](memref::GetGlobalOp op) { reads.push_back(op); });
      for (memref::GetGlobalOp read : reads) {
        auto global = symbols.lookup<memref::GlobalOp>(read.getName());
        if (!global || !global.getConstant()) {
          read.emitOpError("only constant globals can be read by CUDA code");
          return signalPassFailure();
        }
        if (!global.getType().getLayout().isIdentity()) {
          read.emitOpError("expected a constant with the identity layout");
          return signalPassFailure();
        }
        if (offsets.count(global))
          continue;
        block.resize(llvm::alignTo(block.size(), kAlignment), 0);
        offsets[global] = block.size();
        placed.push_back(global);
        if (failed(appendValue(global, block)))
          return signalPassFailure();
      }
    }
    int64_t size = llvm::alignTo(block.size(), kAlignment);
    block.resize(size, 0);
    auto argType = MemRefType::get({size}, IntegerType::get(ctx, 8));
    // Every public function gets the argument, so the entry ABI is uniform.
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(index, argType, {}, func.getLoc())))
        return signalPassFailure();
      BlockArgument constants = func.getArgument(index);
      func->setAttr(nnc::kConstantsSizeAttr, IntegerAttr::get(IntegerType::get(ctx, 64), size));
      SmallVector<memref::GetGlobalOp> reads;
      func.walk([&](memref::GetGlobalOp op) { reads.push_back(op); });
      for (memref::GetGlobalOp read : reads) {
        auto global = symbols.lookup<memref::GlobalOp>(read.getName());
        OpBuilder b(read);
        Value offset = arith::ConstantIndexOp::create(b, read.getLoc(), offsets.lookup(global));
        auto view = memref::ViewOp::create(b, read.getLoc(), read.getType(), constants, offset,
                                           ValueRange{});
        read.replaceAllUsesWith(view.getResult());
        read.erase();
      }
    }
    for (memref::GlobalOp global : placed)
      if (SymbolTable::symbolKnownUseEmpty(global, module))
        global.erase();
    if (size == 0)
      return;
    // The block itself, public so that nothing deletes it before the
    // artifact points the descriptor at it.
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(ArrayRef<char>(block), kAlignment);
    auto init = DenseResourceElementsAttr::get(
        RankedTensorType::get({size}, IntegerType::get(ctx, 8)), nnc::kConstantsGlobal,
        std::move(blob));
    memref::GlobalOp::create(b, module.getLoc(), nnc::kConstantsGlobal, b.getStringAttr("public"),
                             argType, init, /*constant=*/true, b.getI64IntegerAttr(kAlignment));
  }
};
} // namespace
