// RUN: nnc-opt %s --nnc-convert-nn-to-linalg --split-input-file | FileCheck %s

// Flatten, squeeze and unsqueeze are reshapes to the result type.
// CHECK-LABEL: func.func @flatten
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[F:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1, 2]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[F]] {{\[\[}}0, 1]] output_shape [2, 12] : tensor<24xf32> into tensor<2x12xf32>
// CHECK: return %[[R]]
func.func @flatten(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %0 = nn.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  return %0 : tensor<2x12xf32>
}

// -----

// CHECK-LABEL: func.func @squeeze
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x1xf32>)
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1, 2]] : tensor<1x4x1xf32> into tensor<4xf32>
// CHECK: return %[[R]]
func.func @squeeze(%x: tensor<1x4x1xf32>) -> tensor<4xf32> {
  %0 = nn.squeeze %x {axes = array<i64: 0, 2>} : (tensor<1x4x1xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @unsqueeze
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[R:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1, 2]] output_shape [1, 4, 1] : tensor<4xf32> into tensor<1x4x1xf32>
// CHECK: return %[[R]]
func.func @unsqueeze(%x: tensor<4xf32>) -> tensor<1x4x1xf32> {
  %0 = nn.unsqueeze %x {axes = array<i64: 0, 2>} : (tensor<4xf32>) -> tensor<1x4x1xf32>
  return %0 : tensor<1x4x1xf32>
}

// -----

// Reshapes to and from rank 0 collapse or expand with an empty reassociation
// (every dim of the other side is 1): views, no shape operand.
// CHECK-LABEL: func.func @reshape_rank0
// CHECK-SAME: (%[[X:.*]]: tensor<1x1xf32>, %[[S:.*]]: tensor<f32>)
// CHECK: %[[A:.*]] = tensor.collapse_shape %[[X]] [] : tensor<1x1xf32> into tensor<f32>
// CHECK: %[[B:.*]] = tensor.expand_shape %[[S]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: return %[[A]], %[[B]]
func.func @reshape_rank0(%x: tensor<1x1xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<1xf32>) {
  %shape = nn.constant {value = dense<> : tensor<0xi64>} : () -> tensor<0xi64>
  %0 = nn.reshape %x, %shape {allowzero = false} : (tensor<1x1xf32>, tensor<0xi64>) -> tensor<f32>
  %1 = nn.unsqueeze %s {axes = array<i64: 0>} : (tensor<f32>) -> tensor<1xf32>
  return %0, %1 : tensor<f32>, tensor<1xf32>
}

// -----

// Transpose is a copy generic reading the input at permuted indices: result
// dim i is input dim perm[i], so input dim perm[i] reads loop i (unsigned
// types become signless).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xi8>) -> tensor<4x2x3xi8>
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<2x3x4xi8>) outs(%{{.*}} : tensor<4x2x3xi8>)
// CHECK: return %[[T]]
func.func @transpose(%x: tensor<2x3x4xui8>) -> tensor<4x2x3xui8> {
  %0 = nn.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xui8>) -> tensor<4x2x3xui8>
  return %0 : tensor<4x2x3xui8>
}

// -----

// Expand is a copy generic with the broadcast in the input map: [3, 1] read
// as (d1, 0) into [2, 3, 4].
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d1, 0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @expand
// CHECK-SAME: (%[[X:.*]]: tensor<3x1xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]] : tensor<3x1xf32>) outs(%{{.*}} : tensor<2x3x4xf32>)
// CHECK: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @expand(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %s = nn.constant {value = dense<[2, 1, 4]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = nn.expand %x, %s : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Tile reads the input at (i mod 2, j mod 3).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d0 mod 2, d1 mod 3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @tile
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xi32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<2x3xi32>) outs(%{{.*}} : tensor<4x9xi32>)
// CHECK: ^bb0(%[[V:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: linalg.yield %[[V]] : i32
func.func @tile(%x: tensor<2x3xi32>) -> tensor<4x9xi32> {
  %r = nn.constant {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = nn.tile %x, %r : (tensor<2x3xi32>, tensor<2xi64>) -> tensor<4x9xi32>
  return %0 : tensor<4x9xi32>
}

// -----

// Positive steps are an extract_slice with strides: axis 0 from 1 (end 100
// clamps to 10), axis -1 (= 1) from -7 (= 1); both read 3 elements at step 3.
// CHECK-LABEL: func.func @slice_strided
// CHECK-SAME: (%[[X:.*]]: tensor<10x8xf32>)
// CHECK: %[[R:.*]] = tensor.extract_slice %[[X]][1, 1] [3, 3] [3, 3] : tensor<10x8xf32> to tensor<3x3xf32>
// CHECK: return %[[R]]
func.func @slice_strided(%x: tensor<10x8xf32>) -> tensor<3x3xf32> {
  %starts = nn.constant {value = dense<[1, -7]> : tensor<2xi64>} : () -> tensor<2xi64>
  %ends = nn.constant {value = dense<[100, 8]> : tensor<2xi64>} : () -> tensor<2xi64>
  %axes = nn.constant {value = dense<[0, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %steps = nn.constant {value = dense<[3, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = nn.slice %x, %starts, %ends, %axes, %steps : (tensor<10x8xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// An empty slice (start 5 past end 2) is just an empty tensor.
// CHECK-LABEL: func.func @slice_empty
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[E:.*]] = tensor.empty() : tensor<0x8xf32>
// CHECK-NEXT: return %[[E]] : tensor<0x8xf32>
func.func @slice_empty(%x: tensor<10x8xf32>) -> tensor<0x8xf32> {
  %starts = nn.constant {value = dense<[5]> : tensor<1xi64>} : () -> tensor<1xi64>
  %ends = nn.constant {value = dense<[2]> : tensor<1xi64>} : () -> tensor<1xi64>
  %axes = nn.constant {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  %steps = nn.constant {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = nn.slice %x, %starts, %ends, %axes, %steps : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<0x8xf32>
  return %0 : tensor<0x8xf32>
}

// -----

// Gather along axis 1 with 2-D unsigned indices: the index dims (d1, d2)
// address the indices, index_castui widens them, the result takes the input's
// dim 0 from d0; negative values (impossible here) and out-of-range ones
// are normalized and clamped to [0, 3].
// CHECK-LABEL: func.func @gather_ui32
// CHECK-SAME: (%[[X:.*]]: tensor<5x4xf32>, %[[I:.*]]: tensor<2x3xi32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<5x2x3xf32>)
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK: %[[D1:.*]] = linalg.index 1 : index
// CHECK: %[[D2:.*]] = linalg.index 2 : index
// CHECK: %[[RAW:.*]] = tensor.extract %[[I]][%[[D1]], %[[D2]]] : tensor<2x3xi32>
// CHECK: %[[IX:.*]] = arith.index_castui %[[RAW]] : i32 to index
// CHECK-DAG: %[[NEG:.*]] = arith.cmpi slt, %[[IX]], %{{.*}} : index
// CHECK-DAG: %[[WRAP:.*]] = arith.addi %[[IX]], %[[DIM:.*]] : index
// CHECK-DAG: %[[DIM]] = arith.constant 4 : index
// CHECK-DAG: %[[SEL:.*]] = arith.select %[[NEG]], %[[WRAP]], %[[IX]] : index
// CHECK-DAG: %[[LO:.*]] = arith.maxsi %[[SEL]], %{{.*}} : index
// CHECK-DAG: %[[HI:.*]] = arith.minsi %[[LO]], %[[LAST:.*]] : index
// CHECK-DAG: %[[LAST]] = arith.constant 3 : index
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%[[D0]], %[[HI]]] : tensor<5x4xf32>
// CHECK: linalg.yield %[[V]] : f32
func.func @gather_ui32(%x: tensor<5x4xf32>, %i: tensor<2x3xui32>) -> tensor<5x2x3xf32> {
  %0 = nn.gather %x, %i {axis = 1 : i64} : (tensor<5x4xf32>, tensor<2x3xui32>) -> tensor<5x2x3xf32>
  return %0 : tensor<5x2x3xf32>
}

// -----

// A 0-D i32 index: signed index_cast, a negative index adds the dim (5).
// CHECK-LABEL: func.func @gather_i32_scalar
// CHECK-SAME: (%[[X:.*]]: tensor<5x4xf32>, %[[I:.*]]: tensor<i32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK: %[[RAW:.*]] = tensor.extract %[[I]][] : tensor<i32>
// CHECK: %[[IX:.*]] = arith.index_cast %[[RAW]] : i32 to index
// CHECK-DAG: %[[NEG:.*]] = arith.cmpi slt, %[[IX]], %{{.*}} : index
// CHECK-DAG: %[[WRAP:.*]] = arith.addi %[[IX]], %[[DIM:.*]] : index
// CHECK-DAG: %[[DIM]] = arith.constant 5 : index
// CHECK-DAG: %[[SEL:.*]] = arith.select %[[NEG]], %[[WRAP]], %[[IX]] : index
// CHECK-DAG: %[[LO:.*]] = arith.maxsi %[[SEL]], %{{.*}} : index
// CHECK-DAG: %[[HI:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK: tensor.extract %[[X]][%[[HI]], %[[D0]]] : tensor<5x4xf32>
func.func @gather_i32_scalar(%x: tensor<5x4xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  %0 = nn.gather %x, %i {axis = 0 : i64} : (tensor<5x4xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// GatherElements replaces the coordinate along the axis with the index read at
// the same position.
// CHECK-LABEL: func.func @gather_elements
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf32>, %[[I:.*]]: tensor<3x2xi64>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<3x2xf32>)
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK: %[[D1:.*]] = linalg.index 1 : index
// CHECK: %[[RAW:.*]] = tensor.extract %[[I]][%[[D0]], %[[D1]]] : tensor<3x2xi64>
// CHECK: %[[IX:.*]] = arith.index_cast %[[RAW]] : i64 to index
// CHECK-DAG: %[[NEG:.*]] = arith.cmpi slt, %[[IX]], %{{.*}} : index
// CHECK-DAG: %[[WRAP:.*]] = arith.addi %[[IX]], %[[DIM:.*]] : index
// CHECK-DAG: %[[DIM]] = arith.constant 4 : index
// CHECK-DAG: %[[SEL:.*]] = arith.select %[[NEG]], %[[WRAP]], %[[IX]] : index
// CHECK-DAG: %[[LO:.*]] = arith.maxsi %[[SEL]], %{{.*}} : index
// CHECK-DAG: %[[HI:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%[[D0]], %[[HI]]] : tensor<3x4xf32>
// CHECK: linalg.yield %[[V]] : f32
func.func @gather_elements(%x: tensor<3x4xf32>, %i: tensor<3x2xi64>) -> tensor<3x2xf32> {
  %0 = nn.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Constant mode: inside the input (per dim 0 <= i - pad < size) read it,
// elsewhere select the pad value.
// CHECK-LABEL: func.func @pad_constant
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK: %[[VT:.*]] = arith.constant dense<1.500000e+00> : tensor<f32>
// CHECK: %[[VAL:.*]] = tensor.extract %[[VT]][] : tensor<f32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<3x6xf32>)
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK: %[[D1:.*]] = linalg.index 1 : index
// CHECK-DAG: %[[I0:.*]] = arith.subi %[[D0]], %[[P0:.*]] : index
// CHECK-DAG: %[[P0]] = arith.constant 1 : index
// CHECK-DAG: %[[GE0:.*]] = arith.cmpi sge, %[[I0]], %{{.*}} : index
// CHECK-DAG: %[[LT0:.*]] = arith.cmpi slt, %[[I0]], %[[N0:.*]] : index
// CHECK-DAG: %[[N0]] = arith.constant 2 : index
// CHECK-DAG: %[[IN0:.*]] = arith.andi %[[GE0]], %[[LT0]] : i1
// CHECK-DAG: %[[I1:.*]] = arith.subi %[[D1]], %[[P1:.*]] : index
// CHECK-DAG: %[[P1]] = arith.constant 2 : index
// CHECK-DAG: %[[GE1:.*]] = arith.cmpi sge, %[[I1]], %{{.*}} : index
// CHECK-DAG: %[[LT1:.*]] = arith.cmpi slt, %[[I1]], %[[N1:.*]] : index
// CHECK-DAG: %[[N1]] = arith.constant 3 : index
// CHECK-DAG: %[[IN1:.*]] = arith.andi %[[GE1]], %[[LT1]] : i1
// CHECK-DAG: %[[INSIDE:.*]] = arith.andi %{{.*}}, %[[IN1]] : i1
// CHECK: %[[E:.*]] = tensor.extract %[[X]][%{{.*}}, %{{.*}}] : tensor<2x3xf32>
// CHECK: %[[R:.*]] = arith.select %[[INSIDE]], %[[E]], %[[VAL]] : f32
// CHECK: linalg.yield %[[R]] : f32
func.func @pad_constant(%x: tensor<2x3xf32>) -> tensor<3x6xf32> {
  %p = nn.constant {value = dense<[1, 2, 0, 1]> : tensor<4xi64>} : () -> tensor<4xi64>
  %v = nn.constant {value = dense<1.5> : tensor<f32>} : () -> tensor<f32>
  %0 = nn.pad %x, %p, %v {mode = "constant"} : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// Edge mode clamps the shifted index into the input; there is no select.
// CHECK-LABEL: func.func @pad_edge
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK-DAG: %[[I:.*]] = arith.subi %[[D0]], %[[P:.*]] : index
// CHECK-DAG: %[[P]] = arith.constant 2 : index
// CHECK-DAG: %[[LO:.*]] = arith.maxsi %[[I]], %[[Z:.*]] : index
// CHECK-DAG: %[[Z]] = arith.constant 0 : index
// CHECK-DAG: %[[HI:.*]] = arith.minsi %[[LO]], %[[LAST:.*]] : index
// CHECK-DAG: %[[LAST]] = arith.constant 3 : index
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%[[HI]]] : tensor<4xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @pad_edge(%x: tensor<4xf32>) -> tensor<7xf32> {
  %p = nn.constant {value = dense<[2, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  %v = nn.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %0 = nn.pad %x, %p, %v {mode = "edge"} : (tensor<4xf32>, tensor<2xi64>, tensor<f32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

// Wrap mode: the shifted index modulo the size, made non-negative.
// CHECK-LABEL: func.func @pad_wrap
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK-DAG: %[[I:.*]] = arith.subi %[[D0]], %[[P:.*]] : index
// CHECK-DAG: %[[P]] = arith.constant 3 : index
// CHECK-DAG: %[[M:.*]] = arith.remsi %[[I]], %[[N:.*]] : index
// CHECK-DAG: %[[N]] = arith.constant 4 : index
// CHECK-DAG: %[[NEG:.*]] = arith.cmpi slt, %[[M]], %{{.*}} : index
// CHECK-DAG: %[[UP:.*]] = arith.addi %[[M]], %[[N]] : index
// CHECK-DAG: %[[W:.*]] = arith.select %[[NEG]], %[[UP]], %[[M]] : index
// CHECK-DAG: %[[LO:.*]] = arith.maxsi %[[W]], %{{.*}} : index
// CHECK-DAG: %[[HI:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%[[HI]]] : tensor<4xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @pad_wrap(%x: tensor<4xf32>) -> tensor<9xf32> {
  %p = nn.constant {value = dense<[3, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %v = nn.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %0 = nn.pad %x, %p, %v {mode = "wrap"} : (tensor<4xf32>, tensor<2xi64>, tensor<f32>) -> tensor<9xf32>
  return %0 : tensor<9xf32>
}

// -----

// Negative pads crop: a begin pad of -2 reads input index out + 2, and the
// end pad of -1 makes the result one narrower (5 - 0 ... here 5 + 1 - 1).
// CHECK-LABEL: func.func @pad_negative
// CHECK-SAME: (%[[X:.*]]: tensor<5x5xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x5xf32>)
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK-DAG: %[[I0:.*]] = arith.subi %[[D0]], %[[P0:.*]] : index
// CHECK-DAG: %[[P0]] = arith.constant -2 : index
// CHECK-DAG: arith.cmpi slt, %[[I0]], %[[N0:.*]] : index
// CHECK-DAG: %[[N0]] = arith.constant 5 : index
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
func.func @pad_negative(%x: tensor<5x5xf32>) -> tensor<4x5xf32> {
  %p = nn.constant {value = dense<[-2, 1, 1, -1]> : tensor<4xi64>} : () -> tensor<4xi64>
  %v = nn.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %0 = nn.pad %x, %p, %v {mode = "constant"} : (tensor<5x5xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// Linear resize, half_pixel: src = (x + 0.5) / 2 - 0.5; taps floor(src) and
// floor(src) + 1 with weights 1 - t and t; outside [0, in - 1] both taps read
// the nearest edge (weights 1 and 0).
// CHECK-LABEL: func.func @resize_linear_half_pixel
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x4xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x8xf32>)
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK: %[[D1:.*]] = linalg.index 1 : index
// CHECK: %[[D2:.*]] = linalg.index 2 : index
// CHECK: %[[XI:.*]] = arith.index_cast %[[D2]] : index to i64
// CHECK: %[[XF:.*]] = arith.sitofp %[[XI]] : i64 to f32
// CHECK-DAG: %[[A:.*]] = arith.addf %[[XF]], %[[HALF1:.*]] : f32
// CHECK-DAG: %[[HALF1]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[B:.*]] = arith.divf %[[A]], %[[SCALE:.*]] : f32
// CHECK-DAG: %[[SCALE]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[SRC:.*]] = arith.subf %[[B]], %[[HALF2:.*]] : f32
// CHECK-DAG: %[[HALF2]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[FL:.*]] = math.floor %[[SRC]] : f32
// CHECK-DAG: %[[T:.*]] = arith.subf %[[SRC]], %[[FL]] : f32
// CHECK-DAG: %[[I64:.*]] = arith.fptosi %[[FL]] : f32 to i64
// CHECK-DAG: %[[I0:.*]] = arith.index_cast %[[I64]] : i64 to index
// CHECK-DAG: %[[I1:.*]] = arith.addi %[[I0]], %{{.*}} : index
// CHECK-DAG: %[[W0:.*]] = arith.subf %[[ONE:.*]], %[[T]] : f32
// CHECK-DAG: %[[ONE]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[BELOW:.*]] = arith.cmpf olt, %[[SRC]], %[[ZERO:.*]] : f32
// CHECK-DAG: %[[ZERO]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ABOVE:.*]] = arith.cmpf oge, %[[SRC]], %[[LASTF:.*]] : f32
// CHECK-DAG: %[[LASTF]] = arith.constant 3.000000e+00 : f32
// CHECK-DAG: %[[EDGE:.*]] = arith.ori %[[BELOW]], %[[ABOVE]] : i1
// CHECK-DAG: %[[W0E:.*]] = arith.select %[[EDGE]], %{{.*}}, %[[W0]] : f32
// CHECK-DAG: %[[W1E:.*]] = arith.select %[[EDGE]], %{{.*}}, %[[T]] : f32
// CHECK-DAG: %[[HIGHI:.*]] = arith.select %[[ABOVE]], %{{.*}}, %[[I0]] : index
// CHECK-DAG: %[[E0:.*]] = arith.select %[[BELOW]], %{{.*}}, %[[HIGHI]] : index
// CHECK-DAG: %[[C0:.*]] = arith.maxsi %[[E0]], %{{.*}} : index
// CHECK-DAG: %[[J0:.*]] = arith.minsi %[[C0]], %{{.*}} : index
// CHECK-DAG: %[[C1:.*]] = arith.maxsi %[[I1]], %{{.*}} : index
// CHECK-DAG: %[[J1:.*]] = arith.minsi %[[C1]], %{{.*}} : index
// CHECK: %[[V0:.*]] = tensor.extract %[[X]][%[[D0]], %[[D1]], %[[J0]]] : tensor<1x1x4xf32>
// CHECK-NEXT: %[[P0:.*]] = arith.mulf %[[V0]], %[[W0E]] : f32
// CHECK-NEXT: %[[V1:.*]] = tensor.extract %[[X]][%[[D0]], %[[D1]], %[[J1]]] : tensor<1x1x4xf32>
// CHECK-NEXT: %[[P1:.*]] = arith.mulf %[[V1]], %[[W1E]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[P0]], %[[P1]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @resize_linear_half_pixel(%x: tensor<1x1x4xf32>) -> tensor<1x1x8xf32> {
  %s = nn.constant {value = dense<[1.0, 1.0, 2.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "linear", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x1x4xf32>, tensor<3xf32>) -> tensor<1x1x8xf32>
  return %0 : tensor<1x1x8xf32>
}

// -----

// Bilinear: 2 taps per resized dim, 4 reads weighted by the products of the
// per-dim weights; the unresized dims (scale 1) read their own index.
// CHECK-LABEL: func.func @resize_bilinear
// CHECK: %[[D0:.*]] = linalg.index 0 : index
// CHECK: %[[D1:.*]] = linalg.index 1 : index
// CHECK-COUNT-4: tensor.extract %{{.*}}[%[[D0]], %[[D1]], %{{.*}}, %{{.*}}] : tensor<1x2x2x3xf32>
// CHECK-NOT: tensor.extract
// CHECK: linalg.yield
func.func @resize_bilinear(%x: tensor<1x2x2x3xf32>) -> tensor<1x2x4x6xf32> {
  %s = nn.constant {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "linear", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x2x2x3xf32>, tensor<4xf32>) -> tensor<1x2x4x6xf32>
  return %0 : tensor<1x2x4x6xf32>
}

// -----

// align_corners: src = x * (in - 1) / (out - 1) = x * 3 / 7.
// CHECK-LABEL: func.func @resize_align_corners
// CHECK: %[[XF:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK-NEXT: %[[R:.*]] = arith.constant 0.428571433 : f32
// CHECK-NEXT: %[[SRC:.*]] = arith.mulf %[[XF]], %[[R]] : f32
// CHECK-NEXT: math.floor %[[SRC]] : f32
func.func @resize_align_corners(%x: tensor<1x1x4xf32>) -> tensor<1x1x8xf32> {
  %s = nn.constant {value = dense<[1.0, 1.0, 2.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "align_corners", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "linear", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x1x4xf32>, tensor<3xf32>) -> tensor<1x1x8xf32>
  return %0 : tensor<1x1x8xf32>
}

// -----

// pytorch_half_pixel is half_pixel when the output has more than one element...
// CHECK-LABEL: func.func @resize_pytorch_half_pixel
// CHECK: %[[XF:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK-DAG: %[[A:.*]] = arith.addf %[[XF]], %[[H1:.*]] : f32
// CHECK-DAG: %[[H1]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[B:.*]] = arith.divf %[[A]], %[[S:.*]] : f32
// CHECK-DAG: %[[S]] = arith.constant 1.500000e+00 : f32
// CHECK-DAG: %[[SRC:.*]] = arith.subf %[[B]], %[[H2:.*]] : f32
// CHECK-DAG: %[[H2]] = arith.constant 5.000000e-01 : f32
// CHECK: math.floor %[[SRC]] : f32
func.func @resize_pytorch_half_pixel(%x: tensor<1x1x4xf32>) -> tensor<1x1x6xf32> {
  %s = nn.constant {value = dense<[1.0, 1.0, 1.5]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "pytorch_half_pixel", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "linear", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x1x4xf32>, tensor<3xf32>) -> tensor<1x1x6xf32>
  return %0 : tensor<1x1x6xf32>
}

// -----

// ...and src = 0 for a single output element.
// CHECK-LABEL: func.func @resize_pytorch_half_pixel_single
// CHECK: arith.sitofp %{{.*}} : i64 to f32
// CHECK-NEXT: %[[SRC:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: math.floor %[[SRC]] : f32
func.func @resize_pytorch_half_pixel_single(%x: tensor<1x1x4xf32>) -> tensor<1x1x1xf32> {
  %s = nn.constant {value = dense<[1.0, 1.0, 0.25]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "pytorch_half_pixel", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "linear", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x1x4xf32>, tensor<3xf32>) -> tensor<1x1x1xf32>
  return %0 : tensor<1x1x1xf32>
}

// -----

// Sizes instead of scales: the scale is out / in = 6 / 4 (asymmetric: x / 1.5);
// round_prefer_ceil nearest is floor(src + 0.5), clamped.
// CHECK-LABEL: func.func @resize_sizes_nearest
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x4xf32>)
// CHECK: %[[D2:.*]] = linalg.index 2 : index
// CHECK: %[[XF:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK-NEXT: %[[S:.*]] = arith.constant 1.500000e+00 : f32
// CHECK-NEXT: %[[SRC:.*]] = arith.divf %[[XF]], %[[S]] : f32
// CHECK-NEXT: %[[H:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[SRC]], %[[H]] : f32
// CHECK-NEXT: %[[F:.*]] = math.floor %[[A]] : f32
// CHECK: arith.maxsi
// CHECK: %[[I:.*]] = arith.minsi
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%{{.*}}, %{{.*}}, %[[I]]] : tensor<1x1x4xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
func.func @resize_sizes_nearest(%x: tensor<1x1x4xf32>) -> tensor<1x1x6xf32> {
  %s = nn.constant {value = dense<[1, 1, 6]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "nearest", nearest_mode = "round_prefer_ceil", operandSegmentSizes = array<i32: 1, 0, 1, 0>} : (tensor<1x1x4xf32>, tensor<3xi64>) -> tensor<1x1x6xf32>
  return %0 : tensor<1x1x6xf32>
}

// -----

// round_prefer_floor nearest is ceil(src - 0.5).
// CHECK-LABEL: func.func @resize_nearest_prefer_floor
// CHECK: %[[H:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[A:.*]] = arith.subf %{{.*}}, %[[H]] : f32
// CHECK-NEXT: math.ceil %[[A]] : f32
func.func @resize_nearest_prefer_floor(%x: tensor<1x1x4xf32>) -> tensor<1x1x6xf32> {
  %s = nn.constant {value = dense<[1, 1, 6]> : tensor<3xi64>} : () -> tensor<3xi64>
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "nearest", nearest_mode = "round_prefer_floor", operandSegmentSizes = array<i32: 1, 0, 1, 0>} : (tensor<1x1x4xf32>, tensor<3xi64>) -> tensor<1x1x6xf32>
  return %0 : tensor<1x1x6xf32>
}

// -----

// Cubic (Keys, a = -0.5) over taps floor(src) - 1 .. floor(src) + 2; with
// exclude_outside, taps outside [0, 4) get weight 0 and the weights are
// divided by their sum.
// CHECK-LABEL: func.func @resize_cubic_exclude_outside
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x4xf32>)
// CHECK: %[[FL:.*]] = math.floor %{{.*}} : f32
// CHECK: %[[I64:.*]] = arith.fptosi %[[FL]] : f32 to i64
// CHECK: %[[I0:.*]] = arith.index_cast %[[I64]] : i64 to index
// Tap -1: distance |t + 1|, Keys coefficients (a + 2, a + 3, a, 5a, 8a, 4a).
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[KM1:.*]] = arith.constant -1 : index
// CHECK: %[[IM1:.*]] = arith.addi %[[I0]], %[[KM1]] : index
// CHECK-DAG: arith.constant 1.500000e+00 : f32
// CHECK-DAG: arith.constant 2.500000e+00 : f32
// CHECK-DAG: arith.constant -5.000000e-01 : f32
// CHECK-DAG: arith.constant -2.500000e+00 : f32
// CHECK-DAG: arith.constant -4.000000e+00 : f32
// CHECK-DAG: arith.constant -2.000000e+00 : f32
// CHECK: %[[NEAR:.*]] = arith.cmpf ole, %{{.*}}, %{{.*}} : f32
// CHECK: %[[WK:.*]] = arith.select %[[NEAR]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[IM1]], %{{.*}} : index
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[IM1]], %[[N:.*]] : index
// CHECK: %[[INS:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: %[[W0:.*]] = arith.select %[[INS]], %[[WK]], %{{.*}} : f32
// CHECK: %[[S0:.*]] = arith.addf %[[ZERO]], %[[W0]] : f32
// CHECK: arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: %[[W1:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: %[[S1:.*]] = arith.addf %[[S0]], %[[W1]] : f32
// CHECK: arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: %[[W2:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: %[[S2:.*]] = arith.addf %[[S1]], %[[W2]] : f32
// CHECK: %[[K2:.*]] = arith.constant 2 : index
// CHECK: arith.addi %[[I0]], %[[K2]] : index
// CHECK: arith.andi %{{.*}}, %{{.*}} : i1
// CHECK-NEXT: %[[W3:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: %[[TOTAL:.*]] = arith.addf %[[S2]], %[[W3]] : f32
// CHECK: %[[N0:.*]] = arith.divf %[[W0]], %[[TOTAL]] : f32
// CHECK-NEXT: %[[N1:.*]] = arith.divf %[[W1]], %[[TOTAL]] : f32
// CHECK-NEXT: %[[N2:.*]] = arith.divf %[[W2]], %[[TOTAL]] : f32
// CHECK-NEXT: %[[N3:.*]] = arith.divf %[[W3]], %[[TOTAL]] : f32
// CHECK-NEXT: %[[V0:.*]] = tensor.extract %[[X]]
// CHECK-NEXT: %[[P0:.*]] = arith.mulf %[[V0]], %[[N0]] : f32
// CHECK-NEXT: %[[V1:.*]] = tensor.extract %[[X]]
// CHECK-NEXT: %[[P1:.*]] = arith.mulf %[[V1]], %[[N1]] : f32
// CHECK-NEXT: %[[A1:.*]] = arith.addf %[[P0]], %[[P1]] : f32
// CHECK-NEXT: %[[V2:.*]] = tensor.extract %[[X]]
// CHECK-NEXT: %[[P2:.*]] = arith.mulf %[[V2]], %[[N2]] : f32
// CHECK-NEXT: %[[A2:.*]] = arith.addf %[[A1]], %[[P2]] : f32
// CHECK-NEXT: %[[V3:.*]] = tensor.extract %[[X]]
// CHECK-NEXT: %[[P3:.*]] = arith.mulf %[[V3]], %[[N3]] : f32
// CHECK-NEXT: %[[A3:.*]] = arith.addf %[[A2]], %[[P3]] : f32
// CHECK-NEXT: linalg.yield %[[A3]] : f32
func.func @resize_cubic_exclude_outside(%x: tensor<1x1x4xf32>) -> tensor<1x1x8xf32> {
  %s = nn.constant {value = dense<[1.0, 1.0, 2.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "half_pixel", cubic_coeff_a = -0.5 : f32, exclude_outside = true, mode = "cubic", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x1x4xf32>, tensor<3xf32>) -> tensor<1x1x8xf32>
  return %0 : tensor<1x1x8xf32>
}

// -----

// Without exclude_outside the cubic weights are used as they are.
// CHECK-LABEL: func.func @resize_cubic
// CHECK-COUNT-4: arith.cmpf ole
// CHECK-NOT: arith.divf %{{.*}}, %{{.*}} : f32
// CHECK: linalg.yield
func.func @resize_cubic(%x: tensor<1x1x4xf32>) -> tensor<1x1x8xf32> {
  %s = nn.constant {value = dense<[1.0, 1.0, 2.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "cubic", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x1x4xf32>, tensor<3xf32>) -> tensor<1x1x8xf32>
  return %0 : tensor<1x1x8xf32>
}

// -----

// Trilu keeps j - i >= k (upper) or j - i <= k (lower) over the last two dims;
// k is read at run time, as an operand of the generic (so a GPU kernel reads
// it, not the host).
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-LABEL: func.func @trilu
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[KT:.*]]: tensor<i64>)
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[KT]] : tensor<2x3x4xf32>, tensor<i64>)
// CHECK: ^bb0(%[[V:.*]]: f32, %[[KV:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT: %[[I:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[J:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[D:.*]] = arith.subi %[[J]], %[[I]] : index
// CHECK-NEXT: %[[K:.*]] = arith.index_cast %[[KV]] : i64 to index
// CHECK-NEXT: %[[KEEP:.*]] = arith.cmpi sge, %[[D]], %[[K]] : index
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[KEEP]], %[[V]], %[[Z]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: ^bb0(%[[V2:.*]]: f32, %[[KV2:.*]]: i64, %{{.*}}: f32):
// CHECK-NEXT: %[[I2:.*]] = linalg.index 1 : index
// CHECK-NEXT: %[[J2:.*]] = linalg.index 2 : index
// CHECK-NEXT: %[[D2:.*]] = arith.subi %[[J2]], %[[I2]] : index
// CHECK-NEXT: %[[K2:.*]] = arith.index_cast %[[KV2]] : i64 to index
// CHECK-NEXT: %[[KEEP2:.*]] = arith.cmpi sle, %[[D2]], %[[K2]] : index
func.func @trilu(%x: tensor<2x3x4xf32>, %k: tensor<i64>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %0 = nn.trilu %x, %k {upper = true} : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<2x3x4xf32>
  %1 = nn.trilu %x, %k {upper = false} : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<2x3x4xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// Integer trilu selects an integer zero.
// CHECK-LABEL: func.func @trilu_i32
// CHECK: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: arith.select %{{.*}}, %{{.*}}, %[[Z]] : i32
func.func @trilu_i32(%x: tensor<3x3xi32>, %k: tensor<i64>) -> tensor<3x3xi32> {
  %0 = nn.trilu %x, %k {upper = false} : (tensor<3x3xi32>, tensor<i64>) -> tensor<3x3xi32>
  return %0 : tensor<3x3xi32>
}

// -----

// Range with run-time operands: start + i * delta (limit only sets the size).
// CHECK-LABEL: func.func @range_i32
// CHECK-SAME: (%[[S:.*]]: tensor<i32>, %{{.*}}: tensor<i32>, %[[D:.*]]: tensor<i32>)
// CHECK: %[[START:.*]] = tensor.extract %[[S]][] : tensor<i32>
// CHECK: %[[DELTA:.*]] = tensor.extract %[[D]][] : tensor<i32>
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<5xi32>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT: %[[I32:.*]] = arith.trunci %[[I64]] : i64 to i32
// CHECK-NEXT: %[[M:.*]] = arith.muli %[[I32]], %[[DELTA]] : i32
// CHECK-NEXT: %[[R:.*]] = arith.addi %[[START]], %[[M]] : i32
// CHECK-NEXT: linalg.yield %[[R]] : i32
func.func @range_i32(%s: tensor<i32>, %l: tensor<i32>, %d: tensor<i32>) -> tensor<5xi32> {
  %0 = nn.range %s, %l, %d : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
}

// -----

// CHECK-LABEL: func.func @range_f32
// CHECK-SAME: (%[[S:.*]]: tensor<f32>, %{{.*}}: tensor<f32>, %[[D:.*]]: tensor<f32>)
// CHECK: %[[START:.*]] = tensor.extract %[[S]][] : tensor<f32>
// CHECK: %[[DELTA:.*]] = tensor.extract %[[D]][] : tensor<f32>
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK-NEXT: %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[I64]] : i64 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[F]], %[[DELTA]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[START]], %[[M]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @range_f32(%s: tensor<f32>, %l: tensor<f32>, %d: tensor<f32>) -> tensor<4xf32> {
  %0 = nn.range %s, %l, %d : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// With static result shapes (which lowering requires) ConstantOfShape, Shape
// and Size fold during the conversion, before their patterns run: splat and
// shape constants (an unsigned 200 keeps its bits: -56 as i8).
// CHECK-LABEL: func.func @constant_of_shape
// CHECK-DAG: %[[F:.*]] = arith.constant dense<2.500000e+00> : tensor<2x3xf32>
// CHECK-DAG: %[[U:.*]] = arith.constant dense<-56> : tensor<2x3xi8>
// CHECK: return %[[F]], %[[U]] : tensor<2x3xf32>, tensor<2x3xi8>
func.func @constant_of_shape(%s: tensor<2xi64>) -> (tensor<2x3xf32>, tensor<2x3xui8>) {
  %0 = nn.constant_of_shape %s {value = dense<2.5> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<2x3xf32>
  %1 = nn.constant_of_shape %s {value = dense<200> : tensor<1xui8>} : (tensor<2xi64>) -> tensor<2x3xui8>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xui8>
}

// -----

// CHECK-LABEL: func.func @shape_size
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[3, 4]> : tensor<2xi64>
// CHECK-DAG: %[[N:.*]] = arith.constant dense<24> : tensor<i64>
// CHECK: return %[[S]], %[[N]] : tensor<2xi64>, tensor<i64>
func.func @shape_size(%x: tensor<2x3x4xf32>) -> (tensor<2xi64>, tensor<i64>) {
  %0 = nn.shape %x {start = 1 : i64, end = 3 : i64} : (tensor<2x3x4xf32>) -> tensor<2xi64>
  %1 = nn.size %x : (tensor<2x3x4xf32>) -> tensor<i64>
  return %0, %1 : tensor<2xi64>, tensor<i64>
}

// -----

// A check becomes one of the function's checks, naming the node; the value
// passes on.
// CHECK-LABEL: func.func @check
// CHECK-SAME: (%[[X:.*]]: tensor<3xi64>, %[[C:.*]]: tensor<i1>)
// CHECK: %[[HOLDS:.*]] = tensor.extract %[[C]][] : tensor<i1>
// CHECK: cf.assert %[[HOLDS]], "node 'axes': axes must be distinct"
// CHECK: return %[[X]]
func.func @check(%x: tensor<3xi64>, %c: tensor<i1>) -> tensor<3xi64> {
  %0 = nn.check %x, %c {message = "axes must be distinct"} : (tensor<3xi64>, tensor<i1>) -> tensor<3xi64> loc("axes")
  return %0 : tensor<3xi64>
}
