//===- RuntimeContext.cpp - the thread-local context slot -----------------===//

#include "compiler/Codegen/Common/RuntimeContext.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;

LLVM::GlobalOp nnc::getOrCreateContextSlot(ModuleOp module) {
  auto ptr = LLVM::LLVMPointerType::get(module.getContext());
  if (Operation *existing = SymbolTable::lookupSymbolIn(module, kRuntimeContextGlobal)) {
    auto global = dyn_cast<LLVM::GlobalOp>(existing);
    if (!global || !global.getThreadLocal_() || global.getGlobalType() != ptr) {
      existing->emitOpError("expected '")
          << kRuntimeContextGlobal << "' to be a thread-local 'llvm.ptr' global";
      return nullptr;
    }
    return global;
  }
  // External so a test driver can set it; the artifact makes it internal.
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto global = LLVM::GlobalOp::create(b, module.getLoc(), ptr, /*isConstant=*/false,
                                       LLVM::Linkage::External, kRuntimeContextGlobal,
                                       Attribute(), /*alignment=*/0, /*addrSpace=*/0,
                                       /*dsoLocal=*/false, /*thread_local_=*/true);
  b.createBlock(&global.getInitializerRegion());
  LLVM::ReturnOp::create(b, module.getLoc(),
                         LLVM::ZeroOp::create(b, module.getLoc(), ptr).getResult());
  return global;
}

Value nnc::loadContext(OpBuilder &b, Location loc) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  Value slotAddr = LLVM::AddressOfOp::create(b, loc, ptr, kRuntimeContextGlobal);
  Value slot = LLVM::ThreadlocalAddressOp::create(b, loc, ptr, slotAddr);
  return LLVM::LoadOp::create(b, loc, ptr, slot);
}
