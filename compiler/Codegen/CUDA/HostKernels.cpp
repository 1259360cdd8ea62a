//===- HostKernels.cpp - CUDA kernels' LLVM IR rewritten for the host -----===//
//
// The IR comes from the NVPTX pipeline's optimizer, so it already holds what
// the GPU back end will see: barriers where the kernel has them, shared
// variables, special registers with the value ranges the optimizer assumed.
// Everything GPU-specific in it becomes an access to the emulated thread's
// state (nnc_abi_cuda_thread_t in abi.h); an intrinsic without a host meaning
// here is an error rather than a guess.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/HostKernels.h"
#include "compiler/Codegen/Common/BFloat16.h"

#include "runtime/include/nnc/abi.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/IR/AttributeMask.h"
#include "llvm/IR/CallingConv.h"
#include "llvm/IR/ConstantRange.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/ReplaceConstant.h"

#include <array>
#include <optional>

using namespace llvm;

namespace {
constexpr unsigned kSharedAddressSpace = 3;

/// Fields of nnc_abi_cuda_thread_t, in order.
enum Field {
  kTid, kNtid, kCtaid, kNctaid, kLaneid, kReserved, kShared, kEmulator, kBarrier, kWarp, kMma
};

StructType *threadType(LLVMContext &ctx) {
  auto *i32 = Type::getInt32Ty(ctx);
  auto *dims = ArrayType::get(i32, 3);
  auto *ptr = PointerType::get(ctx, 0);
  return StructType::get(ctx, {dims, dims, dims, dims, i32, i32, ptr, ptr, ptr, ptr, ptr});
}

Error failure(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// What an NVVM intrinsic is on the host.
struct Meaning {
  enum Kind {
    Unknown, SpecialRegister, WarpSize, Barrier, Warp, Mma, ToTF32, ToBF16x2, ToF16x2, Fence, Math
  } kind = Unknown;
  int field = 0, dim = 0; // SpecialRegister
  int warpOp = 0;         // Warp: NNC_CUDA_WARP_*
  int mmaKind = 0;        // Mma: NNC_CUDA_MMA_*
  bool aligned = false;   // Barrier: the .aligned form
  Intrinsic::ID math = Intrinsic::not_intrinsic; // Math; not_intrinsic is 1 / x
};

Meaning classify(StringRef name) {
  Meaning m;
  if (!name.consume_front("llvm.nvvm."))
    return m;
  if (name.consume_front("read.ptx.sreg.")) {
    if (name == "warpsize") {
      m.kind = Meaning::WarpSize;
      return m;
    }
    if (name == "laneid") {
      m.kind = Meaning::SpecialRegister;
      m.field = kLaneid;
      return m;
    }
    auto [reg, dim] = name.split('.');
    int field = StringSwitch<int>(reg)
                    .Case("tid", kTid)
                    .Case("ntid", kNtid)
                    .Case("ctaid", kCtaid)
                    .Case("nctaid", kNctaid)
                    .Default(-1);
    int d = StringSwitch<int>(dim).Case("x", 0).Case("y", 1).Case("z", 2).Default(-1);
    if (field >= 0 && d >= 0) {
      m.kind = Meaning::SpecialRegister;
      m.field = field;
      m.dim = d;
    }
    return m;
  }
  // __syncthreads is the .aligned form: every thread of a warp executes it.
  if (name == "barrier.cta.sync.aligned.all" || name == "barrier.cta.sync.all") {
    m.kind = Meaning::Barrier;
    m.aligned = name == "barrier.cta.sync.aligned.all";
    return m;
  }
  if (name.consume_front("shfl.sync.")) {
    auto [mode, type] = name.split('.');
    int op = StringSwitch<int>(mode)
                 .Case("up", NNC_CUDA_WARP_SHFL_UP)
                 .Case("down", NNC_CUDA_WARP_SHFL_DOWN)
                 .Case("bfly", NNC_CUDA_WARP_SHFL_BFLY)
                 .Case("idx", NNC_CUDA_WARP_SHFL_IDX)
                 .Default(-1);
    if (op >= 0 && (type == "i32" || type == "f32" || type == "i32p" || type == "f32p")) {
      m.kind = Meaning::Warp;
      m.warpOp = op;
    }
    return m;
  }
  if (name.consume_front("vote.") && name.consume_back(".sync")) {
    int op = StringSwitch<int>(name)
                 .Case("all", NNC_CUDA_WARP_VOTE_ALL)
                 .Case("any", NNC_CUDA_WARP_VOTE_ANY)
                 .Case("uni", NNC_CUDA_WARP_VOTE_UNI)
                 .Case("ballot", NNC_CUDA_WARP_VOTE_BALLOT)
                 .Default(-1);
    if (op >= 0) {
      m.kind = Meaning::Warp;
      m.warpOp = op;
    }
    return m;
  }
  if (name == "bar.warp.sync") {
    m.kind = Meaning::Warp;
    m.warpOp = NNC_CUDA_WARP_SYNC;
    return m;
  }
  // The tensor cores' products with f32 accumulators, and the conversions
  // that make their operands.
  int mma = StringSwitch<int>(name)
                .Case("mma.m16n8k8.row.col.tf32", NNC_CUDA_MMA_M16N8K8_TF32)
                .Case("mma.m16n8k16.row.col.bf16", NNC_CUDA_MMA_M16N8K16_BF16)
                .Case("mma.m16n8k16.row.col.f32.f32", NNC_CUDA_MMA_M16N8K16_F16)
                .Default(-1);
  if (mma >= 0) {
    m.kind = Meaning::Mma;
    m.mmaKind = mma;
    return m;
  }
  if (name == "f2tf32.rna") {
    m.kind = Meaning::ToTF32;
    return m;
  }
  if (name == "ff2bf16x2.rn") {
    m.kind = Meaning::ToBF16x2;
    return m;
  }
  if (name == "ff2f16x2.rn") {
    m.kind = Meaning::ToF16x2;
    return m;
  }
  if (name == "membar.cta" || name == "membar.gl" || name == "membar.sys") {
    m.kind = Meaning::Fence;
    return m;
  }
  // Math: the host's correctly rounded operation stands for PTX's. Flushing
  // subnormals to zero (.ftz) is not emulated, and the approximate forms
  // come out more accurate than on the GPU; both stay far inside the
  // tolerance results are compared with.
  std::string key = name.str();
  for (size_t at; (at = key.find(".ftz")) != std::string::npos;)
    key.erase(at, 4);
  StringRef k = key;
  Intrinsic::ID id = StringSwitch<Intrinsic::ID>(k)
                         .Cases({"sqrt.rn.f", "sqrt.rn.d", "sqrt.f", "sqrt.approx.f"},
                                Intrinsic::sqrt)
                         .Cases({"floor.f", "floor.d"}, Intrinsic::floor)
                         .Cases({"ceil.f", "ceil.d"}, Intrinsic::ceil)
                         .Cases({"trunc.f", "trunc.d"}, Intrinsic::trunc)
                         // cvt.rni: to nearest, ties to even.
                         .Cases({"round.f", "round.d"}, Intrinsic::roundeven)
                         .Cases({"fmin.f", "fmin.d"}, Intrinsic::minnum)
                         .Cases({"fmax.f", "fmax.d"}, Intrinsic::maxnum)
                         .Case("fmin.nan.f", Intrinsic::minimum)
                         .Case("fmax.nan.f", Intrinsic::maximum)
                         .Cases({"lg2.approx.f", "lg2.approx.d"}, Intrinsic::log2)
                         .Default(Intrinsic::not_intrinsic);
  if (id == Intrinsic::not_intrinsic) {
    if (k.starts_with("fabs."))
      id = Intrinsic::fabs;
    else if (k.starts_with("ex2.approx."))
      id = Intrinsic::exp2;
  }
  if (id != Intrinsic::not_intrinsic) {
    m.kind = Meaning::Math;
    m.math = id;
    return m;
  }
  if (k == "rcp.rn.f" || k == "rcp.rn.d" || k == "rcp.approx.f" || k == "rcp.approx.d")
    m.kind = Meaning::Math; // math stays not_intrinsic: 1 / x
  return m;
}

/// The launch bounds a kernel's code was optimized for.
struct Bounds {
  std::array<uint32_t, 3> blockMin{1, 1, 1}, blockMax{1024, 1024, 64};
  std::array<uint32_t, 3> gridMin{1, 1, 1}, gridMax{0x7fffffff, 65535, 65535};

  void atMost(std::array<uint32_t, 3> &max, int d, uint64_t value) {
    max[d] = static_cast<uint32_t>(std::min<uint64_t>(max[d], value));
  }
  void atLeast(std::array<uint32_t, 3> &min, int d, uint64_t value) {
    min[d] = static_cast<uint32_t>(std::max<uint64_t>(min[d], value));
  }
  /// A special register's value range: tid < hi means ntid <= hi, and so on.
  void restrict(int field, int d, const ConstantRange &range) {
    if (range.isFullSet() || range.isWrappedSet() || range.isEmptySet())
      return;
    uint64_t lo = range.getUnsignedMin().getZExtValue(), hi = range.getUnsignedMax().getZExtValue();
    switch (field) {
    case kTid: atMost(blockMax, d, hi + 1); break;
    case kNtid: atLeast(blockMin, d, lo); atMost(blockMax, d, hi); break;
    case kCtaid: atMost(gridMax, d, hi + 1); break;
    case kNctaid: atLeast(gridMin, d, lo); atMost(gridMax, d, hi); break;
    }
  }
};

/// "64,1,1" as three dims (missing ones are 1).
std::optional<std::array<uint32_t, 3>> parseDims(StringRef text) {
  std::array<uint32_t, 3> dims{1, 1, 1};
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  if (parts.size() > 3)
    return std::nullopt;
  for (auto [i, part] : llvm::enumerate(parts))
    if (part.trim().getAsInteger(10, dims[i]))
      return std::nullopt;
  return dims;
}

struct KernelInfo {
  Function *kernel;
  std::string name;
  Bounds bounds;
  bool collectives = false;
};

/// The defined functions `root` calls, directly or not, and itself.
SetVector<Function *> reachable(Function *root) {
  SetVector<Function *> seen;
  seen.insert(root);
  for (size_t i = 0; i < seen.size(); ++i)
    for (Instruction &inst : instructions(*seen[i]))
      if (auto *call = dyn_cast<CallBase>(&inst))
        if (Function *callee = call->getCalledFunction(); callee && !callee->isDeclaration())
          seen.insert(callee);
  return seen;
}

Expected<KernelInfo> analyzeKernel(Function &kernel) {
  KernelInfo info{&kernel, kernel.getName().str(), {}, false};
  Bounds &b = info.bounds;
  for (const char *attr : {"nvvm.maxntid", "nvvm.reqntid"}) {
    if (!kernel.hasFnAttribute(attr))
      continue;
    StringRef text = kernel.getFnAttribute(attr).getValueAsString();
    std::optional<std::array<uint32_t, 3>> dims = parseDims(text);
    if (!dims)
      return failure("kernel '" + info.name + "': cannot read " + attr + " '" + text + "'");
    bool exact = StringRef(attr) == "nvvm.reqntid";
    for (int d = 0; d < 3; ++d) {
      b.atMost(b.blockMax, d, (*dims)[d]);
      if (exact)
        b.atLeast(b.blockMin, d, (*dims)[d]);
    }
  }
  for (Function *f : reachable(&kernel)) {
    for (Instruction &inst : instructions(*f)) {
      auto *call = dyn_cast<CallInst>(&inst);
      Function *callee = call ? call->getCalledFunction() : nullptr;
      if (!callee || !callee->isDeclaration())
        continue;
      Meaning m = classify(callee->getName());
      if (m.kind == Meaning::Barrier || m.kind == Meaning::Warp || m.kind == Meaning::Mma)
        info.collectives = true;
      if (m.kind != Meaning::SpecialRegister || m.field == kLaneid)
        continue;
      if (std::optional<ConstantRange> range = call->getRange())
        b.restrict(m.field, m.dim, *range);
      if (MDNode *md = call->getMetadata(LLVMContext::MD_range))
        b.restrict(m.field, m.dim, getConstantRangeFromMetadata(*md));
    }
  }
  return info;
}

/// Every defined function gets the thread's state as a trailing argument;
/// calls between them pass theirs on.
Error addThreadArgument(Module &m) {
  LLVMContext &ctx = m.getContext();
  auto *ptr = PointerType::get(ctx, 0);
  SmallVector<std::pair<Function *, Function *>> replaced;
  SmallVector<Function *> defined;
  for (Function &f : m)
    if (!f.isDeclaration())
      defined.push_back(&f);
  for (Function *function : defined) {
    Function &f = *function;
    if (f.isVarArg())
      return failure("function '" + f.getName() + "' takes variable arguments");
    SmallVector<Type *> params(f.getFunctionType()->params());
    params.push_back(ptr);
    auto *type = FunctionType::get(f.getReturnType(), params, false);
    Function *nf = Function::Create(type, f.getLinkage(), f.getAddressSpace(), "", &m);
    nf->copyAttributesFrom(&f);
    nf->takeName(&f);
    nf->splice(nf->begin(), &f);
    for (auto [old, arg] : llvm::zip(f.args(), nf->args())) {
      old.replaceAllUsesWith(&arg);
      arg.takeName(&old);
    }
    nf->getArg(nf->arg_size() - 1)->setName("thread");
    replaced.push_back({&f, nf});
  }
  for (auto [old, nf] : replaced) {
    for (User *user : llvm::make_early_inc_range(old->users())) {
      auto *call = dyn_cast<CallInst>(user);
      if (!call || call->getCalledOperand() != old)
        return failure("function '" + nf->getName() +
                       "' is used other than by a direct call, which the cuda-emulated "
                       "device does not support");
      SmallVector<Value *> args(call->args());
      Function *caller = call->getFunction();
      args.push_back(caller->getArg(caller->arg_size() - 1));
      auto *newCall = CallInst::Create(nf->getFunctionType(), nf, args, "", call->getIterator());
      newCall->setAttributes(call->getAttributes());
      newCall->setCallingConv(call->getCallingConv());
      newCall->setTailCallKind(call->getTailCallKind());
      newCall->setDebugLoc(call->getDebugLoc());
      newCall->takeName(call);
      call->replaceAllUsesWith(newCall);
      call->eraseFromParent();
    }
    old->eraseFromParent();
  }
  return Error::success();
}

Value *threadOf(Function *f) { return f->getArg(f->arg_size() - 1); }

/// Shared variables at fixed offsets into the block's shared memory, per
/// function, as on a GPU, where each kernel has its own: the static ones a
/// function uses one after the other, the dynamic window (external, sized by
/// the launch) after them. Returns each function's static size, rounded to 16.
Expected<DenseMap<Function *, uint32_t>> placeSharedVariables(Module &m) {
  const DataLayout &layout = m.getDataLayout();
  LLVMContext &ctx = m.getContext();
  StructType *thread = threadType(ctx);
  SmallVector<GlobalVariable *> shared;
  for (GlobalVariable &g : m.globals())
    if (g.getAddressSpace() == kSharedAddressSpace)
      shared.push_back(&g);
  SmallVector<Constant *> constants(shared.begin(), shared.end());
  convertUsersOfConstantsToInstructions(constants);
  // The static variables each function uses, in the module's order.
  MapVector<Function *, SmallVector<GlobalVariable *>> usedBy;
  for (GlobalVariable *g : shared) {
    for (User *user : g->users()) {
      auto *inst = dyn_cast<Instruction>(user);
      if (!inst)
        return failure("shared variable '" + g->getName() + "' is used outside a function");
      SmallVector<GlobalVariable *> &vars = usedBy[inst->getFunction()];
      if (!llvm::is_contained(vars, g))
        vars.push_back(g);
    }
  }
  DenseMap<std::pair<Function *, GlobalVariable *>, uint64_t> offsetOf;
  DenseMap<Function *, uint32_t> sizes;
  for (auto &[f, vars] : usedBy) {
    uint64_t end = 0;
    for (GlobalVariable *g : vars) {
      if (!g->hasInitializer())
        continue;
      if (!isa<UndefValue>(g->getInitializer()))
        return failure("shared variable '" + g->getName() + "' has an initializer");
      Align align = g->getAlign().value_or(layout.getABITypeAlign(g->getValueType()));
      uint64_t offset = alignTo(end, align);
      offsetOf[{f, g}] = offset;
      end = offset + layout.getTypeAllocSize(g->getValueType());
    }
    uint64_t staticSize = alignTo(end, 16);
    if (staticSize > UINT32_MAX)
      return failure("the static shared variables of '" + f->getName() + "' take " +
                     Twine(staticSize) + " bytes");
    for (GlobalVariable *g : vars) {
      if (g->hasInitializer())
        continue;
      if (g->getAlign().value_or(Align(1)) > Align(16))
        return failure("dynamic shared memory '" + g->getName() + "' is aligned to more than 16");
      offsetOf[{f, g}] = staticSize;
    }
    sizes[f] = static_cast<uint32_t>(staticSize);
  }

  // One address per (function, variable), computed at the function's entry
  // so that it dominates every use.
  DenseMap<std::pair<Function *, GlobalVariable *>, Value *> addressIn;
  for (GlobalVariable *g : shared) {
    for (Use &use : llvm::make_early_inc_range(g->uses())) {
      auto *inst = dyn_cast<Instruction>(use.getUser());
      if (!inst)
        return failure("shared variable '" + g->getName() + "' is used outside a function");
      Function *f = inst->getFunction();
      Value *&address = addressIn[{f, g}];
      if (!address) {
        IRBuilder<> b(&*f->getEntryBlock().getFirstInsertionPt());
        Value *base = b.CreateLoad(PointerType::get(ctx, 0),
                                   b.CreateStructGEP(thread, threadOf(f), kShared), "shared");
        Value *at = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, offsetOf[{f, g}]);
        address = b.CreateAddrSpaceCast(at, g->getType(), g->getName());
      }
      use.set(address);
    }
    g->eraseFromParent();
  }
  return sizes;
}

/// Constant data in the GPU's global or constant space becomes ordinary
/// host data; writable device variables would be one per process here
/// rather than one per context, so they are refused.
Error moveGlobalsToHost(Module &m) {
  for (GlobalVariable &g : llvm::make_early_inc_range(m.globals())) {
    if (g.getAddressSpace() == 0 || g.getAddressSpace() == kSharedAddressSpace)
      continue;
    if (!g.isConstant() || !g.hasInitializer())
      return failure("device variable '" + g.getName() + "' (address space " +
                     Twine(g.getAddressSpace()) +
                     ") is not supported by the cuda-emulated device");
    auto *host = new GlobalVariable(m, g.getValueType(), true, g.getLinkage(), g.getInitializer(),
                                    "", nullptr, GlobalValue::NotThreadLocal, 0);
    host->copyAttributesFrom(&g);
    host->takeName(&g);
    g.replaceAllUsesWith(ConstantExpr::getAddrSpaceCast(host, g.getType()));
    g.eraseFromParent();
  }
  return Error::success();
}

/// Replaces the calls of NVVM intrinsics; `site` numbers barrier and warp
/// call sites across the module.
Error rewriteIntrinsics(Module &m) {
  LLVMContext &ctx = m.getContext();
  StructType *thread = threadType(ctx);
  auto *ptr = PointerType::get(ctx, 0);
  auto *i32 = Type::getInt32Ty(ctx);
  auto *i64 = Type::getInt64Ty(ctx);
  auto *barrierType = FunctionType::get(Type::getVoidTy(ctx), {ptr, i32, i32, i32}, false);
  auto *warpType = FunctionType::get(i64, {ptr, i32, i32, i32, i32, i32, i32}, false);
  int32_t site = 0;
  for (Function &callee : llvm::make_early_inc_range(m)) {
    if (!callee.isDeclaration() || !callee.getName().starts_with("llvm.nvvm."))
      continue;
    Meaning meaning = classify(callee.getName());
    for (User *user : llvm::make_early_inc_range(callee.users())) {
      auto *call = dyn_cast<CallInst>(user);
      if (!call)
        return failure("'" + callee.getName() + "' is used other than by a call");
      Function *f = call->getFunction();
      if (meaning.kind == Meaning::Unknown)
        return failure("'" + f->getName() + "' calls '" + callee.getName() +
                       "', which the cuda-emulated device does not implement");
      IRBuilder<> b(call);
      Value *state = threadOf(f);
      Value *result = nullptr;
      switch (meaning.kind) {
      case Meaning::SpecialRegister: {
        Value *at = meaning.field == kLaneid
                        ? b.CreateStructGEP(thread, state, kLaneid)
                        : b.CreateInBoundsGEP(thread, state,
                                              {b.getInt32(0), b.getInt32(meaning.field),
                                               b.getInt32(meaning.dim)});
        result = b.CreateLoad(i32, at);
        break;
      }
      case Meaning::WarpSize:
        result = b.getInt32(32);
        break;
      case Meaning::Barrier: {
        Value *hook = b.CreateLoad(ptr, b.CreateStructGEP(thread, state, kBarrier));
        b.CreateCall(barrierType, hook,
                     {state, call->getArgOperand(0), b.getInt32(site++),
                      b.getInt32(meaning.aligned ? 1 : 0)});
        break;
      }
      case Meaning::Warp: {
        // shfl.sync(mask, value, b, c), vote.sync(mask, predicate),
        // bar.warp.sync(mask): operands as 32-bit words.
        auto word = [&](unsigned i) -> Value * {
          if (i >= call->arg_size())
            return b.getInt32(0);
          Value *v = call->getArgOperand(i);
          if (v->getType()->isFloatTy())
            return b.CreateBitCast(v, i32);
          return b.CreateZExtOrTrunc(v, i32);
        };
        Value *hook = b.CreateLoad(ptr, b.CreateStructGEP(thread, state, kWarp));
        Value *packed = b.CreateCall(warpType, hook,
                                     {state, b.getInt32(meaning.warpOp), b.getInt32(site++),
                                      word(0), word(1), word(2), word(3)});
        Type *type = call->getType();
        Value *low = b.CreateTrunc(packed, i32);
        auto asType = [&](Type *t) -> Value * {
          if (t->isFloatTy())
            return b.CreateBitCast(low, t);
          return b.CreateTrunc(low, t); // i32, or a vote's i1
        };
        if (type->isVoidTy())
          break;
        if (auto *pair = dyn_cast<StructType>(type)) {
          // The .p shuffles: {value, in range}.
          Value *valid = b.CreateTrunc(b.CreateLShr(packed, 32), b.getInt1Ty());
          result = b.CreateInsertValue(PoisonValue::get(pair), asType(pair->getElementType(0)), 0);
          result = b.CreateInsertValue(result, valid, 1);
        } else {
          result = asType(type);
        }
        break;
      }
      case Meaning::Mma: {
        // mma(a0..a3, b0, b1, c0..c3) -> {d0..d3}: the lane's fragments go
        // to stack slots (allocated once, at the function's entry) that the
        // hook reads and writes while the warp waits at it.
        IRBuilder<> entry(&*f->getEntryBlock().getFirstInsertionPt());
        auto *f32 = Type::getFloatTy(ctx);
        Value *a = entry.CreateAlloca(ArrayType::get(i32, 4), nullptr, "mma.a");
        Value *bFrag = entry.CreateAlloca(ArrayType::get(i32, 2), nullptr, "mma.b");
        Value *c = entry.CreateAlloca(ArrayType::get(f32, 4), nullptr, "mma.c");
        Value *d = entry.CreateAlloca(ArrayType::get(f32, 4), nullptr, "mma.d");
        if (call->arg_size() != 10)
          return failure("'" + callee.getName() + "' takes " + Twine(call->arg_size()) +
                         " operands, not the 10 of its PTX form");
        for (unsigned i = 0; i < 10; ++i) {
          Value *v = call->getArgOperand(i);
          Value *slot = i < 4   ? b.CreateConstInBoundsGEP2_32(ArrayType::get(i32, 4), a, 0, i)
                        : i < 6 ? b.CreateConstInBoundsGEP2_32(ArrayType::get(i32, 2), bFrag,
                                                               0, i - 4)
                                : b.CreateConstInBoundsGEP2_32(ArrayType::get(f32, 4), c, 0,
                                                               i - 6);
          if (i < 6 && !v->getType()->isIntegerTy(32))
            v = b.CreateBitCast(v, i32); // f16 pairs
          b.CreateStore(v, slot);
        }
        auto *hookType =
            FunctionType::get(Type::getVoidTy(ctx), {ptr, i32, i32, ptr, ptr, ptr, ptr}, false);
        Value *hook = b.CreateLoad(ptr, b.CreateStructGEP(thread, state, kMma));
        b.CreateCall(hookType, hook,
                     {state, b.getInt32(meaning.mmaKind), b.getInt32(site++), a, bFrag, c, d});
        auto *type = cast<StructType>(call->getType());
        result = PoisonValue::get(type);
        for (unsigned i = 0; i < 4; ++i)
          result = b.CreateInsertValue(
              result,
              b.CreateLoad(f32, b.CreateConstInBoundsGEP2_32(ArrayType::get(f32, 4), d, 0, i)),
              i);
        break;
      }
      case Meaning::ToTF32: {
        // cvt.rna.tf32.f32: to 10 mantissa bits, ties away from zero (adding
        // half a unit to the magnitude carries into the exponent as it
        // should); infinities stay, a NaN becomes the canonical 0x7fffffff
        // (its payload may lie in the bits tf32 drops).
        Value *bits = b.CreateBitCast(call->getArgOperand(0), i32);
        Value *magnitude = b.CreateAnd(bits, 0x7fffffff);
        Value *infinite = b.CreateICmpEQ(magnitude, b.getInt32(0x7f800000));
        Value *nan = b.CreateICmpUGT(magnitude, b.getInt32(0x7f800000));
        Value *rounded = b.CreateAnd(b.CreateAdd(bits, b.getInt32(0x1000)), 0xffffe000);
        result = b.CreateSelect(nan, b.getInt32(0x7fffffff),
                                b.CreateSelect(infinite, bits, rounded));
        break;
      }
      case Meaning::ToBF16x2: {
        // cvt.rn.bf16x2.f32 d, x, y: x to d's upper half, y to its lower,
        // each rounded to nearest even; a NaN stays a (quiet) NaN.
        Value *packed = b.CreateOr(b.CreateShl(nnc::bfloat16Bits(b, call->getArgOperand(0)), 16),
                                   nnc::bfloat16Bits(b, call->getArgOperand(1)));
        result = b.CreateBitCast(packed, call->getType()); // <2 x bfloat>
        break;
      }
      case Meaning::ToF16x2: {
        // cvt.rn.f16x2.f32 d, x, y: x to d's upper half (element 1), y to
        // its lower (element 0). The host's conversion rounds to nearest
        // even too, overflows to infinity and keeps a NaN one.
        auto *half = Type::getHalfTy(ctx);
        result = PoisonValue::get(call->getType());
        result = b.CreateInsertElement(result, b.CreateFPTrunc(call->getArgOperand(1), half),
                                       uint64_t(0));
        result = b.CreateInsertElement(result, b.CreateFPTrunc(call->getArgOperand(0), half),
                                       uint64_t(1));
        break;
      }
      case Meaning::Fence:
        b.CreateFence(AtomicOrdering::SequentiallyConsistent);
        break;
      case Meaning::Math: {
        SmallVector<Value *> args(call->args());
        if (meaning.math == Intrinsic::not_intrinsic) {
          result = b.CreateFDiv(ConstantFP::get(call->getType(), 1.0), args[0]);
        } else {
          Function *host =
              Intrinsic::getOrInsertDeclaration(&m, meaning.math, {call->getType()});
          result = b.CreateCall(host, args);
        }
        break;
      }
      case Meaning::Unknown:
        break;
      }
      if (result)
        call->replaceAllUsesWith(result);
      call->eraseFromParent();
    }
    callee.eraseFromParent();
  }
  return Error::success();
}

/// Removes what described the code for the GPU: the launch bounds and
/// other NVVM attributes, the GPU's target features, and effects the
/// optimizer inferred from the intrinsics (a kernel that only read special
/// registers was memory(none) as to them; here it reads the thread state,
/// and a barrier is a call that waits).
void addInferred(AttributeMask &mask) {
  for (Attribute::AttrKind kind : {Attribute::Memory, Attribute::NoSync, Attribute::NoFree,
                                   Attribute::WillReturn, Attribute::Speculatable,
                                   Attribute::NoCallback, Attribute::Convergent})
    mask.addAttribute(kind);
  for (const char *name : {"target-cpu", "target-features", "tune-cpu"})
    mask.addAttribute(name);
}

void stripGPUAttributes(Module &m) {
  AttributeMask inferred;
  addInferred(inferred);
  for (Function &f : m) {
    if (f.isDeclaration())
      continue;
    f.setCallingConv(CallingConv::C);
    AttributeMask drop;
    addInferred(drop);
    for (Attribute attr : f.getAttributes().getFnAttrs())
      if (attr.isStringAttribute() && attr.getKindAsString().starts_with("nvvm."))
        drop.addAttribute(attr.getKindAsString());
    f.removeFnAttrs(drop);
    for (Instruction &inst : instructions(f))
      if (auto *call = dyn_cast<CallBase>(&inst)) {
        Function *callee = call->getCalledFunction();
        if (callee && !callee->isDeclaration()) {
          call->setCallingConv(CallingConv::C);
          call->removeFnAttrs(inferred);
        }
      }
  }
  for (NamedMDNode &md : llvm::make_early_inc_range(m.named_metadata()))
    if (md.getName().starts_with("nvvm"))
      m.eraseNamedMetadata(&md);
}

/// `void entry(void **params, ptr thread)`: params[i] points to the value of
/// the kernel's i-th parameter (the launch hook's convention).
Expected<Function *> addEntry(Module &m, Function &kernel) {
  LLVMContext &ctx = m.getContext();
  auto *ptr = PointerType::get(ctx, 0);
  auto *type = FunctionType::get(Type::getVoidTy(ctx), {ptr, ptr}, false);
  auto *entry = Function::Create(type, GlobalValue::InternalLinkage,
                                 "nnc_host_entry_" + kernel.getName(), m);
  entry->addFnAttr(Attribute::NoUnwind);
  IRBuilder<> b(BasicBlock::Create(ctx, "entry", entry));
  SmallVector<Value *> args;
  unsigned params = kernel.arg_size() - 1; // the last one is the thread
  for (unsigned i = 0; i < params; ++i) {
    Argument *arg = kernel.getArg(i);
    if (arg->hasByValAttr() || !arg->getType()->isSingleValueType())
      return failure("kernel '" + kernel.getName() + "': parameter " + Twine(i) +
                     " is passed by value as an aggregate, which the cuda-emulated device "
                     "does not support");
    Value *slot = b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, entry->getArg(0), i));
    args.push_back(b.CreateAlignedLoad(arg->getType(), slot, Align(1)));
  }
  args.push_back(entry->getArg(1));
  b.CreateCall(&kernel, args);
  b.CreateRetVoid();
  return entry;
}
} // namespace

Error nnc::rewriteKernelsForHost(Module &m) {
  // Kernels and what their code assumed, read before anything changes.
  std::vector<KernelInfo> kernels;
  for (Function &f : m) {
    if (f.getCallingConv() != CallingConv::PTX_Kernel || f.isDeclaration())
      continue;
    Expected<KernelInfo> info = analyzeKernel(f);
    if (!info)
      return info.takeError();
    kernels.push_back(*info);
  }
  // Undefined functions other than intrinsics exist on the GPU only
  // (libdevice, printf's vprintf).
  for (Function &f : m)
    if (f.isDeclaration() && !f.isIntrinsic() && !f.use_empty())
      return failure("the kernels call '" + f.getName() +
                     "', which the cuda-emulated device does not provide");

  if (Error error = addThreadArgument(m))
    return error;
  for (KernelInfo &info : kernels)
    info.kernel = m.getFunction(info.name);
  Expected<DenseMap<Function *, uint32_t>> sharedSizes = placeSharedVariables(m);
  if (!sharedSizes)
    return sharedSizes.takeError();
  // Each kernel's shared memory is its own: a variable reached through a
  // function the kernel calls would need the caller's layout.
  for (auto &[f, size] : *sharedSizes)
    if (llvm::none_of(kernels, [&](const KernelInfo &info) { return info.kernel == f; }))
      return failure("shared memory is used by '" + f->getName() + "', which is no kernel");
  if (Error error = moveGlobalsToHost(m))
    return error;
  if (Error error = rewriteIntrinsics(m))
    return error;
  stripGPUAttributes(m);

  LLVMContext &ctx = m.getContext();
  auto *ptr = PointerType::get(ctx, 0);
  auto *i32 = Type::getInt32Ty(ctx);
  auto *dims = ArrayType::get(i32, 3);
  // nnc_abi_cuda_host_kernel_t.
  auto *infoType = StructType::get(ctx, {ptr, i32, i32, dims, dims, dims, dims});
  auto dimsOf = [&](const std::array<uint32_t, 3> &d) {
    return ConstantDataArray::get(ctx, ArrayRef<uint32_t>(d.data(), 3));
  };
  for (Function &f : m)
    if (!f.isDeclaration())
      f.setLinkage(GlobalValue::InternalLinkage);
  for (const KernelInfo &info : kernels) {
    Expected<Function *> entry = addEntry(m, *info.kernel);
    if (!entry)
      return entry.takeError();
    const Bounds &b = info.bounds;
    Constant *init = ConstantStruct::get(
        infoType, {*entry, ConstantInt::get(i32, info.collectives ? NNC_CUDA_HOST_KERNEL_COLLECTIVES : 0),
                   ConstantInt::get(i32, sharedSizes->lookup(info.kernel)), dimsOf(b.blockMin),
                   dimsOf(b.blockMax),
                   dimsOf(b.gridMin), dimsOf(b.gridMax)});
    new GlobalVariable(m, infoType, true, GlobalValue::ExternalLinkage, init,
                       hostKernelSymbol(info.name));
  }
  return Error::success();
}
