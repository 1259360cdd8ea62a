// RUN: nnc-opt %s --nnc-cpu-outline-loops | FileCheck %s

// A loop over a dynamic batch keeps only a call of its body, moved into a
// function of the values it uses and the index (not inlined: LLVM's loop
// passes would scan the whole body again per use of the index). The
// constant is re-created in the body. Every other loop nest, over a dynamic
// size or not, becomes a function called once, in its place, returning its
// results.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IN:.*]]: memref<?x4xf32>, %[[OUT:.*]]: memref<?x4xf32>, %[[S:.*]]: f32)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: func.call @main_sample0(%[[IN]], %[[S]], %[[OUT]], %[[I]]) : (memref<?x4xf32>, f32, memref<?x4xf32>, index) -> ()
// CHECK-NEXT: } {nnc.batch_loop}
// CHECK-NEXT: %[[SUM:.*]] = call @main_loop0(%[[N:.*]], %[[S]], %[[OUT]]) : (index, f32, memref<?x4xf32>) -> f32
// CHECK-NEXT: %{{.*}} = arith.constant 4 : index
// CHECK-NEXT: call @main_loop1(%[[SUM]], %[[OUT]]) : (f32, memref<?x4xf32>) -> ()
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @main_loop1
// CHECK-SAME: (%[[SUM4:.*]]: f32, %[[OUT4:.*]]: memref<?x4xf32>)
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK-NEXT: memref.store %[[SUM4]], %[[OUT4]][%c0,
// CHECK-LABEL: func.func private @main_loop0
// CHECK-SAME: (%[[N3:.*]]: index, %[[S3:.*]]: f32, %[[OUT3:.*]]: memref<?x4xf32>) -> f32
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: %[[R:.*]] = scf.for %[[J:.*]] = %{{.*}} to %[[N3]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[S3]]) -> (f32) {
// CHECK: memref.store %[[S3]], %[[OUT3]][%[[J]],
// CHECK: return %[[R]] : f32
// CHECK-LABEL: func.func private @main_sample0
// CHECK-SAME: (%[[IN2:.*]]: memref<?x4xf32>, %[[S2:.*]]: f32, %[[OUT2:.*]]: memref<?x4xf32>, %[[I2:.*]]: index)
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: memref.load %[[IN2]][%[[I2]], %[[C2]]]
// CHECK: arith.addf %{{.*}}, %[[S2]]
// CHECK: memref.store %{{.*}}, %[[OUT2]][%[[I2]], %[[C2]]]
// CHECK-NEXT: return
func.func @main(%in: memref<?x4xf32>, %out: memref<?x4xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %in, %c0 : memref<?x4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %in[%i, %c2] : memref<?x4xf32>
    %y = arith.addf %x, %s : f32
    memref.store %y, %out[%i, %c2] : memref<?x4xf32>
  } {nnc.batch_loop}
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %s) -> (f32) {
    memref.store %s, %out[%i, %c0] : memref<?x4xf32>
    %next = arith.addf %acc, %s : f32
    scf.yield %next : f32
  }
  %c4 = arith.constant 4 : index
  scf.for %j = %c0 to %c4 step %c1 {
    memref.store %sum, %out[%c0, %j] : memref<?x4xf32>
  }
  return
}
