// RUN: nnc-opt %s --nnc-convert-nn-to-linalg --split-input-file | FileCheck %s

// Integer lowerings that were once wrong.

// the mean of unsigned integers divides with arith.divsi, so sums with
// the top bit set come out wrong (3000000000 / 2 = 3647483648 as ui32); see
// numerics-regressions.test. Reductions.cpp, ReducePattern, Kind::Mean.
// CHECK-LABEL: func.func @reduce_mean_ui32
// CHECK: %[[N:.*]] = arith.constant 2 : i32
// CHECK: arith.addi
// CHECK: ^bb0(%[[S:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: arith.divui %[[S]], %[[N]] : i32
func.func @reduce_mean_ui32(%x: tensor<3x2xui32>) -> tensor<3xui32> {
  %0 = nn.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<3x2xui32>) -> tensor<3xui32>
  return %0 : tensor<3xui32>
}

// -----


// -----

// The Euclidean norm of integers is computed in f64 (the widening generic
// yields f64 into an f64 tensor) and truncated back; it failed to verify.
// CHECK-LABEL: func.func @reduce_l2_i64
// CHECK: arith.sitofp {{.*}} : i64 to f64
// CHECK: -> tensor<2x3xf64>
// CHECK: math.sqrt
// CHECK: arith.fptosi {{.*}} : f64 to i64
func.func @reduce_l2_i64(%x: tensor<2x3xi64>) -> tensor<2x1xi64> {
  %0 = nn.reduce_l2 %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xi64>) -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}
