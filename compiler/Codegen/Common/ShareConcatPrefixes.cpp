//===- ShareConcatPrefixes.cpp - concats that extend others share a buffer -===//
//
// Target-neutral: a tensor-level rewrite before bufferization.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace nnc {
#define GEN_PASS_DEF_SHARECONCATPREFIXES
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
/// A concat as the nn-to-linalg conversion builds it: an empty tensor of
/// static shape, then its inputs inserted one after another along one axis
/// from offset 0, each insert's result used only by the next.
struct Chain {
  tensor::EmptyOp empty;
  SmallVector<tensor::InsertSliceOp> inserts;
  int64_t axis = -1;
  Value result() { return inserts.back().getResult(); }
  RankedTensorType type() { return empty.getType(); }
  Value input(size_t i) { return inserts[i].getSource(); }
  size_t size() const { return inserts.size(); }
};

/// The chain that starts at `empty`, if it is one.
std::optional<Chain> chainFrom(tensor::EmptyOp empty) {
  RankedTensorType type = empty.getType();
  if (!type.hasStaticShape() || !empty->hasOneUse())
    return std::nullopt;
  Chain chain;
  chain.empty = empty;
  Value dest = empty.getResult();
  int64_t offset = 0;
  while (true) {
    auto insert = dyn_cast<tensor::InsertSliceOp>(*dest.getUsers().begin());
    // Offsets as attributes (as the conversion builds them): the inserts
    // move, and values they used might not come along.
    if (!insert || insert.getDest() != dest || insert->getBlock() != empty->getBlock() ||
        !insert.hasUnitStride() || !insert.getOffsets().empty() || !insert.getSizes().empty() ||
        !insert.getStrides().empty())
      return std::nullopt;
    RankedTensorType source = insert.getSourceType();
    if (!source.hasStaticShape() || source.getRank() != type.getRank())
      return std::nullopt;
    // The axis is where the input is narrower than the result; an input as
    // wide as the result along every dim would be the whole concat.
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t at = insert.getStaticOffsets()[d];
      bool onAxis = chain.axis == d || (chain.axis < 0 && source.getDimSize(d) != type.getDimSize(d));
      if (onAxis && chain.axis < 0)
        chain.axis = d;
      if (at != (onAxis ? offset : 0) ||
          (!onAxis && source.getDimSize(d) != type.getDimSize(d)))
        return std::nullopt;
    }
    if (chain.axis < 0)
      return std::nullopt;
    offset += source.getDimSize(chain.axis);
    chain.inserts.push_back(insert);
    dest = insert.getResult();
    if (offset == type.getDimSize(chain.axis))
      return chain;
    if (!dest.hasOneUse())
      return std::nullopt;
  }
}

/// Whether `shorter` concatenates the first inputs of `longer`, along the
/// same axis, with the same other dims.
bool isPrefix(Chain &shorter, Chain &longer) {
  if (shorter.size() >= longer.size() || shorter.axis != longer.axis ||
      shorter.type().getElementType() != longer.type().getElementType())
    return false;
  for (int64_t d = 0; d < shorter.type().getRank(); ++d)
    if (d != shorter.axis && shorter.type().getDimSize(d) != longer.type().getDimSize(d))
      return false;
  for (size_t i = 0; i < shorter.size(); ++i)
    if (shorter.input(i) != longer.input(i))
      return false;
  return true;
}

struct ShareConcatPrefixes : nnc::impl::ShareConcatPrefixesBase<ShareConcatPrefixes> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &body = func.getBody().front();
    std::vector<Chain> chains;
    for (auto empty : body.getOps<tensor::EmptyOp>())
      if (std::optional<Chain> chain = chainFrom(empty))
        chains.push_back(std::move(*chain));
    // Each chain that is a prefix of others joins the longest of them.
    std::vector<SmallVector<size_t>> sharing(chains.size());
    std::vector<bool> joined(chains.size(), false);
    for (size_t s = 0; s < chains.size(); ++s) {
      std::optional<size_t> best;
      for (size_t l = 0; l < chains.size(); ++l)
        if (isPrefix(chains[s], chains[l]) && (!best || chains[l].size() > chains[*best].size()))
          best = l;
      if (best) {
        sharing[*best].push_back(s);
        joined[s] = true;
      }
    }
    IRRewriter rewriter(&getContext());
    for (size_t l = 0; l < chains.size(); ++l) {
      if (sharing[l].empty() || joined[l])
        continue;
      Chain &longer = chains[l];
      // The longer chain's inserts move up, each right after its input is
      // computed (and after the insert before it), so that the prefix a
      // shorter concat reads exists where that concat was.
      longer.empty->moveBefore(&body, body.begin());
      Operation *previous = longer.empty;
      for (tensor::InsertSliceOp insert : longer.inserts) {
        Operation *after = previous;
        if (Operation *def = insert.getSource().getDefiningOp();
            def && def->getBlock() == &body && after->isBeforeInBlock(def))
          after = def;
        insert->moveAfter(after);
        previous = insert;
      }
      for (size_t s : sharing[l]) {
        Chain &shorter = chains[s];
        Value prefix = longer.inserts[shorter.size() - 1].getResult();
        RankedTensorType type = shorter.type();
        SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0)),
            strides(type.getRank(), rewriter.getIndexAttr(1));
        SmallVector<OpFoldResult> sizes = getAsIndexOpFoldResult(&getContext(), type.getShape());
        rewriter.setInsertionPoint(shorter.inserts.back());
        Value view = tensor::ExtractSliceOp::create(rewriter, shorter.empty.getLoc(), type, prefix,
                                                    offsets, sizes, strides);
        rewriter.replaceAllUsesWith(shorter.result(), view);
        for (tensor::InsertSliceOp insert : llvm::reverse(shorter.inserts))
          rewriter.eraseOp(insert);
        rewriter.eraseOp(shorter.empty);
      }
    }
  }
};
} // namespace
