// RUN: nnc-opt %s --nnc-split-blocks-at-regions | FileCheck %s

// Each op with regions after the first op of the body starts a block of its
// own, branched to from the block before; the ops between two such ops stay
// with the one before them (convert-scf-to-cf then splits only small blocks).
// CHECK-LABEL: func.func @nests
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[C4:.*]] = arith.constant 4 : index
// CHECK-NEXT: cf.br ^[[B1:.*]]
// CHECK-NEXT: ^[[B1]]:
// CHECK-NEXT: scf.for
// CHECK: %[[X:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: cf.br ^[[B2:.*]]
// CHECK-NEXT: ^[[B2]]:
// CHECK-NEXT: %[[R:.*]] = scf.if %{{.*}} -> (f32)
// CHECK: return %[[R]] : f32
func.func @nests(%m: memref<4xf32>, %a: f32, %flag: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %a, %m[%i] : memref<4xf32>
  }
  %x = arith.addf %a, %a : f32
  %r = scf.if %flag -> (f32) {
    scf.yield %x : f32
  } else {
    scf.yield %a : f32
  }
  return %r : f32
}

// One op with regions gains nothing: the body stays one block.
// CHECK-LABEL: func.func @one
// CHECK-NOT: cf.br
// CHECK: return
func.func @one(%m: memref<4xf32>, %a: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %a, %m[%i] : memref<4xf32>
  }
  return
}
