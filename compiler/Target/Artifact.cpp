//===- Artifact.cpp - LLVM IR, object code and the shared library ---------===//
//
// The compiled functions keep MLIR's memref calling convention internally;
// each gets a C-ABI wrapper `nnc_entry_<name>(inputs, outputs, workspace,
// context)` that expands the data pointers into memref descriptors (shapes
// are static) and shows the context to the parallel loops for the duration
// of the call. The descriptor structs mirror abi.h field by field; LLVM's
// natural struct layout matches C's on the supported targets. Only the
// descriptor function is exported.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Artifact.h"
#include "compiler/Target/AbiDtype.h"

#include "compiler/Codegen/CUDA/CUDA.h"
#include "compiler/Codegen/CUDA/HostKernels.h"
#include "compiler/Codegen/Common/BFloat16.h"
#include "compiler/Codegen/Common/RuntimeContext.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "runtime/include/nnc/abi.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <atomic>
#include <thread>

using namespace mlir;

#ifndef NNC_LLVM_TOOLS_DIR
#define NNC_LLVM_TOOLS_DIR "/usr/lib/llvm-22/bin"
#endif

bool nnc::FunctionInfo::dynamic() const {
  for (const auto *list : {&inputs, &outputs})
    for (const TensorInfo &t : *list)
      if (llvm::is_contained(t.shape, -1))
        return true;
  return false;
}

std::vector<nnc::FunctionInfo> nnc::describeFunctions(ModuleOp module) {
  std::vector<FunctionInfo> functions;
  auto describe = [](Type type, DictionaryAttr attrs, std::vector<TensorInfo> &list) {
    auto tensor = cast<RankedTensorType>(type);
    auto name = attrs ? attrs.getAs<StringAttr>("nn.name") : StringAttr();
    std::vector<int64_t> shape;
    for (int64_t d : tensor.getShape())
      shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
    list.push_back({name ? name.str() : "", abiDtype(tensor.getElementType(), false), shape});
  };
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func.isPublic() || func.isExternal())
      continue;
    FunctionInfo info{func.getSymName().str(), {}, {}, 0, 0};
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
      describe(type, func.getArgAttrDict(i), info.inputs);
    for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
      describe(type, func.getResultAttrDict(i), info.outputs);
    functions.push_back(std::move(info));
  }
  return functions;
}


namespace {
llvm::Constant *stringConstant(llvm::Module &m, llvm::StringRef s, const llvm::Twine &name) {
  auto *init = llvm::ConstantDataArray::getString(m.getContext(), s);
  return new llvm::GlobalVariable(m, init->getType(), /*isConstant=*/true,
                                  llvm::GlobalValue::PrivateLinkage, init, name);
}

/// What a CUDA module's descriptor holds beyond a CPU module's.
struct CUDAParts {
  std::vector<std::string> kernels;
  std::vector<std::pair<std::string, std::string>> images; // chip, PTX
  uint64_t constantsSize = 0;
  std::string hostImage; // bitcode of the kernels for the host, or empty
};

/// The pointer fields of nnc_abi_context_t (abi.h) compiled code reads, by
/// their index in {runtime, num_threads, parallel_for, cuda, profile,
/// profile_state, dims, output_dims, strings}.
enum ContextField { kContextCuda = 3, kContextDims = 6, kContextOutputDims = 7, kContextStrings = 8 };

/// Loads field `field` of the nnc_abi_context_t at `context`.
llvm::Value *loadContextField(llvm::IRBuilder<> &b, llvm::Value *context, ContextField field) {
  llvm::LLVMContext &ctx = b.getContext();
  auto *ptr = llvm::PointerType::get(ctx, 0);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *contextTy = llvm::StructType::get(ctx, {ptr, i32, ptr, ptr, ptr, ptr, ptr, ptr, ptr});
  return b.CreateLoad(ptr, b.CreateStructGEP(contextTy, context, field));
}

/// Adds `i32 nnc_entry_<name>(ptr inputs, ptr outputs, ptr workspace, ptr ctx)`.
llvm::Function *addEntryWrapper(llvm::Module &m, const nnc::FunctionInfo &info, bool cuda) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Function *impl = m.getFunction(info.name);
  auto *ptr = llvm::PointerType::get(ctx, 0);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *type = llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr}, false);
  auto *entry = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                       "nnc_entry_" + info.name, m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  SmallVector<llvm::Value *> args;
  // A dynamic function's dims, from the context (abi.h).
  llvm::Value *dims = nullptr;
  if (info.dynamic())
    dims = loadContextField(b, entry->getArg(3), kContextDims);
  int64_t nextDim = 0;
  // A memref descriptor expanded: allocated ptr, aligned ptr, offset, sizes, strides.
  auto pushMemref = [&](llvm::Value *data, ArrayRef<int64_t> shape) {
    args.append({data, data, b.getInt64(0)});
    SmallVector<llvm::Value *> sizes;
    for (int64_t d : shape) {
      int64_t at = nextDim++;
      sizes.push_back(d >= 0 ? (llvm::Value *)llvm::ConstantInt::get(i64, d)
                             : b.CreateLoad(i64, b.CreateConstGEP1_64(i64, dims, at)));
    }
    args.append(sizes.begin(), sizes.end());
    llvm::Value *stride = llvm::ConstantInt::get(i64, 1);
    SmallVector<llvm::Value *> strides(shape.size());
    for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
      strides[d] = stride;
      stride = b.CreateMul(stride, sizes[d]);
    }
    args.append(strides.begin(), strides.end());
  };
  auto pushTensors = [&](llvm::Value *array, const std::vector<nnc::TensorInfo> &tensors) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      llvm::Value *slot = b.CreateConstGEP1_64(ptr, array, i);
      pushMemref(b.CreateLoad(ptr, slot), tensors[i].shape);
    }
  };
  pushTensors(entry->getArg(0), info.inputs);
  pushTensors(entry->getArg(1), info.outputs);
  // The workspace's size is the last of a dynamic function's dims.
  pushMemref(entry->getArg(2), {dims ? -1 : (int64_t)info.workspaceSize});
  if (!info.dataDependentOutputs.empty()) {
    // Where the run writes its outputs' dims: context->output_dims.
    int64_t count = 0;
    for (const nnc::TensorInfo &t : info.outputs)
      count += t.shape.size();
    pushMemref(loadContextField(b, entry->getArg(3), kContextOutputDims),
               {std::max<int64_t>(count, 1)});
  }
  if (cuda) {
    // The device constants: context->cuda->constants (nnc_abi_cuda_t is
    // {device, constants, launch}).
    auto *cudaTy = llvm::StructType::get(ctx, {ptr, ptr, ptr});
    llvm::Value *cudaPtr = loadContextField(b, entry->getArg(3), kContextCuda);
    llvm::Value *constants = b.CreateLoad(ptr, b.CreateStructGEP(cudaTy, cudaPtr, 1));
    pushMemref(constants, {(int64_t)info.constantsSize});
  }
  // Parallel loops find the runtime's context in a thread-local (see
  // compiler/Codegen/Common/RuntimeContext.h); a module without one has none.
  llvm::GlobalVariable *slot = m.getGlobalVariable(nnc::kRuntimeContextGlobal, true);
  llvm::Value *slotAddr = nullptr, *saved = nullptr;
  if (slot) {
    slotAddr = b.CreateThreadLocalAddress(slot);
    saved = b.CreateLoad(ptr, slotAddr);
    b.CreateStore(entry->getArg(3), slotAddr);
  }
  b.CreateCall(impl, args);
  if (slot)
    b.CreateStore(saved, slotAddr);
  b.CreateRet(b.getInt32(0));
  return entry;
}

/// Defines the string functions the lowering declares (Strings.cpp) as calls
/// through the call's nnc_abi_strings_t (abi.h), found in the context slot
/// the entry wrapper fills. With no context or no table (a caller outside
/// the runtime) they fail: a NULL text, a 0 value, "not a stopword".
void addStringTrampolines(llvm::Module &m) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptr = llvm::PointerType::get(ctx, 0);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  // Which of nnc_abi_strings_t's {state, format, parse, is_stopword,
  // change_case} each calls.
  const std::pair<const char *, unsigned> kinds[] = {{"nnc_strings_format", 1},
                                                     {"nnc_strings_parse", 2},
                                                     {"nnc_strings_is_stopword", 3},
                                                     {"nnc_strings_change_case", 4}};
  llvm::GlobalVariable *slot = nullptr;
  for (auto [name, field] : kinds) {
    llvm::Function *f = m.getFunction(name);
    if (!f || !f->isDeclaration())
      continue;
    if (!slot) {
      slot = m.getGlobalVariable(nnc::kRuntimeContextGlobal, true);
      if (!slot)
        slot = new llvm::GlobalVariable(m, ptr, /*isConstant=*/false,
                                        llvm::GlobalValue::ExternalLinkage,
                                        llvm::ConstantPointerNull::get(ptr),
                                        nnc::kRuntimeContextGlobal, nullptr,
                                        llvm::GlobalValue::GeneralDynamicTLSModel);
    }
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    auto *fail = llvm::BasicBlock::Create(ctx, "fail", f);
    auto *call = llvm::BasicBlock::Create(ctx, "call", f);
    auto *tableTy = llvm::StructType::get(ctx, {ptr, ptr, ptr, ptr, ptr});
    llvm::Value *context = b.CreateLoad(ptr, b.CreateThreadLocalAddress(slot));
    llvm::Value *haveContext = b.CreateIsNotNull(context);
    llvm::BasicBlock *loadTable = llvm::BasicBlock::Create(ctx, "table", f, call);
    b.CreateCondBr(haveContext, loadTable, fail);
    b.SetInsertPoint(loadTable);
    llvm::Value *table = loadContextField(b, context, kContextStrings);
    b.CreateCondBr(b.CreateIsNotNull(table), call, fail);
    b.SetInsertPoint(fail);
    b.CreateRet(llvm::ConstantInt::get(f->getReturnType(), 0));
    b.SetInsertPoint(call);
    llvm::Value *state = b.CreateLoad(ptr, b.CreateStructGEP(tableTy, table, 0));
    llvm::Value *fn = b.CreateLoad(ptr, b.CreateStructGEP(tableTy, table, field));
    llvm::Argument *args = f->arg_begin();
    auto text = [&](llvm::Value *address) { return b.CreateIntToPtr(address, ptr); };
    llvm::Value *result = nullptr;
    switch (field) {
    case 1: { // const char *format(state, i32 dtype, const void *value)
      llvm::Value *value = b.CreateAlloca(i64);
      b.CreateStore(&args[1], value);
      result = b.CreatePtrToInt(
          b.CreateCall(llvm::FunctionType::get(ptr, {ptr, i32, ptr}, false), fn,
                       {state, &args[0], value}),
          i64);
      break;
    }
    case 2: { // i32 parse(state, i32 dtype, const char *text, void *value)
      llvm::Value *value = b.CreateAlloca(i64);
      b.CreateStore(b.getInt64(0), value);
      b.CreateCall(llvm::FunctionType::get(i32, {ptr, i32, ptr, ptr}, false), fn,
                   {state, &args[0], text(&args[1]), value});
      result = b.CreateLoad(i64, value);
      break;
    }
    case 3: // i32 is_stopword(state, const char *text, const char *words, i64 count, i32 sensitive)
      result = b.CreateCall(llvm::FunctionType::get(i32, {ptr, ptr, ptr, i64, i32}, false), fn,
                            {state, text(&args[0]), text(&args[1]), &args[2], &args[3]});
      break;
    case 4: // const char *change_case(state, const char *text, i32 action)
      result = b.CreatePtrToInt(
          b.CreateCall(llvm::FunctionType::get(ptr, {ptr, ptr, i32}, false), fn,
                       {state, text(&args[0]), &args[1]}),
          i64);
      break;
    }
    b.CreateRet(result);
  }
}

/// Adds `i32 nnc_prepare_<name>(ptr input_dims, ptr inputs, ptr output_dims,
/// ptr workspace_size)` (abi.h), calling the shape function.
llvm::Function *addPrepareWrapper(llvm::Module &m, const nnc::FunctionInfo &info) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Function *impl = m.getFunction(info.name + "__shapes");
  if (!impl)
    return nullptr;
  auto *ptr = llvm::PointerType::get(ctx, 0);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *type = llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr}, false);
  auto *prepare = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                         "nnc_prepare_" + info.name, m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", prepare));
  auto count = [](const std::vector<nnc::TensorInfo> &list) {
    int64_t n = 0;
    for (const nnc::TensorInfo &t : list)
      n += t.shape.size();
    return std::max<int64_t>(n, 1);
  };
  llvm::Value *status = b.CreateAlloca(llvm::ArrayType::get(i64, 2));
  SmallVector<llvm::Value *> args;
  // memref<Nxi64> descriptors: allocated, aligned, offset, size, stride.
  auto push = [&](llvm::Value *data, int64_t n) {
    args.append({data, data, b.getInt64(0), b.getInt64(n), b.getInt64(1)});
  };
  push(prepare->getArg(0), count(info.inputs));
  push(prepare->getArg(2), count(info.outputs));
  push(status, 2);
  // The shape inputs: their data, with the dims of %in_dims.
  for (int32_t i : info.shapeInputs) {
    llvm::Value *data = b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, prepare->getArg(1), i));
    args.append({data, data, b.getInt64(0)});
    int64_t first = 0;
    for (int32_t k = 0; k < i; ++k)
      first += info.inputs[k].shape.size();
    const std::vector<int64_t> &shape = info.inputs[i].shape;
    SmallVector<llvm::Value *> sizes, strides(shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      sizes.push_back(b.CreateLoad(i64, b.CreateConstGEP1_64(i64, prepare->getArg(0), first + d)));
    llvm::Value *stride = b.getInt64(1);
    for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
      strides[d] = stride;
      stride = b.CreateMul(stride, sizes[d]);
    }
    args.append(sizes.begin(), sizes.end());
    args.append(strides.begin(), strides.end());
  }
  b.CreateCall(impl, args);
  llvm::Value *code = b.CreateLoad(i64, status);
  b.CreateStore(b.CreateLoad(i64, b.CreateConstGEP1_64(i64, status, 1)), prepare->getArg(3));
  b.CreateRet(b.CreateTrunc(code, i32));
  return prepare;
}

/// The NNC_CPU_* bits of the extensions `subtarget` lets LLVM use (x86 only).
uint32_t cpuFeatureBits(const llvm::MCSubtargetInfo &subtarget) {
  if (!subtarget.getTargetTriple().isX86())
    return 0;
  const std::pair<uint32_t, const char *> known[] = {
      {NNC_CPU_AVX, "+avx"},           {NNC_CPU_AVX2, "+avx2"},
      {NNC_CPU_FMA, "+fma"},           {NNC_CPU_BMI2, "+bmi2"},
      {NNC_CPU_AVX512F, "+avx512f"},   {NNC_CPU_AVX512BW, "+avx512bw"},
      {NNC_CPU_AVX512DQ, "+avx512dq"}, {NNC_CPU_AVX512VL, "+avx512vl"},
      {NNC_CPU_AVX512VNNI, "+avx512vnni"}, {NNC_CPU_AVX512BF16, "+avx512bf16"}};
  uint32_t bits = 0;
  for (auto [bit, feature] : known)
    if (subtarget.checkFeatures(feature))
      bits |= bit;
  return bits;
}

/// Emits the nnc_abi_module_t descriptor and its accessor.
void addDescriptor(llvm::Module &m, const std::vector<nnc::FunctionInfo> &functions,
                   ArrayRef<llvm::Function *> entries, ArrayRef<llvm::Function *> prepares,
                   const nnc::ArtifactOptions &options,
                   llvm::StringRef cpu, uint32_t cpuFeatures, uint64_t constantsSize,
                   const CUDAParts *cuda) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptr = llvm::PointerType::get(ctx, 0);
  auto *i32 = llvm::Type::getInt32Ty(ctx);
  auto *i64 = llvm::Type::getInt64Ty(ctx);
  auto *tensorTy = llvm::StructType::get(ctx, {ptr, i32, i32, ptr});
  auto *f64 = llvm::Type::getDoubleTy(ctx);
  auto *functionTy = llvm::StructType::get(
      ctx, {ptr, ptr, i32, i32, ptr, ptr, i64, i64, i32, ptr, ptr, i32, ptr, i32, ptr, i32, ptr});
  auto *kernelTy = llvm::StructType::get(ctx, {ptr, ptr, f64, f64, f64, f64});
  auto *moduleTy = llvm::StructType::get(
      ctx, {i32, i32, ptr, ptr, ptr, i32, ptr, i64, ptr, i32, ptr, i32, ptr, ptr, ptr});
  auto global = [&](llvm::Constant *init, const llvm::Twine &name) -> llvm::Constant * {
    return new llvm::GlobalVariable(m, init->getType(), true, llvm::GlobalValue::PrivateLinkage,
                                    init, name);
  };
  auto tensors = [&](const std::vector<nnc::TensorInfo> &list, const llvm::Twine &prefix) {
    SmallVector<llvm::Constant *> elems;
    for (auto [i, t] : llvm::enumerate(list)) {
      llvm::Constant *shape = global(llvm::ConstantDataArray::get(ctx, ArrayRef<uint64_t>(
                                         reinterpret_cast<const uint64_t *>(t.shape.data()), t.shape.size())),
                                     prefix + ".shape" + llvm::Twine(i));
      elems.push_back(llvm::ConstantStruct::get(
          tensorTy, {stringConstant(m, t.name, prefix + ".name" + llvm::Twine(i)),
                     llvm::ConstantInt::get(i32, t.dtype), llvm::ConstantInt::get(i32, t.shape.size()), shape}));
    }
    return global(llvm::ConstantArray::get(llvm::ArrayType::get(tensorTy, elems.size()), elems), prefix);
  };
  auto kernels = [&](const std::vector<nnc::KernelInfo> &list, const llvm::Twine &prefix)
      -> llvm::Constant * {
    if (list.empty())
      return llvm::ConstantPointerNull::get(ptr);
    SmallVector<llvm::Constant *> elems;
    for (auto [i, k] : llvm::enumerate(list))
      elems.push_back(llvm::ConstantStruct::get(
          kernelTy, {stringConstant(m, k.kind, prefix + ".kind" + llvm::Twine(i)),
                     stringConstant(m, k.nodes, prefix + ".nodes" + llvm::Twine(i)),
                     llvm::ConstantFP::get(f64, k.flops), llvm::ConstantFP::get(f64, k.bytesRead),
                     llvm::ConstantFP::get(f64, k.bytesWritten),
                     llvm::ConstantFP::get(f64, k.estimatedSeconds)}));
    return global(llvm::ConstantArray::get(llvm::ArrayType::get(kernelTy, elems.size()), elems),
                  prefix);
  };
  auto checks = [&](const nnc::FunctionInfo &f) -> llvm::Constant * {
    if (f.checks.empty())
      return llvm::ConstantPointerNull::get(ptr);
    SmallVector<llvm::Constant *> messages;
    for (auto [i, message] : llvm::enumerate(f.checks))
      messages.push_back(stringConstant(m, message, "nnc.check." + f.name + llvm::Twine(i)));
    return global(llvm::ConstantArray::get(llvm::ArrayType::get(ptr, messages.size()), messages),
                  "nnc.checks." + f.name);
  };
  auto indexList = [&](const std::vector<int32_t> &list, const llvm::Twine &name) -> llvm::Constant * {
    if (list.empty())
      return llvm::ConstantPointerNull::get(ptr);
    return global(llvm::ConstantDataArray::get(ctx, ArrayRef<int32_t>(list)), name);
  };
  SmallVector<llvm::Constant *> fns;
  for (auto [f, entry, prepare] : llvm::zip(functions, entries, prepares)) {
    fns.push_back(llvm::ConstantStruct::get(
        functionTy, {stringConstant(m, f.name, "nnc.fn." + f.name), entry,
                     llvm::ConstantInt::get(i32, f.inputs.size()), llvm::ConstantInt::get(i32, f.outputs.size()),
                     tensors(f.inputs, "nnc.in." + f.name), tensors(f.outputs, "nnc.out." + f.name),
                     llvm::ConstantInt::get(i64, f.workspaceSize), llvm::ConstantInt::get(i64, 64),
                     llvm::ConstantInt::get(i32, f.kernels.size()),
                     kernels(f.kernels, "nnc.profile." + f.name),
                     prepare ? (llvm::Constant *)prepare : llvm::ConstantPointerNull::get(ptr),
                     llvm::ConstantInt::get(i32, f.checks.size()), checks(f),
                     llvm::ConstantInt::get(i32, f.shapeInputs.size()),
                     indexList(f.shapeInputs, "nnc.shape_inputs." + f.name),
                     llvm::ConstantInt::get(i32, f.dataDependentOutputs.size()),
                     indexList(f.dataDependentOutputs, "nnc.data_dependent_outputs." + f.name)}));
  }
  // The CUDA fields: none on the CPU.
  llvm::Constant *null = llvm::ConstantPointerNull::get(ptr);
  llvm::Constant *cudaConstants = null, *kernelArray = null, *imageArray = null,
                 *hostKernelArray = null;
  if (cuda) {
    if (llvm::GlobalVariable *block = m.getGlobalVariable(nnc::kConstantsGlobal, true))
      cudaConstants = block;
    SmallVector<llvm::Constant *> names;
    for (auto [i, name] : llvm::enumerate(cuda->kernels))
      names.push_back(stringConstant(m, name, "nnc.kernel" + llvm::Twine(i)));
    kernelArray = global(llvm::ConstantArray::get(llvm::ArrayType::get(ptr, names.size()), names),
                         "nnc.kernels");
    auto *imageTy = llvm::StructType::get(ctx, {ptr, ptr, i64});
    SmallVector<llvm::Constant *> images;
    for (auto [chip, ptx] : cuda->images)
      images.push_back(llvm::ConstantStruct::get(
          imageTy, {stringConstant(m, chip, "nnc.chip." + chip),
                    stringConstant(m, ptx, "nnc.ptx." + chip), llvm::ConstantInt::get(i64, ptx.size())}));
    imageArray = global(llvm::ConstantArray::get(llvm::ArrayType::get(imageTy, images.size()), images),
                        "nnc.images");
    // The host images' records (nnc_abi_cuda_host_kernel_t), one global per
    // kernel from the linked host image, gathered in the kernels' order.
    if (!cuda->hostImage.empty()) {
      SmallVector<llvm::Constant *> records;
      SmallVector<llvm::GlobalVariable *> globals;
      for (const std::string &name : cuda->kernels) {
        llvm::GlobalVariable *record = m.getGlobalVariable(nnc::hostKernelSymbol(name));
        records.push_back(record->getInitializer());
        globals.push_back(record);
      }
      auto *recordTy = records.empty() ? llvm::StructType::get(ctx, llvm::ArrayRef<llvm::Type *>{ptr})
                                       : records.front()->getType();
      hostKernelArray = global(
          llvm::ConstantArray::get(llvm::ArrayType::get(recordTy, records.size()), records),
          "nnc.host_kernels");
      for (llvm::GlobalVariable *record : globals)
        record->eraseFromParent();
    }
  }
  llvm::Constant *fnArray = global(llvm::ConstantArray::get(llvm::ArrayType::get(functionTy, fns.size()), fns),
                                   "nnc.functions");
  llvm::Constant *descriptor = global(
      llvm::ConstantStruct::get(
          moduleTy, {llvm::ConstantInt::get(i32, NNC_ABI_VERSION), llvm::ConstantInt::get(i32, cpuFeatures),
                     stringConstant(m, "nnc 0.1", "nnc.producer"), stringConstant(m, options.target, "nnc.target"),
                     stringConstant(m, cpu, "nnc.cpu"), llvm::ConstantInt::get(i32, fns.size()), fnArray,
                     llvm::ConstantInt::get(i64, constantsSize), cudaConstants,
                     llvm::ConstantInt::get(i32, cuda ? cuda->kernels.size() : 0), kernelArray,
                     llvm::ConstantInt::get(i32, cuda ? cuda->images.size() : 0), imageArray,
                     hostKernelArray,
                     stringConstant(m, options.precision, "nnc.precision")}),
      "nnc.module");
  auto *accessor = llvm::Function::Create(llvm::FunctionType::get(ptr, false),
                                          llvm::GlobalValue::ExternalLinkage, NNC_ABI_MODULE_SYMBOL, m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", accessor));
  b.CreateRet(descriptor);
}

/// Bytes of constant data (the weights) in the module.
uint64_t constantBytes(llvm::Module &m) {
  uint64_t total = 0;
  for (llvm::GlobalVariable &g : m.globals())
    if (g.isConstant() && g.hasInitializer())
      total += m.getDataLayout().getTypeAllocSize(g.getValueType());
  return total;
}

/// LLVM's optimizations, then conversions to bfloat16 written out: its
/// InstCombine narrows f32 arithmetic on bfloat16 values back to bfloat16,
/// which x86-64's code generation would compute with __truncsfbf2.
llvm::Error optimize(llvm::Module &m, llvm::TargetMachine &tm, int level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel opt = level >= 3 ? llvm::OptimizationLevel::O3
                                : level == 2 ? llvm::OptimizationLevel::O2
                                : level == 1 ? llvm::OptimizationLevel::O1
                                             : llvm::OptimizationLevel::O0;
  pb.buildPerModuleDefaultPipeline(opt).run(m, mam);
  return nnc::expandBFloat16Conversions(m);
}

/// The directories where the system's libraries (libm) live for `triple`.
SmallVector<std::string> libraryDirs(const llvm::Triple &triple) {
  std::string multiarch = (triple.getArchName() + "-linux-gnu").str();
  return {"/lib/" + multiarch, "/usr/lib/" + multiarch, "/lib64", "/usr/lib64", "/lib", "/usr/lib"};
}

LogicalResult link(Operation *op, ArrayRef<std::string> objects, StringRef output,
                   const llvm::Triple &triple, StringRef linker) {
  if (!linker.empty() && !llvm::sys::fs::can_execute(linker))
    return op->emitError("the linker '") << linker << "' does not exist or is not executable";
  llvm::ErrorOr<std::string> lld = linker.empty() ? llvm::sys::findProgramByName("ld.lld", {NNC_LLVM_TOOLS_DIR})
                                                  : llvm::ErrorOr<std::string>(linker.str());
  if (!lld)
    lld = llvm::sys::findProgramByName("ld.lld-22");
  if (!lld)
    lld = llvm::sys::findProgramByName("ld.lld");
  if (!lld)
    return op->emitError("cannot find the linker ld.lld (looked in " NNC_LLVM_TOOLS_DIR
                         " and on PATH); install Debian's lld-22");
  std::vector<std::string> args{*lld, "-shared", "--eh-frame-hdr", "-z", "noexecstack", "-z", "now",
                                "-o", output.str()};
  args.insert(args.end(), objects.begin(), objects.end());
  for (const std::string &dir : libraryDirs(triple))
    if (llvm::sys::fs::is_directory(dir))
      args.push_back("-L" + dir);
  args.push_back("-lm");
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string message;
  SmallString<128> errorFile;
  llvm::sys::fs::createTemporaryFile("nnc-link", "txt", errorFile);
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(errorFile), StringRef(errorFile)};
  int rc = llvm::sys::ExecuteAndWait(*lld, argRefs, std::nullopt, redirects, 0, 0, &message);
  auto log = llvm::MemoryBuffer::getFile(errorFile);
  llvm::sys::fs::remove(errorFile);
  if (rc != 0)
    return op->emitError("linking '") << output << "' with " << *lld << " failed"
                                      << (message.empty() ? "" : ": " + message) << "\n"
                                      << (log ? (*log)->getBuffer() : "");
  return success();
}

/// The CPU name and feature string to compile for: the named CPU with its
/// own features, or the host's CPU with the features this machine has. A
/// CUDA module's host code only enqueues kernels: it is compiled for the
/// architecture's baseline, so that it loads on any host.
std::pair<std::string, std::string> cpuAndFeatures(const nnc::ArtifactOptions &options,
                                                   const llvm::Triple &triple) {
  bool baseline = options.target == "cuda" && options.cpu.empty();
  std::string cpu = !options.cpu.empty() ? options.cpu
                    : baseline           ? std::string(triple.isX86() ? "x86-64" : "generic")
                                         : llvm::sys::getHostCPUName().str();
  std::string features = options.features;
  if (options.cpu.empty() && features.empty() && !baseline) {
    SmallVector<std::string> list;
    for (auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
      list.push_back((enabled ? "+" : "-") + name.str());
    features = llvm::join(list, ",");
  }
  // Strided scalar stores (a pad's border columns, one element per row) are
  // not worth a scatter: LLVM's vectorizer turned MobileNetV2's into about
  // 1% of its run time.
  if (triple.isX86())
    features += std::string(features.empty() ? "" : ",") + "+prefer-no-scatter";
  return {cpu, features};
}
} // namespace

FailureOr<nnc::VectorUnit> nnc::vectorUnitOf(const ArtifactOptions &options, std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return failure();
  auto [cpu, features] = cpuAndFeatures(options, triple);
  // Checked on a generic subtarget first: LLVM warns on stderr when it
  // makes one for a CPU it does not know.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      target->createMCSubtargetInfo(triple, "generic", ""));
  if (!generic || !generic->isCPUStringValid(cpu)) {
    error = "unknown CPU '" + cpu + "' for " + triple.str() + " (llc-22 -mtriple=" +
            triple.str() + " -mcpu=help lists the known ones)";
    return failure();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, cpu, features));
  // x86 is the target the schedules are tuned for; others get 128-bit
  // vectors and 16 registers (SSE's; NEON's 32 would allow larger tiles).
  if (info->checkFeatures("+avx512f"))
    return VectorUnit{512, 32};
  if (info->checkFeatures("+avx"))
    return VectorUnit{256, 16};
  return VectorUnit{128, 16};
}

LogicalResult nnc::writeArtifact(ModuleOp module, const std::vector<FunctionInfo> &functions,
                                 const ArtifactOptions &options, ArtifactKind kind,
                                 const std::string &outputPath) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());

  // A CUDA module's kernels travel in module attributes (compiler/Codegen/CUDA/CUDA.h).
  std::optional<CUDAParts> cuda;
  if (options.target == "cuda") {
    cuda.emplace();
    auto images = module->getAttrOfType<DictionaryAttr>(kCUDAImagesAttr);
    auto kernels = module->getAttrOfType<ArrayAttr>(kCUDAKernelsAttr);
    if (!images || !kernels)
      return module.emitError("expected the CUDA kernels as the attributes '")
             << kCUDAImagesAttr << "' and '" << kCUDAKernelsAttr << "'";
    for (NamedAttribute image : images)
      cuda->images.emplace_back(image.getName().str(),
                                cast<StringAttr>(image.getValue()).getValue().str());
    for (Attribute kernel : kernels)
      cuda->kernels.push_back(cast<StringAttr>(kernel).getValue().str());
    for (const FunctionInfo &f : functions)
      cuda->constantsSize = std::max(cuda->constantsSize, f.constantsSize);
    if (auto host = module->getAttrOfType<StringAttr>(kCUDAHostImageAttr))
      cuda->hostImage = host.getValue().str();
    module->removeAttr(kCUDAImagesAttr);
    module->removeAttr(kCUDAKernelsAttr);
    module->removeAttr(kCUDAHostImageAttr);
  }

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> m = translateModuleToLLVMIR(module, llvmContext, "nnc_module");
  if (!m)
    return module.emitError("translation to LLVM IR failed");

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError("no LLVM target for '") << triple.str() << "': " << error;
  auto [cpu, features] = cpuAndFeatures(options, triple);
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_, std::nullopt,
      options.optLevel >= 3 ? llvm::CodeGenOptLevel::Aggressive : llvm::CodeGenOptLevel::Default));
  if (!tm)
    return module.emitError("cannot create a target machine for CPU '") << cpu << "'";
  m->setTargetTriple(triple);
  m->setDataLayout(tm->createDataLayout());
  // The cuda-emulated device's kernels are compiled with the host code.
  if (cuda && !cuda->hostImage.empty()) {
    llvm::Expected<std::unique_ptr<llvm::Module>> kernels = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(cuda->hostImage, "host-kernels"), llvmContext);
    if (!kernels)
      return module.emitError("cannot read the kernels' host image: ")
             << llvm::toString(kernels.takeError());
    (*kernels)->setTargetTriple(triple);
    (*kernels)->setDataLayout(m->getDataLayout());
    if (llvm::Linker::linkModules(*m, std::move(*kernels)))
      return module.emitError("cannot link the kernels' host image into the host code");
    for (const std::string &name : cuda->kernels)
      if (!m->getGlobalVariable(hostKernelSymbol(name)))
        return module.emitError("the kernels' host image has no kernel '") << name << "'";
  }

  addStringTrampolines(*m);
  // Everything but the descriptor stays private to the library.
  for (llvm::Function &f : *m)
    if (!f.isDeclaration())
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  if (llvm::GlobalVariable *slot = m->getGlobalVariable(kRuntimeContextGlobal, true))
    slot->setLinkage(llvm::GlobalValue::InternalLinkage);
  SmallVector<llvm::Function *> entries, prepares;
  for (const FunctionInfo &f : functions) {
    if (!m->getFunction(f.name))
      return module.emitError("no function '") << f.name << "' to export";
    if (f.dynamic() && cuda)
      return module.emitError("function '") << f.name << "' has dynamic dims, which the CUDA "
                                              "target does not support yet; pin them with --dim";
    // A function with static dims has a shape function too when it checks
    // values given at run time (a shape input feeding an intermediate; the
    // CUDA target refuses those in nnc-cuda-map-to-gpu).
    bool checksValues = m->getFunction(f.name + "__shapes") != nullptr;
    entries.push_back(addEntryWrapper(*m, f, cuda.has_value()));
    prepares.push_back(f.dynamic() || checksValues ? addPrepareWrapper(*m, f) : nullptr);
    if (f.dynamic() && !prepares.back())
      return module.emitError("no shape function for function '") << f.name << "'";
  }
  if (llvm::GlobalVariable *block = m->getGlobalVariable(kConstantsGlobal, true))
    block->setLinkage(llvm::GlobalValue::InternalLinkage);
  addDescriptor(*m, functions, entries, prepares, options, cpu, cpuFeatureBits(*tm->getMCSubtargetInfo()),
                cuda ? cuda->constantsSize : constantBytes(*m), cuda ? &*cuda : nullptr);
  if (kind == ArtifactKind::LLVMIR) {
    if (llvm::Error error = optimize(*m, *tm, options.optLevel))
      return module.emitError(llvm::toString(std::move(error)));
    auto out = openOutputFile(outputPath, &error);
    if (!out)
      return module.emitError(error);
    m->print(out->os(), nullptr);
    out->keep();
    return success();
  }

  // Optimization and code generation take most of a compile and the kernels
  // are independent functions: for a shared library, the functions are
  // spread over up to 8 partitions (largest first, to the lightest), each
  // optimized and compiled in its own LLVMContext (a context is
  // single-threaded) by one thread per core, while the weights and the
  // descriptor stay in the original module, which only needs code
  // generation; the objects are linked together. The partitions do not
  // depend on the machine's cores, so neither does the library. An object
  // file (--emit=obj) stays one module.
  unsigned functionParts = 1;
  if (kind == ArtifactKind::SharedLibrary)
    functionParts = std::clamp<unsigned>(
        llvm::count_if(*m, [](llvm::Function &f) { return !f.isDeclaration(); }), 1u, 8u);
  std::vector<SmallVector<char, 0>> bitcode;
  if (functionParts > 1) {
    // Symbols other partitions refer to become hidden externals (the
    // library still exports only the descriptor).
    for (llvm::GlobalValue &g : m->global_values())
      if (g.hasLocalLinkage()) {
        g.setLinkage(llvm::GlobalValue::ExternalLinkage);
        g.setVisibility(llvm::GlobalValue::HiddenVisibility);
      }
    SmallVector<llvm::Function *> functions;
    for (llvm::Function &f : *m)
      if (!f.isDeclaration())
        functions.push_back(&f);
    auto size = [](llvm::Function *f) { return f->getInstructionCount(); };
    llvm::stable_sort(functions, [&](llvm::Function *a, llvm::Function *b) { return size(a) > size(b); });
    llvm::DenseMap<const llvm::GlobalValue *, unsigned> partOf;
    std::vector<uint64_t> load(functionParts, 0);
    for (llvm::Function *f : functions) {
      unsigned lightest = std::min_element(load.begin(), load.end()) - load.begin();
      partOf[f] = lightest;
      load[lightest] += size(f);
    }
    for (unsigned i = 0; i < functionParts; ++i) {
      llvm::ValueToValueMapTy map;
      std::unique_ptr<llvm::Module> part = llvm::CloneModule(
          *m, map, [&](const llvm::GlobalValue *g) {
            auto it = partOf.find(g);
            return it != partOf.end() && it->second == i;
          });
      bitcode.emplace_back();
      llvm::raw_svector_ostream os(bitcode.back());
      llvm::WriteBitcodeToFile(*part, os);
    }
    // What stays: the weights, the descriptor and its strings.
    for (llvm::Function *f : functions)
      f->deleteBody();
  }
  // Partition 0 is the original module; 1..functionParts the functions.
  unsigned parts = functionParts > 1 ? functionParts + 1 : 1;
  std::vector<std::string> objects(parts);
  std::vector<std::string> errors(parts);
  auto compile = [&](unsigned i) {
    std::unique_ptr<llvm::LLVMContext> context;
    std::unique_ptr<llvm::Module> partModule;
    llvm::Module *part = m.get();
    std::unique_ptr<llvm::TargetMachine> partTm;
    llvm::TargetMachine *machine = tm.get();
    if (i > 0) {
      context = std::make_unique<llvm::LLVMContext>();
      llvm::Expected<std::unique_ptr<llvm::Module>> parsed = llvm::parseBitcodeFile(
          llvm::MemoryBufferRef(StringRef(bitcode[i - 1].data(), bitcode[i - 1].size()), "part"),
          *context);
      if (!parsed) {
        errors[i] = llvm::toString(parsed.takeError());
        return;
      }
      partModule = std::move(*parsed);
      part = partModule.get();
      // Target machines are not shared between threads either.
      partTm.reset(target->createTargetMachine(triple, cpu, features, targetOptions,
                                               llvm::Reloc::PIC_, std::nullopt,
                                               tm->getOptLevel()));
      machine = partTm.get();
      if (!machine) {
        errors[i] = "cannot create a target machine for CPU '" + cpu + "'";
        return;
      }
    }
    if (llvm::Error error = optimize(*part, *machine, options.optLevel)) {
      errors[i] = llvm::toString(std::move(error));
      return;
    }
    SmallString<128> objectPath(outputPath);
    if (kind == ArtifactKind::SharedLibrary &&
        llvm::sys::fs::createTemporaryFile("nnc", "o", objectPath)) {
      errors[i] = "cannot create a temporary object file";
      return;
    }
    objects[i] = objectPath.str().str();
    std::error_code ec;
    llvm::ToolOutputFile out(objectPath, ec, llvm::sys::fs::OF_None);
    if (ec) {
      errors[i] = "cannot write '" + objects[i] + "': " + ec.message();
      return;
    }
    llvm::legacy::PassManager pm;
    if (machine->addPassesToEmitFile(pm, out.os(), nullptr, llvm::CodeGenFileType::ObjectFile)) {
      errors[i] = "the target cannot emit object files";
      return;
    }
    pm.run(*part);
    out.keep();
  };
  std::atomic<unsigned> next{1};
  auto work = [&] {
    for (unsigned i = next++; i < parts; i = next++)
      compile(i);
  };
  std::vector<std::thread> threads;
  unsigned workers = std::clamp(std::thread::hardware_concurrency(), 1u, parts);
  for (unsigned i = 1; i < workers; ++i)
    threads.emplace_back(work);
  compile(0);
  work();
  for (std::thread &t : threads)
    t.join();
  auto removeObjects = [&] {
    if (kind == ArtifactKind::SharedLibrary)
      for (const std::string &object : objects)
        if (!object.empty())
          llvm::sys::fs::remove(object);
  };
  for (const std::string &e : errors)
    if (!e.empty()) {
      removeObjects();
      return module.emitError(e);
    }
  if (kind == ArtifactKind::Object)
    return success();
  LogicalResult linked = link(module, objects, outputPath, triple, options.linker);
  removeObjects();
  return linked;
}
