//===- PlanMemory.cpp - static workspace planning for @main ---------------===//
//
// Intermediates live in one workspace the runtime allocates per session, so a
// run allocates nothing and memory use is known at compile time. Lifetimes
// are intervals over @main's top-level ops, from a buffer's first use to its
// last; its uses include those of every view derived from it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Common/CountedSizes.h"
#include "compiler/Codegen/Passes.h"
#include "dialects/NN/IR/NNOps.h"
#include "dialects/NN/IR/CheckedInt.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

namespace nnc {
#define GEN_PASS_DEF_PLANMEMORY
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
struct Buffer {
  memref::AllocOp alloc;
  int64_t size, start, end, offset = 0;
};

/// The buffer's bytes; invalid when they do not fit in int64 (a lowering's
/// intermediate can be larger than any tensor of the model: a pool's padded
/// input with huge pads).
nnc::CheckedInt byteSize(MemRefType type) {
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  nnc::CheckedInt bytes(std::max<int64_t>(1, bits / 8));
  for (int64_t dim : type.getShape())
    bytes *= dim;
  return bytes;
}

/// Workspace offsets and sizes stay below 2^62, so that the planner's sums
/// cannot wrap and the runtime reports a plan that large as unallocatable.
constexpr int64_t kMaxWorkspaceBytes = int64_t(1) << 62;

/// A result computed in a buffer and then copied to its out-param is computed
/// in the out-param instead, when nothing else touches that out-param and the
/// buffer is dead after the copy.
/// The out-params of `func`'s data-dependent outputs (ShapeFunctions.cpp):
/// sized for a bound, written for the dims the run computes.
SmallVector<BlockArgument> dataDependentOutParams(func::FuncOp func) {
  SmallVector<BlockArgument> params;
  auto outputs = func->getAttrOfType<DenseI64ArrayAttr>("nnc.data_dependent_outputs");
  auto numInputs = func->getAttrOfType<IntegerAttr>("nnc.num_inputs");
  if (outputs && numInputs)
    for (int64_t o : outputs.asArrayRef())
      params.push_back(func.getArgument(numInputs.getInt() + o));
  return params;
}

void computeResultsInPlace(func::FuncOp func) {
  if (func.isExternal())
    return;
  Block &body = func.getBody().front();
  SmallVector<BlockArgument> dataDependent = dataDependentOutParams(func);
  for (memref::CopyOp copy : llvm::make_early_inc_range(body.getOps<memref::CopyOp>())) {
    auto target = dyn_cast<BlockArgument>(copy.getTarget());
    auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
    if (!target || target.getOwner() != &body || !target.hasOneUse() || !alloc ||
        alloc->getBlock() != &body || alloc.getType() != target.getType() ||
        llvm::is_contained(dataDependent, target))
      continue;
    bool usedAfter = llvm::any_of(alloc->getUsers(), [&](Operation *user) {
      Operation *top = body.findAncestorOpInBlock(*user);
      return top != copy && !top->isBeforeInBlock(copy) &&
             !isa<memref::DeallocOp>(user);
    });
    if (usedAfter)
      continue;
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    copy.erase();
    alloc.replaceAllUsesWith(target);
    alloc.erase();
  }
}

struct PlanMemoryPass : nnc::impl::PlanMemoryBase<PlanMemoryPass> {
  using PlanMemoryBase::PlanMemoryBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    module.walk([](func::FuncOp func) { computeResultsInPlace(func); });
    // Copies become linalg.copy, which lowers to loops like everything else.
    module.walk([](memref::CopyOp copy) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
    });
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func.isPublic() || func.isExternal())
        continue;
      if (isa_and_present<UnitAttr>(func->getAttr("nnc.shape_function"))) {
        freeOnReturn(func);
        continue;
      }
      auto shapes = func->getAttrOfType<FlatSymbolRefAttr>("nnc.shape_function");
      if (failed(shapes ? planDynamic(func, module.lookupSymbol<func::FuncOp>(shapes)) : plan(func)))
        return signalPassFailure();
      if (failed(writeDataDependentOutputs(func)))
        return signalPassFailure();
      // Nothing may be left to allocate at run time: a buffer the plan did
      // not place would be a malloc on every run, never freed.
      WalkResult unplanned = func.walk([](memref::AllocOp alloc) {
        InFlightDiagnostic error = alloc.emitError("nnc: a buffer inside a loop or branch of type ");
        error << alloc.getType()
              << " is not in the workspace plan (it would be allocated on every run)";
        if (!alloc.getDynamicSizes().empty())
          error << ": its size may change from one iteration of the loop around it to the next "
                   "(an inner Loop whose trip count the outer one's iteration gives, say), which "
                   "is not supported yet";
        return WalkResult::interrupt();
      });
      if (unplanned.wasInterrupted())
        return signalPassFailure();
    }
  }

  /// A function with data-dependent outputs writes each into its out-param
  /// laid out for the dims it computed (the out-param is sized for the
  /// bound), and those dims, every output's, to a last argument the entry
  /// passes context->output_dims as (abi.h). The run's sizes replace the
  /// bounds the plan took.
  static LogicalResult writeDataDependentOutputs(func::FuncOp func) {
    SmallVector<BlockArgument> params = dataDependentOutParams(func);
    // The run's sizes replace the bounds the plan took (also where no output
    // shows them: an intermediate sized by a count).
    auto runSizes = [&] {
      func.walk([](nnc::nn::BoundedExtentOp extent) {
        extent.replaceAllUsesWith(extent.getExtent());
        extent.erase();
      });
    };
    if (params.empty()) {
      runSizes();
      return success();
    }
    Location loc = func.getLoc();
    MLIRContext *context = func.getContext();
    unsigned numInputs = func->getAttrOfType<IntegerAttr>("nnc.num_inputs").getInt();
    unsigned numOutputs = func->getAttrOfType<IntegerAttr>("nnc.num_outputs").getInt();
    int64_t total = 0;
    for (unsigned o = 0; o < numOutputs; ++o)
      total += cast<MemRefType>(func.getArgument(numInputs + o).getType()).getRank();
    unsigned at = func.getNumArguments();
    auto dimsType = MemRefType::get({std::max<int64_t>(total, 1)}, IntegerType::get(context, 64));
    if (failed(func.insertArgument(at, dimsType, {}, loc)))
      return failure();
    Value dimsOut = func.getArgument(at);
    Block &body = func.getBody().front();
    OpBuilder b(body.getTerminator());
    auto index = [&](int64_t i) { return arith::ConstantIndexOp::create(b, loc, i); };
    int64_t k = 0;
    for (unsigned o = 0; o < numOutputs; ++o) {
      BlockArgument param = func.getArgument(numInputs + o);
      auto type = cast<MemRefType>(param.getType());
      Value source = param;
      if (llvm::is_contained(params, param)) {
        // The value copied into the out-param, at the dims the run gave it.
        linalg::CopyOp copy;
        for (Operation *user : param.getUsers())
          if (auto c = dyn_cast<linalg::CopyOp>(user); c && c.getOutputs()[0] == param)
            copy = c;
        if (!copy || copy->getBlock() != &body)
          return func.emitError("nnc: output ")
                 << o << " has a size the data gives but is not computed into a buffer of its own "
                         "(an empty result?): not supported yet";
        source = copy.getInputs()[0];
        OpBuilder at(copy);
        // Sizes static where the type has them; strides computed (a
        // strided layout of dynamic strides).
        SmallVector<OpFoldResult> sizes, strides(type.getRank());
        for (int64_t d = 0; d < type.getRank(); ++d)
          sizes.push_back(type.isDynamicDim(d)
                              ? OpFoldResult(memref::DimOp::create(at, loc, source, d).getResult())
                              : OpFoldResult(at.getIndexAttr(type.getDimSize(d))));
        Value stride = arith::ConstantIndexOp::create(at, loc, 1);
        for (int64_t d = type.getRank() - 1; d >= 0; --d) {
          strides[d] = stride;
          stride = arith::MulIOp::create(at, loc, stride, getValueOrCreateConstantIndexOp(at, loc, sizes[d]));
        }
        auto layout = StridedLayoutAttr::get(
            context, 0, SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic));
        auto viewType = MemRefType::get(type.getShape(), type.getElementType(), layout);
        Value view = memref::ReinterpretCastOp::create(at, loc, viewType, param, at.getIndexAttr(0),
                                                       sizes, strides);
        copy.getOutputsMutable()[0].assign(view);
      }
      for (int64_t d = 0; d < type.getRank(); ++d) {
        Value dim = memref::DimOp::create(b, loc, source, d);
        memref::StoreOp::create(b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), dim),
                                dimsOut, ValueRange{index(k++)});
      }
    }
    runSizes();
    return success();
  }

  /// A shape function computes small tensors only where a shape is computed
  /// from input values (axes given at run time): its buffers are freed when
  /// it returns, as prepare runs again whenever those values change.
  /// (A buffer in a loop or branch is freed at the end of its block, unless
  /// it leaves the block, through a view or not: such a buffer, which no
  /// lowering makes for a shape, is left to the process.)
  static void freeOnReturn(func::FuncOp func) {
    func.walk([&](memref::AllocOp alloc) {
      Block *block = alloc->getBlock();
      SmallVector<Value> aliases{alloc.getResult()};
      for (size_t i = 0; i < aliases.size(); ++i)
        for (Operation *user : aliases[i].getUsers()) {
          if (user->hasTrait<OpTrait::IsTerminator>())
            return;
          if (isa<ViewLikeOpInterface>(user))
            llvm::append_range(aliases, user->getResults());
        }
      OpBuilder b(block->getTerminator());
      memref::DeallocOp::create(b, alloc.getLoc(), alloc.getResult());
    });
  }

  /// The plan of a function with dynamic dims: buffer sizes are known only
  /// at run time, so offsets are computed then, by code placed at each
  /// allocation: a buffer goes above every earlier buffer alive at the same
  /// time (no first fit into gaps: that would need sorting at run time). The
  /// shape function computes the same sizes from the input dims, and the
  /// workspace size the runtime allocates.
  LogicalResult planDynamic(func::FuncOp func, func::FuncOp shapes) {
    SmallVector<Buffer> buffers;
    if (failed(collect(func, buffers, /*allowDynamic=*/true)))
      return failure();
    MLIRContext *context = &getContext();
    auto wsType = MemRefType::get({ShapedType::kDynamic}, IntegerType::get(context, 8));
    unsigned index = func.getNumArguments();
    if (failed(func.insertArgument(index, wsType, {}, func.getLoc())))
      return failure();
    Value workspace = func.getArgument(index);

    // Offsets of the buffers of `sizes` and the workspace's size, computed by
    // code at `b` (`before` places it for each buffer).
    auto emitPlan = [&](OpBuilder &b, Location loc, ArrayRef<Value> sizes,
                        function_ref<void(OpBuilder &, size_t)> before) {
      SmallVector<Value> offsets, ends;
      Value total = arith::ConstantIndexOp::create(b, loc, 0);
      for (size_t i = 0; i < buffers.size(); ++i) {
        before(b, i);
        Value offset = arith::ConstantIndexOp::create(b, loc, 0);
        for (size_t j = 0; j < i; ++j)
          if (buffers[j].start <= buffers[i].end && buffers[i].start <= buffers[j].end)
            offset = arith::MaxUIOp::create(b, loc, offset, ends[j]);
        offsets.push_back(offset);
        Value end = arith::AddIOp::create(b, loc, offset, sizes[i]);
        // Aligned: the next buffer may start here.
        Value mask = arith::ConstantIndexOp::create(b, loc, alignment - 1);
        end = arith::AndIOp::create(b, loc, arith::AddIOp::create(b, loc, end, mask),
                                    arith::ConstantIndexOp::create(b, loc, ~(alignment - 1)));
        ends.push_back(end);
        total = arith::MaxUIOp::create(b, loc, total, end);
      }
      return std::make_pair(offsets, total);
    };

    // In the function: each buffer's bytes and offset at its allocation.
    SmallVector<Value> sizes;
    for (Buffer &buffer : buffers) {
      OpBuilder b(buffer.alloc);
      sizes.push_back(byteCount(b, buffer.alloc));
    }
    // In the shape function: the same sizes from the dims it was given (an
    // argument's dims from %in_dims, an out-param's from what it stored in
    // %out_dims), then the total.
    Block &body = shapes.getBody().front();
    Value inDims = body.getArgument(0), outDims = body.getArgument(1),
          status = body.getArgument(2);
    OpBuilder b(body.getTerminator());
    Location loc = shapes.getLoc();
    unsigned numInputs = func->getAttrOfType<IntegerAttr>("nnc.num_inputs").getInt();
    IRMapping mapping;
    // Rebuilt sizes computed from counts, and an op through which one may
    // shrink as its count grows.
    DenseSet<Value> counted;
    Operation *shrinking = nullptr;
    std::function<FailureOr<Value>(Value)> rebuild = [&](Value v) -> FailureOr<Value> {
      if (Value mapped = mapping.lookupOrNull(v))
        return mapped;
      // Every value rebuilt is mapped (a clone below maps its results):
      // the clones take their operands from the mapping, and an operand
      // left out would be the function's own value.
      if (Value selected = nnc::selectedForEveryCount(v); selected != v) {
        FailureOr<Value> rebuilt = rebuild(selected);
        if (succeeded(rebuilt))
          mapping.map(v, *rebuilt);
        return rebuilt;
      }
      Operation *def = v.getDefiningOp();
      if (auto dim = dyn_cast_or_null<memref::DimOp>(def)) {
        auto arg = dyn_cast<BlockArgument>(dim.getSource());
        std::optional<int64_t> d = dim.getConstantIndex();
        if (arg && d && arg.getOwner()->getParentOp() == func) {
          // Inputs' dims are in %in_dims, the out-params' in %out_dims,
          // each argument's in order.
          unsigned a = arg.getArgNumber();
          bool input = a < numInputs;
          int64_t offset = 0;
          for (unsigned k = input ? 0 : numInputs; k < a; ++k)
            offset += cast<MemRefType>(func.getArgument(k).getType()).getRank();
          Value source = input ? inDims : outDims;
          Value at = arith::ConstantIndexOp::create(b, loc, offset + *d);
          Value loaded = memref::LoadOp::create(b, loc, source, ValueRange{at});
          Value result = arith::IndexCastOp::create(b, loc, b.getIndexType(), loaded);
          mapping.map(v, result);
          return result;
        }
      }
      if (auto dim = dyn_cast_or_null<memref::DimOp>(def)) {
        std::optional<int64_t> d = dim.getConstantIndex();
        Value source = dim.getSource();
        auto type = dyn_cast<MemRefType>(source.getType());
        if (!d || !type)
          return failure();
        FailureOr<Value> size = failure();
        if (!type.isDynamicDim(*d)) {
          size = arith::ConstantIndexOp::create(b, loc, type.getDimSize(*d)).getResult();
        } else if (auto alloc = source.getDefiningOp<memref::AllocOp>()) {
          // Another buffer's: the size it was allocated with.
          size = rebuild(alloc.getDynamicSizes()[type.getDynamicDimIndex(*d)]);
        } else if (auto expand = source.getDefiningOp<memref::ExpandShapeOp>()) {
          OpFoldResult stated = expand.getMixedOutputShape()[*d];
          if (isa<Value>(stated))
            size = rebuild(cast<Value>(stated));
        } else if (auto subview = source.getDefiningOp<memref::SubViewOp>()) {
          // A view's dim: the size it was cut with (result dims skip the
          // dims a rank-reducing view drops).
          llvm::SmallBitVector dropped = subview.getDroppedDims();
          int64_t at = -1;
          for (int64_t j = 0, kept = -1; j < (int64_t)dropped.size() && at < 0; ++j)
            if (!dropped.test(j) && ++kept == *d)
              at = j;
          OpFoldResult stated = subview.getMixedSizes()[at];
          if (isa<Value>(stated))
            size = rebuild(cast<Value>(stated));
        } else if (auto select = source.getDefiningOp<arith::SelectOp>()) {
          // One of two buffers (what an scf.if of tensors becomes): their
          // size, when it is the same.
          OpBuilder here(dim);
          FailureOr<Value> a = rebuild(memref::DimOp::create(here, loc, select.getTrueValue(), *d));
          FailureOr<Value> c = rebuild(memref::DimOp::create(here, loc, select.getFalseValue(), *d));
          if (succeeded(a) && succeeded(c) && *a == *c)
            size = *a;
        } else if (auto collapse = source.getDefiningOp<memref::CollapseShapeOp>()) {
          // A collapsed dim: the product of its group's dims (a [B, S, K]
          // left operand seen as [B * S, K] rows).
          OpBuilder here(dim);
          Value product = arith::ConstantIndexOp::create(b, loc, 1);
          // (The groups held by name: a range-for over an element of the
          // temporary getReassociationIndices() returns reads freed memory.)
          SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
          for (int64_t j : groups[*d]) {
            Value part = memref::DimOp::create(here, loc, collapse.getSrc(), j);
            FailureOr<Value> rebuilt = rebuild(part);
            if (failed(rebuilt))
              return failure();
            product = arith::MulIOp::create(b, loc, product, *rebuilt);
          }
          size = product;
        }
        if (succeeded(size))
          mapping.map(v, *size);
        return size;
      }
      // A size only the run computes: the buffer takes its bound (a value
      // of its own, to follow what is computed from it).
      if (auto extent = dyn_cast_or_null<nnc::nn::BoundedExtentOp>(def)) {
        FailureOr<Value> bound = rebuild(extent.getBound());
        if (failed(bound))
          return failure();
        Value own = arith::AddIOp::create(b, loc, *bound, arith::ConstantIndexOp::create(b, loc, 0));
        counted.insert(own);
        mapping.map(v, own);
        return own;
      }
      if (auto load = dyn_cast_or_null<memref::LoadOp>(def)) {
        // A value of an input the shape function is given too (ShapeFunctions.cpp),
        // or of a one-element input reshaped (a [1] scalar read as 0-D).
        Value read = load.getMemRef();
        bool single = false;
        if (isa_and_present<memref::CollapseShapeOp, memref::ExpandShapeOp>(read.getDefiningOp())) {
          read = read.getDefiningOp()->getOperand(0);
          auto type = cast<MemRefType>(read.getType());
          single = type.hasStaticShape() && type.getNumElements() == 1;
          if (!single)
            return failure();
        }
        auto arg = dyn_cast<BlockArgument>(read);
        auto valueInputs = func->getAttrOfType<DenseI64ArrayAttr>("nnc.shape_inputs");
        if (!arg || !valueInputs || arg.getOwner()->getParentOp() != func)
          return failure();
        auto at = llvm::find(valueInputs.asArrayRef(), (int64_t)arg.getArgNumber());
        if (at == valueInputs.asArrayRef().end())
          return failure();
        SmallVector<Value> indices;
        if (single)
          indices.assign(cast<MemRefType>(read.getType()).getRank(),
                         arith::ConstantIndexOp::create(b, loc, 0));
        for (Value i : single ? ValueRange() : load.getIndices()) {
          FailureOr<Value> rebuilt = rebuild(i);
          if (failed(rebuilt))
            return failure();
          indices.push_back(*rebuilt);
        }
        Value source = body.getArgument(3 + (at - valueInputs.asArrayRef().begin()));
        Value loaded = memref::LoadOp::create(b, loc, source, indices);
        mapping.map(v, loaded);
        return loaded;
      }
      // Not only pure ops: a division whose divisor the lowering kept
      // nonzero computes the same in the shape function.
      if (!def || !isMemoryEffectFree(def) || def->getNumRegions() != 0)
        return failure();
      bool fromCount = false;
      for (OpOperand &operand : def->getOpOperands()) {
        FailureOr<Value> rebuilt = rebuild(operand.get());
        if (failed(rebuilt))
          return failure();
        if (!counted.contains(*rebuilt))
          continue;
        fromCount = true;
        // Computed from a count's bound: right only where the size grows
        // with the count (CountedSizes.h).
        if (!nnc::growsWithOperand(def, operand.getOperandNumber())) {
          shrinking = def;
          return failure();
        }
      }
      Operation *clone = b.clone(*def, mapping);
      Value result = clone->getResult(cast<OpResult>(v).getResultNumber());
      if (fromCount)
        counted.insert(result);
      return result;
    };
    // Sizes are checked there: a product of dims past 2^62 bytes (dims of
    // different inputs broadcast together) would wrap around and plan a
    // workspace too small. prepare then returns -1 (abi.h).
    SmallVector<Value> shapeSizes;
    Value limit = arith::ConstantIndexOp::create(b, loc, kMaxWorkspaceBytes);
    Value overflow = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
    for (Buffer &buffer : buffers) {
      Value bytes = arith::ConstantIndexOp::create(b, loc, staticBytes(buffer.alloc.getType()));
      for (Value dynamicSize : buffer.alloc.getDynamicSizes()) {
        FailureOr<Value> rebuilt = rebuild(dynamicSize);
        if (shrinking)
          return nnc::shrinkingError(shrinking, "the size of an intermediate buffer");
        if (failed(rebuilt))
          return buffer.alloc.emitError("the size of an intermediate buffer depends on data computed "
                                "in the function, not only on the inputs: not supported yet");
        auto product = arith::MulUIExtendedOp::create(b, loc, bytes, *rebuilt);
        Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, product.getHigh(),
                                           arith::ConstantIndexOp::create(b, loc, 0));
        overflow = arith::OrIOp::create(b, loc, overflow, high);
        bytes = product.getLow();
      }
      Value large = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, bytes, limit);
      overflow = arith::OrIOp::create(b, loc, overflow, large);
      shapeSizes.push_back(bytes);
    }
    Value total = emitPlan(b, loc, shapeSizes, [](OpBuilder &, size_t) {}).second;
    // Ends below 2^62 + 63 each cannot wrap; the total is the largest.
    overflow = arith::OrIOp::create(
        b, loc, overflow, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, total, limit));
    Value total64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), total);
    memref::StoreOp::create(b, loc, total64, status,
                            ValueRange{arith::ConstantIndexOp::create(b, loc, 1)});
    Value first = arith::ConstantIndexOp::create(b, loc, 0);
    Value checks = memref::LoadOp::create(b, loc, status, ValueRange{first});
    Value noCheckFailed = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, checks,
                                                arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0));
    scf::IfOp::create(b, loc, arith::AndIOp::create(b, loc, overflow, noCheckFailed),
                      [&](OpBuilder &nb, Location nl) {
                        memref::StoreOp::create(nb, nl,
                                                arith::ConstantIntOp::create(nb, nl, nb.getI64Type(), -1),
                                                status, ValueRange{first});
                        scf::YieldOp::create(nb, nl);
                      });
    SmallVector<Value> offsets;
    {
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      offsets = emitPlan(b, func.getLoc(), sizes, [&](OpBuilder &b, size_t i) {
                  b.setInsertionPoint(buffers[i].alloc);
                }).first;
    }
    for (auto [b, offset] : llvm::zip(buffers, offsets)) {
      OpBuilder builder(b.alloc);
      Value view = memref::ViewOp::create(builder, b.alloc.getLoc(), b.alloc.getType(), workspace,
                                          offset, b.alloc.getDynamicSizes());
      for (Operation *user : llvm::make_early_inc_range(b.alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      b.alloc.replaceAllUsesWith(view);
      b.alloc.erase();
    }
    func->setAttr("nnc.workspace_size", IntegerAttr::get(IntegerType::get(context, 64), 0));
    return success();
  }

  /// The bytes of a buffer's element times its static dims.
  static int64_t staticBytes(MemRefType type) {
    int64_t bytes = std::max<int64_t>(1, type.getElementType().getIntOrFloatBitWidth() / 8);
    for (int64_t d : type.getShape())
      if (!ShapedType::isDynamic(d))
        bytes *= d;
    return bytes;
  }

  /// The bytes of an allocation, as an index value before it.
  static Value byteCount(OpBuilder &b, memref::AllocOp alloc) {
    Location loc = alloc.getLoc();
    Value bytes = arith::ConstantIndexOp::create(b, loc, staticBytes(alloc.getType()));
    for (Value size : alloc.getDynamicSizes())
      bytes = arith::MulIOp::create(b, loc, bytes, size);
    return bytes;
  }

  /// Whether `alloc`, or a view of it, is yielded (a loop's new buffer per
  /// iteration).
  static bool flowsIntoYield(memref::AllocOp alloc) {
    SmallVector<Value> worklist{alloc.getResult()};
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      for (Operation *user : v.getUsers()) {
        if (isa<scf::YieldOp>(user))
          return true;
        for (Value r : user->getResults())
          if (isa<MemRefType>(r.getType()))
            worklist.push_back(r);
      }
    }
    return false;
  }

  /// `buffer`'s lifetime over the ops of `block` (numbered by `position`),
  /// from the first use of it or a view of it to the last.
  static void setLifetime(Buffer &buffer, Block &block, DenseMap<Operation *, int64_t> &position) {
    buffer.start = std::numeric_limits<int64_t>::max();
    buffer.end = std::numeric_limits<int64_t>::min();
    SmallVector<Value> worklist{buffer.alloc.getResult()};
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      for (Operation *user : v.getUsers()) {
        Operation *top = block.findAncestorOpInBlock(*user);
        buffer.start = std::min(buffer.start, position[top]);
        buffer.end = std::max(buffer.end, position[top]);
        for (Value r : user->getResults())
          if (isa<MemRefType>(r.getType()))
            worklist.push_back(r);
      }
    }
    if (buffer.start > buffer.end) // never used
      buffer.start = buffer.end = position[buffer.alloc];
  }

  /// A sample's temporaries in a loop over a dynamic batch share one buffer
  /// before the loop, laid out like a function's (first fit over the body's
  /// ops; nested loops inside out). Moved before the loop one by one, each
  /// would be alive for the whole loop: no two would share memory, and a
  /// sample's ops would touch five times the memory of code pinned to batch
  /// 1 (MobileNetV2: 50 MB against 10), out of cache.
  LogicalResult planLoopBodies(Block &body) {
    for (Operation &loop : body) {
      if (!nnc::isBatchLoop(&loop))
        continue;
      auto whileOp = dyn_cast<scf::WhileOp>(loop);
      if (!whileOp && !isa<scf::ForOp>(loop))
        continue;
      Block &inner = whileOp ? *whileOp.getAfterBody() : *cast<scf::ForOp>(loop).getBody();
      // A loop nested in this one first: its shared buffer, placed in this
      // body, is then planned with this body's.
      if (failed(planLoopBodies(inner)))
        return failure();
      DenseMap<Operation *, int64_t> position;
      for (auto [i, op] : llvm::enumerate(inner))
        position[&op] = i;
      SmallVector<Buffer> buffers;
      for (auto alloc : inner.getOps<memref::AllocOp>()) {
        MemRefType type = alloc.getType();
        if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
            !type.getElementType().isIntOrFloat() || flowsIntoYield(alloc))
          continue;
        std::optional<int64_t> size = byteSize(type).get();
        if (!size || *size > kMaxWorkspaceBytes) {
          alloc.emitError("an intermediate buffer of type ") << type << " needs more than 2^62 bytes";
          return failure();
        }
        Buffer buffer{alloc, *size, 0, 0};
        setLifetime(buffer, inner, position);
        buffers.push_back(buffer);
      }
      if (buffers.empty())
        continue;
      FailureOr<int64_t> total = firstFit(buffers);
      if (failed(total))
        return failure();
      OpBuilder b(&loop);
      Value shared = memref::AllocOp::create(
          b, loop.getLoc(), MemRefType::get({*total}, IntegerType::get(loop.getContext(), 8)));
      for (Buffer &buffer : buffers) {
        OpBuilder at(buffer.alloc);
        Location loc = buffer.alloc.getLoc();
        Value view = memref::ViewOp::create(at, loc, buffer.alloc.getType(), shared,
                                            arith::ConstantIndexOp::create(at, loc, buffer.offset),
                                            ValueRange{});
        for (Operation *user : llvm::make_early_inc_range(buffer.alloc->getUsers()))
          if (isa<memref::DeallocOp>(user))
            user->erase();
        buffer.alloc.replaceAllUsesWith(view);
        buffer.alloc.erase();
      }
    }
    return success();
  }

  /// A static buffer a top-level loop's iteration uses and drops (a
  /// sample's temporaries in a loop over a dynamic batch) moves before the
  /// loop, where it is planned like any other and reused by each iteration.
  /// One that flows into the loop's yield is a new buffer per iteration and
  /// stays.
  static void hoistFromLoops(Block &body) {
    SmallVector<std::pair<Operation *, Block *>> blocks;
    // The row chunks of a dynamic matrix product (the cases of a switch and
    // the branches in them, the schedule's own branches for a chunk larger
    // than the batch among them): their buffers move before the outermost
    // op. (Left inside, each would be a malloc per run, never freed.) Only
    // branches are entered, never a parallel loop, whose iterations would
    // then share a buffer.
    std::function<void(Operation *, Operation &)> collectRegions = [&](Operation *top, Operation &op) {
      for (Region &region : op.getRegions())
        for (Block &block : region) {
          blocks.push_back({top, &block});
          for (Operation &nested : block)
            if (nnc::isBatchLoop(&nested) || isa<scf::IfOp, scf::IndexSwitchOp>(nested))
              collectRegions(top, nested);
        }
    };
    for (Operation &op : body) {
      // A sequential loop's body, and the branches in it.
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        blocks.push_back({loop, loop.getBody()});
        for (Operation &nested : *loop.getBody())
          if (isa<scf::IfOp, scf::IndexSwitchOp>(nested))
            collectRegions(loop, nested);
      } else if (nnc::isBatchLoop(&op) || isa<scf::IfOp, scf::IndexSwitchOp>(op)) {
        collectRegions(&op, op);
      }
    }
    for (auto [loop, block] : blocks) {
      for (auto alloc : llvm::make_early_inc_range(block->getOps<memref::AllocOp>())) {
        if (!alloc.getDynamicSizes().empty() || flowsIntoYield(alloc))
          continue;
        for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
          if (isa<memref::DeallocOp>(user))
            user->erase();
        alloc->moveBefore(loop);
      }
    }
  }

  /// The allocations of `func`'s body with their lifetimes.
  LogicalResult collect(func::FuncOp func, SmallVector<Buffer> &buffers, bool allowDynamic) {
    Block &body = func.getBody().front();
    if (failed(planLoopBodies(body)))
      return failure();
    hoistFromLoops(body);
    DenseMap<Operation *, int64_t> position;
    for (auto [i, op] : llvm::enumerate(body))
      position[&op] = i;

    for (Operation &op : body) {
      auto alloc = dyn_cast<memref::AllocOp>(op);
      if (!alloc)
        continue;
      MemRefType type = alloc.getType();
      if (!allowDynamic && !type.hasStaticShape()) {
        // The function has no shape function to size it: its inputs and
        // outputs are static (ShapeFunctions.cpp).
        alloc.emitError("an intermediate buffer of type ")
            << type << " has dims known only at run time in a function of static inputs and "
                       "outputs (a Loop's scan output of a run-time length used inside the "
                       "model): not supported yet";
        return failure();
      }
      if (!type.getLayout().isIdentity() || !type.getElementType().isIntOrFloat()) {
        alloc.emitError("cannot plan a dynamic or strided buffer");
        return failure();
      }
      // Alive from its first use to its last: allocations are often placed
      // well before their first use (empty tensors CSE merged, then split
      // again at the first one's place).
      std::optional<int64_t> size = type.hasStaticShape() ? byteSize(type).get() : 0;
      if (!size || *size > kMaxWorkspaceBytes) {
        alloc.emitError("an intermediate buffer of type ")
            << type << " needs more than 2^62 bytes";
        return failure();
      }
      Buffer buffer{alloc, *size, 0, 0};
      setLifetime(buffer, body, position);
      buffers.push_back(buffer);
    }
    return success();
  }

  /// Offsets for static `buffers` by first fit (the lowest aligned offset
  /// not used by a buffer alive at the same time); returns the bytes they
  /// take, aligned.
  FailureOr<int64_t> firstFit(MutableArrayRef<Buffer> buffers) {
    int64_t total = 0;
    for (size_t i = 0; i < buffers.size(); ++i) {
      Buffer &b = buffers[i];
      SmallVector<std::pair<int64_t, int64_t>> busy;
      for (size_t j = 0; j < i; ++j)
        if (buffers[j].start <= b.end && b.start <= buffers[j].end)
          busy.push_back({buffers[j].offset, buffers[j].offset + buffers[j].size});
      llvm::sort(busy);
      int64_t offset = 0;
      for (auto [lo, hi] : busy) {
        if (offset + b.size <= lo)
          break;
        offset = std::max<int64_t>(offset, llvm::alignTo(hi, alignment));
      }
      b.offset = offset;
      total = std::max(total, offset + b.size);
      // Each buffer is at most 2^62 bytes, so these sums have not wrapped.
      if (total > kMaxWorkspaceBytes) {
        b.alloc.emitError("the workspace would need more than 2^62 bytes");
        return failure();
      }
    }
    return (int64_t)llvm::alignTo(std::max<int64_t>(total, 1), alignment);
  }

  /// Places every allocation of `func` in one workspace, its last argument.
  LogicalResult plan(func::FuncOp func) {
    SmallVector<Buffer> buffers;
    if (failed(collect(func, buffers, /*allowDynamic=*/false)))
      return failure();

    FailureOr<int64_t> planned = firstFit(buffers);
    if (failed(planned))
      return failure();
    int64_t total = *planned;

    // The workspace is the last argument.
    MLIRContext *context = &getContext();
    auto wsType = MemRefType::get({total}, IntegerType::get(context, 8));
    unsigned index = func.getNumArguments();
    if (failed(func.insertArgument(index, wsType, {}, func.getLoc())))
      return failure();
    Value workspace = func.getArgument(index);
    for (Buffer &b : buffers) {
      OpBuilder builder(b.alloc);
      Value offset = arith::ConstantIndexOp::create(builder, b.alloc.getLoc(), b.offset);
      Value view = memref::ViewOp::create(builder, b.alloc.getLoc(), b.alloc.getType(), workspace,
                                          offset, ValueRange{});
      for (Operation *user : llvm::make_early_inc_range(b.alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      b.alloc.replaceAllUsesWith(view);
      b.alloc.erase();
    }
    func->setAttr("nnc.workspace_size", IntegerAttr::get(IntegerType::get(context, 64), total));
    // What the plan saved: the bytes of all intermediates, were none shared.
    nnc::CheckedInt sum(0);
    for (const Buffer &b : buffers)
      sum += b.size;
    func->setAttr("nnc.intermediates_size", IntegerAttr::get(IntegerType::get(context, 64),
                                                             sum.valueOr(INT64_MAX)));
    return success();
  }
};
} // namespace
