// RUN: nnc-opt %s --nnc-fold-constant-transposes | FileCheck %s

// A transpose of an f32 constant becomes the transposed constant: the blob
// holds [[1, 4], [2, 5], [3, 6]] (f32 little-endian after the alignment word).
// CHECK-LABEL: func.func @transposed
// CHECK: %[[T:.*]] = arith.constant dense_resource<[[BLOB:nnc_transposed]]> : tensor<3x2xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return %[[T]]
func.func @transposed() -> tensor<3x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%w : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  return %t : tensor<3x2xf32>
}

// The same as a transposing copy generic, as the lowering of Gemm's transB makes it.
// CHECK-LABEL: func.func @copy_generic
// CHECK: %[[T:.*]] = arith.constant dense_resource<[[BLOB2:nnc_transposed_1]]> : tensor<3x2xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[T]]
#swap = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @copy_generic() -> tensor<3x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.generic {indexing_maps = [#swap, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// Run-time values and other element types stay transposes.
// CHECK-LABEL: func.func @not_constant
// CHECK: linalg.transpose
func.func @not_constant(%w: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%w : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  return %t : tensor<3x2xf32>
}

// CHECK-LABEL: func.func @f64
// CHECK: linalg.transpose
func.func @f64() -> tensor<3x2xf64> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf64>
  %e = tensor.empty() : tensor<3x2xf64>
  %t = linalg.transpose ins(%w : tensor<2x3xf64>) outs(%e : tensor<3x2xf64>) permutation = [1, 0]
  return %t : tensor<3x2xf64>
}

// CHECK: [[BLOB]]: "0x040000000000803F00008040000000400000A040000040400000C040"
// CHECK: [[BLOB2]]: "0x040000000000803F00008040000000400000A040000040400000C040"
