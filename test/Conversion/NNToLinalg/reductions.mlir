// RUN: nnc-opt %s --nnc-convert-nn-to-linalg --split-input-file | FileCheck %s

// A reduction drops the reduced dim in the generic, then keepdims restores it.
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @reduce_sum_keepdims
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[OUT]]], iterator_types = ["parallel", "reduction"]}
// CHECK: arith.addf
// CHECK: tensor.expand_shape %{{.*}} into tensor<2x1xf32>
func.func @reduce_sum_keepdims(%x: tensor<2x8xf32>) -> tensor<2x1xf32> {
  %0 = nn.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// Softmax subtracts the row maximum before exponentiating.
// CHECK-LABEL: func.func @softmax
// CHECK: arith.maximumf
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = nn.softmax %x {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// ArgMax keeps the best value and its index; the first index wins ties.
// CHECK-LABEL: func.func @argmax
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xi64>)
// CHECK: linalg.index 1 : index
// CHECK: arith.cmpf ogt
func.func @argmax(%x: tensor<2x8xf32>) -> tensor<2xi64> {
  %0 = nn.argmax %x {axis = 1 : i64, keepdims = false, select_last_index = false} : (tensor<2x8xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// Batch norm folds into a per-channel scale and shift, broadcast along dim 1.
// CHECK-LABEL: func.func @batch_norm
// CHECK: math.rsqrt
// CHECK: tensor.expand_shape %{{.*}} into tensor<3x1x1xf32>
// CHECK: arith.mulf
// CHECK-NEXT: arith.addf
func.func @batch_norm(%x: tensor<1x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = nn.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// CumSum is a loop over the axis carrying the running sum.
// CHECK-LABEL: func.func @cumsum
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: tensor.extract_slice
// CHECK: tensor.insert_slice
func.func @cumsum(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = nn.cumsum %x {axis = 0 : i64, exclusive = false, reverse = false} : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
