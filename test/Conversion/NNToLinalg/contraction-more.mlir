// RUN: nnc-opt %s --nnc-convert-nn-to-linalg --split-input-file | FileCheck %s

// A 1-D lhs is promoted to a 1 x K row, and the promoted dim dropped again.
// CHECK-LABEL: func.func @matmul_vector_lhs
// CHECK-SAME: (%[[A:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8x5xf32>)
// CHECK: %[[ROW:.*]] = tensor.expand_shape %[[A]] {{\[\[}}0, 1]] output_shape [1, 8] : tensor<8xf32> into tensor<1x8xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x5xf32>)
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[ROW]], %[[B]] : tensor<1x8xf32>, tensor<8x5xf32>) outs(%[[Z]] : tensor<1x5xf32>)
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[M]] {{\[\[}}0, 1]] : tensor<1x5xf32> into tensor<5xf32>
// CHECK: return %[[R]]
func.func @matmul_vector_lhs(%a: tensor<8xf32>, %b: tensor<8x5xf32>) -> tensor<5xf32> {
  %0 = nn.matmul %a, %b : (tensor<8xf32>, tensor<8x5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// A 1-D rhs is promoted to a K x 1 column.
// CHECK-LABEL: func.func @matmul_vector_rhs
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[COL:.*]] = tensor.expand_shape %[[B]] {{\[\[}}0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[A]], %[[COL]] : tensor<4x8xf32>, tensor<8x1xf32>) outs(%{{.*}} : tensor<4x1xf32>)
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[M]] {{\[\[}}0, 1]] : tensor<4x1xf32> into tensor<4xf32>
// CHECK: return %[[R]]
func.func @matmul_vector_rhs(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  %0 = nn.matmul %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Two vectors: a 1 x 1 matmul reshaped to rank 0.
// CHECK-LABEL: func.func @matmul_dot
// CHECK: %[[M:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<1x8xf32>, tensor<8x1xf32>) outs(%{{.*}} : tensor<1x1xf32>)
// CHECK: tensor.collapse_shape %[[M]] [] : tensor<1x1xf32> into tensor<f32>
func.func @matmul_dot(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<f32> {
  %0 = nn.matmul %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Both operands broadcast a batch dim: the lhs's size-1 dim 1 and the rhs's
// size-1 dim 0 read index 0. Loops are (b0, b1, m, n, k).
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (0, d1, d4, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @matmul_broadcast_both
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3x4x5xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<2x1x4x8xf32>, tensor<1x3x8x5xf32>) outs(%[[Z]] : tensor<2x3x4x5xf32>)
func.func @matmul_broadcast_both(%a: tensor<2x1x4x8xf32>, %b: tensor<1x3x8x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = nn.matmul %a, %b : (tensor<2x1x4x8xf32>, tensor<1x3x8x5xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// A missing leading batch dim on the rhs and a size-1 one on the lhs.
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-LABEL: func.func @matmul_broadcast_rank
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #{{.*}}]
// CHECK-SAME: outs(%{{.*}} : tensor<2x3x4x5xf32>)
func.func @matmul_broadcast_rank(%a: tensor<2x1x4x8xf32>, %b: tensor<3x8x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = nn.matmul %a, %b : (tensor<2x1x4x8xf32>, tensor<3x8x5xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// Integer batched matmul with equal batch dims: a linalg.batch_matmul
// accumulating into integer zeros.
// CHECK-LABEL: func.func @matmul_i32
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: %[[Z:.*]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.*}} : tensor<2x4x5xi32>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x8xi32>, tensor<2x8x5xi32>) outs(%[[Z]] : tensor<2x4x5xi32>)
func.func @matmul_i32(%a: tensor<2x4x8xi32>, %b: tensor<2x8x5xi32>) -> tensor<2x4x5xi32> {
  %0 = nn.matmul %a, %b : (tensor<2x4x8xi32>, tensor<2x8x5xi32>) -> tensor<2x4x5xi32>
  return %0 : tensor<2x4x5xi32>
}

// -----

// 2-D integer matmul stays a named linalg.matmul.
// CHECK-LABEL: func.func @matmul_i8_2d
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i8
// CHECK: %[[Z:.*]] = linalg.fill ins(%[[ZERO]] : i8) outs(%{{.*}} : tensor<4x5xi8>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xi8>, tensor<8x5xi8>) outs(%[[Z]] : tensor<4x5xi8>)
func.func @matmul_i8_2d(%a: tensor<4x8xi8>, %b: tensor<8x5xi8>) -> tensor<4x5xi8> {
  %0 = nn.matmul %a, %b : (tensor<4x8xi8>, tensor<8x5xi8>) -> tensor<4x5xi8>
  return %0 : tensor<4x5xi8>
}

// -----

// 1-D conv: loops (n, g, m, c, k, o), the output row innermost; no padding,
// no bias.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d4 + d5)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d2, d3, d4)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>
// CHECK-LABEL: func.func @conv_1d
// CHECK-NOT: tensor.pad
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} output_shape [1, 1, 2, 10] : tensor<20xf32> into tensor<1x1x2x10xf32>
// CHECK: %[[F:.*]] = tensor.expand_shape %{{.*}} output_shape [1, 4, 2, 3] : tensor<24xf32> into tensor<1x4x2x3xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x1x4x8xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%[[X]], %[[F]] : tensor<1x1x2x10xf32>, tensor<1x4x2x3xf32>) outs(%[[Z]] : tensor<1x1x4x8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.expand_shape %{{.*}} output_shape [1, 4, 8] : tensor<32xf32> into tensor<1x4x8xf32>
func.func @conv_1d(%x: tensor<1x2x10xf32>, %w: tensor<4x2x3xf32>) -> tensor<1x4x8xf32> {
  %0 = nn.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x2x10xf32>, tensor<4x2x3xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// -----

// 3-D conv with a bias: the accumulator starts from the bias broadcast over
// (n, g, m, o...) (its [1, 1, M, 1, 1, 1] view reads index 0 off the channel dims).
// CHECK-DAG: #[[BIAS:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, 0, 0, 0)>
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d0, d1, d5, d3 + d6, d4 + d7, d8 + d9)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d1, d2, d5, d6, d7, d8)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) -> (d0, d1, d2, d3, d4, d9)>
// CHECK-LABEL: func.func @conv_3d_bias
// CHECK: %[[B:.*]] = tensor.expand_shape %{{.*}} output_shape [1, 1, 2, 1, 1, 1] : tensor<2xf32> into tensor<1x1x2x1x1x1xf32>
// CHECK: %[[INIT:.*]] = linalg.generic {indexing_maps = [#[[BIAS]], #{{.*}}], {{.*}} ins(%[[B]] : tensor<1x1x2x1x1x1xf32>) outs(%{{.*}} : tensor<1x1x2x3x4x5xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<1x1x1x4x5x6xf32>, tensor<1x2x1x2x2x2xf32>) outs(%[[INIT]] : tensor<1x1x2x3x4x5xf32>)
// CHECK: tensor.expand_shape %{{.*}} into tensor<1x2x3x4x5xf32>
func.func @conv_3d_bias(%x: tensor<1x1x4x5x6xf32>, %w: tensor<2x1x2x2x2xf32>, %b: tensor<2xf32>) -> tensor<1x2x3x4x5xf32> {
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<1x1x4x5x6xf32>, tensor<2x1x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x3x4x5xf32>
  return %0 : tensor<1x2x3x4x5xf32>
}

// -----

// Asymmetric pads [2, 0] (begin) and [1, 1] (end): the patches [n, c, kh,
// kw, oh, ow] read the unpadded input at (oh + kh - 2, ow + kw), with zeros
// where that falls outside (one unsigned compare per dim covers both ends),
// and the conv is a matmul of the filter [1, 9] with the patches [9, 24].
// CHECK-LABEL: func.func @conv_asymmetric_pads
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x5x5xf32>
// CHECK-NOT: tensor.pad
// CHECK: %[[PATCHES:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x3x3x6x4xf32>)
// CHECK: %[[KH:.*]] = linalg.index 2
// CHECK: %[[OH:.*]] = linalg.index 4
// CHECK: %[[H0:.*]] = arith.addi %{{.*}}, %{{.*}}
// CHECK: %[[H:.*]] = arith.subi %[[H0]], %c2
// CHECK: %[[HOK:.*]] = arith.cmpi ult, %[[H]], %c5
// CHECK: %[[HC:.*]] = arith.select %[[HOK]], %[[H]], %c0
// CHECK: %[[WOK:.*]] = arith.cmpi ult, %{{.*}}, %c5
// CHECK: %[[OK:.*]] = arith.andi %{{.*}}, %[[WOK]]
// CHECK: %[[V:.*]] = tensor.extract %[[X]][%{{.*}}, %{{.*}}, %[[HC]], %{{.*}}]
// CHECK: %[[R:.*]] = arith.select %[[OK]], %[[V]], %{{.*}} : f32
// CHECK: linalg.yield %[[R]]
// CHECK: tensor.collapse_shape %[[PATCHES]]
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<1x9xf32>, tensor<9x24xf32>) outs(%{{.*}} : tensor<1x24xf32>)
// CHECK: tensor.expand_shape %{{.*}} output_shape [1, 1, 6, 4]
func.func @conv_asymmetric_pads(%x: tensor<1x1x5x5xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x6x4xf32> {
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 2, 0, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x6x4xf32>
  return %0 : tensor<1x1x6x4xf32>
}

// -----

// Depthwise (group = channels, one filter each), stride 1: one elementwise
// op summing, over the 9 taps, the input window at the tap's offset times the
// tap's per-channel weight (a [3] column of the filter seen as [3, 9]).
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @conv_depthwise
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x5x5xf32>
// CHECK: %[[W:.*]] = tensor.expand_shape %{{.*}} output_shape [3, 9]
// CHECK: %[[X00:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 0] [1, 3, 3, 3] [1, 1, 1, 1]
// CHECK: %[[W00:.*]] = tensor.extract_slice %[[W]][0, 0] [3, 1] [1, 1] : tensor<3x9xf32> to tensor<3xf32>
// CHECK: tensor.extract_slice %[[X]][0, 0, 0, 1] [1, 3, 3, 3] [1, 1, 1, 1]
// CHECK: %[[X22:.*]] = tensor.extract_slice %[[X]][0, 0, 2, 2] [1, 3, 3, 3] [1, 1, 1, 1]
// CHECK: %[[W22:.*]] = tensor.extract_slice %[[W]][0, 8] [3, 1] [1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[CH]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[X00]], %[[W00]], {{.*}}, %[[X22]], %[[W22]] : {{.*}}) outs(%{{.*}} : tensor<1x3x3x3xf32>)
// The taps in three chains of multiply-adds that may contract into FMAs,
// whose sums are added pairwise: not one chain of nine dependent adds.
// CHECK: %[[P0:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: %[[P1:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: %[[S0:.*]] = arith.addf %[[P0]], %[[P1]] fastmath<contract> : f32
// CHECK: %[[P2:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: %[[G0:.*]] = arith.addf %[[S0]], %[[P2]] fastmath<contract> : f32
// CHECK: %[[P3:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: %[[P4:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: %[[S1:.*]] = arith.addf %[[P3]], %[[P4]] fastmath<contract> : f32
// CHECK: %[[P5:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: %[[G1:.*]] = arith.addf %[[S1]], %[[P5]] fastmath<contract> : f32
// CHECK: %[[P6:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: %[[P7:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: %[[S2:.*]] = arith.addf %[[P6]], %[[P7]] fastmath<contract> : f32
// CHECK: %[[P8:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK: %[[G2:.*]] = arith.addf %[[S2]], %[[P8]] fastmath<contract> : f32
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[G0]], %[[G1]] : f32
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[T]], %[[G2]] : f32
// CHECK-NEXT: linalg.yield %[[Y]]
// CHECK-NOT: tensor.pad
func.func @conv_depthwise(%x: tensor<1x3x5x5xf32>, %w: tensor<3x1x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 3 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x5x5xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x3x3xf32>
  return %0 : tensor<1x3x3x3xf32>
}

// -----

// Transposed conv with groups = 2, strides 2, dilations [1, 2], pads
// [1, 0, 2, 1] and output_padding [1, 0]:
// - the input is spread by the strides: 3 -> (3 - 1) * 2 + 1 = 5 per dim;
// - the low pad is the filter reach minus the begin pad: H 2 - 1 = 1,
//   W (3 - 1) * 2 - 0 = 4; the high pad fills the output (5 and 8, output
//   padding included): H 5 + 2 - 5 - 1 = 1, W 8 + 4 - 5 - 4 = 3;
// - the [C, M/g, K, K] = [4, 3, 3, 3] filter is viewed as [g, C/g, M/g, K, K],
//   read transposed to [g, M/g, C/g, K, K] and flipped (K - 1 - k);
// - a stride-1 grouped conv with the dilations follows, starting from the bias.
// CHECK-DAG: #[[ID5:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d4, d3 + d5, d7 + d6 * 2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d4, d5, d6)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d7)>
// CHECK-LABEL: func.func @conv_transpose_groups
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x3x3xf32>, %[[WT:.*]]: tensor<4x3x3x3xf32>, %[[B:.*]]: tensor<6xf32>)
// CHECK: %[[WV:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 2, 3, 3, 3] : tensor<108xf32> into tensor<2x2x3x3x3xf32>
// CHECK: %[[FL:.*]] = linalg.generic {indexing_maps = [#[[ID5]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<2x3x2x3x3xf32>)
// CHECK: tensor.extract %[[WV]][%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<2x2x3x3x3xf32>
// CHECK: tensor.collapse_shape %[[FL]]
// CHECK: tensor.expand_shape %{{.*}} output_shape [6, 2, 3, 3] : tensor<108xf32> into tensor<6x2x3x3xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x5x5xf32>)
// CHECK: %[[S:.*]] = tensor.insert_slice %[[X]] into %[[Z]][0, 0, 0, 0] [1, 4, 3, 3] [1, 1, 2, 2] : tensor<1x4x3x3xf32> into tensor<1x4x5x5xf32>
// CHECK: %[[P:.*]] = tensor.pad %[[S]] low[0, 0, 1, 4] high[0, 0, 1, 3]
// CHECK: } : tensor<1x4x5x5xf32> to tensor<1x4x7x12xf32>
// CHECK: tensor.collapse_shape %[[P]]
// CHECK: %[[XG:.*]] = tensor.expand_shape %{{.*}} output_shape [1, 2, 2, 7, 12] : tensor<336xf32> into tensor<1x2x2x7x12xf32>
// CHECK: %[[WG:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 3, 2, 3, 3] : tensor<108xf32> into tensor<2x3x2x3x3xf32>
// CHECK: %[[BV:.*]] = tensor.expand_shape %[[B]] {{.*}} output_shape [1, 2, 3, 1, 1]
// CHECK: %[[INIT:.*]] = linalg.generic {{.*}} ins(%[[BV]] : tensor<1x2x3x1x1xf32>) outs(%{{.*}} : tensor<1x2x3x5x8xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%[[XG]], %[[WG]] : tensor<1x2x2x7x12xf32>, tensor<2x3x2x3x3xf32>) outs(%[[INIT]] : tensor<1x2x3x5x8xf32>)
// CHECK: tensor.expand_shape %{{.*}} output_shape [1, 6, 5, 8] : tensor<240xf32> into tensor<1x6x5x8xf32>
func.func @conv_transpose_groups(%x: tensor<1x4x3x3xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x5x8xf32> {
  %0 = nn.conv_transpose %x, %w, %b {dilations = array<i64: 1, 2>, group = 2 : i64, output_padding = array<i64: 1, 0>, pads = array<i64: 1, 0, 2, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x5x8xf32>
  return %0 : tensor<1x6x5x8xf32>
}

// -----

// A begin pad larger than the filter reach crops the (spread) input instead:
// reach 1 - pad 2 = -1 drops its first element.
// CHECK-LABEL: func.func @conv_transpose_crop
// CHECK: %[[S:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [1, 1, 4] [1, 1, 1] : tensor<1x1x4xf32> into tensor<1x1x4xf32>
// CHECK-NOT: tensor.pad
// CHECK: tensor.extract_slice %[[S]][0, 0, 1] [1, 1, 3] [1, 1, 1] : tensor<1x1x4xf32> to tensor<1x1x3xf32>
func.func @conv_transpose_crop(%x: tensor<1x1x4xf32>, %w: tensor<1x1x2xf32>) -> tensor<1x1x2xf32> {
  %0 = nn.conv_transpose %x, %w {dilations = array<i64: 1>, group = 1 : i64, output_padding = array<i64: 0>, pads = array<i64: 2, 1>, strides = array<i64: 1>} : (tensor<1x1x4xf32>, tensor<1x1x2xf32>) -> tensor<1x1x2xf32>
  return %0 : tensor<1x1x2xf32>
}

// -----

// Max pool over signed integers pads with the lowest value and uses maxsi.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @max_pool_i8
// CHECK: %[[LOW:.*]] = arith.constant -128 : i8
// CHECK: %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[LOW]] : i8
// CHECK: %[[WIN:.*]] = tensor.empty() : tensor<2x2xi8>
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[LOW]] : i8) outs(%{{.*}} : tensor<1x1x3x3xi8>)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[K]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[P]], %[[WIN]] : tensor<1x1x6x6xi8>, tensor<2x2xi8>) outs(%[[INIT]] : tensor<1x1x3x3xi8>)
// CHECK: ^bb0(%[[V:.*]]: i8, %{{.*}}: i8, %[[ACC:.*]]: i8):
// CHECK-NEXT: %[[M:.*]] = arith.maxsi %[[ACC]], %[[V]] : i8
// CHECK-NEXT: linalg.yield %[[M]] : i8
func.func @max_pool_i8(%x: tensor<1x1x4x4xi8>) -> tensor<1x1x3x3xi8> {
  %0 = nn.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xi8>) -> tensor<1x1x3x3xi8>
  return %0 : tensor<1x1x3x3xi8>
}

// -----

// Unsigned: the lowest value is 0 and the comparison unsigned.
// CHECK-LABEL: func.func @max_pool_ui8
// CHECK-SAME: (%{{.*}}: tensor<1x1x4x4xi8>) -> tensor<1x1x3x3xi8>
// CHECK: %[[LOW:.*]] = arith.constant 0 : i8
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[LOW]] : i8
// CHECK: linalg.fill ins(%[[LOW]] : i8)
// CHECK: ^bb0(%[[V:.*]]: i8, %{{.*}}: i8, %[[ACC:.*]]: i8):
// CHECK-NEXT: %[[M:.*]] = arith.maxui %[[ACC]], %[[V]] : i8
func.func @max_pool_ui8(%x: tensor<1x1x4x4xui8>) -> tensor<1x1x3x3xui8> {
  %0 = nn.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xui8>) -> tensor<1x1x3x3xui8>
  return %0 : tensor<1x1x3x3xui8>
}

// -----

// Max pool over i32: the lowest value is INT32_MIN.
// CHECK-LABEL: func.func @max_pool_i32
// CHECK: %[[LOW:.*]] = arith.constant -2147483648 : i32
// CHECK: linalg.fill ins(%[[LOW]] : i32)
// CHECK: arith.maxsi
func.func @max_pool_i32(%x: tensor<1x1x4x4xi32>) -> tensor<1x1x2x2xi32> {
  %0 = nn.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xi32>) -> tensor<1x1x2x2xi32>
  return %0 : tensor<1x1x2x2xi32>
}

// -----

// count_include_pad counts the pads but not the extra ceil_mode window part
// past them: in 4, pads 1 + 1, kernel 3, stride 2 -> 3 windows per dim
// covering 3, 3 and 2 positions of the padded [-1, 5) range. The tensor is
// padded by one more zero row and column for that last window.
// CHECK-LABEL: func.func @avg_pool_count_include_pad
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 2, 2]
// CHECK: tensor.yield %[[ZERO]] : f32
// CHECK: } : tensor<1x1x4x4xf32> to tensor<1x1x7x7xf32>
// The f32 sum is one elementwise op over the nine taps' windows (strided
// by 2 in rows and columns), added pairwise.
// CHECK: tensor.extract_slice %[[P]][0, 0, 0, 0] [1, 1, 3, 3] [1, 1, 2, 2] : tensor<1x1x7x7xf32> to tensor<1x1x3x3xf32>
// CHECK: tensor.extract_slice %[[P]][0, 0, 2, 2] [1, 1, 3, 3] [1, 1, 2, 2]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x3x3xf32>)
// CHECK-COUNT-8: arith.addf
// The divisor is a product of per-dim counts: the last window (ceil_mode)
// reaches 2 of its 3 taps into the padded input, the others all 3.
// CHECK-DAG: %[[ROWS:.*]] = arith.constant dense<{{\[\[\[\[}}3.000000e+00], [3.000000e+00], [2.000000e+00]]]]> : tensor<1x1x3x1xf32>
// CHECK-DAG: %[[COLS:.*]] = arith.constant dense<{{\[\[\[\[}}3.000000e+00, 3.000000e+00, 2.000000e+00]]]]> : tensor<1x1x1x3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[SUM]], %[[ROWS]], %[[COLS]] : tensor<1x1x3x3xf32>, tensor<1x1x3x1xf32>, tensor<1x1x1x3xf32>)
// CHECK: ^bb0(%[[S:.*]]: f32, %[[R:.*]]: f32, %[[C:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[D:.*]] = arith.mulf %[[R]], %[[C]] : f32
// CHECK-NEXT: arith.divf %[[S]], %[[D]] : f32
func.func @avg_pool_count_include_pad(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32> {
  %0 = nn.avg_pool %x {ceil_mode = true, count_include_pad = true, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// The same windows without count_include_pad count only real input: 2, 3
// and 1 positions per dim.
// CHECK-LABEL: func.func @avg_pool_exclude_pad_ceil
// CHECK-DAG: arith.constant dense<{{\[\[\[\[}}2.000000e+00], [3.000000e+00], [1.000000e+00]]]]> : tensor<1x1x3x1xf32>
// CHECK-DAG: arith.constant dense<{{\[\[\[\[}}2.000000e+00, 3.000000e+00, 1.000000e+00]]]]> : tensor<1x1x1x3xf32>
func.func @avg_pool_exclude_pad_ceil(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32> {
  %0 = nn.avg_pool %x {ceil_mode = true, count_include_pad = false, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// Dilated pooling: the window offset is scaled by the dilation (k * 2); the
// reach (3 - 1) * 2 + 1 = 5 fits the input, so there is no padding.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 + d3 * 2)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @max_pool_dilated
// CHECK-NOT: tensor.pad
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[K]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x2x7xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<1x2x3xf32>)
// CHECK: arith.maximumf
func.func @max_pool_dilated(%x: tensor<1x2x7xf32>) -> tensor<1x2x3xf32> {
  %0 = nn.max_pool %x {ceil_mode = false, dilations = array<i64: 2>, kernel = array<i64: 3>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x2x7xf32>) -> tensor<1x2x3xf32>
  return %0 : tensor<1x2x3xf32>
}

// -----

// Dilated average pool with pads: the divisor counts the dilated taps that land
// on real input (in 5, pad 2 + 2, kernel 2, dilation 3, stride 2: windows at
// -2 and 1, 0 and 3, 2 and 5 -> 1, 2, 1 taps).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 * 2 + d3 * 3)>
// CHECK-LABEL: func.func @avg_pool_dilated
// CHECK: tensor.pad %{{.*}} low[0, 0, 2] high[0, 0, 1]
// CHECK: } : tensor<1x1x5xf32> to tensor<1x1x8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #{{.*}}, #{{.*}}]
// CHECK: arith.constant dense<{{\[\[}}[1.000000e+00, 2.000000e+00, 1.000000e+00]]]> : tensor<1x1x3xf32>
func.func @avg_pool_dilated(%x: tensor<1x1x5xf32>) -> tensor<1x1x3xf32> {
  %0 = nn.avg_pool %x {ceil_mode = false, count_include_pad = false, dilations = array<i64: 3>, kernel = array<i64: 2>, pads = array<i64: 2, 2>, strides = array<i64: 2>} : (tensor<1x1x5xf32>) -> tensor<1x1x3xf32>
  return %0 : tensor<1x1x3xf32>
}

// -----

// Einsum broadcasting: the lhs's size-1 'b' reads index 0.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d1, d3)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @einsum_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x2x3xf32>, tensor<4x3x5xf32>) outs(%{{.*}} : tensor<4x2x5xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
func.func @einsum_broadcast(%a: tensor<1x2x3xf32>, %b: tensor<4x3x5xf32>) -> tensor<4x2x5xf32> {
  %0 = nn.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<1x2x3xf32>, tensor<4x3x5xf32>) -> tensor<4x2x5xf32>
  return %0 : tensor<4x2x5xf32>
}

// -----

// A repeated letter reads the diagonal: one loop indexes both dims.
// CHECK-DAG: #[[DIAG:.*]] = affine_map<(d0) -> (d0, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @einsum_diagonal
// CHECK: linalg.generic {indexing_maps = [#[[DIAG]], #[[OUT]]], iterator_types = ["parallel"]} ins(%{{.*}} : tensor<3x3xf32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
func.func @einsum_diagonal(%a: tensor<3x3xf32>) -> tensor<3xf32> {
  %0 = nn.einsum %a {equation = "ii->i"} : (tensor<3x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// A batched trace: the repeated letter is also contracted; integers use addi.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d0, d1, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @einsum_trace_i32
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
// CHECK: arith.addi
func.func @einsum_trace_i32(%a: tensor<2x3x3xi32>) -> tensor<2xi32> {
  %0 = nn.einsum %a {equation = "bii->b"} : (tensor<2x3x3xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// 32 output channels over a 7x7 output (49, not a multiple of 32): the conv
// is computed transposed, out^T [49, 32] = patches^T [49, 144] x filter^T
// [144, 32], starting from the bias broadcast along rows, then copied back
// into NCHW. Patches are read in (oh, ow, c, kh, kw) order; no window leaves
// the input, so they are a plain mapped copy.
// CHECK-DAG: #[[PT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (0, d2, d0 + d3, d1 + d4)>
// CHECK-DAG: #[[SWAP:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[ROWB:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[BACK:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3, d1)>
// CHECK-LABEL: func.func @conv_channels_on_vector
// CHECK: linalg.generic {indexing_maps = [#[[PT]], {{.*}} ins(%{{.*}} : tensor<1x16x9x9xf32>) outs(%{{.*}} : tensor<7x7x16x3x3xf32>)
// CHECK: %[[WT:.*]] = linalg.generic {indexing_maps = [#[[SWAP]], {{.*}} ins(%{{.*}} : tensor<32x144xf32>) outs(%{{.*}} : tensor<144x32xf32>)
// CHECK: %[[INIT:.*]] = linalg.generic {indexing_maps = [#[[ROWB]], {{.*}} ins(%{{.*}} : tensor<1x32xf32>) outs(%{{.*}} : tensor<49x32xf32>)
// CHECK: %[[PROD:.*]] = linalg.matmul ins(%{{.*}}, %[[WT]] : tensor<49x144xf32>, tensor<144x32xf32>) outs(%[[INIT]] : tensor<49x32xf32>)
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %[[PROD]] {{.*}} : tensor<49x32xf32> into tensor<7x7x32xf32>
// CHECK: linalg.generic {indexing_maps = [#[[BACK]], {{.*}} ins(%[[ROWS]] : tensor<7x7x32xf32>) outs(%{{.*}} : tensor<1x32x7x7xf32>)
func.func @conv_channels_on_vector(%x: tensor<1x16x9x9xf32>, %w: tensor<32x16x3x3xf32>, %b: tensor<32xf32>) -> tensor<1x32x7x7xf32> {
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x16x9x9xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<1x32x7x7xf32>
  return %0 : tensor<1x32x7x7xf32>
}
