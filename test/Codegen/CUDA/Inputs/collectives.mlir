// Kernels built from what the CUDA schedules' shuffle reductions and tiled
// matmuls emit: workgroup memory, gpu.barrier and gpu.shuffle in each mode.
// @collectives reverses its block's values through shared memory (so
// threads read what other warps wrote, after the barrier), then per warp:
// the butterfly sum, and shuffles down 1, up 2 and from lane 5. @racy is the
// same without the barrier. @mma has each warp multiply-accumulate one
// m16n8k8 tf32 tile whose fragment registers hold small integers made from
// the lane and register numbers (A: 4 lane + r, B: 2 lane + r + 1, C: r,
// each exact in tf32); @mma_exit is the same with lane 0 gone first;
// @mma_diverge has lanes 0-15 and 16-31 at two different mma.sync.
module attributes {gpu.container_module} {
  gpu.module @nnc_kernels [#nvvm.target<chip = "sm_80", features = "+ptx80", O = 3>] {
    memref.global "private" @tile : memref<64xf32, #gpu.address_space<workgroup>>

    gpu.func @collectives(%y: memref<4x64xf32>) kernel
        attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %c63 = arith.constant 63 : index
      %i1 = arith.constant 1 : i32
      %i2 = arith.constant 2 : i32
      %i4 = arith.constant 4 : i32
      %i5 = arith.constant 5 : i32
      %i8 = arith.constant 8 : i32
      %i16 = arith.constant 16 : i32
      %width = arith.constant 32 : i32
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %tf = arith.uitofp %ti : i32 to f32
      %tile = memref.get_global @tile : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %tf, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %r = arith.subi %c63, %t : index
      %v = memref.load %tile[%r] : memref<64xf32, #gpu.address_space<workgroup>>
      %s16, %p16 = gpu.shuffle xor %v, %i16, %width : f32
      %a16 = arith.addf %v, %s16 : f32
      %s8, %p8 = gpu.shuffle xor %a16, %i8, %width : f32
      %a8 = arith.addf %a16, %s8 : f32
      %s4, %p4 = gpu.shuffle xor %a8, %i4, %width : f32
      %a4 = arith.addf %a8, %s4 : f32
      %s2, %p2 = gpu.shuffle xor %a4, %i2, %width : f32
      %a2 = arith.addf %a4, %s2 : f32
      %s1, %p1 = gpu.shuffle xor %a2, %i1, %width : f32
      %sum = arith.addf %a2, %s1 : f32
      memref.store %sum, %y[%c0, %t] : memref<4x64xf32>
      %down, %pd = gpu.shuffle down %v, %i1, %width : f32
      memref.store %down, %y[%c1, %t] : memref<4x64xf32>
      %up, %pu = gpu.shuffle up %v, %i2, %width : f32
      memref.store %up, %y[%c2, %t] : memref<4x64xf32>
      %idx, %pi = gpu.shuffle idx %v, %i5, %width : f32
      memref.store %idx, %y[%c3, %t] : memref<4x64xf32>
      gpu.return
    }

    gpu.func @racy(%y: memref<4x64xf32>) kernel
        attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c63 = arith.constant 63 : index
      %t = gpu.thread_id x
      %ti = arith.index_cast %t : index to i32
      %tf = arith.uitofp %ti : i32 to f32
      %tile = memref.get_global @tile : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %tf, %tile[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      %r = arith.subi %c63, %t : index
      %v = memref.load %tile[%r] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %v, %y[%c0, %t] : memref<4x64xf32>
      gpu.return
    }

    gpu.func @mma(%y: memref<4x64xf32>) kernel {
      %t = gpu.thread_id x
      %lane = gpu.lane_id
      %li = arith.index_cast %lane : index to i32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c3 = arith.constant 3 : index
      %i1 = arith.constant 1 : i32
      %i2 = arith.constant 2 : i32
      %i3 = arith.constant 3 : i32
      %i4 = arith.constant 4 : i32
      %a0i = arith.muli %li, %i4 : i32
      %a1i = arith.addi %a0i, %i1 : i32
      %a2i = arith.addi %a0i, %i2 : i32
      %a3i = arith.addi %a0i, %i3 : i32
      %b0i0 = arith.muli %li, %i2 : i32
      %b0i = arith.addi %b0i0, %i1 : i32
      %b1i = arith.addi %b0i, %i1 : i32
      %a0f = arith.sitofp %a0i : i32 to f32
      %a1f = arith.sitofp %a1i : i32 to f32
      %a2f = arith.sitofp %a2i : i32 to f32
      %a3f = arith.sitofp %a3i : i32 to f32
      %b0f = arith.sitofp %b0i : i32 to f32
      %b1f = arith.sitofp %b1i : i32 to f32
      %a0 = nvvm.convert.float.to.tf32 %a0f {rnd = #nvvm.fp_rnd_mode<rna>}
      %a1 = nvvm.convert.float.to.tf32 %a1f {rnd = #nvvm.fp_rnd_mode<rna>}
      %a2 = nvvm.convert.float.to.tf32 %a2f {rnd = #nvvm.fp_rnd_mode<rna>}
      %a3 = nvvm.convert.float.to.tf32 %a3f {rnd = #nvvm.fp_rnd_mode<rna>}
      %b0 = nvvm.convert.float.to.tf32 %b0f {rnd = #nvvm.fp_rnd_mode<rna>}
      %b1 = nvvm.convert.float.to.tf32 %b1f {rnd = #nvvm.fp_rnd_mode<rna>}
      %c0f = arith.constant 0.0 : f32
      %c1f = arith.constant 1.0 : f32
      %c2f = arith.constant 2.0 : f32
      %c3f = arith.constant 3.0 : f32
      %d = nvvm.mma.sync A[%a0, %a1, %a2, %a3] B[%b0, %b1] C[%c0f, %c1f, %c2f, %c3f]
          {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
           multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>,
           shape = #nvvm.shape<m = 16, n = 8, k = 8>}
          : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
      %d1 = llvm.extractvalue %d[1] : !llvm.struct<(f32, f32, f32, f32)>
      %d2 = llvm.extractvalue %d[2] : !llvm.struct<(f32, f32, f32, f32)>
      %d3 = llvm.extractvalue %d[3] : !llvm.struct<(f32, f32, f32, f32)>
      memref.store %d0, %y[%c0, %t] : memref<4x64xf32>
      memref.store %d1, %y[%c1, %t] : memref<4x64xf32>
      memref.store %d2, %y[%c2, %t] : memref<4x64xf32>
      memref.store %d3, %y[%c3, %t] : memref<4x64xf32>
      gpu.return
    }

    gpu.func @mma_exit(%y: memref<4x64xf32>) kernel {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %first = arith.cmpi eq, %t, %c0 : index
      cf.cond_br %first, ^done, ^work
    ^work:
      %z = arith.constant 0 : i32
      %f = arith.constant 0.0 : f32
      %d = nvvm.mma.sync A[%z, %z, %z, %z] B[%z, %z] C[%f, %f, %f, %f]
          {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
           multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>,
           shape = #nvvm.shape<m = 16, n = 8, k = 8>}
          : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
      memref.store %d0, %y[%c0, %t] : memref<4x64xf32>
      gpu.return
    ^done:
      gpu.return
    }

    gpu.func @mma_diverge(%y: memref<4x64xf32>) kernel {
      %t = gpu.thread_id x
      %c0 = arith.constant 0 : index
      %c16 = arith.constant 16 : index
      %low = arith.cmpi ult, %t, %c16 : index
      %z = arith.constant 0 : i32
      %f = arith.constant 0.0 : f32
      cf.cond_br %low, ^first, ^second
    ^first:
      %d = nvvm.mma.sync A[%z, %z, %z, %z] B[%z, %z] C[%f, %f, %f, %f]
          {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
           multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>,
           shape = #nvvm.shape<m = 16, n = 8, k = 8>}
          : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
      memref.store %d0, %y[%c0, %t] : memref<4x64xf32>
      gpu.return
    ^second:
      %one = arith.constant 1 : i32
      %g = arith.constant 1.0 : f32
      %e = nvvm.mma.sync A[%one, %one, %one, %one] B[%one, %one] C[%g, %g, %g, %g]
          {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
           multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>,
           shape = #nvvm.shape<m = 16, n = 8, k = 8>}
          : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %e1 = llvm.extractvalue %e[1] : !llvm.struct<(f32, f32, f32, f32)>
      memref.store %e1, %y[%c0, %t] : memref<4x64xf32>
      gpu.return
    }
  }
}
