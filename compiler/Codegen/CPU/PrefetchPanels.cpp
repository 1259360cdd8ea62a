//===- PrefetchPanels.cpp - prefetch large constant matmul panels ---------===//
//
// ResNet-18's last convolutions multiply by 4.7 and 9.4 MB of packed
// weights. Between runs the rest of the model evicts them, so every run reads
// them from memory; the hardware prefetchers follow each panel only after a
// few misses, and the register tile that first reads a block of a panel
// stalls (those layers ran at 69% of peak in the model, 88% alone). A
// prefetch some rows ahead of each read hides that latency. Panels that fit
// in cache are left alone: there the prefetches only cost issue slots
// (measured: a transformer encoder whose panels all get them ran 27% slower).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Passes.h"

namespace nnc {
#define GEN_PASS_DEF_PREFETCHPANELS
#include "compiler/Codegen/Passes.h.inc"
} // namespace nnc

using namespace mlir;

namespace {
/// Globals at least this large are read from memory on every run: larger
/// than the L2 caches of the CPUs nnc targets, and a model that has them
/// has more weights than the last-level cache keeps between runs.
constexpr int64_t kStreamedBytes = 2 << 20;
/// Rows ahead of the read: 16 KB of a 32-float panel, some 40 register-tile
/// steps, more than a memory access's latency.
constexpr int64_t kRowsAhead = 128;
constexpr int64_t kLineBytes = 64;

/// Whether the read takes whole rows of a large 2-D constant global inside
/// a loop.
bool readsStreamedPanel(vector::TransferReadOp read) {
  auto type = dyn_cast<MemRefType>(read.getBase().getType());
  VectorType vector = read.getVectorType();
  if (!type || type.getRank() != 2 || !type.hasStaticShape() || vector.getRank() != 2 ||
      vector.getDimSize(1) != type.getDimSize(1) || !read->getParentOfType<scf::ForOp>())
    return false;
  return read.getBase().getDefiningOp<memref::GetGlobalOp>() &&
         type.getNumElements() * type.getElementTypeBitWidth() / 8 >= kStreamedBytes;
}

struct PrefetchPanelsPass : nnc::impl::PrefetchPanelsBase<PrefetchPanelsPass> {
  void runOnOperation() override {
    SmallVector<vector::TransferReadOp> reads;
    getOperation().walk([&](vector::TransferReadOp read) {
      if (readsStreamedPanel(read))
        reads.push_back(read);
    });
    for (vector::TransferReadOp read : reads) {
      OpBuilder b(read);
      Location loc = read.getLoc();
      auto type = cast<MemRefType>(read.getBase().getType());
      int64_t rowBytes = type.getDimSize(1) * type.getElementTypeBitWidth() / 8;
      int64_t perLine = kLineBytes * 8 / type.getElementTypeBitWidth();
      Value row = read.getIndices()[0];
      // Clamped to the last row: the address stays inside the global.
      Value last = arith::ConstantIndexOp::create(b, loc, type.getDimSize(0) - 1);
      for (int64_t r = 0; r < read.getVectorType().getDimSize(0); ++r) {
        Value ahead = arith::MinSIOp::create(
            b, loc,
            arith::AddIOp::create(b, loc, row,
                                  arith::ConstantIndexOp::create(b, loc, kRowsAhead + r)),
            last);
        for (int64_t line = 0; line * kLineBytes < rowBytes; ++line)
          memref::PrefetchOp::create(b, loc, read.getBase(),
                                     ValueRange{ahead, arith::ConstantIndexOp::create(
                                                           b, loc, line * perLine)},
                                     /*isWrite=*/false, /*localityHint=*/3,
                                     /*isDataCache=*/true);
      }
    }
  }
};
} // namespace
