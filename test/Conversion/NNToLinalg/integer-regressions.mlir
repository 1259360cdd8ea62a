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

// nn.avg_pool accepts integer tensors (NN_NumericTensor), but the lowering
// divides with arith.divf and builds the divisor with float attributes of an
// integer type, producing invalid IR ("'arith.divf' op operand #0 must be
// floating-point-like, but got 'i32'"). Contraction.cpp, PoolPattern (the
// !isMax divisor). ONNX's AveragePool is float-only, so either nn.avg_pool
// should take float tensors only, or integers should divide like nn.div
// (truncating toward zero), as expected here.
// CHECK-LABEL: func.func @avg_pool_i32
// CHECK: arith.constant dense<4> : tensor<1x1x2x2xi32>
// CHECK: arith.divsi
func.func @avg_pool_i32(%x: tensor<1x1x4x4xi32>) -> tensor<1x1x2x2xi32> {
  %0 = nn.avg_pool %x {ceil_mode = false, count_include_pad = false, dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xi32>) -> tensor<1x1x2x2xi32>
  return %0 : tensor<1x1x2x2xi32>
}
