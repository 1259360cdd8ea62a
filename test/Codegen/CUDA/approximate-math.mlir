// RUN: nnc-opt %s --nnc-cuda-approximate-math | FileCheck %s

// No math op may reach the NVVM lowering, which would call libdevice: those
// with a correctly rounded PTX instruction become NVVM intrinsics (sqrt.rn,
// floor, round to nearest even), |x| clears the sign bit, rsqrt is 1 / sqrt
// (PTX's rsqrt is approximate), fma an LLVM fma, and exp and tanh become
// arithmetic.

// CHECK-LABEL: gpu.func @f
// CHECK-NOT:   math.
// CHECK:       llvm.call_intrinsic "llvm.nvvm.sqrt.rn.f"(%{{.*}}) : (f32) -> f32
// CHECK:       llvm.call_intrinsic "llvm.nvvm.floor.f"(%{{.*}}) : (f32) -> f32
// CHECK:       %[[BITS:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:       %[[CLEARED:.*]] = arith.andi %[[BITS]], %{{.*}} : i32
// CHECK:       arith.bitcast %[[CLEARED]] : i32 to f32
// CHECK:       %[[ROOT:.*]] = llvm.call_intrinsic "llvm.nvvm.sqrt.rn.f"(%{{.*}}) : (f32) -> f32
// CHECK:       arith.divf %{{.*}}, %[[ROOT]] : f32
// CHECK:       llvm.intr.fma
// CHECK:       llvm.call_intrinsic "llvm.nvvm.round.f"(%{{.*}}) : (f32) -> f32
// CHECK:       llvm.call_intrinsic "llvm.nvvm.sqrt.rn.d"(%{{.*}}) : (f64) -> f64
// CHECK-NOT:   math.
gpu.module @k {
  gpu.func @f(%x: f32, %d: f64, %o: memref<9xf32>, %od: memref<2xf64>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %c5 = arith.constant 5 : index
    %c6 = arith.constant 6 : index
    %c7 = arith.constant 7 : index
    %s = math.sqrt %x : f32
    memref.store %s, %o[%c0] : memref<9xf32>
    %f = math.floor %x : f32
    memref.store %f, %o[%c1] : memref<9xf32>
    %a = math.absf %x : f32
    memref.store %a, %o[%c2] : memref<9xf32>
    %r = math.rsqrt %x : f32
    memref.store %r, %o[%c3] : memref<9xf32>
    %e = math.exp %x : f32
    memref.store %e, %o[%c4] : memref<9xf32>
    %t = math.tanh %x : f32
    memref.store %t, %o[%c5] : memref<9xf32>
    %m = math.fma %x, %x, %x : f32
    memref.store %m, %o[%c6] : memref<9xf32>
    %re = math.roundeven %x : f32
    memref.store %re, %o[%c7] : memref<9xf32>
    %sd = math.sqrt %d : f64
    memref.store %sd, %od[%c0] : memref<2xf64>
    gpu.return
  }
}

// What must stay exact is expanded exactly: copysign by bits, the float
// remainder by a loop of exact subtractions (C's fmod), f64 exp and log as
// f64 series, powers in f64 with C's signs and special cases, integer powers
// by squaring, bit counts as LLVM intrinsics.
// (Their numerics: test/Integration/edge-numerics.test.)

// CHECK-LABEL: gpu.func @exact
// CHECK-NOT:   math.
// CHECK:       arith.extf %{{.*}} : f32 to f64
// CHECK-NOT:   arith.remf
// CHECK:       arith.ori %{{.*}}, %{{.*}} : i32
// CHECK:       scf.while
// CHECK:         "llvm.intr.ctlz"(%{{.*}}) <{is_zero_poison = false}> : (i32) -> i32
// CHECK:       scf.for
// CHECK:         arith.muli %{{.*}}, %{{.*}} : i64
// CHECK:       llvm.intr.ctpop(%{{.*}}) : (i64) -> i64
// CHECK-NOT:   math.
gpu.module @exact_module {
  gpu.func @exact(%x: f32, %y: f32, %d: f64, %n: i64, %o: memref<3xf32>, %od: memref<2xf64>, %oi: memref<2xi64>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %pw = math.powf %x, %y : f32
    memref.store %pw, %o[%c2] : memref<3xf32>
    %s = math.copysign %x, %y : f32
    memref.store %s, %o[%c0] : memref<3xf32>
    %r = arith.remf %x, %y : f32
    memref.store %r, %o[%c1] : memref<3xf32>
    %e = math.exp %d : f64
    memref.store %e, %od[%c0] : memref<2xf64>
    %l = math.log %d : f64
    memref.store %l, %od[%c1] : memref<2xf64>
    %p = math.ipowi %n, %n : i64
    memref.store %p, %oi[%c0] : memref<2xi64>
    %b = math.ctpop %n : i64
    memref.store %b, %oi[%c1] : memref<2xi64>
    gpu.return
  }
}
