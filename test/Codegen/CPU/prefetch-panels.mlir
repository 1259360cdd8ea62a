// RUN: nnc-opt %s --nnc-cpu-prefetch-panels | FileCheck %s

// 2 MiB of packed weights, read four rows at a time in a matmul's k loop:
// each row read gets one prefetch per 64-byte line, 128 rows ahead, clamped
// to the last row of the global.
memref.global "private" constant @large : memref<16384x32xf32> = dense<0.0>
memref.global "private" constant @small : memref<1024x32xf32> = dense<0.0>

// CHECK-LABEL: func.func @large_panel
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: %[[LAST:.*]] = arith.constant 16383 : index
// CHECK: %[[D0:.*]] = arith.constant 128 : index
// CHECK: %[[A0:.*]] = arith.addi %[[K]], %[[D0]] : index
// CHECK: %[[R0:.*]] = arith.minsi %[[A0]], %[[LAST]] : index
// CHECK: %[[L0:.*]] = arith.constant 0 : index
// CHECK: memref.prefetch %[[P:.*]][%[[R0]], %[[L0]]], read, locality<3>, data : memref<16384x32xf32>
// CHECK: %[[L1:.*]] = arith.constant 16 : index
// CHECK: memref.prefetch %[[P]][%[[R0]], %[[L1]]], read, locality<3>, data
// CHECK: arith.constant 131 : index
// CHECK-COUNT-2: memref.prefetch
// CHECK-NOT: memref.prefetch
// CHECK: vector.transfer_read %[[P]][%[[K]], %{{.*}}]
func.func @large_panel(%acc0: vector<4x32xf32>) -> vector<4x32xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %panels = memref.get_global @large : memref<16384x32xf32>
  %r = scf.for %k = %c0 to %c64 step %c4 iter_args(%acc = %acc0) -> (vector<4x32xf32>) {
    %b = vector.transfer_read %panels[%k, %c0], %pad {in_bounds = [true, true]} : memref<16384x32xf32>, vector<4x32xf32>
    %s = arith.addf %acc, %b : vector<4x32xf32>
    scf.yield %s : vector<4x32xf32>
  }
  return %r : vector<4x32xf32>
}

// Left alone: a panel small enough to stay cached, a read of part of a row,
// and a read outside any loop.
// CHECK-LABEL: func.func @not_streamed
// CHECK-NOT: memref.prefetch
func.func @not_streamed(%acc0: vector<4x32xf32>) -> (vector<4x32xf32>, vector<4x16xf32>, vector<4x32xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %small = memref.get_global @small : memref<1024x32xf32>
  %large = memref.get_global @large : memref<16384x32xf32>
  %r = scf.for %k = %c0 to %c64 step %c4 iter_args(%acc = %acc0) -> (vector<4x32xf32>) {
    %b = vector.transfer_read %small[%k, %c0], %pad {in_bounds = [true, true]} : memref<1024x32xf32>, vector<4x32xf32>
    %s = arith.addf %acc, %b : vector<4x32xf32>
    scf.yield %s : vector<4x32xf32>
  }
  %half0 = arith.constant dense<0.0> : vector<4x16xf32>
  %h = scf.for %k = %c0 to %c64 step %c4 iter_args(%acc = %half0) -> (vector<4x16xf32>) {
    %b = vector.transfer_read %large[%k, %c0], %pad {in_bounds = [true, true]} : memref<16384x32xf32>, vector<4x16xf32>
    %s = arith.addf %acc, %b : vector<4x16xf32>
    scf.yield %s : vector<4x16xf32>
  }
  %once = vector.transfer_read %large[%c0, %c0], %pad {in_bounds = [true, true]} : memref<16384x32xf32>, vector<4x32xf32>
  return %r, %h, %once : vector<4x32xf32>, vector<4x16xf32>, vector<4x32xf32>
}
