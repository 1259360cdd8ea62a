// RUN: nnc-opt %s --nnc-plan-memory -split-input-file | FileCheck %s

// %a and %b are alive together, so they get disjoint 64-byte aligned slots.
// %c is only copied to the out-param at the end, so it is computed in the
// out-param itself. The workspace becomes the last argument, and
// deallocations disappear.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IN:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>, %[[WS:.*]]: memref<128xi8>)
// The sum of the intermediates (two of 16 bytes) is recorded for --memory-report.
// CHECK-SAME: attributes {nnc.intermediates_size = 32 : i64, nnc.workspace_size = 128 : i64}
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %[[WS]][%[[C0]]][] : memref<128xi8> to memref<4xf32>
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[B:.*]] = memref.view %[[WS]][%[[C64]]][] : memref<128xi8> to memref<4xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: linalg.copy ins(%[[B]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NEXT: return
func.func @main(%in: memref<4xf32>, %out: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  linalg.copy ins(%in : memref<4xf32>) outs(%a : memref<4xf32>)
  %b = memref.alloc() : memref<4xf32>
  linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  linalg.copy ins(%b : memref<4xf32>) outs(%c : memref<4xf32>)
  memref.dealloc %b : memref<4xf32>
  memref.copy %c, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// An out-param that is read before the final copy keeps its own buffer: %c
// is planned in the workspace (reusing %a's bytes) and copied at the end,
// and memref.copy becomes linalg.copy.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IN2:.*]]: memref<4xf32>, %[[OUT2:.*]]: memref<4xf32>, %[[WS2:.*]]: memref<64xi8>)
// CHECK: %[[C:.*]] = memref.view %[[WS2]]
// CHECK: linalg.copy ins(%[[OUT2]] : memref<4xf32>) outs(%[[C]] : memref<4xf32>)
// CHECK: linalg.copy ins(%[[C]] : memref<4xf32>) outs(%[[OUT2]] : memref<4xf32>)
func.func @main(%in: memref<4xf32>, %out: memref<4xf32>) {
  %c = memref.alloc() : memref<4xf32>
  linalg.copy ins(%out : memref<4xf32>) outs(%c : memref<4xf32>)
  memref.copy %c, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Static buffers in a top-level branch, and in a branch of a sequential
// loop's body, move before it into the workspace: left inside, each would be
// a malloc per run, never freed.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[WS3:[a-z0-9]+]]: memref<{{[0-9]+}}xi8>
// CHECK-NOT: memref.alloc
// CHECK: memref.view %[[WS3]]
// CHECK: scf.if
// CHECK: scf.for
// CHECK: scf.if
func.func @main(%c: i1, %in: memref<4xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.if %c {
    %a = memref.alloc() : memref<4xf32>
    linalg.copy ins(%in : memref<4xf32>) outs(%a : memref<4xf32>)
    linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
  }
  scf.for %i = %c0 to %c4 step %c1 {
    scf.if %c {
      %b = memref.alloc() : memref<4xf32>
      linalg.copy ins(%in : memref<4xf32>) outs(%b : memref<4xf32>)
      %v = memref.load %b[%i] : memref<4xf32>
      memref.store %v, %out[%i] : memref<4xf32>
    }
  }
  return
}

// -----

// A loop over a dynamic batch: a sample's buffers share one buffer before
// the loop, laid out over the body's ops (%c reuses %a's bytes, dead by
// then), which the plan places like any other.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[WS:[^:]*]]: memref<128xi8>)
// CHECK: %[[SHARED:.*]] = memref.view %[[WS]][%{{.*}}][] : memref<128xi8> to memref<128xi8>
// CHECK: scf.for
// CHECK: %[[O1:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %[[SHARED]][%[[O1]]][] : memref<128xi8> to memref<4xf32>
// CHECK: %[[O2:.*]] = arith.constant 64 : index
// CHECK: %[[B:.*]] = memref.view %[[SHARED]][%[[O2]]][] : memref<128xi8> to memref<4xf32>
// CHECK: linalg.copy ins(%[[A]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>)
// CHECK: %[[O3:.*]] = arith.constant 0 : index
// CHECK: %[[C:.*]] = memref.view %[[SHARED]][%[[O3]]][] : memref<128xi8> to memref<4xf32>
// CHECK: linalg.copy ins(%[[B]] : memref<4xf32>) outs(%[[C]] : memref<4xf32>)
// CHECK-NOT: memref.alloc
// CHECK: } {nnc.batch_loop}
func.func @main(%in: memref<?x4xf32>, %out: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %in, %c0 : memref<?x4xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.subview %in[%i, 0] [1, 4] [1, 1] : memref<?x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    %y = memref.subview %out[%i, 0] [1, 4] [1, 1] : memref<?x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    %a = memref.alloc() : memref<4xf32>
    linalg.copy ins(%x : memref<4xf32, strided<[1], offset: ?>>) outs(%a : memref<4xf32>)
    %b = memref.alloc() : memref<4xf32>
    linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
    %c = memref.alloc() : memref<4xf32>
    linalg.copy ins(%b : memref<4xf32>) outs(%c : memref<4xf32>)
    linalg.copy ins(%c : memref<4xf32>) outs(%y : memref<4xf32, strided<[1], offset: ?>>)
  } {nnc.batch_loop}
  return
}
