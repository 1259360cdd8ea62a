// RUN: nnc-opt %s --split-input-file --verify-diagnostics --nnc-profile-kernels | FileCheck %s

// A mark before each kernel (the linalg op, the copy) and one before the
// return; views and constants between kernels are not kernels.
// CHECK-LABEL: func.func @main
// CHECK: memref.view
// CHECK-NEXT: %[[K0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: llvm.call @nnc_profile_mark(%[[K0]]) : (i32) -> ()
// CHECK-NEXT: linalg.generic
// CHECK: %[[K1:.*]] = arith.constant 1 : i32
// CHECK-NEXT: llvm.call @nnc_profile_mark(%[[K1]]) : (i32) -> ()
// CHECK-NEXT: memref.copy
// CHECK-NEXT: %[[K2:.*]] = arith.constant 2 : i32
// CHECK-NEXT: llvm.call @nnc_profile_mark(%[[K2]]) : (i32) -> ()
// CHECK-NEXT: return
// The mark calls the context's hook, profile(profile_state, k), when the
// thread-local context and its hook (fields 4 and 5) are set.
// CHECK-LABEL: llvm.func internal @nnc_profile_mark(%{{.*}}: i32)
// CHECK: llvm.mlir.addressof @nnc_context
// CHECK: llvm.getelementptr %{{.*}}[0, 4] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, i32, ptr, ptr, ptr, ptr)>
// CHECK: llvm.getelementptr %{{.*}}[0, 5]
// CHECK: llvm.call %{{.*}}(%{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, i32) -> ()
func.func @main(%a: memref<4xf32>, %b: memref<4xf32>, %w: memref<16xi8>) {
  %c0 = arith.constant 0 : index
  %v = memref.view %w[%c0][] : memref<16xi8> to memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%v : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  }
  memref.copy %v, %b : memref<4xf32> to memref<4xf32>
  return
}

// -----

// expected-error @below {{'nnc_profile_mark' is defined already}}
module {
  func.func private @nnc_profile_mark(%k: i32) {
    return
  }
}
