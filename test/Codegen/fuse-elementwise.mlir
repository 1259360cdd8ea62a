// RUN: nnc-opt %s --split-input-file --nnc-fuse-elementwise | FileCheck %s
// RUN: nnc-opt %s --split-input-file --nnc-fuse-elementwise=broadcasts=true | FileCheck %s --check-prefix=BCAST

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// An elementwise chain becomes one generic (an add, then a max).
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// BCAST-LABEL: func.func @chain
// BCAST-COUNT-1: linalg.generic
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.maximumf %p, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A per-column value read through a broadcast: recomputed for every row if
// fused, so only with broadcasts=true, into an all-parallel consumer.
// CHECK-LABEL: func.func @broadcast
// CHECK-COUNT-2: linalg.generic
// BCAST-LABEL: func.func @broadcast
// BCAST: linalg.generic
// BCAST: math.sqrt
// BCAST: arith.mulf
// BCAST-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#col = affine_map<(d0) -> (d0)>
func.func @broadcast(%x: tensor<4x8xf32>, %v: tensor<8xf32>) -> tensor<4x8xf32> {
  %e1 = tensor.empty() : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#col, #col], iterator_types = ["parallel"]}
      ins(%v : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %q = math.sqrt %p : f32
    linalg.yield %q : f32
  } -> tensor<8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// A matmul reads each LHS element once per output column: a normalization in
// front of it stays its own op on every target, or it would be recomputed
// for each of them.
// CHECK-LABEL: func.func @into_matmul
// CHECK: math.sqrt
// CHECK: linalg.yield
// CHECK: linalg.generic
// CHECK-NOT: math.sqrt
// CHECK: return
// BCAST-LABEL: func.func @into_matmul
// BCAST-COUNT-2: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#lhs = affine_map<(d0, d1, d2) -> (d0, d2)>
#rhs = affine_map<(d0, d1, d2) -> (d2, d1)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @into_matmul(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %acc: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %q = math.sqrt %p : f32
    linalg.yield %q : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#lhs, #rhs, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%n, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %c, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// A window op (two taps: shifted slices of one input) stays out of a
// transposing copy, whose innermost loop would read each tap across.
// CHECK-LABEL: func.func @window_into_transpose
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK-NOT: arith.addf
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#swap = affine_map<(d0, d1) -> (d1, d0)>
func.func @window_into_transpose(%x: tensor<4x9xf32>) -> tensor<8x4xf32> {
  %t0 = tensor.extract_slice %x[0, 0] [4, 8] [1, 1] : tensor<4x9xf32> to tensor<4x8xf32>
  %t1 = tensor.extract_slice %x[0, 1] [4, 8] [1, 1] : tensor<4x9xf32> to tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t0, %t1 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %et = tensor.empty() : tensor<8x4xf32>
  %t = linalg.generic {indexing_maps = [#swap, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<4x8xf32>) outs(%et : tensor<8x4xf32>) {
  ^bb0(%p: f32, %o: f32):
    linalg.yield %p : f32
  } -> tensor<8x4xf32>
  return %t : tensor<8x4xf32>
}

// -----

// Two operands of different sources (a residual add) still fuse into the
// transposing copy: one pass instead of an add and a transpose.
// CHECK-LABEL: func.func @add_into_transpose
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#swap = affine_map<(d0, d1) -> (d1, d0)>
func.func @add_into_transpose(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %et = tensor.empty() : tensor<8x4xf32>
  %t = linalg.generic {indexing_maps = [#swap, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<4x8xf32>) outs(%et : tensor<8x4xf32>) {
  ^bb0(%p: f32, %o: f32):
    linalg.yield %p : f32
  } -> tensor<8x4xf32>
  return %t : tensor<8x4xf32>
}
