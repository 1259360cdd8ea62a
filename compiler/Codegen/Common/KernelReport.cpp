//===- KernelReport.cpp - the kernels a model became (nnc --report) -------===//

#include "compiler/Codegen/Common/KernelReport.h"
#include "compiler/Codegen/CUDA/CUDA.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace {

/// Elements a value of `type` holds: a vector's lanes, else 1.
double elementsOf(Type type) {
  if (auto vector = dyn_cast<VectorType>(type))
    return static_cast<double>(vector.getNumElements());
  return 1;
}

/// Iterations of a loop dimension: exact with constant bounds, else the
/// constant upper bound of (upper - lower) that value-bounds analysis proves
/// (an edge tile's min(tile, rest) counts as a full tile). 1 and inexact when
/// nothing bounds it.
double tripCount(OpFoldResult lower, OpFoldResult upper, OpFoldResult step, bool &exact) {
  std::optional<int64_t> lo = getConstantIntValue(lower), hi = getConstantIntValue(upper),
                         st = getConstantIntValue(step);
  if (!st || *st <= 0) {
    exact = false;
    return 1;
  }
  int64_t span;
  if (lo && hi) {
    span = *hi - *lo;
  } else {
    exact = false;
    MLIRContext *context = step.getContext();
    AffineExpr d0 = getAffineDimExpr(0, context), d1 = getAffineDimExpr(1, context);
    using Variable = ValueBoundsConstraintSet::Variable;
    FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
        presburger::BoundType::UB,
        Variable(AffineMap::get(2, 0, d0 - d1), ArrayRef<Variable>{Variable(upper), Variable(lower)}),
        /*stopCondition=*/nullptr, /*closedUB=*/true);
    if (failed(bound))
      return 1;
    span = *bound;
  }
  return span <= 0 ? 0 : static_cast<double>((span + *st - 1) / *st);
}

/// Floating-point operations one execution of `op` performs, its regions
/// included.
double countFlops(Operation *op, bool &exact);

double countBlock(Block &block, bool &exact) {
  double flops = 0;
  for (Operation &op : block)
    flops += countFlops(&op, exact);
  return flops;
}

double countRegions(Operation *op, bool &exact) {
  double flops = 0;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      flops += countBlock(block, exact);
  return flops;
}

double countFlops(Operation *op, bool &exact) {
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep(), exact) *
           countBlock(*loop.getBody(), exact);
  if (auto loop = dyn_cast<scf::ForallOp>(op)) {
    double trips = 1;
    for (auto [lo, hi, st] :
         llvm::zip(loop.getMixedLowerBound(), loop.getMixedUpperBound(), loop.getMixedStep()))
      trips *= tripCount(lo, hi, st, exact);
    return trips * countBlock(*loop.getBody(), exact);
  }
  if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
    double trips = 1;
    for (auto [lo, hi, st] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()))
      trips *= tripCount(lo, hi, st, exact);
    return trips * countBlock(*loop.getBody(), exact);
  }
  if (auto branch = dyn_cast<scf::IfOp>(op)) {
    // An edge tile's guard: the larger side counts, as if every tile were full.
    double thenFlops = countBlock(*branch.thenBlock(), exact);
    double elseFlops = branch.elseBlock() ? countBlock(*branch.elseBlock(), exact) : 0;
    if (thenFlops != elseFlops)
      exact = false;
    return std::max(thenFlops, elseFlops);
  }
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    double iterations = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges()) {
      if (ShapedType::isDynamic(range)) {
        exact = false;
        continue;
      }
      iterations *= static_cast<double>(range);
    }
    return iterations * countBlock(*linalgOp.getBlock(), exact);
  }
  if (auto contract = dyn_cast<vector::ContractionOp>(op)) {
    SmallVector<int64_t> bounds;
    contract.getIterationBounds(bounds);
    double iterations = 1;
    for (int64_t b : bounds)
      iterations *= static_cast<double>(b);
    return 2 * iterations;
  }
  if (auto outer = dyn_cast<vector::OuterProductOp>(op))
    return (outer.getAcc() ? 2 : 1) * elementsOf(outer.getResult().getType());
  if (isa<vector::FMAOp, math::FmaOp>(op))
    return 2 * elementsOf(op->getResult(0).getType());
  if (auto reduction = dyn_cast<vector::ReductionOp>(op))
    return elementsOf(reduction.getVector().getType());
  if (auto reduction = dyn_cast<vector::MultiDimReductionOp>(op))
    return elementsOf(reduction.getSource().getType());
  if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp, arith::RemFOp,
          arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp>(op))
    return elementsOf(op->getResult(0).getType());
  // A maximum or minimum written as a compare and select of the compared
  // values (a max pool's) counts once, at its compare.
  if (auto compare = dyn_cast<arith::CmpFOp>(op);
      compare && llvm::any_of(compare->getUsers(), [&](Operation *user) {
        auto select = dyn_cast<arith::SelectOp>(user);
        return select && select.getCondition() == compare.getResult() &&
               ValueRange{select.getTrueValue(), select.getFalseValue()} ==
                   ValueRange{compare.getLhs(), compare.getRhs()};
      }))
    return elementsOf(op->getResult(0).getType());
  // Transcendentals, roots and roundings: one each per element, by convention.
  if (isa<math::MathDialect>(op->getDialect()) && op->getNumResults() == 1 &&
      isa<FloatType>(getElementTypeOrSelf(op->getResult(0).getType())))
    return elementsOf(op->getResult(0).getType());
  return countRegions(op, exact);
}

/// What a kernel accesses through a memref value: the view the kernel was
/// handed, found through the subviews, reshapes and casts it makes itself (a
/// tile's subview stands for the buffer it tiles). A view made outside the
/// kernel (a pad's border, a slice) is all it touches of its source, and each
/// workspace view is an intermediate of its own.
Value accessedBuffer(Value value, llvm::function_ref<bool(Operation *)> inKernel) {
  while (Operation *def = value.getDefiningOp()) {
    if (!inKernel(def) || isa<memref::ViewOp>(def))
      break;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    value = view.getViewSource();
  }
  return value;
}

double bytesOf(Value buffer, bool &exact) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat()) {
    exact = false;
    return 0;
  }
  double bits = std::max<unsigned>(8, type.getElementType().getIntOrFloatBitWidth());
  return static_cast<double>(type.getNumElements()) * bits / 8;
}

/// Whether `op` computes or stores values, so that its location names a node
/// the kernel works for. Index arithmetic, views and constants are shared
/// between kernels by CSE and hoisting, so their locations say little.
bool doesWork(Operation *op) {
  if (isa<linalg::LinalgOp, memref::CopyOp>(op))
    return true;
  if (op->getNumRegions() > 0 || op->hasTrait<OpTrait::ConstantLike>() ||
      isa<ViewLikeOpInterface>(op))
    return false;
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      effects && effects.hasEffect<MemoryEffects::Write>())
    return true;
  return llvm::any_of(op->getResultTypes(), [](Type type) {
    return isa<FloatType>(getElementTypeOrSelf(type));
  });
}

/// Whether a top-level op of a bufferized function is a kernel: work on
/// buffers, not the views, constants and index arithmetic around it.
bool isKernel(Operation *op) {
  // Calls are the profile marks (nnc-profile-kernels), never work.
  if (op->hasTrait<OpTrait::IsTerminator>() || isa<CallOpInterface>(op))
    return false;
  if (op->getNumRegions() > 0 || isa<linalg::LinalgOp, memref::CopyOp>(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.hasEffect<MemoryEffects::Write>() &&
         !isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op);
}

std::string kindOf(Operation *op) {
  if (isa<scf::ForallOp>(op))
    return "parallel loop";
  if (isa<scf::ForOp>(op))
    return "serial loop";
  return op->getName().getStringRef().str();
}

} // namespace

/// Whether `value` is data carried between top-level ops in registers (a
/// vector or scalar), not a buffer or an index.
static bool isData(Value value) {
  return !isa<MemRefType, IndexType>(value.getType());
}

std::vector<SmallVector<Operation *>> nnc::kernelGroups(Block &body) {
  // A store of what a loop computed in registers belongs to that loop's
  // kernel, and a value read or computed ahead of a loop (a hoisted bias
  // vector) to the kernel that uses it.
  llvm::DenseMap<Operation *, size_t> groupOf;
  std::vector<SmallVector<Operation *>> groups;
  for (Operation &top : body) {
    if (!isKernel(&top))
      continue;
    std::optional<size_t> group;
    if (top.getNumRegions() == 0)
      for (Value operand : top.getOperands())
        if (Operation *def = operand.getDefiningOp(); def && isData(operand))
          if (auto it = groupOf.find(def); it != groupOf.end())
            group = it->second;
    if (!group) {
      group = groups.size();
      groups.emplace_back();
    }
    groups[*group].push_back(&top);
    groupOf[&top] = *group;
  }
  for (Operation &top : body) {
    if (groupOf.count(&top) || !llvm::any_of(top.getResults(), isData))
      continue;
    for (Operation *user : top.getUsers()) {
      Operation *ancestor = body.findAncestorOpInBlock(*user);
      if (auto it = ancestor ? groupOf.find(ancestor) : groupOf.end(); it != groupOf.end()) {
        groups[it->second].push_back(&top);
        break;
      }
    }
  }
  return groups;
}

std::vector<nnc::KernelReport> nnc::collectKernels(ModuleOp module,
                                                   const llvm::StringSet<> &nodeNames) {
  std::vector<KernelReport> kernels;
  module.walk([&](func::FuncOp func) {
    // Private functions are helpers (nnc_profile_mark), not entry points.
    if (func.isExternal() || !func.isPublic())
      return;
    std::vector<SmallVector<Operation *>> groups = kernelGroups(func.getBody().front());
    for (SmallVector<Operation *> &group : groups) {
      KernelReport kernel;
      kernel.function = func.getSymName().str();
      kernel.kind = kindOf(group.front());
      llvm::SetVector<StringRef> nodes;
      llvm::SetVector<Value> read, written;
      auto inKernel = [&](Operation *op) {
        return llvm::is_contained(group, func.getBody().front().findAncestorOpInBlock(*op));
      };
      for (Operation *top : group) {
        kernel.flops += countFlops(top, kernel.exact);
        top->walk([&](Operation *op) {
          if (doesWork(op))
            op->getLoc()->walk([&](Location loc) {
              if (auto name = dyn_cast<NameLoc>(loc))
                if (nodeNames.contains(name.getName().getValue()))
                  nodes.insert(name.getName().getValue());
              return WalkResult::advance();
            });
          auto memory = dyn_cast<MemoryEffectOpInterface>(op);
          if (!memory)
            return;
          SmallVector<MemoryEffects::EffectInstance> effects;
          memory.getEffects(effects);
          for (MemoryEffects::EffectInstance &effect : effects) {
            Value value = effect.getValue();
            if (!value || !isa<MemRefType>(value.getType()))
              continue;
            if (isa<MemoryEffects::Read>(effect.getEffect()))
              read.insert(accessedBuffer(value, inKernel));
            else if (isa<MemoryEffects::Write>(effect.getEffect()))
              written.insert(accessedBuffer(value, inKernel));
          }
        });
      }
      for (StringRef node : nodes)
        kernel.nodes.push_back(node.str());
      for (Value buffer : read)
        kernel.bytesRead += bytesOf(buffer, kernel.exact);
      for (Value buffer : written)
        kernel.bytesWritten += bytesOf(buffer, kernel.exact);
      kernels.push_back(std::move(kernel));
    }
  });
  return kernels;
}

void nnc::attachCUDALaunches(ModuleOp module, std::vector<KernelReport> &kernels) {
  module.walk([&](func::FuncOp func) {
    SmallVector<gpu::LaunchFuncOp> launches;
    func.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    SmallVector<KernelReport *> ofFunction;
    for (KernelReport &kernel : kernels)
      if (kernel.function == func.getSymName())
        ofFunction.push_back(&kernel);
    if (launches.size() != ofFunction.size())
      return;
    auto dims = [](gpu::KernelDim3 dim) -> std::optional<std::array<int64_t, 3>> {
      std::optional<int64_t> x = getConstantIntValue(dim.x), y = getConstantIntValue(dim.y),
                             z = getConstantIntValue(dim.z);
      if (!x || !y || !z)
        return std::nullopt;
      return std::array<int64_t, 3>{*x, *y, *z};
    };
    for (auto [launch, kernel] : llvm::zip(launches, ofFunction)) {
      kernel->launchName = launch.getKernelName().str();
      kernel->grid = dims(launch.getGridSizeOperandValues());
      kernel->block = dims(launch.getBlockSizeOperandValues());
      if (Value shared = launch.getDynamicSharedMemorySize())
        kernel->sharedBytes = getConstantIntValue(shared).value_or(0);
      if (auto bytes = launch->getAttrOfType<IntegerAttr>(kStaticSharedAttr))
        kernel->staticSharedBytes = bytes.getInt();
    }
  });
}

std::optional<double> nnc::estimateSeconds(const KernelReport &kernel, const PeakRates &peak) {
  if (peak.flopsPerSecond <= 0 && peak.bytesPerSecond <= 0)
    return std::nullopt;
  double compute = peak.flopsPerSecond > 0 ? kernel.flops / peak.flopsPerSecond : 0;
  double memory = peak.bytesPerSecond > 0
                      ? (kernel.bytesRead + kernel.bytesWritten) / peak.bytesPerSecond
                      : 0;
  return std::max(compute, memory);
}

namespace {

/// 1234567 -> "1.23M": the table's counts at a glance.
std::string scaled(double value) {
  const char *suffixes[] = {"", "k", "M", "G", "T"};
  int i = 0;
  while (std::fabs(value) >= 1000 && i < 4) {
    value /= 1000;
    ++i;
  }
  char text[32];
  snprintf(text, sizeof(text), i == 0 ? "%.0f%s" : "%.3g%s", value, suffixes[i]);
  return text;
}

std::string microseconds(std::optional<double> seconds) {
  if (!seconds)
    return "-";
  char text[32];
  snprintf(text, sizeof(text), "%.2f", *seconds * 1e6);
  return text;
}

/// "compute" or "memory": which side of the roofline bounds the estimate.
const char *boundOf(const nnc::KernelReport &kernel, const nnc::PeakRates &peak) {
  if (peak.flopsPerSecond <= 0 || peak.bytesPerSecond <= 0)
    return "-";
  double compute = kernel.flops / peak.flopsPerSecond;
  double memory = (kernel.bytesRead + kernel.bytesWritten) / peak.bytesPerSecond;
  return compute >= memory ? "compute" : "memory";
}

std::string joinNodes(const std::vector<std::string> &nodes, size_t width) {
  std::string text;
  for (const std::string &node : nodes) {
    if (!text.empty())
      text += ", ";
    text += node;
  }
  if (text.empty())
    text = "-";
  if (text.size() > width)
    text = text.substr(0, width - 3) + "...";
  return text;
}

} // namespace

void nnc::printKernelTable(llvm::raw_ostream &os, StringRef model, StringRef target,
                           const std::vector<KernelReport> &kernels, const PeakRates &peak) {
  os << "nnc report: " << model << ", target " << target << "\n";
  os << "peak rates: ";
  if (peak.flopsPerSecond > 0)
    os << llvm::format("%.1f GFLOP/s", peak.flopsPerSecond / 1e9);
  else
    os << "GFLOP/s unknown";
  if (peak.bytesPerSecond > 0)
    os << llvm::format(", %.1f GB/s", peak.bytesPerSecond / 1e9);
  else
    os << ", GB/s unknown";
  if (!peak.source.empty())
    os << " (" << peak.source << ")";
  os << "\n";
  bool cuda = llvm::any_of(kernels, [](const KernelReport &k) { return k.grid.has_value(); });
  StringRef function;
  double flops = 0, bytes = 0, seconds = 0;
  bool anyEstimate = false;
  auto totals = [&] {
    if (function.empty())
      return;
    os << llvm::format("  total: %s FLOP, %s bytes", scaled(flops).c_str(), scaled(bytes).c_str());
    if (anyEstimate)
      os << llvm::format(", estimated %.2f us", seconds * 1e6);
    os << "\n";
  };
  int index = 0;
  for (const KernelReport &kernel : kernels) {
    if (kernel.function != function) {
      totals();
      function = kernel.function;
      flops = bytes = seconds = 0;
      anyEstimate = false;
      index = 0;
      os << "\n" << function << ":\n";
      os << llvm::format("  %4s  %-16s %9s %9s %9s %10s %-8s", "#", "kernel", "FLOP", "read B",
                         "write B", "est. us", "bound");
      if (cuda)
        os << llvm::format(" %-16s %-12s %7s", "grid", "block", "smem B");
      os << "  nodes\n";
    }
    std::optional<double> estimate = estimateSeconds(kernel, peak);
    std::string kind = kernel.kind.size() > 16 ? kernel.kind.substr(0, 16) : kernel.kind;
    os << llvm::format("  %4d  %-16s %9s %9s %9s %10s %-8s", index++, kind.c_str(),
                       ((kernel.exact ? "" : "~") + scaled(kernel.flops)).c_str(),
                       scaled(kernel.bytesRead).c_str(), scaled(kernel.bytesWritten).c_str(),
                       microseconds(estimate).c_str(), boundOf(kernel, peak));
    if (cuda) {
      auto dim3 = [](const std::optional<std::array<int64_t, 3>> &d) {
        return d ? std::to_string((*d)[0]) + "x" + std::to_string((*d)[1]) + "x" +
                       std::to_string((*d)[2])
                 : std::string("-");
      };
      os << llvm::format(" %-16s %-12s %7s", dim3(kernel.grid).c_str(), dim3(kernel.block).c_str(),
                         scaled(double(kernel.staticSharedBytes + kernel.sharedBytes)).c_str());
    }
    os << "  " << joinNodes(kernel.nodes, 60) << "\n";
    flops += kernel.flops;
    bytes += kernel.bytesRead + kernel.bytesWritten;
    if (estimate) {
      seconds += *estimate;
      anyEstimate = true;
    }
  }
  totals();
  if (llvm::any_of(kernels, [](const KernelReport &k) { return !k.exact; }))
    os << "~: bounded, not exact (edge tiles counted as full ones)\n";
}

void nnc::printKernelJSON(llvm::raw_ostream &os, StringRef model, StringRef target,
                          const std::vector<KernelReport> &kernels, const PeakRates &peak) {
  llvm::json::Array list;
  for (const KernelReport &kernel : kernels) {
    llvm::json::Object entry{{"function", kernel.function},
                             {"kind", kernel.kind},
                             {"nodes", llvm::json::Array(kernel.nodes)},
                             {"flops", kernel.flops},
                             {"bytes_read", kernel.bytesRead},
                             {"bytes_written", kernel.bytesWritten},
                             {"exact", kernel.exact}};
    if (std::optional<double> estimate = estimateSeconds(kernel, peak))
      entry["estimated_seconds"] = *estimate;
    if (!kernel.launchName.empty())
      entry["launch"] = kernel.launchName;
    if (kernel.grid)
      entry["grid"] = llvm::json::Array{(*kernel.grid)[0], (*kernel.grid)[1], (*kernel.grid)[2]};
    if (kernel.block)
      entry["block"] =
          llvm::json::Array{(*kernel.block)[0], (*kernel.block)[1], (*kernel.block)[2]};
    if (kernel.grid) {
      entry["dynamic_shared_bytes"] = kernel.sharedBytes;
      entry["static_shared_bytes"] = kernel.staticSharedBytes;
    }
    list.push_back(std::move(entry));
  }
  llvm::json::Object peakObject;
  if (peak.flopsPerSecond > 0)
    peakObject["flops_per_second"] = peak.flopsPerSecond;
  if (peak.bytesPerSecond > 0)
    peakObject["bytes_per_second"] = peak.bytesPerSecond;
  if (!peak.source.empty())
    peakObject["source"] = peak.source;
  llvm::json::Object report{{"model", model},
                            {"target", target},
                            {"peak", std::move(peakObject)},
                            {"kernels", std::move(list)}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
}
