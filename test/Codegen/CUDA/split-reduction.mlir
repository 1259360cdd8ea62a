// RUN: nnc-opt %s --nnc-cuda-map-to-gpu --canonicalize --cse -split-input-file | FileCheck %s

// A batch-1 matmul: 256 outputs, K = 512. B, the larger operand, is laid out
// along the outputs, so consecutive lanes take consecutive outputs and the 32
// warps of a block split K; partials meet in shared memory, and the first
// warp combines them with the output's previous value once.
// CHECK-LABEL: func.func @matvec
// CHECK-SAME: (%[[A:.*]]: memref<1x512xf32>, %[[B:.*]]: memref<512x256xf32>, %[[C:.*]]: memref<1x256xf32>)
// CHECK: %[[NEG0:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c8, %{{.*}} = %c1, %{{.*}} = %c1) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c1024, {{.*}} workgroup(%[[SMEM:.*]] : memref<1024xf32, #gpu.address_space<workgroup>>)
// CHECK: %[[LANE:.*]] = arith.remui %[[TX]], %c32
// CHECK: %[[SPLIT:.*]] = arith.divui %[[TX]], %c32
// CHECK: %[[PART:.*]] = scf.if
// CHECK: scf.for %[[K:.*]] = %[[SPLIT]] to %c512 step %c32 iter_args(%[[ACC:.*]] = %[[NEG0]])
// CHECK: memref.load %[[A]]
// CHECK: memref.load %[[B]][%[[K]], %{{.*}}]
// Each term one fused multiply-add (the combining adds after it carry the
// same flag, with no multiply to fuse).
// CHECK: %[[TERM:.*]] = arith.mulf {{.*}} fastmath<contract>
// CHECK: arith.addf %[[ACC]], %[[TERM]] fastmath<contract>
// CHECK: memref.store %[[PART]], %[[SMEM]][%[[TX]]]
// CHECK-NEXT: gpu.barrier
// CHECK: scf.if
// CHECK: %[[FIRST:.*]] = memref.load %[[SMEM]][%[[LANE]]]
// CHECK: %[[TOTAL:.*]] = scf.for {{.*}} = %c1 to %c32 step %c1 iter_args(%[[SUM:.*]] = %[[FIRST]])
// CHECK: memref.load %[[SMEM]]
// CHECK: arith.addf %[[SUM]]
// CHECK: %[[OLD:.*]] = memref.load %[[C]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[TOTAL]] fastmath<contract> : f32
// CHECK: memref.store %[[NEW]], %[[C]]
func.func @matvec(%a: memref<1x512xf32>, %b: memref<512x256xf32>, %c: memref<1x256xf32>) {
  linalg.matmul ins(%a, %b : memref<1x512xf32>, memref<512x256xf32>) outs(%c : memref<1x256xf32>)
  return
}

// -----

// Rows reduced along their contiguous dim: a warp per row, lanes striding
// over the row, partials combined by shuffles; lane 0 writes.
// CHECK-LABEL: func.func @rowsum
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c2, {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256,
// CHECK-NOT: workgroup
// CHECK: %[[LANE:.*]] = arith.remui %[[TX]], %c32
// CHECK: %[[ROW:.*]] = arith.addi
// CHECK: scf.if
// CHECK: %[[PART:.*]] = scf.for %{{.*}} = %[[LANE]] to %c1024 step %c32
// CHECK: %[[S16:.*]], %{{.*}} = gpu.shuffle xor %[[PART]], %c16_i32, %c32_i32 : f32
// CHECK: %[[P16:.*]] = arith.addf %[[PART]], %[[S16]]
// CHECK: gpu.shuffle xor %[[P16]], %c8_i32, %c32_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c4_i32, %c32_i32
// CHECK: gpu.shuffle xor %{{.*}}, %c2_i32, %c32_i32
// CHECK: %[[S1:.*]], %{{.*}} = gpu.shuffle xor %[[P2:.*]], %c1_i32, %c32_i32
// CHECK: %[[TOTAL:.*]] = arith.addf %[[P2]], %[[S1]]
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[LANE]], %c0
// CHECK: scf.if %[[IS0]]
// CHECK: %[[OLD:.*]] = memref.load %{{.*}}[%[[ROW]]]
// CHECK: arith.addf %[[OLD]], %[[TOTAL]]
// CHECK-NOT: gpu.barrier
func.func @rowsum(%x: memref<16x1024xf32>, %y: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x1024xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Four long rows: a block per row. Each thread's partial max starts from
// -inf; warps shuffle, their maxima meet in shared memory, thread 0 takes
// the maximum with the output's previous value (the body's operand order).
// CHECK-LABEL: func.func @rowmax
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4, {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, {{.*}} workgroup(%[[SMEM:.*]] : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for %{{.*}} = %[[TX]] to %c8192 step %c256 iter_args(%{{.*}} = %[[NEGINF]])
// CHECK: arith.maximumf
// CHECK: gpu.shuffle xor
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %[[SMEM]]
// CHECK: gpu.barrier
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[TX]], %c0
// CHECK: scf.if %[[IS0]]
// CHECK-COUNT-8: memref.load %[[SMEM]]
// CHECK: %[[OLD:.*]] = memref.load %{{.*}}[%[[BX]]] : memref<4xf32>
// CHECK: %[[NEW:.*]] = arith.maximumf %{{.*}}, %[[OLD]] : f32
// CHECK: memref.store %[[NEW]], %{{.*}}[%[[BX]]]
func.func @rowmax(%x: memref<4x8192xf32>, %y: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x8192xf32>) outs(%y : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// The output's previous value is used twice (a decaying sum): regrouping
// would change the result, so the reduction stays a loop in one thread per
// output.
// CHECK-LABEL: func.func @decay
// CHECK: gpu.launch
// CHECK-NOT: workgroup
// CHECK-NOT: gpu.shuffle
// CHECK: scf.for %{{.*}} = %c0 to %c1024 step %c1
// CHECK-NOT: gpu.shuffle
// Not a sum of products of the inputs (the multiply takes the output): no
// fused multiply-add.
// CHECK-NOT: fastmath
func.func @decay(%x: memref<16x1024xf32>, %y: memref<16xf32>) {
  %half = arith.constant 0.5 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x1024xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %out, %half : f32
    %1 = arith.addf %0, %in : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A short reduction (8 terms) keeps one thread per output.
// CHECK-LABEL: func.func @short
// CHECK: gpu.launch
// CHECK-NOT: gpu.shuffle
// CHECK: scf.for %{{.*}} = %c0 to %c8 step %c1
func.func @short(%x: memref<16x8xf32>, %y: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<16x8xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// out[p, m] = sum_k x[p, k] * w[m, k], w the larger operand: a warp per
// output, and outputs linearized with p, which w does not depend on,
// innermost, so the warps of a block read the same row of w.
// CHECK-LABEL: func.func @shared_rows
// CHECK-SAME: (%[[X:.*]]: memref<4x64xf32>, %[[W:.*]]: memref<8x64xf32>, %[[Y:.*]]: memref<4x8xf32>)
// CHECK: gpu.launch
// CHECK: %[[LANE:.*]] = arith.remui %{{.*}}, %c32
// CHECK: %[[OUT:.*]] = arith.addi
// CHECK: %[[P:.*]] = arith.remui %[[OUT]], %c4
// CHECK: %[[M:.*]] = arith.divui %[[OUT]], %c4
// CHECK: scf.for %[[K:.*]] = %[[LANE]] to %c64 step %c32
// CHECK: memref.load %[[X]][%[[P]], %[[K]]]
// CHECK: memref.load %[[W]][%[[M]], %[[K]]]
// CHECK: gpu.shuffle xor
// CHECK: memref.load %[[Y]][%[[P]], %[[M]]]
func.func @shared_rows(%x: memref<4x64xf32>, %w: memref<8x64xf32>, %y: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<4x64xf32>, memref<8x64xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
