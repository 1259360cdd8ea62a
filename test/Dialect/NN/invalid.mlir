// RUN: nnc-opt %s -split-input-file -verify-diagnostics

func.func @broadcast(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  // expected-error @+2 {{'nn.add' op expected broadcastable shapes (got 2x3 and 4)}}
  // expected-error @+1 {{'nn.add' op failed to infer returned types}}
  %0 = nn.add %x, %y : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @element_types(%x: tensor<2xf32>, %y: tensor<2xf64>) {
  // expected-error @+2 {{'nn.mul' op expected operands of one element type}}
  // expected-error @+1 {{'nn.mul' op failed to infer returned types}}
  %0 = nn.mul %x, %y : (tensor<2xf32>, tensor<2xf64>) -> tensor<2xf32>
  return
}

// -----

func.func @wrong_result(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'nn.exp' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x2xf32>'}}
  // expected-error @+1 {{'nn.exp' op failed to infer returned types}}
  %0 = nn.exp %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}

// -----

func.func @float_only(%x: tensor<2xi32>) {
  // expected-error @+1 {{'nn.exp' op operand #0 must be ranked tensor of floating-point values}}
  %0 = nn.exp %x : (tensor<2xi32>) -> tensor<2xi32>
  return
}

// -----

func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<7x2xf32>) {
  // expected-error @+2 {{'nn.matmul' op expected matching contraction dims (got 4x8 and 7x2)}}
  // expected-error @+1 {{'nn.matmul' op failed to infer returned types}}
  %0 = nn.matmul %a, %b : (tensor<4x8xf32>, tensor<7x2xf32>) -> tensor<4x2xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+2 {{'nn.conv' op expected input channels (3) = filter channels (2) * group (1)}}
  // expected-error @+1 {{'nn.conv' op failed to infer returned types}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_pads(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{'nn.conv' op expected 4 pads (got 2)}}
  // expected-error @+1 {{'nn.conv' op failed to infer returned types}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+2 {{'nn.conv' op expected 'bias' of shape 4 (got 5)}}
  // expected-error @+1 {{'nn.conv' op failed to infer returned types}}
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<5xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @pool_window(%x: tensor<1x3x2x2xf32>) {
  // expected-error @+2 {{'nn.max_pool' op expected the window to fit in the padded input along dim 2}}
  // expected-error @+1 {{'nn.max_pool' op failed to infer returned types}}
  %0 = nn.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<3x8xf32>) {
  // expected-error @+2 {{'nn.avg_pool' op expected input rank >= 3 (got 2)}}
  // expected-error @+1 {{'nn.avg_pool' op failed to infer returned types}}
  %0 = nn.avg_pool %x {ceil_mode = false, count_include_pad = false, dilations = array<i64: 1>, kernel = array<i64: 2>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<3x8xf32>) -> tensor<3x7xf32>
  return
}

// -----

func.func @reshape_two_inferred(%x: tensor<2x3x4xf32>) {
  %s = nn.constant {value = dense<[-1, -1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+2 {{'nn.reshape' op expected at most one -1 in 'shape'}}
  // expected-error @+1 {{'nn.reshape' op failed to infer returned types}}
  %0 = nn.reshape %x, %s {allowzero = false} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3x4xf32>) {
  %s = nn.constant {value = dense<[5, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+2 {{'nn.reshape' op expected 24 elements in the result shape 5x5 (got 25)}}
  // expected-error @+1 {{'nn.reshape' op failed to infer returned types}}
  %0 = nn.reshape %x, %s {allowzero = false} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<5x5xf32>
  return
}

// -----

func.func @reshape_dynamic_length(%x: tensor<2x3xf32>, %s: tensor<?xi64>) {
  // expected-error @+2 {{'nn.reshape' op expected a 1-D 'shape' of static length}}
  // expected-error @+1 {{'nn.reshape' op failed to infer returned types}}
  %0 = nn.reshape %x, %s {allowzero = false} : (tensor<2x3xf32>, tensor<?xi64>) -> tensor<6xf32>
  return
}

// -----

func.func @transpose(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'nn.transpose' op expected 'perm' to be a permutation}}
  // expected-error @+1 {{'nn.transpose' op failed to infer returned types}}
  %0 = nn.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @concat(%x: tensor<2x3xf32>, %y: tensor<4x3xf32>) {
  // expected-error @+2 {{'nn.concat' op expected operands to agree on dim 0}}
  // expected-error @+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %x, %y {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @split(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{'nn.split' op expected sizes to add up to 8 (got 7)}}
  // expected-error @+1 {{'nn.split' op failed to infer returned types}}
  %0:2 = nn.split %x {axis = 1 : i64, sizes = array<i64: 3, 4>} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @squeeze(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{'nn.squeeze' op expected squeezed dim 0 to have size 1 (got 2)}}
  // expected-error @+1 {{'nn.squeeze' op failed to infer returned types}}
  %0 = nn.squeeze %x {axes = array<i64: 0>} : (tensor<2x8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @reduce_axes(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{'nn.reduce_sum' op expected strictly increasing axes}}
  // expected-error @+1 {{'nn.reduce_sum' op failed to infer returned types}}
  %0 = nn.reduce_sum %x {axes = array<i64: 1, 0>, keepdims = false} : (tensor<2x8xf32>) -> tensor<f32>
  return
}

// -----

func.func @reduce_range(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{'nn.reduce_max' op expected axes in [0, 2) (got 2)}}
  // expected-error @+1 {{'nn.reduce_max' op failed to infer returned types}}
  %0 = nn.reduce_max %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{'nn.softmax' op expected axis in [0, 2) (got 2)}}
  // expected-error @+1 {{'nn.softmax' op failed to infer returned types}}
  %0 = nn.softmax %x {axis = 2 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @mod_float(%x: tensor<2xf32>) {
  // expected-error @+1 {{'nn.mod' op expected fmod = true for floating-point operands}}
  %0 = nn.mod %x, %x {fmod = false} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

func.func @pad_mode(%x: tensor<2xf32>, %p: tensor<2xi64>, %v: tensor<f32>) {
  // expected-error @+1 {{'nn.pad' op expected mode 'constant', 'reflect', 'edge' or 'wrap' (got 'mirror')}}
  %0 = nn.pad %x, %p, %v {mode = "mirror"} : (tensor<2xf32>, tensor<2xi64>, tensor<f32>) -> tensor<?xf32>
  return
}

// -----

func.func @resize_both(%x: tensor<1x4xf32>, %s: tensor<2xf32>, %z: tensor<2xi64>) {
  // expected-error @+1 {{'nn.resize' op expected exactly one of 'scales' and 'sizes'}}
  %0 = nn.resize %x, %s, %z {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "nearest", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 1, 0>} : (tensor<1x4xf32>, tensor<2xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return
}

// -----

func.func @where_types(%c: tensor<2xi1>, %x: tensor<2xf32>, %y: tensor<2xi32>) {
  // expected-error @+2 {{'nn.where' op expected 'x' and 'y' of one element type}}
  // expected-error @+1 {{'nn.where' op failed to infer returned types}}
  %0 = nn.where %c, %x, %y : (tensor<2xi1>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  return
}

// -----

func.func @einsum(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{'nn.einsum' op expected one size for subscript 'j'}}
  // expected-error @+1 {{'nn.einsum' op failed to infer returned types}}
  %0 = nn.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @gather_axis(%x: tensor<2x3xf32>, %i: tensor<4xi64>) {
  // expected-error @+2 {{'nn.gather' op expected axis in [0, 2) (got 5)}}
  // expected-error @+1 {{'nn.gather' op failed to infer returned types}}
  %0 = nn.gather %x, %i {axis = 5 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<2x4xf32>
  return
}

// -----

func.func @batch_norm(%x: tensor<1x4x2x2xf32>, %p: tensor<3xf32>) {
  // expected-error @+2 {{'nn.batch_norm' op expected 'scale' of shape 4 (got 3)}}
  // expected-error @+1 {{'nn.batch_norm' op failed to infer returned types}}
  %0 = nn.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x4x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x4x2x2xf32>
  return
}

// -----

func.func @shape_bounds(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'nn.shape' op expected 0 <= start <= end <= 2}}
  // expected-error @+1 {{'nn.shape' op failed to infer returned types}}
  %0 = nn.shape %x {start = 0 : i64, end = 3 : i64} : (tensor<2x3xf32>) -> tensor<3xi64>
  return
}

// -----

func.func @range_operands(%a: tensor<2xi64>) {
  // expected-error @+2 {{'nn.range' op expected 0-D operands of one element type}}
  // expected-error @+1 {{'nn.range' op failed to infer returned types}}
  %0 = nn.range %a, %a, %a : (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?xi64>
  return
}

// -----

func.func @slice_step(%x: tensor<8xf32>) {
  %c = nn.constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+2 {{'nn.slice' op expected nonzero steps}}
  // expected-error @+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x, %c, %c, %c, %c : (tensor<8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return
}

// -----

func.func @top_k_too_many(%x: tensor<2x8xf32>) {
  %k = nn.constant {value = dense<9> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+2 {{'nn.top_k' op expected 0 <= k <= 8 (got 9)}}
  // expected-error @+1 {{'nn.top_k' op failed to infer returned types}}
  %0:2 = nn.top_k %x, %k {axis = 1 : i64, largest = true} : (tensor<2x8xf32>, tensor<1xi64>) -> (tensor<2x?xf32>, tensor<2x?xi64>)
  return
}

// -----

func.func @check_not_scalar(%x: tensor<3xf32>, %c: tensor<2xi1>) {
  // expected-error @+2 {{'nn.check' op expected a 0-D 'holds'}}
  // expected-error @+1 {{'nn.check' op failed to infer returned types}}
  %0 = nn.check %x, %c {message = "m"} : (tensor<3xf32>, tensor<2xi1>) -> tensor<3xf32>
  return
}

// -----

func.func @resize_roi_without_crop(%x: tensor<1x4xf32>, %s: tensor<2xf32>, %r: tensor<4xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'nn.resize' op expected 'roi' exactly with tf_crop_and_resize}}
  %0 = nn.resize %x, %s, %r {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "nearest", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (tensor<1x4xf32>, tensor<2xf32>, tensor<4xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
