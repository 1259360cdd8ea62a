// RUN: nnc-opt %s --nnc-cpu-outline-batch-loops | FileCheck %s

// A loop over a dynamic batch keeps only a call of its body, moved into a
// function of the values it uses and the index (not inlined: LLVM's loop
// passes would scan the whole body again per use of the index). The
// constant is re-created in the body; other loops stay as they are.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IN:.*]]: memref<?x4xf32>, %[[OUT:.*]]: memref<?x4xf32>, %[[S:.*]]: f32)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT: func.call @main_sample0(%[[IN]], %[[S]], %[[OUT]], %[[I]]) : (memref<?x4xf32>, f32, memref<?x4xf32>, index) -> ()
// CHECK-NEXT: } {nnc.batch_loop}
// CHECK: scf.for
// CHECK-NEXT: memref.store
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
  scf.for %i = %c0 to %n step %c1 {
    memref.store %s, %out[%i, %c0] : memref<?x4xf32>
  }
  return
}
