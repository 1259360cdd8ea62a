// RUN: nnc-opt %s --nnc-convert-nn-to-linalg --split-input-file | FileCheck %s

// Reshapes collapse to 1-D and expand to the target.
// CHECK-LABEL: func.func @reshape
// CHECK: %[[F:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %[[F]] {{\[\[}}0, 1]] output_shape [6, 4] : tensor<24xf32> into tensor<6x4xf32>
func.func @reshape(%x: tensor<2x3x4xf32>) -> tensor<6x4xf32> {
  %s = nn.constant {value = dense<[6, 4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = nn.reshape %x, %s {allowzero = false} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// Concat writes each operand at its offset; split reads slices.
// CHECK-LABEL: func.func @concat_split
// CHECK: %[[A:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [2, 3] [1, 1]
// CHECK: %[[B:.*]] = tensor.insert_slice %{{.*}} into %[[A]][0, 3] [2, 5] [1, 1]
// CHECK: tensor.extract_slice %[[B]][0, 0] [2, 6] [1, 1]
// CHECK: tensor.extract_slice %[[B]][0, 6] [2, 2] [1, 1]
func.func @concat_split(%x: tensor<2x3xf32>, %y: tensor<2x5xf32>) -> (tensor<2x6xf32>, tensor<2x2xf32>) {
  %0 = nn.concat %x, %y {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %1:2 = nn.split %0 {axis = 1 : i64, sizes = array<i64: 6, 2>} : (tensor<2x8xf32>) -> (tensor<2x6xf32>, tensor<2x2xf32>)
  return %1#0, %1#1 : tensor<2x6xf32>, tensor<2x2xf32>
}

// -----

// A negative step reads input[start + step * i]: here 7 - 2 * i, computed
// per element (a gather: the CPU schedule cannot tile a backwards read).
// CHECK-LABEL: func.func @slice_reverse
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[T:.*]] = arith.muli %[[I]], %c-2
// CHECK: %[[J:.*]] = arith.addi %[[T]], %c7
// CHECK: tensor.extract %{{.*}}[%[[J]]] : tensor<8xf32>
func.func @slice_reverse(%x: tensor<8xf32>) -> tensor<4xf32> {
  %starts = nn.constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %ends = nn.constant {value = dense<-9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %axes = nn.constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %steps = nn.constant {value = dense<-2> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = nn.slice %x, %starts, %ends, %axes, %steps : (tensor<8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Gather normalizes negative indices and clamps, so no index reads out of bounds.
// CHECK-LABEL: func.func @gather
// CHECK: linalg.generic
// CHECK: %[[RAW:.*]] = tensor.extract %{{.*}}[%{{.*}}] : tensor<3xi64>
// CHECK: %[[I:.*]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK: arith.cmpi slt, %[[I]]
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<5x4xf32>
func.func @gather(%x: tensor<5x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  %0 = nn.gather %x, %i {axis = 0 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Reflect padding maps each output index back into the input with period 2 * (size - 1).
// CHECK-LABEL: func.func @pad_reflect
// CHECK: %[[C6:.*]] = arith.constant 6 : index
// CHECK: arith.remsi %{{.*}}, %[[C6]] : index
// CHECK: tensor.extract
func.func @pad_reflect(%x: tensor<4xf32>) -> tensor<8xf32> {
  %p = nn.constant {value = dense<[2, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %v = nn.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %0 = nn.pad %x, %p, %v {mode = "reflect"} : (tensor<4xf32>, tensor<2xi64>, tensor<f32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Nearest resize with asymmetric coordinates and floor rounding: src = floor(x / 2).
// CHECK-LABEL: func.func @resize_nearest
// CHECK: %[[S:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: math.floor %[[S]] : f32
func.func @resize_nearest(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %s = nn.constant {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "nearest", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x1x2x2xf32>, tensor<4xf32>) -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}
