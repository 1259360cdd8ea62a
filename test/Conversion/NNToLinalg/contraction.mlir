// RUN: nnc-opt %s --nnc-convert-nn-to-linalg --split-input-file | FileCheck %s

// A 2-D matmul is linalg.matmul accumulating into zeros.
// CHECK-LABEL: func.func @matmul_2d
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x5xf32>)
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x5xf32>)
// CHECK: linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x5xf32>) outs(%[[Z]] : tensor<4x5xf32>)
func.func @matmul_2d(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>) -> tensor<4x5xf32> {
  %0 = nn.matmul %a, %b : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// A stack of matrices times one matrix is one matmul: the lhs [3, 4, 8] is
// viewed as [12, 8] and the result reshaped back.
// CHECK-LABEL: func.func @matmul_stacked
// CHECK: %[[A2:.*]] = tensor.expand_shape %{{.*}} output_shape [12, 8]
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[A2]], %{{.*}} : tensor<12x8xf32>, tensor<8x5xf32>) outs(%{{.*}} : tensor<12x5xf32>)
// CHECK: tensor.collapse_shape %[[P]]
// CHECK: tensor.expand_shape %{{.*}} output_shape [3, 4, 5]
func.func @matmul_stacked(%a: tensor<3x4x8xf32>, %b: tensor<8x5xf32>) -> tensor<3x4x5xf32> {
  %0 = nn.matmul %a, %b : (tensor<3x4x8xf32>, tensor<8x5xf32>) -> tensor<3x4x5xf32>
  return %0 : tensor<3x4x5xf32>
}

// -----

// Batched with a broadcast batch dim: loops (b0, b1, m, n, k); the lhs batch
// of one is read at index 0.
// CHECK-DAG: #[[LHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (0, d1, d2, d4)>
// CHECK-DAG: #[[RHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @matmul_batched
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @matmul_batched(%a: tensor<1x3x4x8xf32>, %b: tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = nn.matmul %a, %b : (tensor<1x3x4x8xf32>, tensor<2x3x8x5xf32>) -> tensor<2x3x4x5xf32>
  return %0 : tensor<2x3x4x5xf32>
}

// -----

// Conv: explicit padding (the trailing pad no window reaches is dropped: 3
// windows of reach 5 at stride 2 cover 9 of the 10 padded rows), groups
// exposed as a dim, strides and dilations in the input map. Loops are
// (n, g, m, oh, c, kh, kw, ow): the output row is innermost.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d4, d3 * 2 + d5 * 2, d7 * 2 + d6 * 2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d4, d5, d6)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d7)>
// CHECK-LABEL: func.func @conv_grouped
// CHECK: %[[P:.*]] = tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 0, 0]
// CHECK: %[[X:.*]] = tensor.expand_shape %{{.*}} output_shape [1, 2, 2, 9, 9] : tensor<{{.*}}> into tensor<1x2x2x9x9xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%[[X]], %{{.*}} : tensor<1x2x2x9x9xf32>, tensor<2x2x2x3x3xf32>) outs(%{{.*}} : tensor<1x2x2x3x3xf32>)
// CHECK: tensor.expand_shape {{.*}} into tensor<1x4x3x3xf32>
func.func @conv_grouped(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x3x3xf32> {
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 2, 2>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// -----

// Strided transposed conv, by output phase: the even output rows (4) take
// filter taps 0 and 2 of the flipped filter, reading input rows q - 1 and q
// (one zero row above and below); the odd ones (3) tap 1 alone, at row q.
// Each phase's stride-1 convolution is written to every other row and column.
// CHECK-LABEL: func.func @conv_transpose
// CHECK: tensor.extract_slice %[[FLIP:.*]][0, 0, 0, 0] [3, 2, 2, 2] [1, 1, 2, 2] : tensor<3x2x3x3xf32> to tensor<3x2x2x2xf32>
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[P00:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 3, 4, 4] [1, 1, 2, 2] : tensor<1x3x4x4xf32> into tensor<1x3x7x7xf32>
// CHECK: tensor.extract_slice %[[FLIP]][0, 0, 0, 1] [3, 2, 2, 1] [1, 1, 2, 1]
// CHECK: %[[P01:.*]] = tensor.insert_slice %{{.*}} into %[[P00]][0, 0, 0, 1] [1, 3, 4, 3] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[FLIP]][0, 0, 1, 0] [3, 2, 1, 2] [1, 1, 1, 2]
// CHECK: %[[P10:.*]] = tensor.insert_slice %{{.*}} into %[[P01]][0, 0, 1, 0] [1, 3, 3, 4] [1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[FLIP]][0, 0, 1, 1] [3, 2, 1, 1] [1, 1, 1, 1]
// CHECK: %[[P11:.*]] = tensor.insert_slice %{{.*}} into %[[P10]][0, 0, 1, 1] [1, 3, 3, 3] [1, 1, 2, 2]
// CHECK: return %[[P11]] : tensor<1x3x7x7xf32>
func.func @conv_transpose(%x: tensor<1x2x3x3xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x3x7x7xf32> {
  %0 = nn.conv_transpose %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x3x3xf32>, tensor<2x3x3x3xf32>) -> tensor<1x3x7x7xf32>
  return %0 : tensor<1x3x7x7xf32>
}

// -----

// Kernel equal to the strides (no pads): each input pixel becomes its own
// output block. A matmul of the transposed filter [M*kh*kw, C] by the input
// [C, H*W], then one copy that places the blocks and adds the bias.
// CHECK-DAG: #[[SWAP:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[PLACE:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d5, d2, d4)>
// CHECK-DAG: #[[CHANNEL:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1)>
// CHECK-LABEL: func.func @conv_transpose_blocks
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x3x5xf32>, %[[W:.*]]: tensor<4x6x2x2xf32>, %[[B:.*]]: tensor<6xf32>)
// CHECK: %[[WT:.*]] = linalg.generic {indexing_maps = [#[[SWAP]], #{{.*}}]{{.*}} ins(%{{.*}} : tensor<4x24xf32>) outs(%{{.*}} : tensor<24x4xf32>)
// CHECK-NOT: tensor.pad
// CHECK: %[[R:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<24x4xf32>, tensor<4x15xf32>)
// CHECK: %[[BLOCKS:.*]] = tensor.expand_shape %{{.*}} output_shape [1, 6, 2, 2, 3, 5]
// CHECK: linalg.generic {indexing_maps = [#[[PLACE]], #[[CHANNEL]], #{{.*}}]{{.*}} ins(%[[BLOCKS]], %[[B]] : tensor<1x6x2x2x3x5xf32>, tensor<6xf32>) outs(%{{.*}} : tensor<1x6x3x2x5x2xf32>)
// CHECK: arith.addf
// CHECK: tensor.expand_shape %{{.*}} output_shape [1, 6, 6, 10]
func.func @conv_transpose_blocks(%x: tensor<1x4x3x5xf32>, %w: tensor<4x6x2x2xf32>, %b: tensor<6xf32>) -> tensor<1x6x6x10xf32> {
  %0 = nn.conv_transpose %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x3x5xf32>, tensor<4x6x2x2xf32>, tensor<6xf32>) -> tensor<1x6x6x10xf32>
  return %0 : tensor<1x6x6x10xf32>
}

// -----

// Max pool pads with -inf, including the extra row the ceil_mode window needs.
// CHECK-LABEL: func.func @max_pool_ceil
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: tensor.pad %{{.*}} low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NINF]] : f32
// CHECK: arith.cmpf uno
// CHECK: arith.cmpf ogt
// CHECK: arith.select
func.func @max_pool_ceil(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = nn.max_pool %x {ceil_mode = true, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

// Average pool divides by the number of counted elements of each window,
// computed at compile time as a product of per-dim counts: without
// count_include_pad, a 3-tap window over a padded row of 3 covers 2 real
// elements at the ends, 3 in the middle (a corner window 2x2 = 4).
// CHECK-LABEL: func.func @avg_pool
// CHECK-DAG: %[[ROWS:.*]] = arith.constant dense<{{\[\[\[\[}}2.000000e+00], [3.000000e+00], [2.000000e+00]]]]> : tensor<1x1x3x1xf32>
// CHECK-DAG: %[[COLS:.*]] = arith.constant dense<{{\[\[\[\[}}2.000000e+00, 3.000000e+00, 2.000000e+00]]]]> : tensor<1x1x1x3xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[ROWS]], %[[COLS]] :
// CHECK: %[[N:.*]] = arith.mulf
// CHECK: arith.divf %{{.*}}, %[[N]]
func.func @avg_pool(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %0 = nn.avg_pool %x {ceil_mode = false, count_include_pad = false, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// Einsum: output letters are the parallel loops, contracted ones reductions.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @einsum
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]}
func.func @einsum(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = nn.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// A dynamic inner dim must match the weights' at run time: a check naming the
// node, which the shape function reports before a run. (With K dynamic the
// rows are not split into static chunks: one linalg.matmul.)
// CHECK-LABEL: func.func @dynamic_inner
// CHECK-DAG: %[[W:.*]] = tensor.dim %arg1, %c0 : tensor<3x4xf32>
// CHECK-DAG: %[[K:.*]] = tensor.dim %arg0, %c1 : tensor<?x?xf32>
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[K]], %[[W]] : index
// CHECK: cf.assert %[[SAME]], "node 'fc': the matrix product's inner dims differ"
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<?x?xf32>, tensor<3x4xf32>)
func.func @dynamic_inner(%x: tensor<?x?xf32>, %w: tensor<3x4xf32>) -> tensor<?x4xf32> {
  %0 = nn.matmul %x, %w : (tensor<?x?xf32>, tensor<3x4xf32>) -> tensor<?x4xf32> loc("fc")
  return %0 : tensor<?x4xf32>
}
