// RUN: nnc-opt %s --nnc-convert-nn-to-linalg | FileCheck %s

// A per-sample op over a dynamic batch becomes a loop over its samples, but
// not when a sample is empty (a static dim of 0): there is no slice to take
// (its offsets would be out of bounds), and nothing to compute per sample.
// CHECK-LABEL: func.func @sum_empty_rows
// CHECK-NOT:   scf.for
// CHECK:       return %{{.*}} : tensor<?x1xf32>
func.func @sum_empty_rows(%x: tensor<?x0xf32>) -> tensor<?x1xf32> {
  %0 = nn.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<?x0xf32>) -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}

// CHECK-LABEL: func.func @sum_rows
// CHECK:       scf.for
// CHECK:       } {nnc.batch_loop}
func.func @sum_rows(%x: tensor<?x4xf32>) -> tensor<?x1xf32> {
  %0 = nn.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<?x4xf32>) -> tensor<?x1xf32>
  return %0 : tensor<?x1xf32>
}

// Ops on rows alone (a softmax) keep their dynamic-dim lowering, whose
// thread chunks split the whole batch, not a sample's.
// CHECK-LABEL: func.func @softmax_rows
// CHECK-NOT:   scf.for
// CHECK:       return %{{.*}} : tensor<?x4xf32>
func.func @softmax_rows(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = nn.softmax %x {axis = 1 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// But a product whose other batch dims broadcast (multi-query attention: one
// head of keys against four of queries) has no dynamic lowering: a loop.
// CHECK-LABEL: func.func @broadcast_heads
// CHECK:       scf.for
// CHECK:       } {nnc.batch_loop}
func.func @broadcast_heads(%q: tensor<?x4x5x8xf32>, %k: tensor<?x1x8x6xf32>) -> tensor<?x4x5x6xf32> {
  %0 = nn.matmul %q, %k : (tensor<?x4x5x8xf32>, tensor<?x1x8x6xf32>) -> tensor<?x4x5x6xf32>
  return %0 : tensor<?x4x5x6xf32>
}
