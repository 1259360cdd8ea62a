// RUN: nnc-opt %s --nnc-convert-nn-to-linalg --split-input-file -verify-diagnostics | FileCheck %s

// Broadcasting lives in the indexing maps: the [3] operand reads dim 1 only.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<3xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32>) outs(%[[E]] : tensor<2x3xf32>)
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
func.func @add_broadcast(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = nn.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A size-1 dim broadcast against a larger one reads index 0.
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @mul_size_one
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[COL]], #{{.*}}]
// CHECK: arith.mulf
func.func @mul_size_one(%x: tensor<2x3xf32>, %y: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %0 = nn.mul %x, %y : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Unsigned tensors become signless; the unsigned semantics pick the ops.
// CHECK-LABEL: func.func @unsigned_ops
// CHECK-SAME: (%{{.*}}: tensor<4xi8>, %{{.*}}: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi1>)
// CHECK: arith.select
// CHECK: arith.divui
// CHECK: arith.cmpi ult
func.func @unsigned_ops(%x: tensor<4xui8>, %y: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xi1>) {
  %0 = nn.div %x, %y : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = nn.less %x, %y : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  return %0, %1 : tensor<4xui8>, tensor<4xi1>
}

// -----

// Integer division guards a zero divisor and the minimum over -1 instead of
// trapping (x / -1 is -x, wrapping); signed ops for signed types.
// CHECK-LABEL: func.func @signed_div
// CHECK: ^bb0(%[[N:.*]]: i32, %[[D:.*]]: i32, %{{.*}}: i32):
// CHECK: %[[Z:.*]] = arith.cmpi eq, %[[D]], %{{.*}} : i32
// CHECK: %[[M1:.*]] = arith.cmpi eq, %[[D]], %{{.*}} : i32
// CHECK: %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %[[D]] : i32
// CHECK: %[[Q:.*]] = arith.divsi %[[N]], %[[SAFE]] : i32
// CHECK: %[[NEG:.*]] = arith.subi %{{.*}}, %[[N]] : i32
// CHECK: %[[Q2:.*]] = arith.select %[[M1]], %[[NEG]], %[[Q]] : i32
// CHECK: arith.select %[[Z]], %{{.*}}, %[[Q2]] : i32
func.func @signed_div(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = nn.div %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// f16 math is computed in f32.
// CHECK-LABEL: func.func @exp_f16
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : f16 to f32
// CHECK: %[[E:.*]] = math.exp %[[W]] : f32
// CHECK: arith.truncf %[[E]] : f32 to f16
func.func @exp_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = nn.exp %x : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Casts follow ONNX: float to bool compares with zero, unsigned to float is uitofp.
// CHECK-LABEL: func.func @casts
// CHECK: arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK: arith.uitofp %{{.*}} : i8 to f32
func.func @casts(%x: tensor<4xf32>, %u: tensor<4xui8>) -> (tensor<4xi1>, tensor<4xf32>) {
  %0 = nn.cast %x {to = i1} : (tensor<4xf32>) -> tensor<4xi1>
  %1 = nn.cast %u {to = f32} : (tensor<4xui8>) -> tensor<4xf32>
  return %0, %1 : tensor<4xi1>, tensor<4xf32>
}

// -----

// Unsigned constants keep their bits as signless integers (255 prints as -1).
// CHECK-LABEL: func.func @constants
// CHECK: arith.constant dense<[1, -1]> : tensor<2xi8>
func.func @constants() -> tensor<2xui8> {
  %0 = nn.constant {value = dense<[1, 255]> : tensor<2xui8>} : () -> tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

// A dynamic dim: the result's size is the input's. Two dynamic dims that
// broadcast against each other must agree, checked (a cf.assert the shape
// function reports before a run).
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32> {{.*}}, %[[Y:.*]]: tensor<?x3xf32> {{.*}})
// CHECK-DAG: %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[M:.*]] = tensor.dim %[[Y]], %c0
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[N]], %[[M]] : index
// CHECK: cf.assert %[[SAME]], "a node: dynamic dims broadcast against each other differ"
// CHECK: tensor.empty(%[[N]]) : tensor<?x3xf32>
func.func @dynamic(%x: tensor<?x3xf32> {nn.name = "x"}, %y: tensor<?x3xf32> {nn.name = "y"}) -> tensor<?x3xf32> {
  %0 = nn.add %x, %y : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// A transpose with a dynamic dim: the result's dim is the input's, permuted.
// CHECK-LABEL: func.func @dynamic_transpose
// CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %c0 : tensor<?x3xf32>
// CHECK: tensor.empty(%[[N]]) : tensor<3x?xf32>
func.func @dynamic_transpose(%x: tensor<?x3xf32>) -> tensor<3x?xf32> {
  %0 = nn.transpose %x {perm = array<i64: 1, 0>} : (tensor<?x3xf32>) -> tensor<3x?xf32>
  return %0 : tensor<3x?xf32>
}

// -----

func.func @dynamic_unsupported(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{cannot compile nn.cumsum with dynamic dims: not supported for this op yet; pin them with --dim or --input-shape}}
  %0 = nn.cumsum %x {axis = 0 : i64, exclusive = false, reverse = false} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// A LayerNorm normalizes over static dims only; its leading dims may be dynamic.
func.func @dynamic_normalized(%x: tensor<2x?xf32>, %s: tensor<?xf32>) -> tensor<2x?xf32> {
  // expected-error @+1 {{cannot compile nn.layer_norm with dynamic dims: the normalized dims must be static}}
  %0 = nn.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x?xf32>, tensor<?xf32>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

// A split's parts are static: the dim it splits must be.
func.func @dynamic_split_axis(%x: tensor<?x3xf32>) -> (tensor<1x3xf32>, tensor<2x3xf32>) {
  // expected-error @+1 {{cannot compile nn.split with dynamic dims: the split axis must be static}}
  %0:2 = nn.split %x {axis = 0 : i64, sizes = array<i64: 1, 2>} : (tensor<?x3xf32>) -> (tensor<1x3xf32>, tensor<2x3xf32>)
  return %0#0, %0#1 : tensor<1x3xf32>, tensor<2x3xf32>
}

// -----

func.func @data_dependent(%x: tensor<?x1x2x2xf32>, %s: tensor<4xf32>) -> tensor<?x?x?x?xf32> {
  // A Resize to scales given at run time takes a static input only.
  // expected-error @+1 {{cannot compile nn.resize with dynamic dims: not supported for this op yet; pin them with --dim or --input-shape}}
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = false, mode = "nearest", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<?x1x2x2xf32>, tensor<4xf32>) -> tensor<?x?x?x?xf32>
  return %0 : tensor<?x?x?x?xf32>
}
