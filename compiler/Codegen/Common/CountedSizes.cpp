//===- CountedSizes.cpp - sizes computed from counts only the run knows ---===//

#include "compiler/Codegen/Common/CountedSizes.h"
#include "dialects/NN/IR/NNOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"

#include <map>

using namespace mlir;
using namespace nnc;

namespace {
bool nonNegative(Value v, int depth = 0);
/// An upper bound of a size or a value computed from sizes, where one is
/// known when compiling (a count's constant bound, and what grows with it).
std::optional<uint64_t> upperBound(Value v, int depth = 0);

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
  if (isa<arith::AddIOp, arith::MinSIOp, arith::MaxSIOp, arith::MinUIOp, arith::MaxUIOp,
          arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp, arith::ExtUIOp>(op))
    return true;
  // A product by a factor that is never negative (count * -2 shrinks).
  if (isa<arith::MulIOp>(op))
    return nonNegative(op->getOperand(1 - i));
  // The minuend only; the dividend only, by a divisor never negative.
  if (isa<arith::SubIOp>(op))
    return i == 0;
  if (isa<arith::DivSIOp, arith::DivUIOp, arith::CeilDivSIOp, arith::CeilDivUIOp, arith::FloorDivSIOp>(op))
    return i == 0 && nonNegative(op->getOperand(1));
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
    } else if (Value selected = nnc::selectedForEveryCount(v); selected != v) {
      result = at(selected);
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

bool compares(arith::CmpIPredicate predicate, Value a, Value b);

/// uncast, resolving selects nested `nesting` deep in selects' values at
/// most (each level looks into both values).
Value uncastNested(Value v, int nesting) {
  auto wide = [](Type t) { return t.isIndex() || t.isInteger(64); };
  for (int step = 0; step < 8; ++step) {
    if (auto cast = v.getDefiningOp<arith::IndexCastOp>()) {
      if (!wide(cast.getIn().getType()) || !wide(cast.getType()))
        break;
      v = cast.getIn();
      continue;
    }
    // A select whose condition holds, or never does, for every count (an
    // exported Expand's where(shape == -1, 1, shape) of a count).
    // So is one whose two values are one (an Expand's dim: the shape's
    // where the input's is 1, itself).
    auto select = v.getDefiningOp<arith::SelectOp>();
    if (!select || nesting > 3)
      break;
    Value whenTrue = uncastNested(select.getTrueValue(), nesting + 1);
    if (whenTrue == uncastNested(select.getFalseValue(), nesting + 1)) {
      v = whenTrue;
      continue;
    }
    auto condition = select.getCondition().getDefiningOp<arith::CmpIOp>();
    if (!condition)
      break;
    if (compares(condition.getPredicate(), condition.getLhs(), condition.getRhs()))
      v = select.getTrueValue();
    else if (compares(arith::invertPredicate(condition.getPredicate()), condition.getLhs(),
                      condition.getRhs()))
      v = select.getFalseValue();
    else
      break;
  }
  return v;
}

/// `v` without casts between index and i64, which keep the value (index is
/// 64 bits on nnc's targets), and without selects that are one of their
/// values for every count; a cast from or to a narrower type (a sign
/// extension, a truncation) is a value of its own.
Value uncast(Value v) { return uncastNested(v, 0); }

/// The divisor of a division by a positive constant that truncates or
/// floors (of a non-negative dividend, the same).
std::optional<int64_t> positiveDivisor(Operation *op) {
  APInt divisor;
  if (!isa_and_present<arith::DivSIOp, arith::DivUIOp, arith::FloorDivSIOp>(op) ||
      !matchPattern(uncast(op->getOperand(1)), m_ConstantInt(&divisor)) ||
      !divisor.isStrictlyPositive())
    return std::nullopt;
  return divisor.getSExtValue();
}

/// The low half of a widening product is the wrapping product.
bool isProduct(Value v) {
  if (isa_and_present<arith::MulIOp>(v.getDefiningOp()))
    return true;
  auto result = dyn_cast<OpResult>(v);
  return result && result.getResultNumber() == 0 &&
         isa<arith::MulSIExtendedOp, arith::MulUIExtendedOp>(result.getOwner());
}

/// `v` as a polynomial in the values it is computed from by + - * (the ring
/// of 64-bit integers, where index and i64 arithmetic wrap alike): two
/// values with the same polynomial are equal, whatever those values.
using Monomial = SmallVector<void *, 2>;
using Polynomial = std::map<Monomial, uint64_t>;

std::optional<Polynomial> polynomial(Value v, int depth = 0) {
  v = uncast(v);
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant)))
    return Polynomial{{Monomial{}, constant.getZExtValue()}};
  Operation *op = v.getDefiningOp();
  // A quotient by a positive constant that divides every coefficient of a
  // dividend neither negative nor past 2^62 (so that it did not wrap): the
  // exact quotient (a Reshape's -1 of [N, 90, 4] by [-1, 4]: 360 N / 4).
  if (std::optional<int64_t> d = positiveDivisor(op);
      d && depth <= 6 && nonNegative(op->getOperand(0)) && upperBound(op->getOperand(0))) {
    std::optional<Polynomial> x = polynomial(op->getOperand(0), depth + 1);
    // Coefficients of magnitude below 2^62, so that the quotient mod 2^64
    // is the exact one.
    auto exact = [&](auto &term) {
      int64_t c = int64_t(term.second);
      return c > -(int64_t(1) << 62) && c < (int64_t(1) << 62) && c % *d == 0;
    };
    if (x && llvm::all_of(*x, exact)) {
      for (auto &[m, c] : *x)
        c = uint64_t(int64_t(c) / *d);
      return x;
    }
  }
  bool sum = isa_and_present<arith::AddIOp, arith::SubIOp>(op), product = isProduct(v);
  if ((!sum && !product) || depth > 6)
    return Polynomial{{Monomial{v.getAsOpaquePointer()}, 1}};
  std::optional<Polynomial> x = polynomial(op->getOperand(0), depth + 1),
                            y = polynomial(op->getOperand(1), depth + 1);
  if (!x || !y)
    return std::nullopt;
  Polynomial result;
  if (sum) {
    result = *x;
    uint64_t sign = isa<arith::SubIOp>(op) ? ~uint64_t(0) : 1;
    for (auto &[m, c] : *y)
      result[m] += sign * c;
  } else {
    if (x->size() * y->size() > 64)
      return std::nullopt;
    for (auto &[m, c] : *x)
      for (auto &[n, d] : *y) {
        Monomial mn(m);
        mn.append(n.begin(), n.end());
        llvm::sort(mn);
        result[mn] += c * d;
      }
  }
  for (auto it = result.begin(); it != result.end();)
    it = it->second == 0 ? result.erase(it) : std::next(it);
  return result;
}

bool equal(Value a, Value b) {
  if (uncast(a) == uncast(b))
    return true;
  std::optional<Polynomial> x = polynomial(a), y = polynomial(b);
  return x && y && *x == *y;
}

/// Whether the product `a * b` of two non-negative values fits in 62 bits.
bool smallProduct(Value a, Value b, int depth) {
  std::optional<uint64_t> x = upperBound(a, depth + 1), y = upperBound(b, depth + 1);
  return x && y && nonNegative(a, depth + 1) && nonNegative(b, depth + 1) &&
         (*x == 0 || *y <= (uint64_t(1) << 62) / *x);
}

std::optional<uint64_t> upperBound(Value v, int depth) {
  v = uncast(v);
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant)))
    return constant.isNegative() ? std::nullopt : std::optional<uint64_t>(constant.getZExtValue());
  Operation *op = v.getDefiningOp();
  if (!op || depth > 8)
    return std::nullopt;
  if (auto extent = dyn_cast<nn::BoundedExtentOp>(op)) {
    // Counts bounded by counts (a detector's proposals, kept, then levelled:
    // six deep in Faster R-CNN) are followed whole: the chain does not
    // branch, so it needs no share of the depth.
    Value bound = extent.getBound();
    while (auto inner = uncast(bound).getDefiningOp<nn::BoundedExtentOp>())
      bound = inner.getBound();
    return upperBound(bound, depth + 1);
  }
  if (isa<arith::MinSIOp>(op)) {
    std::optional<uint64_t> x = upperBound(op->getOperand(0), depth + 1),
                            y = upperBound(op->getOperand(1), depth + 1);
    if (x && y)
      return std::min(*x, *y);
    return x ? x : y;
  }
  if (auto select = dyn_cast<arith::SelectOp>(op)) {
    std::optional<uint64_t> x = upperBound(select.getTrueValue(), depth + 1),
                            y = upperBound(select.getFalseValue(), depth + 1);
    if (!x || !y)
      return std::nullopt;
    return std::max(*x, *y);
  }
  if (isa<arith::MaxSIOp, arith::AddIOp>(op)) {
    std::optional<uint64_t> x = upperBound(op->getOperand(0), depth + 1),
                            y = upperBound(op->getOperand(1), depth + 1);
    if (!x || !y || *x > (uint64_t(1) << 61) || *y > (uint64_t(1) << 61) ||
        !nonNegative(op->getOperand(0), depth + 1) || !nonNegative(op->getOperand(1), depth + 1))
      return std::nullopt;
    return isa<arith::AddIOp>(op) ? *x + *y : std::max(*x, *y);
  }
  if (isProduct(v) && smallProduct(op->getOperand(0), op->getOperand(1), depth))
    return *upperBound(op->getOperand(0), depth + 1) * *upperBound(op->getOperand(1), depth + 1);
  if (std::optional<int64_t> d = positiveDivisor(op))
    if (std::optional<uint64_t> x = upperBound(op->getOperand(0), depth + 1);
        x && nonNegative(op->getOperand(0), depth + 1))
      return *x / uint64_t(*d);
  return std::nullopt;
}

bool nonNegative(Value v, int depth) {
  v = uncast(v);
  APInt constant;
  if (matchPattern(v, m_ConstantInt(&constant)))
    return !constant.isNegative();
  Operation *op = v.getDefiningOp();
  if (!op || depth > 8)
    return false;
  // A count, a tensor's or a buffer's dim (after bufferization, the dim of
  // one of two buffers, what an scf.if of tensors becomes, stays a dim).
  if (isa<nn::BoundedExtentOp, tensor::DimOp, memref::DimOp>(op))
    return true;
  if (isa<arith::MaxSIOp>(op))
    return nonNegative(op->getOperand(0), depth + 1) || nonNegative(op->getOperand(1), depth + 1);
  if (isa<arith::MinSIOp>(op))
    return nonNegative(op->getOperand(0), depth + 1) && nonNegative(op->getOperand(1), depth + 1);
  // Either of two non-negative values (an exported Expand's
  // where(shape == -1, 1, shape)).
  if (auto select = dyn_cast<arith::SelectOp>(op))
    return nonNegative(select.getTrueValue(), depth + 1) &&
           nonNegative(select.getFalseValue(), depth + 1);
  // A non-negative value divided by a positive constant.
  if (positiveDivisor(op))
    return nonNegative(op->getOperand(0), depth + 1);
  // Sums and products of non-negative values that cannot wrap.
  if (isa<arith::AddIOp>(op) || isProduct(v))
    return upperBound(v, depth + 1).has_value();
  return false;
}

/// Whether a <= b whatever the sizes they are computed from.
bool atMost(Value a, Value b, int depth = 0) {
  a = uncast(a);
  b = uncast(b);
  if (equal(a, b))
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

/// Whether comparison `predicate` of a and b holds whatever the sizes.
bool compares(arith::CmpIPredicate predicate, Value a, Value b) {
  using P = arith::CmpIPredicate;
  switch (predicate) {
  case P::sle:
    return atMost(a, b);
  case P::sge:
    return atMost(b, a);
  case P::eq: {
    if (equal(a, b))
      return true;
    // The high half of a product that cannot overflow is 0.
    auto result = dyn_cast<OpResult>(uncast(a));
    if (result && result.getResultNumber() == 1 &&
        isa<arith::MulSIExtendedOp, arith::MulUIExtendedOp>(result.getOwner()) && matchPattern(b, m_Zero()))
      return smallProduct(result.getOwner()->getOperand(0), result.getOwner()->getOperand(1), 0);
    // A flag widened, compared with 0: the flag is never set.
    if (matchPattern(b, m_Zero()))
      if (auto widened = uncast(a).getDefiningOp<arith::ExtSIOp>())
        if (auto flag = widened.getIn().getDefiningOp<arith::CmpIOp>())
          return compares(arith::invertPredicate(flag.getPredicate()), flag.getLhs(), flag.getRhs());
    return false;
  }
  case P::ne: {
    // A non-negative size is no negative constant.
    APInt constant;
    auto negative = [&](Value v) {
      return matchPattern(uncast(v), m_ConstantInt(&constant)) && constant.isNegative();
    };
    return (nonNegative(a) && negative(b)) || (nonNegative(b) && negative(a));
  }
  default:
    return false;
  }
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

Value nnc::selectedForEveryCount(Value v) {
  if (!v.getDefiningOp<arith::SelectOp>())
    return v;
  Value resolved = uncast(v);
  return resolved.getType() == v.getType() ? resolved : v;
}

bool nnc::holdsForEveryCount(Value holds) {
  if (matchPattern(holds, m_One()))
    return true;
  if (auto both = holds.getDefiningOp<arith::AndIOp>())
    return holdsForEveryCount(both.getLhs()) && holdsForEveryCount(both.getRhs());
  if (auto either = holds.getDefiningOp<arith::OrIOp>())
    return holdsForEveryCount(either.getLhs()) || holdsForEveryCount(either.getRhs());
  auto cmp = holds.getDefiningOp<arith::CmpIOp>();
  return cmp && compares(cmp.getPredicate(), cmp.getLhs(), cmp.getRhs());
}
