// RUN: nnc-opt %s --nnc-plan-memory | FileCheck %s

// %a and %b are alive together, so they get disjoint 64-byte aligned slots;
// %c starts after %a's last use and reuses its bytes. The workspace becomes
// the last argument, and deallocations disappear.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IN:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>, %[[WS:.*]]: memref<128xi8>)
// CHECK-SAME: attributes {nnc.workspace_size = 128 : i64}
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[A:.*]] = memref.view %[[WS]][%[[C0]]][] : memref<128xi8> to memref<4xf32>
// CHECK: %[[C64:.*]] = arith.constant 64 : index
// CHECK: %[[B:.*]] = memref.view %[[WS]][%[[C64]]][] : memref<128xi8> to memref<4xf32>
// CHECK: %[[C0_2:.*]] = arith.constant 0 : index
// CHECK: %[[C:.*]] = memref.view %[[WS]][%[[C0_2]]][] : memref<128xi8> to memref<4xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// memref.copy becomes linalg.copy.
// CHECK: linalg.copy ins(%[[C]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
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
