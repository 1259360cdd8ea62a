//===- LowerForallToRuntime.cpp - outer parallel loops on the thread pool -===//
//
// Each outermost scf.forall becomes a call of the runtime's parallel_for with
// its body outlined into a function of (arg, begin, end); the values the body
// uses travel in a stack struct, memrefs as their aligned pointers and the
// parts of their descriptors their types leave dynamic. Foralls nested in a
// body run serially. Bodies that come out identical are one function, and
// bodies stay out of line. The context comes from a thread-local the entry
// wrapper sets (see RuntimeContext.h for why).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/Outline.h"
#include "compiler/Codegen/Common/RuntimeContext.h"
#include "compiler/Codegen/Passes.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace nnc {
#define GEN_PASS_DEF_LOWERFORALLTORUNTIME
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {

/// Index arithmetic on OpFoldResults: constants fold and identities vanish,
/// so static bounds leave neither ops nor dead constants behind.
struct IndexMath {
  OpBuilder &b;
  Location loc;

  Value get(OpFoldResult v) { return getValueOrCreateConstantIndexOp(b, loc, v); }
  OpFoldResult constant(int64_t v) { return b.getIndexAttr(v); }
  bool is(OpFoldResult v, int64_t c) { return getConstantIntValue(v) == c; }

  template <typename Op>
  OpFoldResult apply(OpFoldResult x, OpFoldResult y, int64_t (*fold)(int64_t, int64_t)) {
    std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
    if (cx && cy)
      return constant(fold(*cx, *cy));
    return Op::create(b, loc, get(x), get(y)).getResult();
  }
  OpFoldResult add(OpFoldResult x, OpFoldResult y) {
    if (is(x, 0)) return y;
    if (is(y, 0)) return x;
    return apply<arith::AddIOp>(x, y, [](int64_t a, int64_t c) { return a + c; });
  }
  OpFoldResult sub(OpFoldResult x, OpFoldResult y) {
    if (is(y, 0)) return x;
    return apply<arith::SubIOp>(x, y, [](int64_t a, int64_t c) { return a - c; });
  }
  OpFoldResult mul(OpFoldResult x, OpFoldResult y) {
    if (is(x, 1)) return y;
    if (is(y, 1)) return x;
    return apply<arith::MulIOp>(x, y, [](int64_t a, int64_t c) { return a * c; });
  }
  // Steps are positive (the forall verifier checks constant ones); div and
  // rem only see linear ids and trip counts, which are not negative.
  OpFoldResult ceilDiv(OpFoldResult x, OpFoldResult y) {
    if (is(y, 1)) return x;
    return apply<arith::CeilDivSIOp>(
        x, y, [](int64_t a, int64_t c) { return llvm::divideCeilSigned(a, c); });
  }
  OpFoldResult div(OpFoldResult x, OpFoldResult y) {
    if (is(y, 1)) return x;
    return apply<arith::DivUIOp>(x, y, [](int64_t a, int64_t c) { return a / c; });
  }
  OpFoldResult rem(OpFoldResult x, OpFoldResult y) {
    if (is(y, 1)) return constant(0);
    return apply<arith::RemUIOp>(x, y, [](int64_t a, int64_t c) { return a % c; });
  }
  OpFoldResult max(OpFoldResult x, OpFoldResult y) {
    return apply<arith::MaxSIOp>(x, y, [](int64_t a, int64_t c) { return std::max(a, c); });
  }
};

/// The forall's bounds in the scope `map` leads to, with its trip count per
/// dimension: max(0, ceil((ub - lb) / step)).
struct Bounds {
  SmallVector<OpFoldResult> lbs, steps, counts;
};
Bounds bounds(IndexMath &m, scf::ForallOp forall, const IRMapping &map) {
  auto remap = [&](OpFoldResult v) -> OpFoldResult {
    if (auto value = dyn_cast<Value>(v))
      return map.lookupOrDefault(value);
    return v;
  };
  Bounds r;
  for (auto [lb, ub, step] :
       llvm::zip(forall.getMixedLowerBound(), forall.getMixedUpperBound(), forall.getMixedStep())) {
    r.lbs.push_back(remap(lb));
    r.steps.push_back(remap(step));
    OpFoldResult count = m.ceilDiv(m.sub(remap(ub), remap(lb)), remap(step));
    r.counts.push_back(m.max(count, m.constant(0)));
  }
  return r;
}

/// A value the body uses, in the argument struct from field `first` on. A
/// scalar is one field. A memref with a strided layout travels as its aligned
/// pointer and the parts of its descriptor that its type leaves dynamic: the
/// body rebuilds the rest from the type, so neither side moves sizes and
/// strides the type already states (DenseNet-121's caller stored 13,000
/// descriptor fields).
struct Capture {
  Value value;
  unsigned first;
  Type descriptorType;
  bool slim = false;
  SmallVector<int64_t> strides;
  int64_t offset = 0;

  /// The descriptor's dynamic parts in field order: the offset (-1), then
  /// sizes (dim d as d), then strides (dim d as rank + d).
  SmallVector<int64_t> dynamicParts(MemRefType type) const {
    SmallVector<int64_t> parts;
    int64_t rank = type.getRank();
    if (ShapedType::isDynamic(offset))
      parts.push_back(-1);
    for (int64_t d = 0; d < rank; ++d)
      if (type.isDynamicDim(d))
        parts.push_back(d);
    for (int64_t d = 0; d < rank; ++d)
      if (ShapedType::isDynamic(strides[d]))
        parts.push_back(rank + d);
    return parts;
  }

  static Value fieldAddress(OpBuilder &b, Location loc, LLVM::LLVMStructType argsType, Value args,
                            unsigned index) {
    return LLVM::GEPOp::create(b, loc, LLVM::LLVMPointerType::get(b.getContext()), argsType, args,
                               ArrayRef<LLVM::GEPArg>{0, (int32_t)index});
  }

  void pack(OpBuilder &b, Location loc, LLVM::LLVMStructType argsType, Value args) const {
    auto store = [&](Value field, unsigned index) {
      LLVM::StoreOp::create(b, loc, field, fieldAddress(b, loc, argsType, args, index));
    };
    Type type = value.getType();
    if (type.isIndex()) {
      store(arith::IndexCastOp::create(b, loc, argsType.getBody()[first], value), first);
      return;
    }
    if (type == descriptorType) {
      store(value, first);
      return;
    }
    Value descriptor = UnrealizedConversionCastOp::create(b, loc, descriptorType, value).getResult(0);
    if (!slim) {
      store(descriptor, first);
      return;
    }
    MemRefDescriptor d(descriptor);
    auto memref = cast<MemRefType>(type);
    store(d.alignedPtr(b, loc), first);
    int64_t rank = memref.getRank();
    for (auto [i, part] : llvm::enumerate(dynamicParts(memref))) {
      Value field = part < 0 ? d.offset(b, loc) : part < rank ? d.size(b, loc, part) : d.stride(b, loc, part - rank);
      store(field, first + 1 + i);
    }
  }

  Value unpack(OpBuilder &b, Location loc, LLVM::LLVMStructType argsType, ArrayRef<Type> fieldTypes,
               Value args) const {
    auto load = [&](unsigned index) -> Value {
      return LLVM::LoadOp::create(b, loc, fieldTypes[index], fieldAddress(b, loc, argsType, args, index));
    };
    Type type = value.getType();
    if (type.isIndex())
      return arith::IndexCastOp::create(b, loc, type, load(first));
    if (type == descriptorType)
      return load(first);
    Value descriptor;
    if (!slim) {
      descriptor = load(first);
    } else {
      auto memref = cast<MemRefType>(type);
      int64_t rank = memref.getRank();
      MemRefDescriptor d = MemRefDescriptor::poison(b, loc, descriptorType);
      Value pointer = load(first);
      d.setAllocatedPtr(b, loc, pointer);
      d.setAlignedPtr(b, loc, pointer);
      if (!ShapedType::isDynamic(offset))
        d.setConstantOffset(b, loc, offset);
      for (int64_t i = 0; i < rank; ++i) {
        if (!memref.isDynamicDim(i))
          d.setConstantSize(b, loc, i, memref.getDimSize(i));
        if (!ShapedType::isDynamic(strides[i]))
          d.setConstantStride(b, loc, i, strides[i]);
      }
      for (auto [i, part] : llvm::enumerate(dynamicParts(memref))) {
        Value field = load(first + 1 + i);
        if (part < 0)
          d.setOffset(b, loc, field);
        else if (part < rank)
          d.setSize(b, loc, part, field);
        else
          d.setStride(b, loc, part - rank, field);
      }
      descriptor = d;
    }
    return UnrealizedConversionCastOp::create(b, loc, type, descriptor).getResult(0);
  }
};

struct LowerForallToRuntimePass
    : nnc::impl::LowerForallToRuntimeBase<LowerForallToRuntimePass> {
  using LowerForallToRuntimeBase::LowerForallToRuntimeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Only buffer semantics can be split across threads: a forall that still
    // yields tensors was not bufferized, and running it would be wrong.
    WalkResult checked = module.walk([](scf::ForallOp forall) {
      if (!forall.getOutputs().empty() || forall->getNumResults() != 0) {
        forall.emitOpError("expected a bufferized loop (no shared_outs, no results) to run on "
                           "the thread pool");
        return WalkResult::interrupt();
      }
      if (!forall->getParentOfType<func::FuncOp>()) {
        forall.emitOpError("expected to be inside a 'func.func'");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (checked.wasInterrupted())
      return signalPassFailure();

    SmallVector<scf::ForallOp> outermost;
    module.walk<WalkOrder::PreOrder>([&](scf::ForallOp forall) {
      outermost.push_back(forall);
      return WalkResult::skip();
    });
    if (outermost.empty())
      return;

    LLVM::GlobalOp slot = nnc::getOrCreateContextSlot(module);
    if (!slot)
      return signalPassFailure();
    LLVMTypeConverter converter(&getContext());
    SmallVector<func::FuncOp> bodies;
    {
      // One table for the names of all bodies (looking each candidate name
      // up in the module anew scanned it per try, cubic in the loop count),
      // gone before merging erases bodies.
      SymbolTable symbols(module);
      for (scf::ForallOp forall : outermost) {
        FailureOr<func::FuncOp> body = outline(forall, converter, symbols);
        if (failed(body))
          return signalPassFailure();
        bodies.push_back(*body);
      }
    }
    mergeIdenticalBodies(module, bodies);
  }

  /// Bodies that came out identical are compiled once: DenseNet-121 repeats
  /// one 3x3 convolution per dense block, 69 of its 262 loops. Candidates
  /// share a hash of their ops' names, attributes and types.
  void mergeIdenticalBodies(ModuleOp module, ArrayRef<func::FuncOp> bodies) {
    llvm::DenseMap<unsigned, SmallVector<func::FuncOp>> kept;
    llvm::DenseMap<StringAttr, FlatSymbolRefAttr> replacement;
    for (func::FuncOp body : bodies) {
      llvm::hash_code hash = 0;
      body.getBody().walk([&](Operation *op) {
        hash = llvm::hash_combine(
            hash, OperationEquivalence::computeHash(op, OperationEquivalence::ignoreHashValue,
                                                    OperationEquivalence::ignoreHashValue,
                                                    OperationEquivalence::IgnoreLocations));
      });
      SmallVector<func::FuncOp> &same = kept[static_cast<unsigned>(hash)];
      auto original = llvm::find_if(same, [&](func::FuncOp other) {
        return OperationEquivalence::isRegionEquivalentTo(&other.getBody(), &body.getBody(),
                                                          OperationEquivalence::IgnoreLocations);
      });
      if (original == same.end()) {
        same.push_back(body);
        continue;
      }
      replacement[body.getSymNameAttr()] = FlatSymbolRefAttr::get(original->getSymNameAttr());
      body.erase();
    }
    if (replacement.empty())
      return;
    // The bodies' only uses: the serial call and the pointer for parallel_for.
    module.walk([&](Operation *op) {
      if (auto call = dyn_cast<func::CallOp>(op)) {
        if (FlatSymbolRefAttr to = replacement.lookup(call.getCalleeAttr().getAttr()))
          call.setCalleeAttr(to);
      } else if (auto constant = dyn_cast<func::ConstantOp>(op)) {
        if (FlatSymbolRefAttr to = replacement.lookup(constant.getValueAttr().getAttr()))
          constant.setValueAttr(to);
      }
    });
  }

  FailureOr<func::FuncOp> outline(scf::ForallOp forall, LLVMTypeConverter &converter,
                                  SymbolTable &symbols) {
    MLIRContext *ctx = &getContext();
    Location loc = forall.getLoc();
    auto func = forall->getParentOfType<func::FuncOp>();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i32 = IntegerType::get(ctx, 32);
    auto i64 = IntegerType::get(ctx, 64);

    // What the body uses from outside: constants are re-created in the body,
    // everything else travels in the argument struct.
    SetVector<Value> used;
    getUsedValuesDefinedAbove(forall.getRegion(), used);
    used.insert(forall.getDynamicLowerBound().begin(), forall.getDynamicLowerBound().end());
    used.insert(forall.getDynamicUpperBound().begin(), forall.getDynamicUpperBound().end());
    used.insert(forall.getDynamicStep().begin(), forall.getDynamicStep().end());
    bool deallocates = forall.getBody()->walk([](memref::DeallocOp) { return WalkResult::interrupt(); }).wasInterrupted();
    SmallVector<Operation *> constants;
    SmallVector<Capture> captures;
    SmallVector<Type> fieldTypes;
    for (Value v : used) {
      Operation *def = v.getDefiningOp();
      if (def && def->getNumOperands() == 0 && def->hasTrait<OpTrait::ConstantLike>()) {
        if (!llvm::is_contained(constants, def))
          constants.push_back(def);
        continue;
      }
      Type type = converter.convertType(v.getType());
      if (!type || !LLVM::isCompatibleType(type))
        return forall.emitOpError("cannot pass a value of type ")
               << v.getType() << " to a parallel loop body";
      Capture c{v, (unsigned)fieldTypes.size(), type};
      auto memref = dyn_cast<MemRefType>(v.getType());
      // Slim only where the body cannot tell: a default memory space (the
      // field is a plain pointer) and no deallocation (the body's allocated
      // pointer is the aligned one).
      if (memref && !memref.getMemorySpace() && !deallocates &&
          succeeded(memref.getStridesAndOffset(c.strides, c.offset))) {
        c.slim = true;
        fieldTypes.push_back(ptr);
        fieldTypes.append(c.dynamicParts(memref).size(), i64);
      } else {
        fieldTypes.push_back(type);
      }
      captures.push_back(c);
    }
    auto argsType = LLVM::LLVMStructType::getLiteral(ctx, fieldTypes);

    // The body: void <func>_par<N>(ptr args, i64 begin, i64 end). Kept out
    // of line: the body is called directly when the loop runs serially and
    // through a pointer otherwise, and a merged body from several places;
    // inlining the direct calls would compile it again into one ever-larger
    // caller for each.
    func::FuncOp body =
        nnc::createOutlinedFunction(func, "par", FunctionType::get(ctx, {ptr, i64, i64}, {}), loc,
                                    symbols);
    Block *entry = &body.front();
    OpBuilder b = OpBuilder::atBlockBegin(entry);
    IRMapping map;
    for (Operation *def : constants)
      b.clone(*def, map);
    for (Capture &c : captures)
      map.map(c.value, c.unpack(b, loc, argsType, fieldTypes, entry->getArgument(0)));
    IndexMath im{b, loc};
    Bounds inner = bounds(im, forall, map);
    // Loop invariants: materialized before the loop, unless they fold away.
    for (int64_t d = 0; d < forall.getRank(); ++d) {
      if (!im.is(inner.lbs[d], 0))
        inner.lbs[d] = im.get(inner.lbs[d]);
      if (!im.is(inner.steps[d], 1))
        inner.steps[d] = im.get(inner.steps[d]);
    }
    Value begin = arith::IndexCastOp::create(b, loc, b.getIndexType(), entry->getArgument(1));
    Value end = arith::IndexCastOp::create(b, loc, b.getIndexType(), entry->getArgument(2));
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto loop = scf::ForOp::create(b, loc, begin, end, one);
    func::ReturnOp::create(b, loc);
    // Linear ids are row-major over the forall's dimensions, so a range of
    // them walks the last dimension contiguously.
    b.setInsertionPointToStart(loop.getBody());
    OpFoldResult rest = loop.getInductionVar();
    for (int64_t d = forall.getRank() - 1; d >= 0; --d) {
      OpFoldResult index = d > 0 ? im.rem(rest, inner.counts[d]) : rest;
      if (d > 0)
        rest = im.div(rest, inner.counts[d]);
      OpFoldResult iv = im.add(inner.lbs[d], im.mul(index, inner.steps[d]));
      map.map(forall.getInductionVar(d), im.get(iv));
    }
    for (Operation &op : forall.getBody()->without_terminator())
      b.clone(op, map);
    // Stack buffers of an iteration are freed at its end (the forall's
    // scope), not when the whole range is done: a range may hold thousands of
    // iterations, and scf.for's own scope is lost in its lowering.
    bool allocates = false;
    loop.getBody()->walk([&](memref::AllocaOp alloca) {
      allocates |= alloca->getParentWithTrait<OpTrait::AutomaticAllocationScope>() == loop;
    });
    if (allocates) {
      b.setInsertionPointToStart(loop.getBody());
      auto scope = memref::AllocaScopeOp::create(b, loc, TypeRange());
      Block *scopeBody = b.createBlock(&scope.getBodyRegion());
      memref::AllocaScopeReturnOp::create(b, loc, ValueRange());
      scopeBody->getOperations().splice(scopeBody->begin(), loop.getBody()->getOperations(),
                                        std::next(Block::iterator(scope)),
                                        std::prev(loop.getBody()->end()));
    }
    // Loops nested in the body run on the thread that runs the iteration.
    SmallVector<scf::ForallOp> nested;
    body.walk([&](scf::ForallOp f) { nested.push_back(f); });
    IRRewriter rewriter(ctx);
    for (scf::ForallOp f : nested) {
      rewriter.setInsertionPoint(f);
      if (failed(scf::forallToForLoop(rewriter, f)))
        return f.emitOpError("cannot be turned into a serial loop");
    }

    // The call site: pack the arguments, then parallel_for or a serial call.
    b.setInsertionPoint(forall);
    IndexMath om{b, loc};
    Bounds outer = bounds(om, forall, IRMapping());
    OpFoldResult total = om.constant(1);
    for (OpFoldResult c : outer.counts)
      total = om.mul(total, c);
    std::optional<int64_t> staticTotal = getConstantIntValue(total);
    Value count = staticTotal ? arith::ConstantIntOp::create(b, loc, i64, *staticTotal).getResult()
                              : arith::IndexCastOp::create(b, loc, i64, om.get(total)).getResult();
    Value args;
    if (captures.empty()) {
      args = LLVM::ZeroOp::create(b, loc, ptr);
    } else {
      // In the entry block, so a forall inside a serial loop does not grow the stack.
      OpBuilder eb = OpBuilder::atBlockBegin(&func.getBody().front());
      Value size = LLVM::ConstantOp::create(eb, loc, i64, eb.getI64IntegerAttr(1));
      args = LLVM::AllocaOp::create(eb, loc, ptr, argsType, size);
      for (Capture &c : captures)
        c.pack(b, loc, argsType, args);
    }
    auto serial = [&](OpBuilder &b, Location loc) {
      Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
      func::CallOp::create(b, loc, body, ValueRange{args, zero, count});
    };
    if (staticTotal && *staticTotal <= 1) {
      serial(b, loc);
      forall.erase();
      return body;
    }

    Value null = captures.empty() ? args : LLVM::ZeroOp::create(b, loc, ptr).getResult();
    Value fn = func::ConstantOp::create(b, loc, body.getFunctionType(), SymbolRefAttr::get(body));
    Value fnPtr = UnrealizedConversionCastOp::create(b, loc, ptr, fn).getResult(0);
    Value slotAddr = LLVM::AddressOfOp::create(b, loc, ptr, nnc::kRuntimeContextGlobal);
    Value slot = LLVM::ThreadlocalAddressOp::create(b, loc, ptr, slotAddr);
    Value context = LLVM::LoadOp::create(b, loc, ptr, slot);
    Value present = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne, context, null);
    Value several = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, count,
                                          arith::ConstantIntOp::create(b, loc, i64, 1));
    // nnc_abi_context_t: {void *runtime; int32_t num_threads; parallel_for}.
    auto contextType = LLVM::LLVMStructType::getLiteral(ctx, {ptr, i32, ptr});
    auto field = [&](OpBuilder &b, Type type, int32_t index) -> Value {
      Value addr = LLVM::GEPOp::create(b, loc, ptr, contextType, context,
                                       ArrayRef<LLVM::GEPArg>{0, index});
      return LLVM::LoadOp::create(b, loc, type, addr);
    };
    // num_threads is only read behind the null check.
    auto threaded = scf::IfOp::create(
        b, loc, arith::AndIOp::create(b, loc, present, several),
        [&](OpBuilder &b, Location loc) {
          Value threads = field(b, i32, 1);
          Value many = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, threads,
                                             arith::ConstantIntOp::create(b, loc, i32, 1));
          scf::YieldOp::create(b, loc, many);
        },
        [&](OpBuilder &b, Location loc) {
          Value no = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
          scf::YieldOp::create(b, loc, no);
        });
    scf::IfOp::create(
        b, loc, threaded.getResult(0),
        [&](OpBuilder &b, Location loc) {
          // The calling thread runs a share of the iterations too: with the
          // context cleared, so whatever it calls cannot re-enter the pool.
          Value runtime = field(b, ptr, 0);
          Value parallelFor = field(b, ptr, 2);
          LLVM::StoreOp::create(b, loc, null, slot);
          auto calleeType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                                        {ptr, i64, ptr, ptr});
          LLVM::CallOp::create(b, loc, calleeType,
                               ValueRange{parallelFor, runtime, count, fnPtr, args});
          LLVM::StoreOp::create(b, loc, context, slot);
          scf::YieldOp::create(b, loc);
        },
        [&](OpBuilder &b, Location loc) {
          serial(b, loc);
          scf::YieldOp::create(b, loc);
        });
    forall.erase();
    return body;
  }
};
} // namespace
