//===- ShapeFunctions.cpp - output dims and dim checks before a run -------===//
//
// Target-neutral, on linalg over tensors: every dim of a result is then an
// arith expression of the arguments' dims, or of values read from arguments
// (a shape given at run time), and the checks the lowering made are
// cf.asserts beside it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Common/CountedSizes.h"
#include "compiler/Codegen/Passes.h"
#include "dialects/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Analysis/SliceAnalysis.h"

namespace nnc {
#define GEN_PASS_DEF_SHAPEFUNCTIONS
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
bool isDynamic(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  return shaped && shaped.hasRank() && !shaped.hasStaticShape();
}

int64_t rankOf(Type type) { return cast<ShapedType>(type).getRank(); }

/// A dim of an expand_shape is the size it states.
struct DimOfExpandShape : OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::DimOp dim, PatternRewriter &rewriter) const override {
    auto expand = dim.getSource().getDefiningOp<tensor::ExpandShapeOp>();
    std::optional<int64_t> d = dim.getConstantIndex();
    if (!expand || !d)
      return failure();
    rewriter.replaceOp(dim, getValueOrCreateConstantIndexOp(rewriter, dim.getLoc(),
                                                            expand.getMixedOutputShape()[*d]));
    return success();
  }
};

/// A dim of a collapse_shape is the product of its group's dims.
struct DimOfCollapseShape : OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::DimOp dim, PatternRewriter &rewriter) const override {
    auto collapse = dim.getSource().getDefiningOp<tensor::CollapseShapeOp>();
    std::optional<int64_t> d = dim.getConstantIndex();
    if (!collapse || !d)
      return failure();
    Location loc = dim.getLoc();
    Value product = arith::ConstantIndexOp::create(rewriter, loc, 1);
    SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
    for (int64_t j : groups[*d])
      product = arith::MulIOp::create(rewriter, loc, product,
                                      tensor::DimOp::create(rewriter, loc, collapse.getSrc(), j));
    rewriter.replaceOp(dim, product);
    return success();
  }
};

/// A dim of a switch (or if) whose regions yield a tensor defined before it,
/// or that tensor with a slice inserted (the row chunks of a dynamic matrix
/// product), is the tensor's.
/// Whether `v` is `kept`, `kept` with a slice inserted, or what branches
/// yield that are each of those.
bool isKeptWithInsertions(Value v, Value kept) {
  if (v == kept)
    return true;
  if (auto insert = v.getDefiningOp<tensor::InsertSliceOp>())
    return isKeptWithInsertions(insert.getDest(), kept);
  if (auto insert = v.getDefiningOp<tensor::InsertOp>())
    return isKeptWithInsertions(insert.getDest(), kept);
  auto result = dyn_cast<OpResult>(v);
  if (!result)
    return false;
  unsigned i = result.getResultNumber();
  // Loops that carry it, inserting (a heap kept in a TopK's results).
  if (auto loop = dyn_cast<scf::ForOp>(result.getOwner()))
    return isKeptWithInsertions(loop.getInits()[i], kept) &&
           isKeptWithInsertions(cast<scf::YieldOp>(loop.getBody()->getTerminator()).getOperand(i),
                                loop.getRegionIterArgs()[i]);
  if (auto loop = dyn_cast<scf::WhileOp>(result.getOwner())) {
    if (i >= loop.getInits().size() || loop.getConditionOp().getArgs()[i] != loop.getBeforeArguments()[i] ||
        loop.getAfterArguments()[i].getType() != v.getType())
      return false;
    return isKeptWithInsertions(loop.getInits()[i], kept) &&
           isKeptWithInsertions(loop.getYieldOp().getOperand(i), loop.getAfterArguments()[i]);
  }
  if (!isa<scf::IfOp, scf::IndexSwitchOp>(result.getOwner()))
    return false;
  return llvm::all_of(result.getOwner()->getRegions(), [&](Region &region) {
    return !region.empty() &&
           isKeptWithInsertions(cast<scf::YieldOp>(region.front().getTerminator())
                                    .getOperand(result.getResultNumber()),
                                kept);
  });
}

struct DimOfInsertingBranches : OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::DimOp dim, PatternRewriter &rewriter) const override {
    auto result = dyn_cast<OpResult>(dim.getSource());
    Operation *branches = result ? result.getOwner() : nullptr;
    if (!isa_and_present<scf::IfOp, scf::IndexSwitchOp>(branches))
      return failure();
    unsigned i = result.getResultNumber();
    Value kept;
    SmallVector<Value> yielded;
    for (Region &region : branches->getRegions()) {
      if (region.empty())
        return failure();
      yielded.push_back(cast<scf::YieldOp>(region.front().getTerminator()).getOperand(i));
    }
    for (Value v : yielded)
      if (!branches->isAncestor(v.getParentBlock()->getParentOp()))
        kept = v;
    if (!kept)
      return failure();
    for (Value v : yielded)
      if (!isKeptWithInsertions(v, kept))
        return failure();
    rewriter.modifyOpInPlace(dim, [&] { dim.getSourceMutable().assign(kept); });
    return success();
  }
};

/// The size of dim `d` of `v` where an op writing into a tensor.empty made
/// it (a linalg op into its init), or null.
Value emptySize(Value v, int64_t d) {
  while (auto result = dyn_cast<OpResult>(v)) {
    Operation *op = result.getOwner();
    if (auto empty = dyn_cast<tensor::EmptyOp>(op))
      return empty.getType().isDynamicDim(d) ? empty.getDynamicSize(d) : Value();
    auto writer = dyn_cast<DestinationStyleOpInterface>(op);
    if (!writer)
      return {};
    v = writer.getTiedOpOperand(result)->get();
  }
  return {};
}

/// A dim of an scf.if's result whose branches each write into a tensor.empty
/// of the same size, from above (a gather guarded against an empty input):
/// that size.
struct DimOfSizedBranches : OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::DimOp dim, PatternRewriter &rewriter) const override {
    auto result = dyn_cast<OpResult>(dim.getSource());
    auto branches = result ? dyn_cast<scf::IfOp>(result.getOwner()) : scf::IfOp();
    std::optional<int64_t> d = dim.getConstantIndex();
    if (!branches || !d || branches.getElseRegion().empty())
      return failure();
    unsigned i = result.getResultNumber();
    Value size;
    for (Region *region : {&branches.getThenRegion(), &branches.getElseRegion()}) {
      Value yielded = cast<scf::YieldOp>(region->front().getTerminator()).getOperand(i);
      Value here = emptySize(yielded, *d);
      if (!here || (size && here != size) || branches->isAncestor(here.getParentBlock()->getParentOp()))
        return failure();
      size = here;
    }
    rewriter.replaceOp(dim, size);
    return success();
  }
};

/// A dim of a loop's result that each iteration yields with elements
/// inserted (a data-dependent result filled in place) is its init's.
struct DimOfInsertingLoop : OpRewritePattern<tensor::DimOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::DimOp dim, PatternRewriter &rewriter) const override {
    auto result = dyn_cast<OpResult>(dim.getSource());
    auto loop = result ? dyn_cast<scf::ForOp>(result.getOwner()) : scf::ForOp();
    if (!loop)
      return failure();
    unsigned i = result.getResultNumber();
    Value yielded = cast<scf::YieldOp>(loop.getBody()->getTerminator()).getOperand(i);
    if (!isKeptWithInsertions(yielded, loop.getRegionIterArgs()[i]))
      return failure();
    rewriter.modifyOpInPlace(dim, [&] { dim.getSourceMutable().assign(loop.getInitArgs()[i]); });
    return success();
  }
};

/// The inputs of `func` whose values size an intermediate (a Loop's scan
/// output over a trip count given at run time, used inside the model): the
/// memory plan computes those sizes in the shape function, which then reads
/// these inputs too, whether or not an output's dims need them.
llvm::SmallSetVector<unsigned, 4> inputsSizingIntermediates(func::FuncOp func) {
  llvm::SmallSetVector<unsigned, 4> inputs;
  func.walk([&](tensor::EmptyOp empty) {
    for (Value size : empty.getDynamicSizes()) {
      SetVector<Operation *> slice;
      BackwardSliceOptions options;
      options.omitUsesFromAbove = false;
      (void)getBackwardSlice(size, &slice, options);
      for (Operation *op : slice)
        if (auto extract = dyn_cast<tensor::ExtractOp>(op))
          if (auto arg = dyn_cast<BlockArgument>(extract.getTensor());
              arg && arg.getOwner()->getParentOp() == func)
            inputs.insert(arg.getArgNumber());
    }
  });
  return inputs;
}

/// Resolves dims of results to those of their operands, folds, and drops
/// what nothing uses: what is left of a shape function is the dims'
/// arithmetic.
LogicalResult simplifyDims(func::FuncOp shapes) {
  MLIRContext *context = shapes.getContext();
  RewritePatternSet patterns(context);
  memref::populateResolveRankedShapedTypeResultDimsPatterns(patterns);
  memref::populateResolveShapedTypeResultDimsPatterns(patterns);
  patterns.add<DimOfExpandShape, DimOfCollapseShape, DimOfInsertingBranches, DimOfSizedBranches,
               DimOfInsertingLoop>(context);
  // A loop's result has its init's dims (the batch loops of DynamicBatch.cpp).
  scf::populateSCFForLoopCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : context->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, context);
  return applyPatternsGreedily(shapes, std::move(patterns));
}

/// Moves each check inside a loop (a recurrent op's reshapes in the body of
/// a Loop of a run-time length) before the loop, with what it computes its
/// condition from, when that is the same in every iteration: pure ops on
/// values from outside the loop. The shape function evaluates checks once,
/// at the top of its body; one that varies between iterations is an error.
LogicalResult hoistInvariantChecks(func::FuncOp shapes) {
  Block &body = shapes.getBody().front();
  SmallVector<cf::AssertOp> nested;
  shapes.walk([&](cf::AssertOp check) {
    if (check->getBlock() != &body)
      nested.push_back(check);
  });
  if (nested.empty())
    return success();
  // Their conditions on dims first, rather than on the tensors computed in
  // the loop (a dim of a product's result is its operand's).
  if (failed(simplifyDims(shapes)))
    return shapes.emitError("shape function did not converge");
  nested.clear();
  shapes.walk([&](cf::AssertOp check) {
    if (check->getBlock() != &body)
      nested.push_back(check);
  });
  for (cf::AssertOp check : nested) {
    Operation *top = body.findAncestorOpInBlock(*check);
    SetVector<Operation *> slice;
    BackwardSliceOptions options;
    options.omitUsesFromAbove = false;
    options.inclusive = true;
    options.filter = [&](Operation *op) { return top->isAncestor(op); };
    (void)getBackwardSlice(check.getArg(), &slice, options);
    auto fromOutside = [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def ? !top->isAncestor(def) || slice.contains(def)
                 : !top->isAncestor(cast<BlockArgument>(v).getOwner()->getParentOp());
    };
    // Only out of loops: a branch's check holds only when it is taken.
    bool invariant = fromOutside(check.getArg());
    for (Operation *parent = check->getParentOp(); parent != shapes; parent = parent->getParentOp())
      invariant &= isa<scf::ForOp, scf::WhileOp>(parent);
    for (Operation *op : slice)
      invariant &= op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
                   llvm::all_of(op->getOperands(), fromOutside);
    if (!invariant)
      return check.emitError("nnc: a check on dynamic dims inside a branch, or one that may "
                             "change from one iteration of a loop to the next, is not supported");
    OpBuilder b(top);
    IRMapping map;
    for (Operation *op : slice)
      b.clone(*op, map);
    b.clone(*check, map);
    check.erase();
  }
  return success();
}

struct ShapeFunctions : nnc::impl::ShapeFunctionsBase<ShapeFunctions> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> dynamic;
    // Functions with dynamic dims, and those whose checks read values given
    // at run time (a shape input feeding an intermediate of static inputs
    // and outputs).
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal() &&
          (llvm::any_of(func.getArgumentTypes(), isDynamic) ||
           llvm::any_of(func.getResultTypes(), isDynamic) ||
           llvm::any_of(func.getBody().front().getOps<cf::AssertOp>(), [](cf::AssertOp check) {
             return !matchPattern(check.getArg(), m_One());
           }) ||
           // Sizes only the run computes, which buffers take the bounds of.
           func.walk([](nnc::nn::BoundedExtentOp) { return WalkResult::interrupt(); })
               .wasInterrupted() ||
           !inputsSizingIntermediates(func).empty()))
        dynamic.push_back(func);
    for (func::FuncOp func : dynamic)
      if (failed(derive(func)))
        return signalPassFailure();
  }

  LogicalResult derive(func::FuncOp func) {
    MLIRContext *context = &getContext();
    Location loc = func.getLoc();
    OpBuilder b(func);
    b.setInsertionPointAfter(func);
    auto shapes = cast<func::FuncOp>(b.clone(*func));
    shapes.setSymName((func.getSymName() + "__shapes").str());
    shapes->setAttr("nnc.shape_function", UnitAttr::get(context));
    func->setAttr("nnc.shape_function", FlatSymbolRefAttr::get(shapes.getSymNameAttr()));
    // Calls (into the runtime's string functions: Strings.cpp) must not run
    // again in prepare, and the dims need none of them (their counts are
    // bounded extents): each becomes a pure placeholder, which the clean-ups
    // below drop. One that a dim still needs is refused there.
    shapes.walk([&](func::CallOp call) {
      OpBuilder at(call);
      auto placeholder = UnrealizedConversionCastOp::create(at, call.getLoc(), call.getResultTypes(),
                                                            call.getOperands());
      call.replaceAllUsesWith(placeholder.getResults());
      call.erase();
    });
    // Bufferization appends out-params: the planner tells them apart.
    func->setAttr("nnc.num_inputs", b.getI64IntegerAttr(func.getNumArguments()));
    func->setAttr("nnc.num_outputs", b.getI64IntegerAttr(func.getNumResults()));

    int64_t inDims = 0, outDims = 0;
    for (Type t : func.getArgumentTypes())
      inDims += rankOf(t);
    for (Type t : func.getResultTypes())
      outDims += rankOf(t);
    auto i64 = b.getI64Type();
    Type inType = MemRefType::get({std::max<int64_t>(inDims, 1)}, i64);
    Type outType = MemRefType::get({std::max<int64_t>(outDims, 1)}, i64);
    Type statusType = MemRefType::get({2}, i64);
    unsigned numArgs = shapes.getNumArguments();
    if (failed(shapes.insertArguments({numArgs, numArgs, numArgs}, {inType, outType, statusType},
                                      {}, {loc, loc, loc})))
      return failure();
    Block &body = shapes.getBody().front();
    Value in = body.getArgument(numArgs), out = body.getArgument(numArgs + 1),
          status = body.getArgument(numArgs + 2);

    // The results' dims, stored; the results themselves are no longer needed.
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    auto index = [&](int64_t i) { return arith::ConstantIndexOp::create(b, loc, i); };
    int64_t k = 0;
    SmallVector<memref::StoreOp> storedDims;
    SmallVector<int64_t> outputOf; // of each stored dim
    for (auto [o, result] : llvm::enumerate(ret.getOperands()))
      for (int64_t d = 0; d < rankOf(result.getType()); ++d) {
        Value dim = tensor::DimOp::create(b, loc, result, d);
        Value v = arith::IndexCastOp::create(b, loc, i64, dim);
        storedDims.push_back(memref::StoreOp::create(b, loc, v, out, ValueRange{index(k++)}));
        outputOf.push_back(o);
      }
    Value zero64 = arith::ConstantIntOp::create(b, loc, i64, 0);
    memref::StoreOp::create(b, loc, zero64, status, ValueRange{index(1)});
    func::ReturnOp::create(b, loc);
    ret.erase();

    if (failed(hoistInvariantChecks(shapes)))
      return failure();
    // The checks report instead of aborting; the function keeps none.
    SmallVector<Attribute> messages;
    b.setInsertionPointToStart(&body);
    Value zero = arith::ConstantIntOp::create(b, loc, i64, 0);
    Value first = index(0);
    memref::StoreOp::create(b, loc, zero, status, ValueRange{first});
    // A check on a size only the run computes would be evaluated with its
    // bound, and the run keeps no checks: refused, unless it holds for every
    // count (seen on the dims of the tensors' sources, once resolved).
    bool counted = shapes.walk([](nnc::nn::BoundedExtentOp) { return WalkResult::interrupt(); })
                       .wasInterrupted();
    if (counted) {
      if (failed(simplifyDims(shapes)))
        return shapes.emitError("shape function did not converge");
      // Sizes computed twice (a concatenation's, once per consumer) as one.
      IRRewriter rewriter(context);
      DominanceInfo dominance;
      eliminateCommonSubExpressions(rewriter, dominance, shapes);
    }
    for (auto check : llvm::make_early_inc_range(body.getOps<cf::AssertOp>())) {
      if (nnc::holdsForEveryCount(check.getArg())) {
        check.erase();
        continue;
      }
      SetVector<Operation *> slice;
      BackwardSliceOptions options;
      options.omitUsesFromAbove = false;
      (void)getBackwardSlice(check.getArg(), &slice, options);
      if (llvm::any_of(slice, [](Operation *op) { return isa<nnc::nn::BoundedExtentOp>(op); }))
        return check.emitError("nnc: '")
               << check.getMsg()
               << "' depends on a count only the run computes (of a NonZero, Compress, "
                  "NonMaxSuppression or Unique), which cannot be checked before the run; not "
                  "supported yet";
    }
    for (auto check : llvm::make_early_inc_range(body.getOps<cf::AssertOp>())) {
      b.setInsertionPoint(check);
      Value code = arith::ConstantIntOp::create(b, loc, i64, messages.size() + 1);
      messages.push_back(check.getMsgAttr());
      Value failed = arith::XOrIOp::create(
          b, loc, check.getArg(), arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1));
      Value current = memref::LoadOp::create(b, loc, status, ValueRange{first});
      Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, current, zero);
      Value report = arith::AndIOp::create(b, loc, failed, none);
      scf::IfOp::create(b, loc, report, [&](OpBuilder &nb, Location nl) {
        memref::StoreOp::create(nb, nl, code, status, ValueRange{first});
        scf::YieldOp::create(nb, nl);
      });
      check.erase();
    }
    // A check nested in a region (a loop's body) would abort in prepare
    // rather than report: none of the lowerings makes one.
    WalkResult nested = shapes.walk([](cf::AssertOp check) {
      check.emitError("nnc: a check on dynamic dims inside a region is not supported");
      return WalkResult::interrupt();
    });
    if (nested.wasInterrupted())
      return failure();
    func->setAttr("nnc.checks", ArrayAttr::get(context, messages));
    func.walk([](cf::AssertOp check) { check.erase(); });

    // What is left is the dims' arithmetic: resolve dims of results to those
    // of their operands, fold, and drop the rest.
    if (failed(simplifyDims(shapes)))
      return shapes.emitError("shape function did not converge");
    // Dims only the run computes (NonZero's count): the outputs they reach
    // are data-dependent, and the shape function gives their bounds.
    SmallVector<int64_t> dataDependent;
    for (auto [store, o] : llvm::zip(storedDims, outputOf)) {
      if (Operation *shrinking = nnc::shrinksWithCount(store.getValue()))
        return nnc::shrinkingError(shrinking, "an output's dim");
      SetVector<Operation *> slice;
      BackwardSliceOptions options;
      options.omitUsesFromAbove = false;
      (void)getBackwardSlice(store.getValue(), &slice, options);
      if (llvm::any_of(slice, [](Operation *op) { return isa<nnc::nn::BoundedExtentOp>(op); }) &&
          !llvm::is_contained(dataDependent, o))
        dataDependent.push_back(o);
    }
    if (!dataDependent.empty())
      func->setAttr("nnc.data_dependent_outputs", b.getDenseI64ArrayAttr(dataDependent));
    shapes.walk([](nnc::nn::BoundedExtentOp extent) {
      extent.replaceAllUsesWith(extent.getBound());
      extent.erase();
    });
    // An argument's dims come from %in_dims.
    int64_t offset = 0;
    for (unsigned a = 0; a < numArgs; ++a) {
      BlockArgument arg = body.getArgument(a);
      for (OpOperand &use : llvm::make_early_inc_range(arg.getUses())) {
        auto dim = dyn_cast<tensor::DimOp>(use.getOwner());
        std::optional<int64_t> d = dim ? dim.getConstantIndex() : std::nullopt;
        if (!d)
          continue;
        b.setInsertionPoint(dim);
        Value v = memref::LoadOp::create(b, loc, in, ValueRange{index(offset + *d)});
        dim.replaceAllUsesWith(arith::IndexCastOp::create(b, loc, b.getIndexType(), v).getResult());
        dim.erase();
      }
      offset += rankOf(arg.getType());
    }

    if (failed(simplifyDims(shapes)))
      return shapes.emitError("shape function did not converge");
    IRRewriter rewriter(context);
    (void)eraseUnreachableBlocks(rewriter, shapes.getBody());
    (void)runRegionDCE(rewriter, shapes.getBody());
    WalkResult fromText = shapes.walk([](UnrealizedConversionCastOp placeholder) {
      placeholder.emitError("nnc: a dim computed from text read at run time (a Cast from "
                            "strings) is not supported");
      return WalkResult::interrupt();
    });
    if (fromText.wasInterrupted())
      return failure();

    // An input still used is read for its values (a Reshape's shape given
    // at run time), or one that sizes an intermediate: it follows %status,
    // and the runtime passes its data.
    llvm::SmallSetVector<unsigned, 4> sizing = inputsSizingIntermediates(func);
    SmallVector<int64_t> valueInputs;
    for (unsigned a = 0; a < numArgs; ++a) {
      BlockArgument arg = body.getArgument(a);
      if (arg.use_empty() && !sizing.contains(a))
        continue;
      unsigned at = shapes.getNumArguments();
      if (failed(shapes.insertArgument(at, arg.getType(), {}, loc)))
        return failure();
      arg.replaceAllUsesWith(body.getArgument(at));
      valueInputs.push_back(a);
    }
    if (!valueInputs.empty())
      func->setAttr("nnc.shape_inputs", b.getDenseI64ArrayAttr(valueInputs));
    BitVector erase(shapes.getNumArguments());
    erase.set(0, numArgs);
    if (failed(shapes.eraseArguments(erase)))
      return failure();
    shapes.setType(FunctionType::get(context, shapes.getArgumentTypes(), {}));
    shapes.removeResAttrsAttr();
    return success();
  }
};
} // namespace
