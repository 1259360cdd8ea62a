// RUN: nnc-opt %s --nnc-constants-as-bytes | FileCheck %s

// A constant global holding a resource becomes one byte array of the same
// blob; its readers (GEPs with their own element type) are unchanged.

// CHECK:     llvm.mlir.global private constant @weights(dense_resource<weights> : tensor<24xi8>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<24 x i8>
llvm.mlir.global private constant @weights(dense_resource<weights> : tensor<2x3xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<2 x array<3 x f32>>

// Left alone: a global that is not constant, a dense (not resource) value,
// a type whose scalar count does not match the value's, and a global without
// an explicit alignment (its type gives it one, which bytes would not).
// CHECK:     llvm.mlir.global private @state(dense_resource<state> : tensor<2xf32>) {{.*}} : !llvm.array<2 x f32>
llvm.mlir.global private @state(dense_resource<state> : tensor<2xf32>) {addr_space = 0 : i32} : !llvm.array<2 x f32>
// CHECK:     llvm.mlir.global private constant @splat(dense<1.000000e+00> : tensor<4xf32>) {{.*}} : !llvm.array<4 x f32>
llvm.mlir.global private constant @splat(dense<1.0> : tensor<4xf32>) {addr_space = 0 : i32} : !llvm.array<4 x f32>
// CHECK:     llvm.mlir.global private constant @mismatch(dense_resource<mismatch> : tensor<2xf32>) {{.*}} : !llvm.array<2 x i32>
llvm.mlir.global private constant @mismatch(dense_resource<mismatch> : tensor<2xf32>) {addr_space = 0 : i32, alignment = 64 : i64} : !llvm.array<2 x i32>
// CHECK:     llvm.mlir.global private constant @unaligned(dense_resource<state> : tensor<2xf32>) {{.*}} : !llvm.array<2 x f32>
llvm.mlir.global private constant @unaligned(dense_resource<state> : tensor<2xf32>) {addr_space = 0 : i32} : !llvm.array<2 x f32>

// CHECK-LABEL: llvm.func @second
// CHECK:       %[[BASE:.*]] = llvm.mlir.addressof @weights : !llvm.ptr
// CHECK:       llvm.getelementptr %[[BASE]][0, 1, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<2 x array<3 x f32>>
llvm.func @second() -> f32 {
  %0 = llvm.mlir.addressof @weights : !llvm.ptr
  %1 = llvm.getelementptr %0[0, 1, 0] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<2 x array<3 x f32>>
  %2 = llvm.load %1 : !llvm.ptr -> f32
  llvm.return %2 : f32
}

// The blob itself is kept: 1.0 to 6.0 as f32.
// CHECK:       weights: "0x040000000000803F0000004000004040000080400000A0400000C040"
{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F0000004000004040000080400000A0400000C040",
      state: "0x040000000000803F00000040",
      mismatch: "0x040000000000803F00000040"
    }
  }
#-}
