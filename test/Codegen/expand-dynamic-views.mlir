// RUN: nnc-opt %s --nnc-expand-dynamic-views | FileCheck %s

// [B*T, C] viewed as [B, T, C] with B and T dynamic: a reinterpret cast with
// the stated sizes; the outer dim strides over T rows of C.
// CHECK-LABEL: func.func @rows_to_batch_and_sequence
// CHECK-SAME: (%[[M:.*]]: memref<?x512xf32>, %[[B:.*]]: index, %[[T:.*]]: index)
// CHECK: %[[BASE:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[M]]
// CHECK: %[[ROW:.*]] = arith.muli %[[T]], %{{.*}} : index
// CHECK-NOT: memref.expand_shape
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[B]], %[[T]], 512], strides: [%[[ROW]], 512, 1]
func.func @rows_to_batch_and_sequence(%m: memref<?x512xf32>, %b: index, %t: index) -> memref<?x?x512xf32> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, %t, 512] : memref<?x512xf32> into memref<?x?x512xf32>
  return %e : memref<?x?x512xf32>
}

// A strided source (a slice's columns): the innermost dim of each group keeps
// its source dim's stride, and the offset stays the source's.
// CHECK-LABEL: func.func @strided_source
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata
// CHECK: %[[OUTER:.*]] = arith.muli %[[STRIDES]]#0, %{{.*}} : index
// CHECK: memref.reinterpret_cast %[[BASE]] to offset: [%[[OFFSET]]], sizes: [%{{.*}}, %{{.*}}, 4], strides: [%[[OUTER]], %[[STRIDES]]#0, %[[STRIDES]]#1]
func.func @strided_source(%m: memref<?x4xf32, strided<[?, ?], offset: ?>>, %b: index, %t: index)
    -> memref<?x?x4xf32, strided<[?, ?, ?], offset: ?>> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, %t, 4]
      : memref<?x4xf32, strided<[?, ?], offset: ?>> into memref<?x?x4xf32, strided<[?, ?, ?], offset: ?>>
  return %e : memref<?x?x4xf32, strided<[?, ?, ?], offset: ?>>
}

// One dynamic dim per group: upstream's lowering takes it, left alone.
// CHECK-LABEL: func.func @one_dynamic_per_group
// CHECK: memref.expand_shape
func.func @one_dynamic_per_group(%m: memref<?x512xf32>, %b: index) -> memref<?x4x512xf32> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, 4, 512] : memref<?x512xf32> into memref<?x4x512xf32>
  return %e : memref<?x4x512xf32>
}
