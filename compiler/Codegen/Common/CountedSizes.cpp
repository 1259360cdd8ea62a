//===- CountedSizes.cpp - sizes computed from counts only the run knows ---===//

#include "compiler/Codegen/Common/CountedSizes.h"
#include "dialects/NN/IR/NNOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace nnc;

namespace {
enum class Trend { None, Up, Down, Unknown };

Trend flip(Trend t) { return t == Trend::Up ? Trend::Down : t == Trend::Down ? Trend::Up : t; }

Trend combine(Trend a, Trend b) {
  if (a == Trend::None)
    return b;
  if (b == Trend::None || a == b)
    return a;
  return Trend::Unknown;
}

/// How `e` moves as its dim or symbol `position` grows, the others fixed.
Trend trendOf(AffineExpr e, unsigned position, unsigned numDims) {
  if (auto dim = dyn_cast<AffineDimExpr>(e))
    return dim.getPosition() == position ? Trend::Up : Trend::None;
  if (auto symbol = dyn_cast<AffineSymbolExpr>(e))
    return symbol.getPosition() + numDims == position ? Trend::Up : Trend::None;
  auto binary = dyn_cast<AffineBinaryOpExpr>(e);
  if (!binary)
    return Trend::None;
  Trend lhs = trendOf(binary.getLHS(), position, numDims), rhs = trendOf(binary.getRHS(), position, numDims);
  auto constant = dyn_cast<AffineConstantExpr>(binary.getRHS());
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return combine(lhs, rhs);
  case AffineExprKind::Mul:
    // (Affine products have a constant on the right.)
    if (!constant || rhs != Trend::None)
      return lhs == Trend::None && rhs == Trend::None ? Trend::None : Trend::Unknown;
    return constant.getValue() >= 0 ? lhs : flip(lhs);
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv:
    if (!constant || constant.getValue() <= 0)
      return lhs == Trend::None && rhs == Trend::None ? Trend::None : Trend::Unknown;
    return lhs;
  default: // mod
    return lhs == Trend::None && rhs == Trend::None ? Trend::None : Trend::Unknown;
  }
}
} // namespace

bool nnc::growsWithOperand(Operation *op, unsigned i) {
  if (auto apply = dyn_cast<affine::AffineApplyOp>(op)) {
    AffineMap map = apply.getAffineMap();
    Trend t = trendOf(map.getResult(0), i, map.getNumDims());
    return t == Trend::None || t == Trend::Up;
  }
  // A buffer's or tensor's dims are the sizes it was made with (or their
  // sum, product: a pad, a collapse), and a dim is one of those.
  if (isa<tensor::DimOp, memref::DimOp>(op))
    return i == 0;
  if (llvm::any_of(op->getResultTypes(), llvm::IsaPred<ShapedType>))
    return true;
  if (isa<arith::AddIOp, arith::MulIOp, arith::MinSIOp, arith::MaxSIOp, arith::MinUIOp,
          arith::MaxUIOp, arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp, arith::ExtUIOp>(op))
    return true;
  // The dividend and the minuend only.
  if (isa<arith::SubIOp, arith::DivSIOp, arith::DivUIOp, arith::CeilDivSIOp, arith::CeilDivUIOp,
          arith::FloorDivSIOp>(op))
    return i == 0;
  // Either value, not the condition.
  if (isa<arith::SelectOp>(op))
    return i != 0;
  return false;
}

namespace {
/// Whether `v` depends on a count, and the first shrinking op on the way.
struct Walk {
  DenseMap<Value, std::pair<bool, Operation *>> memo;

  std::pair<bool, Operation *> at(Value v) {
    if (auto found = memo.find(v); found != memo.end())
      return found->second;
    memo[v] = {false, nullptr}; // (a cycle through a loop's argument: none)
    std::pair<bool, Operation *> result{false, nullptr};
    Operation *op = v.getDefiningOp();
    if (isa_and_present<nn::BoundedExtentOp>(op)) {
      result = {true, nullptr};
    } else if (op) {
      bool shaped = llvm::any_of(op->getResultTypes(), llvm::IsaPred<ShapedType>);
      for (OpOperand &operand : op->getOpOperands()) {
        // Which of two tensors or buffers (an scf.if's, a select's) is not
        // what sizes them.
        if (shaped && operand.get().getType().isInteger(1))
          continue;
        auto [counted, shrinking] = at(operand.get());
        if (!counted)
          continue;
        result.first = true;
        if (!result.second)
          result.second = shrinking ? shrinking
                                    : growsWithOperand(op, operand.getOperandNumber()) ? nullptr : op;
      }
    }
    memo[v] = result;
    return result;
  }
};

Value uncast(Value v) {
  while (auto cast = v.getDefiningOp<arith::IndexCastOp>())
    v = cast.getIn();
  return v;
}

bool nonNegative(Value v, int depth = 0) {
  v = uncast(v);
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant)))
    return !constant.isNegative();
  Operation *op = v.getDefiningOp();
  if (!op || depth > 8)
    return false;
  if (isa<nn::BoundedExtentOp, tensor::DimOp>(op))
    return true;
  if (isa<arith::MaxSIOp>(op))
    return nonNegative(op->getOperand(0), depth + 1) || nonNegative(op->getOperand(1), depth + 1);
  if (isa<arith::MinSIOp, arith::AddIOp, arith::MulIOp>(op))
    return nonNegative(op->getOperand(0), depth + 1) && nonNegative(op->getOperand(1), depth + 1);
  return false;
}

/// Whether a <= b whatever the sizes they are computed from.
bool atMost(Value a, Value b, int depth = 0) {
  a = uncast(a);
  b = uncast(b);
  if (a == b)
    return true;
  APInt x, y;
  if (matchPattern(a, m_ConstantInt(&x)) && matchPattern(b, m_ConstantInt(&y)))
    return x.sle(y);
  if (matchPattern(a, m_Zero()) && nonNegative(b))
    return true;
  if (depth > 8)
    return false;
  if (auto min = a.getDefiningOp<arith::MinSIOp>())
    if (atMost(min.getLhs(), b, depth + 1) || atMost(min.getRhs(), b, depth + 1))
      return true;
  if (auto max = b.getDefiningOp<arith::MaxSIOp>())
    if (atMost(a, max.getLhs(), depth + 1) || atMost(a, max.getRhs(), depth + 1))
      return true;
  if (auto min = b.getDefiningOp<arith::MinSIOp>())
    return atMost(a, min.getLhs(), depth + 1) && atMost(a, min.getRhs(), depth + 1);
  return false;
}
} // namespace

Operation *nnc::shrinksWithCount(Value size) { return Walk().at(size).second; }

/// The error for a size computed from a count through `shrinking`, an op
/// whose result may fall as the count grows.
LogicalResult nnc::shrinkingError(Operation *shrinking, StringRef what) {
  return shrinking->emitError("nnc: ")
         << what << " is computed from a count the data gives (of a NonZero, Compress, "
                    "NonMaxSuppression or Unique) through '"
         << shrinking->getName() << "', which may make it smaller as the count grows; sizes are "
         << "planned before the run from the count's bound, so this is not supported";
}

bool nnc::holdsForEveryCount(Value holds) {
  if (matchPattern(holds, m_One()))
    return true;
  if (auto both = holds.getDefiningOp<arith::AndIOp>())
    return holdsForEveryCount(both.getLhs()) && holdsForEveryCount(both.getRhs());
  auto cmp = holds.getDefiningOp<arith::CmpIOp>();
  if (!cmp)
    return false;
  Value a = cmp.getLhs(), b = cmp.getRhs();
  switch (cmp.getPredicate()) {
  case arith::CmpIPredicate::sle:
    return atMost(a, b);
  case arith::CmpIPredicate::sge:
    return atMost(b, a);
  case arith::CmpIPredicate::eq:
    return uncast(a) == uncast(b);
  default:
    return false;
  }
}
