//===- LowerLaunches.cpp - kernel launches through the runtime's hook -----===//
//
// Host code of a CUDA module enqueues its kernels through the launch hook
// of nnc_abi_cuda_t (abi.h) rather than the CUDA driver: the runtime owns
// the context, stream and loaded module, so the artifact links against
// nothing, and the same host code could drive another device.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/CUDA.h"
#include "compiler/Codegen/Common/RuntimeContext.h"
#include "compiler/Codegen/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace nnc {
#define GEN_PASS_DEF_CUDALOWERLAUNCHES
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
struct LowerLaunches : nnc::impl::CUDALowerLaunchesBase<LowerLaunches> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp op) { launches.push_back(op); });

    // The PTX of each chip.
    SmallVector<NamedAttribute> images;
    if (auto binary = module.lookupSymbol<gpu::BinaryOp>(nnc::kKernelModule)) {
      for (Attribute attr : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(attr);
        auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget());
        if (!target || object.getFormat() != gpu::CompilationTarget::Assembly) {
          binary.emitOpError("expected PTX for an NVVM target");
          return signalPassFailure();
        }
        StringRef ptx = object.getObject().getValue();
        // libdevice comes with the CUDA toolkit only: kernels must not need it.
        if (size_t at = ptx.find(".extern .func"); at != StringRef::npos) {
          StringRef line = ptx.substr(at).take_until([](char c) { return c == '\n'; });
          binary.emitOpError("a kernel calls an external function, which no CUDA driver "
                             "provides: '")
              << line.trim() << "'";
          return signalPassFailure();
        }
        images.push_back(NamedAttribute(StringAttr::get(ctx, target.getChip()),
                                        StringAttr::get(ctx, ptx)));
      }
      binary.erase();
    } else if (!launches.empty()) {
      launches.front().emitOpError("expected the kernels in 'gpu.binary @")
          << nnc::kKernelModule << "'";
      return signalPassFailure();
    }

    // Kernel indices in order of first launch.
    SmallVector<Attribute> kernels;
    llvm::StringMap<int32_t> indexOf;
    for (gpu::LaunchFuncOp launch : launches) {
      StringRef name = launch.getKernelName().getValue();
      if (indexOf.try_emplace(name, (int32_t)kernels.size()).second)
        kernels.push_back(StringAttr::get(ctx, name));
    }
    module->setAttr(nnc::kCUDAImagesAttr, DictionaryAttr::get(ctx, images));
    module->setAttr(nnc::kCUDAKernelsAttr, ArrayAttr::get(ctx, kernels));
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
    if (launches.empty())
      return;

    if (!nnc::getOrCreateContextSlot(module))
      return signalPassFailure();
    LLVMTypeConverter converter(ctx);
    for (gpu::LaunchFuncOp launch : launches)
      if (failed(lower(launch, indexOf.lookup(launch.getKernelName().getValue()), converter)))
        return signalPassFailure();
  }

  LogicalResult lower(gpu::LaunchFuncOp launch, int32_t kernel, LLVMTypeConverter &converter) {
    MLIRContext *ctx = &getContext();
    Location loc = launch.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i32 = IntegerType::get(ctx, 32);
    auto i64 = IntegerType::get(ctx, 64);
    auto func = launch->getParentOfType<FunctionOpInterface>();
    if (!func)
      return launch.emitOpError("expected to be inside a function");
    OpBuilder b(launch);

    // The kernel's parameters as the NVVM lowering declares them: a memref
    // expands to its descriptor's fields.
    SmallVector<Value> params;
    for (Value operand : launch.getKernelOperands()) {
      Type type = operand.getType();
      if (auto memref = dyn_cast<MemRefType>(type)) {
        Type descriptorType = converter.convertType(memref);
        if (!descriptorType)
          return launch.emitOpError("cannot pass ") << type << " to a kernel";
        Value descriptor =
            UnrealizedConversionCastOp::create(b, loc, descriptorType, operand).getResult(0);
        auto field = [&](ArrayRef<int64_t> position) {
          params.push_back(LLVM::ExtractValueOp::create(b, loc, descriptor, position));
        };
        field({0});
        field({1});
        field({2});
        for (int64_t i = 0; i < memref.getRank(); ++i)
          field({3, i});
        for (int64_t i = 0; i < memref.getRank(); ++i)
          field({4, i});
      } else if (type.isIndex()) {
        params.push_back(arith::IndexCastOp::create(b, loc, i64, operand));
      } else if (type.isIntOrFloat()) {
        params.push_back(operand);
      } else {
        return launch.emitOpError("cannot pass ") << type << " to a kernel";
      }
    }

    // The values in one stack struct, their addresses in an array; both
    // allocated in the entry block so that a launch in a loop does not grow
    // the stack.
    SmallVector<Type> fieldTypes;
    for (Value v : params)
      fieldTypes.push_back(v.getType());
    auto valuesType = LLVM::LLVMStructType::getLiteral(ctx, fieldTypes);
    auto addressesType = LLVM::LLVMArrayType::get(ptr, std::max<size_t>(1, params.size()));
    Value values, addresses;
    {
      OpBuilder eb = OpBuilder::atBlockBegin(&func.getFunctionBody().front());
      Value one = LLVM::ConstantOp::create(eb, loc, i64, eb.getI64IntegerAttr(1));
      values = LLVM::AllocaOp::create(eb, loc, ptr, valuesType, one);
      addresses = LLVM::AllocaOp::create(eb, loc, ptr, addressesType, one);
    }
    for (auto [i, v] : llvm::enumerate(params)) {
      Value slot = LLVM::GEPOp::create(b, loc, ptr, valuesType, values,
                                       ArrayRef<LLVM::GEPArg>{0, (int32_t)i});
      LLVM::StoreOp::create(b, loc, v, slot);
      Value entry = LLVM::GEPOp::create(b, loc, ptr, addressesType, addresses,
                                        ArrayRef<LLVM::GEPArg>{0, (int32_t)i});
      LLVM::StoreOp::create(b, loc, slot, entry);
    }

    // context->cuda->launch(context->cuda->device, kernel, grid, block, shared, params).
    // nnc_abi_context_t: {runtime, num_threads, parallel_for, cuda};
    // nnc_abi_cuda_t: {device, constants, launch}.
    Value context = nnc::loadContext(b, loc);
    auto contextType = LLVM::LLVMStructType::getLiteral(ctx, {ptr, i32, ptr, ptr});
    auto cudaType = LLVM::LLVMStructType::getLiteral(ctx, {ptr, ptr, ptr});
    auto load = [&](Type type, Type structType, Value base, int32_t index) -> Value {
      Value addr = LLVM::GEPOp::create(b, loc, ptr, structType, base,
                                       ArrayRef<LLVM::GEPArg>{0, index});
      return LLVM::LoadOp::create(b, loc, type, addr);
    };
    Value cuda = load(ptr, contextType, context, 3);
    Value device = load(ptr, cudaType, cuda, 0);
    Value hook = load(ptr, cudaType, cuda, 2);
    auto toI32 = [&](Value v) -> Value {
      return v.getType().isIndex() ? arith::IndexCastOp::create(b, loc, i32, v).getResult()
                                   : arith::TruncIOp::create(b, loc, i32, v).getResult();
    };
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    Value shared = launch.getDynamicSharedMemorySize();
    SmallVector<Value> args = {
        hook,
        device,
        LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(kernel)),
        toI32(grid.x),
        toI32(grid.y),
        toI32(grid.z),
        toI32(block.x),
        toI32(block.y),
        toI32(block.z),
        shared ? shared : LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0)).getResult(),
        addresses};
    auto hookType = LLVM::LLVMFunctionType::get(
        i32, {ptr, i32, i32, i32, i32, i32, i32, i32, i32, ptr});
    // A failed launch is recorded by the runtime, which then skips the rest
    // of the run's launches and reports the first failure.
    LLVM::CallOp::create(b, loc, hookType, args);
    launch.erase();
    return success();
  }
};
} // namespace
