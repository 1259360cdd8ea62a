//===- ProfileKernels.cpp - calls of the runtime's profile hook ------------===//
//
// `nnc --profile` compiles a function so that the runtime can time each of
// its kernels (nnc-run --profile): a mark before each kernel and one before
// the return. The marks are calls, which no later pass moves code across, so
// the time between two marks is the kernel's.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Common/KernelReport.h"
#include "compiler/Codegen/Common/RuntimeContext.h"
#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace nnc {
#define GEN_PASS_DEF_PROFILEKERNELS
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {

/// Defines `llvm.func internal @nnc_profile_mark(%k: i32)`: if the context
/// slot holds a context with a profile hook, call profile(profile_state, k).
/// An LLVM function from the start, so no codegen pass takes its branches for
/// work (the CUDA path would make a kernel of them).
LLVM::LLVMFuncOp defineMark(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  Location loc = module.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto i32 = b.getI32Type();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto voidType = LLVM::LLVMVoidType::get(ctx);
  auto mark = LLVM::LLVMFuncOp::create(b, loc, nnc::kProfileMarkFunction,
                                       LLVM::LLVMFunctionType::get(voidType, {i32}),
                                       LLVM::Linkage::Internal);
  Block *entry = mark.addEntryBlock(b);
  Block *withContext = b.createBlock(&mark.getBody());
  Block *withHook = b.createBlock(&mark.getBody());
  Block *done = b.createBlock(&mark.getBody());

  b.setInsertionPointToStart(entry);
  Value null = LLVM::ZeroOp::create(b, loc, ptr);
  Value context = nnc::loadContext(b, loc);
  Value hasContext = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, context, null);
  LLVM::CondBrOp::create(b, loc, hasContext, withContext, done);

  // nnc_abi_context_t: {runtime, num_threads, parallel_for, cuda, profile,
  // profile_state} (abi.h).
  b.setInsertionPointToStart(withContext);
  auto contextType = LLVM::LLVMStructType::getLiteral(ctx, {ptr, i32, ptr, ptr, ptr, ptr});
  auto field = [&](int32_t index) -> Value {
    Value addr = LLVM::GEPOp::create(b, loc, ptr, contextType, context,
                                     ArrayRef<LLVM::GEPArg>{0, index});
    return LLVM::LoadOp::create(b, loc, ptr, addr);
  };
  Value hook = field(4);
  Value hasHook = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, hook, null);
  LLVM::CondBrOp::create(b, loc, hasHook, withHook, done);

  b.setInsertionPointToStart(withHook);
  Value state = field(5);
  auto hookType = LLVM::LLVMFunctionType::get(voidType, {ptr, i32});
  LLVM::CallOp::create(b, loc, hookType, ValueRange{hook, state, entry->getArgument(0)});
  LLVM::BrOp::create(b, loc, done);

  b.setInsertionPointToStart(done);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return mark;
}

struct ProfileKernels : nnc::impl::ProfileKernelsBase<ProfileKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!nnc::getOrCreateContextSlot(module))
      return signalPassFailure();
    if (SymbolTable::lookupSymbolIn(module, nnc::kProfileMarkFunction)) {
      module.emitError() << "'" << nnc::kProfileMarkFunction << "' is defined already";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> functions;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func.isPublic())
        functions.push_back(func);
    LLVM::LLVMFuncOp mark = defineMark(module);
    for (func::FuncOp func : functions) {
      Block &body = func.getBody().front();
      std::vector<SmallVector<Operation *>> groups = nnc::kernelGroups(body);
      auto call = [&](Operation *before, int32_t index) {
        OpBuilder b(before);
        Value k = arith::ConstantIntOp::create(b, before->getLoc(), index, 32);
        LLVM::CallOp::create(b, before->getLoc(), mark, ValueRange{k});
      };
      // The first op of a group is its first kernel op, and groups are in
      // the order of those, so the marks come in order.
      for (auto [index, group] : llvm::enumerate(groups))
        call(group.front(), static_cast<int32_t>(index));
      call(body.getTerminator(), static_cast<int32_t>(groups.size()));
    }
  }
};

} // namespace
