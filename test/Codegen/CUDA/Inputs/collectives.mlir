// Kernels built from what the CUDA schedules' shuffle reductions and tiled
// matmuls emit: workgroup memory, gpu.barrier and gpu.shuffle in each mode.
// @collectives reverses its block's values through shared memory (so
// threads read what other warps wrote, after the barrier), then per warp:
// the butterfly sum, and shuffles down 1, up 2 and from lane 5. @racy is the
// same without the barrier.
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
  }
}
