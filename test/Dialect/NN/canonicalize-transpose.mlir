// RUN: nnc-opt %s --canonicalize --split-input-file | FileCheck %s

// Two transposes compose into one; inverse ones cancel.
// CHECK-LABEL: func.func @compose
// CHECK: %[[T:.*]] = nn.transpose %arg0 {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK: return %[[T]], %arg0
func.func @compose(%x: tensor<2x3x4xf32>) -> (tensor<4x2x3xf32>, tensor<2x3x4xf32>) {
  %a = nn.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  %b = nn.transpose %a {perm = array<i64: 1, 0, 2>} : (tensor<2x4x3xf32>) -> tensor<4x2x3xf32>
  %c = nn.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %d = nn.transpose %c {perm = array<i64: 1, 0, 2>} : (tensor<3x2x4xf32>) -> tensor<2x3x4xf32>
  return %b, %d : tensor<4x2x3xf32>, tensor<2x3x4xf32>
}

// -----

// (x @ w^T)^T = w @ x^T: the weight gradient of a Gemm with transB, with no
// transpose of the weight left.
// CHECK-LABEL: func.func @transpose_of_matmul
// CHECK: %[[XT:.*]] = nn.transpose %arg0 {perm = array<i64: 1, 0>} : (tensor<64x784xf32>) -> tensor<784x64xf32>
// CHECK: %[[M:.*]] = nn.matmul %arg1, %[[XT]] : (tensor<512x784xf32>, tensor<784x64xf32>) -> tensor<512x64xf32>
// CHECK: return %[[M]]
func.func @transpose_of_matmul(%x: tensor<64x784xf32>, %w: tensor<512x784xf32>) -> tensor<512x64xf32> {
  %wt = nn.transpose %w {perm = array<i64: 1, 0>} : (tensor<512x784xf32>) -> tensor<784x512xf32>
  %y = nn.matmul %x, %wt : (tensor<64x784xf32>, tensor<784x512xf32>) -> tensor<64x512xf32>
  %t = nn.transpose %y {perm = array<i64: 1, 0>} : (tensor<64x512xf32>) -> tensor<512x64xf32>
  return %t : tensor<512x64xf32>
}

// -----

// Not when the product has another use: that would compute it twice.
// CHECK-LABEL: func.func @shared_product
// CHECK: %[[Y:.*]] = nn.matmul %arg0, %arg1
// CHECK: %[[T:.*]] = nn.transpose %[[Y]]
// CHECK: return %[[Y]], %[[T]]
func.func @shared_product(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<4x2xf32>) {
  %y = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %t = nn.transpose %y {perm = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
  return %y, %t : tensor<2x4xf32>, tensor<4x2xf32>
}
