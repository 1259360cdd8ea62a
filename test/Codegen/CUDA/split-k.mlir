// RUN: nnc-opt %s --nnc-cuda-split-k --canonicalize | FileCheck %s

// The convolution's maps below: the split channel dim becomes (s, d) in each
// operand (s = d7, the new last dim); the partials are indexed by s first.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d7, d4, d2 + d5, d3 + d6)>
// CHECK-DAG: #[[FILTER:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d7, d4, d5, d6)>
// CHECK-DAG: #[[P:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d7, d0, d1, d2, d3)>
// The op combining them reads partial s at (s, ...): an elementwise op.
// CHECK-DAG: #[[P0:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d0, d1, d2, d3)>
// CHECK-DAG: #[[P1:.*]] = affine_map<(d0, d1, d2, d3) -> (1, d0, d1, d2, d3)>
// CHECK-DAG: #[[P15:.*]] = affine_map<(d0, d1, d2, d3) -> (15, d0, d1, d2, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>

// A late-stage convolution: 196 positions by 256 channels make 16 tiles of
// 64x64; 16 slices of the 256 input channels (144 terms each) make 256
// blocks. Both operands' channel dims are reshaped into [16, 16]; the
// partials start from -0.0 and are added to the output's previous value
// (the bias here) in slice order, by an elementwise op.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[X:.*]]: tensor<1x256x16x16xf32>, %[[W:.*]]: tensor<256x256x3x3xf32>, %[[BIAS:.*]]: tensor<1x256x14x14xf32>)
// CHECK-DAG: %[[XS:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 16, 16, 16, 16]
// CHECK-DAG: %[[WS:.*]] = tensor.expand_shape %[[W]] {{\[}}[0], [1, 2], [3], [4]] output_shape [256, 16, 16, 3, 3]
// CHECK-DAG: %[[NEG0:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%[[NEG0]] : f32) outs(%{{.*}} : tensor<16x1x256x14x14xf32>)
// CHECK: %[[PART:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[FILTER]], #[[P]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[XS]], %[[WS]] : {{.*}}) outs(%[[ZERO]] : tensor<16x1x256x14x14xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#[[P0]], #[[P1]], {{.*}}, #[[P15]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[PART]], %[[PART]], {{.*}}) outs(%[[BIAS]] : tensor<1x256x14x14xf32>)
// CHECK-NEXT: ^bb0(%[[T0:[a-z0-9_]*]]: f32, %[[T1:[a-z0-9_]*]]: f32, {{.*}}, %[[ACC:[a-z0-9_]*]]: f32):
// CHECK-NEXT: %[[S0:.*]] = arith.addf %[[ACC]], %[[T0]] : f32
// CHECK-NEXT: arith.addf %[[S0]], %[[T1]] : f32
#in = affine_map<(n, o, y, x, c, ky, kx) -> (n, c, y + ky, x + kx)>
#w = affine_map<(n, o, y, x, c, ky, kx) -> (o, c, ky, kx)>
#out = affine_map<(n, o, y, x, c, ky, kx) -> (n, o, y, x)>
func.func @conv(%x: tensor<1x256x16x16xf32>, %w: tensor<256x256x3x3xf32>, %bias: tensor<1x256x14x14xf32>) -> tensor<1x256x14x14xf32> {
  %r = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : tensor<1x256x16x16xf32>, tensor<256x256x3x3xf32>) outs(%bias : tensor<1x256x14x14xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<1x256x14x14xf32>
  return %r : tensor<1x256x14x14xf32>
}

// 128x128 outputs of 1024 terms: no split reaches enough blocks, so as many
// as keep 128 terms per partial (8). The output was zeros: the combining op
// starts from the constant instead of reading them, and the fill is gone.
// CHECK-LABEL: func.func @long_few
// CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<128x128xf32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2]] output_shape [128, 8, 128]
// CHECK-DAG: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [8, 128, 128]
// CHECK: %[[PART:.*]] = linalg.generic
// CHECK: } -> tensor<8x128x128xf32>
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<128x128xf32>
// CHECK: linalg.generic {{.*}} ins(%[[PART]], %[[PART]], %[[PART]], %[[PART]], %[[PART]], %[[PART]], %[[PART]], %[[PART]] : {{.*}}) outs(%[[EMPTY]] : tensor<128x128xf32>)
// CHECK: arith.addf %{{.*}}, %[[ZERO]]
// CHECK-COUNT-7: arith.addf
// CHECK-NEXT: linalg.yield
func.func @long_few(%a: tensor<128x1024xf32>, %b: tensor<1024x128xf32>) -> tensor<128x128xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %r = linalg.matmul ins(%a, %b : tensor<128x1024xf32>, tensor<1024x128xf32>) outs(%c : tensor<128x128xf32>) -> tensor<128x128xf32>
  return %r : tensor<128x128xf32>
}

// Enough 64x64 tiles already (256), and a max-reduction too few terms to
// split: both stay as they are.
// CHECK-LABEL: func.func @unsplit
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @unsplit(%a: tensor<1024x256xf32>, %b: tensor<256x1024xf32>, %c: tensor<1024x1024xf32>,
                   %x: tensor<64x100xf32>, %y: tensor<64x100xf32>, %m: tensor<64x64xf32>) -> (tensor<1024x1024xf32>, tensor<64x64xf32>) {
  %r = linalg.matmul ins(%a, %b : tensor<1024x256xf32>, tensor<256x1024xf32>) outs(%c : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : tensor<64x100xf32>, tensor<64x100xf32>) outs(%m : tensor<64x64xf32>) {
  ^bb0(%u: f32, %v: f32, %acc: f32):
    %p = arith.addf %u, %v : f32
    %q = arith.maximumf %acc, %p : f32
    linalg.yield %q : f32
  } -> tensor<64x64xf32>
  return %r, %s : tensor<1024x1024xf32>, tensor<64x64xf32>
}

// 32x32 outputs of 2062 terms: only a split in 2 divides (2062 = 2 x 1031),
// and the halves would still be too few blocks for the tiled schedule, so
// splitting would only add a pass. It stays whole.
// CHECK-LABEL: func.func @pointless
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.matmul
func.func @pointless(%a: tensor<32x2062xf32>, %b: tensor<2062x32xf32>, %c: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<32x2062xf32>, tensor<2062x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}
