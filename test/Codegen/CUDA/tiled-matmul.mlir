// RUN: nnc-opt %s --nnc-cuda-map-to-gpu --canonicalize --cse -split-input-file | FileCheck %s

// A batched matmul with 512 blocks of 64x64 outputs (grid: N tiles, M tiles,
// batch), 256 threads of 4x4 outputs. K goes in steps of 32, software
// pipelined: the first step's tiles are loaded before the loop; each step
// stores the tiles loaded before it into shared memory between two barriers,
// then loads the next step's (when there is one) before its FMAs, so their
// latency overlaps the arithmetic. A is laid out along K, so consecutive
// threads read consecutive k; B along N. A thread's 4x4 outputs are 4
// consecutive rows by 4 consecutive columns, so each k reads them from the
// tiles (rows padded to 68, 16-byte aligned) as two 4-float vectors.
// Accumulators start from the output's previous values and are written back
// once.
// CHECK-LABEL: func.func @batched
// CHECK-SAME: (%[[A:.*]]: memref<4x1024x64xf32>, %[[B:.*]]: memref<4x64x512xf32>, %[[C:.*]]: memref<4x1024x512xf32>)
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %[[BZ:.*]]) in (%{{.*}} = %c8, %{{.*}} = %c16, %{{.*}} = %c4) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, {{.*}} workgroup(%[[SA:.*]] : memref<32x68xf32, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<32x68xf32, #gpu.address_space<workgroup>>)
// Its first row (4 x its tile row) and column (4 x its tile column).
// CHECK-DAG: %[[TCOL:.*]] = arith.remui %[[TX]], %c16
// CHECK-DAG: %[[TROW:.*]] = arith.divui %[[TX]], %c16
// CHECK-DAG: %[[ROW0:.*]] = arith.muli %[[TROW]], %c4
// CHECK-DAG: %[[COL0:.*]] = arith.muli %[[TCOL]], %c4
// CHECK-COUNT-16: memref.load %[[C]][%[[BZ]],
// Thread 0..255's k in A's first staged row, and its row.
// CHECK: %[[KA:.*]] = arith.remui %[[TX]], %c32
// CHECK: %[[RA:.*]] = arith.divui %[[TX]], %c32
// B's: its row of K and its column.
// CHECK: %[[KB:.*]] = arith.divui %[[TX]], %c64
// CHECK: %[[NB:.*]] = arith.remui %[[TX]], %c64
// The first step's tiles: 8 elements of A, 8 of B per thread.
// CHECK: %[[A0:.*]] = memref.load %[[A]][%[[BZ]], %{{.*}}, %[[KA]]]
// CHECK-COUNT-7: memref.load %[[A]]
// CHECK: %[[B0:.*]] = memref.load %[[B]][%[[BZ]], %[[KB]], %{{.*}}]
// CHECK-COUNT-7: memref.load %[[B]]
// CHECK: %{{.*}}:32 = scf.for %[[K0:.*]] = %c0 to %c64 step %c32 iter_args({{.*}}, %[[SA0:.*]] = %[[A0]], {{.*}}, %[[SB0:.*]] = %[[B0]], {{.*}})
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.store %[[SA0]], %[[SA]][%[[KA]], %[[RA]]]
// CHECK-COUNT-7: memref.store %{{.*}}, %[[SA]]
// CHECK-NEXT: memref.store %[[SB0]], %[[SB]][%[[KB]], %[[NB]]]
// CHECK-COUNT-7: memref.store %{{.*}}, %[[SB]]
// CHECK-NEXT: gpu.barrier
// CHECK: %[[NEXT:.*]] = arith.addi %[[K0]], %c32
// CHECK: %[[MORE:.*]] = arith.cmpi ult, %[[NEXT]], %c64
// CHECK: %{{.*}}:16 = scf.if %[[MORE]]
// CHECK-COUNT-8: memref.load %[[A]]
// CHECK-COUNT-8: memref.load %[[B]]
// CHECK: scf.yield
// CHECK: } else {
// CHECK: %{{.*}}:16 = scf.for %[[KK:.*]] = %c0 to %c32 step %c1
// CHECK-NEXT: %[[VA:.*]] = vector.load %[[SA]][%[[KK]], %[[ROW0]]] {alignment = 16 : i64} : memref<32x68xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NEXT: %[[VB:.*]] = vector.load %[[SB]][%[[KK]], %[[COL0]]] {alignment = 16 : i64} : memref<32x68xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// CHECK-NEXT: vector.extract %[[VA]][0]
// CHECK-NEXT: vector.extract %[[VB]][0]
// Each term is one fused multiply-add (allowFusedMultiplyAdd).
// CHECK: arith.mulf {{.*}} fastmath<contract>
// CHECK-NEXT: arith.addf {{.*}} fastmath<contract>
// CHECK-COUNT-15: arith.addf {{.*}} fastmath<contract>
// CHECK: scf.yield
// CHECK-COUNT-16: memref.store %{{.*}}, %[[C]][%[[BZ]],
func.func @batched(%a: memref<4x1024x64xf32>, %b: memref<4x64x512xf32>, %c: memref<4x1024x512xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x1024x64xf32>, memref<4x64x512xf32>) outs(%c : memref<4x1024x512xf32>)
  return
}

// -----

// Sizes no tile divides: 64x64 tiles would give 128 blocks, so 32x32 ones
// (256 threads of 2x2 outputs: 4 accumulators). Loads past M, N or K read as
// 0 behind guards, outputs past M or N are neither read nor written, and the
// last K step (of 70, in steps of 32) stops at K = 70 rather than relying on
// the body being neutral on zeros.
// CHECK-LABEL: func.func @ragged
// CHECK-SAME: (%[[A:.*]]: memref<1000x70xf32>, %[[B:.*]]: memref<70x500xf32>, %[[C:.*]]: memref<1000x500xf32>)
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c16, %{{.*}} = %c32, %{{.*}} = %c1) threads({{.*}}) in (%{{.*}} = %c256, {{.*}} workgroup(%{{.*}} : memref<32x36xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<32x36xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[OK:.*]] = arith.andi
// CHECK: scf.if %[[OK]] -> (f32)
// CHECK: memref.load %[[C]]
// CHECK-COUNT-3: memref.load %[[C]]
// CHECK: arith.cmpi ult, %{{.*}}, %c70
// CHECK: arith.cmpi ult, %{{.*}}, %c1000
// CHECK: scf.if
// CHECK-NEXT: memref.load %[[A]]
// CHECK: arith.cmpi ult, %{{.*}}, %c70
// CHECK: arith.cmpi ult, %{{.*}}, %c500
// CHECK: scf.if
// CHECK-NEXT: memref.load %[[B]]
// CHECK: scf.for %[[K0:.*]] = %c0 to %c70 step %c32 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// CHECK: %[[NEXT:.*]] = arith.addi %[[K0]], %c32
// CHECK: arith.cmpi ult, %[[NEXT]], %c70
// CHECK: %[[LEFT:.*]] = arith.subi %c70, %[[K0]]
// CHECK: %[[COUNT:.*]] = arith.minsi %[[LEFT]], %c32
// CHECK: scf.for %{{.*}} = %c0 to %[[COUNT]] step %c1
// CHECK: scf.if
// CHECK-NEXT: memref.store %{{.*}}, %[[C]]
func.func @ragged(%a: memref<1000x70xf32>, %b: memref<70x500xf32>, %c: memref<1000x500xf32>) {
  linalg.matmul ins(%a, %b : memref<1000x70xf32>, memref<70x500xf32>) outs(%c : memref<1000x500xf32>)
  return
}

// -----

// Attention's per-head products: 4 heads of 128x64 by 64x128 make only 64
// blocks of 32x32, but with 64 terms per output they stay tiled.
// CHECK-LABEL: func.func @heads
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c4, %{{.*}} = %c4, %{{.*}} = %c4) threads({{.*}}) in (%{{.*}} = %c256,
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c32
func.func @heads(%a: memref<4x128x64xf32>, %b: memref<4x64x128xf32>, %c: memref<4x128x128xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x128x64xf32>, memref<4x64x128xf32>) outs(%c : memref<4x128x128xf32>)
  return
}

// -----

// One product of as few blocks but 1024 terms per output: left to the split
// reduction (on tensors, nnc-cuda-split-k splits it across blocks first).
// CHECK-LABEL: func.func @long_few
// CHECK-NOT: workgroup(
// CHECK: gpu.shuffle
func.func @long_few(%a: memref<128x1024xf32>, %b: memref<1024x128xf32>, %c: memref<128x128xf32>) {
  linalg.matmul ins(%a, %b : memref<128x1024xf32>, memref<1024x128xf32>) outs(%c : memref<128x128xf32>)
  return
}

// -----

// A batch over 65535 would not fit grid z, where the tiled schedule puts it
// (CUDA's limit): one thread per output instead.
// CHECK-LABEL: func.func @huge_batch
// CHECK-NOT: workgroup(
// CHECK: gpu.launch
func.func @huge_batch(%a: memref<70000x16x16xf32>, %b: memref<70000x16x16xf32>, %c: memref<70000x16x16xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<70000x16x16xf32>, memref<70000x16x16xf32>) outs(%c : memref<70000x16x16xf32>)
  return
}
