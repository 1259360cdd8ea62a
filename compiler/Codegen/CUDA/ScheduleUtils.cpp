//===- ScheduleUtils.cpp - IR building shared by the GPU schedules --------===//
//
// Launches, index arithmetic and linalg bodies evaluated at given indices:
// what every schedule of nnc-cuda-map-to-gpu builds its kernels from.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Schedules.h"

#include "compiler/Codegen/Common/SaturatingMath.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

namespace nnc::cuda {

gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, Value gridX, Value blockX, Value gridY,
                           Value gridZ, TypeRange workgroup) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto launch = gpu::LaunchOp::create(b, loc, gridX, gridY ? gridY : one, gridZ ? gridZ : one,
                                      blockX, one, one, /*dynamicSharedMemorySize=*/nullptr,
                                      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
                                      workgroup);
  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&launch.getBody().front());
  return launch;
}

SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value index, ArrayRef<int64_t> sizes) {
  SmallVector<Value> coords(sizes.size());
  Value rest = index;
  for (int64_t d = sizes.size() - 1; d >= 0; --d) {
    if (d == 0) {
      coords[d] = rest;
      break;
    }
    Value size = arith::ConstantIndexOp::create(b, loc, sizes[d]);
    coords[d] = arith::RemUIOp::create(b, loc, rest, size);
    rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  return coords;
}

SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map, ValueRange ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults())
    indices.push_back(affine::expandAffineExpr(b, loc, expr, ivs, {}));
  return indices;
}

Value loadAt(OpBuilder &b, Location loc, Value operand, AffineMap map, ValueRange ivs) {
  return memref::LoadOp::create(b, loc, operand, indicesAt(b, loc, map, ivs));
}

Value cloneBody(OpBuilder &b, linalg::GenericOp op, ValueRange args, ValueRange ivs) {
  Block &body = op.getRegion().front();
  IRMapping mapping;
  mapping.map(body.getArguments(), args);
  for (Operation &inner : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      mapping.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, mapping);
  }
  return mapping.lookupOrDefault(body.getTerminator()->getOperand(0));
}

Operation *matchCombiner(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumResults() > 1)
    return nullptr;
  Block &body = op.getRegion().front();
  BlockArgument out = body.getArguments().back();
  if (!out.hasOneUse())
    return nullptr;
  Operation *combiner = *out.getUsers().begin();
  if (combiner->getBlock() != &body || combiner->getNumOperands() != 2 ||
      combiner->getNumResults() != 1 || !combiner->getResult(0).hasOneUse() ||
      body.getTerminator()->getOperand(0) != combiner->getResult(0))
    return nullptr;
  // Regrouping the terms is only sound for associative, commutative
  // combiners; every one of these has a neutral element to start from.
  if (!isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
           arith::MinNumFOp, arith::AddIOp, arith::MulIOp, arith::MaxSIOp, arith::MinSIOp,
           arith::MaxUIOp, arith::MinUIOp, arith::AndIOp, arith::OrIOp, arith::XOrIOp>(combiner))
    return nullptr;
  if (!arith::getNeutralElement(combiner))
    return nullptr;
  return combiner;
}

void allowFusedMultiplyAdd(linalg::GenericOp op) {
  if (op.getNumReductionLoops() == 0)
    return;
  auto add = dyn_cast_or_null<arith::AddFOp>(matchCombiner(op));
  if (!add || !add.getType().isF32())
    return;
  for (Value term : add->getOperands()) {
    auto mul = term.getDefiningOp<arith::MulFOp>();
    if (!mul || !mul->hasOneUse() || mul->getBlock() != add->getBlock())
      continue;
    mul.setFastmath(mul.getFastmath() | arith::FastMathFlags::contract);
    add.setFastmath(add.getFastmath() | arith::FastMathFlags::contract);
    return;
  }
}

TypedAttr neutralElement(Operation *combiner) {
  Type type = combiner->getResult(0).getType();
  if (isa<arith::AddFOp>(combiner))
    return FloatAttr::get(type, -0.0);
  return *arith::getNeutralElement(combiner);
}

int64_t LoopShape::parallelCount() const {
  int64_t n = 1;
  for (int64_t r : parallelRanges())
    n = nnc::saturatingMul(n, r);
  return n;
}

int64_t LoopShape::reductionCount() const {
  int64_t n = 1;
  for (int64_t r : reductionRanges())
    n = nnc::saturatingMul(n, r);
  return n;
}

std::optional<LoopShape> getLoopShape(linalg::GenericOp op) {
  LoopShape shape;
  shape.ranges = op.getStaticLoopRanges();
  if (llvm::any_of(shape.ranges, ShapedType::isDynamic))
    return std::nullopt;
  auto iterators = op.getIteratorTypesArray();
  shape.numParallel = llvm::count(iterators, utils::IteratorType::parallel);
  for (auto [i, kind] : llvm::enumerate(iterators))
    if ((kind == utils::IteratorType::parallel) != (int64_t(i) < shape.numParallel))
      return std::nullopt;
  return shape;
}

} // namespace nnc::cuda
