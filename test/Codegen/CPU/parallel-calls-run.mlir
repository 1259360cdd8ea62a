// Numerics of nnc-cpu-parallel-calls through the whole LLVM pipeline: a C
// driver plays the entry wrapper (it sets the thread-local nnc_context) and the
// runtime (a parallel_for on real threads, one static range per thread), and
// checks that every element is written exactly once, for thread counts that do
// not divide the iteration count, and on the serial paths.
// RUN: rm -rf %t && mkdir -p %t
// RUN: nnc-opt %s --nnc-cpu-llvm | mlir-translate --mlir-to-llvmir -o %t/kernel.ll
// RUN: clang -O1 -w %t/kernel.ll %S/Inputs/parallel_calls_driver.c -I %nnc_src/runtime/include -lpthread -o %t/driver
// RUN: %t/driver | FileCheck %s

// CHECK: threads 2: 1 parallel_for of 12 iterations, 2 threads ran bodies, ok
// CHECK: threads 3: 1 parallel_for of 12 iterations, 3 threads ran bodies, ok
// CHECK: threads 5: 1 parallel_for of 12 iterations, 5 threads ran bodies, ok
// CHECK: threads 16: 1 parallel_for of 12 iterations, 12 threads ran bodies, ok
// CHECK: threads 1: 0 parallel_for, serial, ok
// CHECK: no context: 0 parallel_for, serial, ok
// CHECK: all passed

// out[i][1 + j] += in[i][j] * scale for i in {1, 3, 5} and j in [0, n): rows
// by a strided outer dimension, columns in groups of 3 through a serial inner
// forall, written through a subview (a captured strided memref).
func.func @kernel(%in: memref<7x12xf32>, %out: memref<7x12xf32>, %scale: f32, %n: index) {
  %sub = memref.subview %out[0, 1] [7, 11] [1, 1]
      : memref<7x12xf32> to memref<7x11xf32, strided<[12, 1], offset: 1>>
  scf.forall (%i, %j) = (1, 0) to (7, %n) step (2, 3) {
    scf.forall (%k) in (3) {
      %jk = arith.addi %j, %k : index
      %inside = arith.cmpi slt, %jk, %n : index
      scf.if %inside {
        %x = memref.load %in[%i, %jk] : memref<7x12xf32>
        %old = memref.load %sub[%i, %jk] : memref<7x11xf32, strided<[12, 1], offset: 1>>
        %y = arith.mulf %x, %scale : f32
        %z = arith.addf %old, %y : f32
        memref.store %z, %sub[%i, %jk] : memref<7x11xf32, strided<[12, 1], offset: 1>>
      }
    }
  }
  return
}
