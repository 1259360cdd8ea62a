// RUN: nnc-opt %s --nnc-cuda-map-to-gpu="precision=tf32" --canonicalize --cse -split-input-file | FileCheck %s --check-prefixes=CHECK,TF32
// RUN: nnc-opt %s --nnc-cuda-map-to-gpu="precision=bf16" --canonicalize --cse -split-input-file | FileCheck %s --check-prefixes=CHECK,BF16
// RUN: nnc-opt %s --nnc-cuda-map-to-gpu="precision=f16" --canonicalize --cse -split-input-file | FileCheck %s --check-prefixes=CHECK,F16
// RUN: not nnc-opt %s --nnc-cuda-map-to-gpu="precision=fp8" -split-input-file 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// The tiled matmul with --precision=tf32, bf16 or f16 (TiledMatmul.cpp): the same
// 64x64 block tiles staged through shared memory (rows padded to 72 floats,
// so that a warp's fragment reads, lanes 4 g + t at row t and column g, hit
// 32 banks), 8 warps of 32x16 outputs: 2 x 2 fragments of 16 x 8, each
// lane holding 4 accumulators of each (16 in all). Each K step of the tile
// (8 for tf32, 16 for bf16 and f16) converts the lane's operands and issues 4
// mma.sync.
// CHECK-LABEL: func.func @batched
// CHECK: gpu.launch {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256, {{.*}} workgroup(%[[SA:.*]] : memref<32x72xf32, #gpu.address_space<workgroup>>, %[[SB:.*]] : memref<32x72xf32, #gpu.address_space<workgroup>>)
// CHECK-DAG: %[[WARP:.*]] = arith.divui %[[TX]], %c32
// CHECK-DAG: %[[LANE:.*]] = arith.remui %[[TX]], %c32
// CHECK-DAG: %[[G:.*]] = arith.divui %[[LANE]], %c4
// CHECK-DAG: %[[T:.*]] = arith.remui %[[LANE]], %c4
// CHECK-COUNT-16: memref.load %arg2
// CHECK: scf.for {{.*}} to %c64 step %c32
// CHECK: gpu.barrier
// CHECK: gpu.barrier
// TF32: scf.for %{{.*}} = %c0 to %c32 step %c8
// TF32-COUNT-8: nvvm.convert.float.to.tf32 {{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// TF32: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// BF16: scf.for %{{.*}} = %c0 to %c32 step %c16
// BF16-COUNT-8: nvvm.convert.f32x2.to.bf16x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>}
// BF16: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// F16: scf.for %{{.*}} = %c0 to %c32 step %c16
// F16-COUNT-8: nvvm.convert.f32x2.to.f16x2 {{.*}} {rnd = #nvvm.fp_rnd_mode<rn>}
// F16: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32)
// CHECK-COUNT-3: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield
// CHECK-COUNT-16: memref.store %{{.*}}, %arg2
func.func @batched(%a: memref<4x1024x64xf32>, %b: memref<4x64x512xf32>, %c: memref<4x1024x512xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x1024x64xf32>, memref<4x64x512xf32>) outs(%c : memref<4x1024x512xf32>)
  return
}

// -----

// A body other than out + a * b keeps the f32 schedule, whose rounding it
// was written for: here a max of products.
// CHECK-LABEL: func.func @max_of_products
// CHECK: workgroup(%{{.*}} : memref<32x68xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: nvvm.mma.sync
// CHECK: vector.load
// CHECK-NOT: nvvm.mma.sync
// CHECK: return
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @max_of_products(%a: memref<1024x64xf32>, %b: memref<64x1024xf32>, %c: memref<1024x1024xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<1024x64xf32>, memref<64x1024xf32>) outs(%c : memref<1024x1024xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %p = arith.mulf %x, %y : f32
    %m = arith.maximumf %out, %p : f32
    linalg.yield %m : f32
  }
  return
}

// UNKNOWN: error: unknown precision 'fp8' (expected f32, tf32, bf16 or f16)
