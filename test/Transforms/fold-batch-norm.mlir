// RUN: nnc-opt %s --split-input-file --nn-fold-batch-norm | FileCheck %s

// g = scale / sqrt(var + eps) = [1 / 2, 2 / 1]: the filter rows scale by g,
// the bias becomes (0 - mean) * g + shift = [-0.5 + 0.5, 0 - 1].
// CHECK-LABEL: func.func @no_bias
// CHECK-DAG: %[[W:.*]] = nn.constant {value = dense<[{{\[}}{{\[}}[1.000000e+00]]], {{\[}}{{\[}}[6.000000e+00]]]]> : tensor<2x1x1x1xf32>}
// CHECK-DAG: %[[B:.*]] = nn.constant {value = dense<[0.000000e+00, -1.000000e+00]> : tensor<2xf32>}
// CHECK: %[[Y:.*]] = nn.conv %arg0, %[[W]], %[[B]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
// CHECK-NOT: nn.batch_norm
// CHECK: return %[[Y]]
func.func @no_bias(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = nn.constant {value = dense<[[[[2.0]]], [[[3.0]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %s = nn.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = nn.constant {value = dense<[0.5, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %m = nn.constant {value = dense<[1.0, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %v = nn.constant {value = dense<[3.0, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %z = nn.batch_norm %y, %s, %b, %m, %v {epsilon = 1.0 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %z : tensor<1x2x4x4xf32>
}

// -----

// A depthwise convolution (group = channels) with a bias: each output
// channel's taps scale by its g = [2, 0.5]; bias' = (bias - mean) * g + shift
// = [(1 - 1) * 2 + 3, (4 - 2) * 0.5 + 0].
// CHECK-LABEL: func.func @depthwise_with_bias
// CHECK-DAG: %[[W:.*]] = nn.constant {value = dense<{{\[}}{{\[}}{{\[}}[2.000000e+00, 4.000000e+00]]], {{\[}}{{\[}}[5.000000e-01, 1.000000e+00]]]]> : tensor<2x1x1x2xf32>}
// CHECK-DAG: %[[B:.*]] = nn.constant {value = dense<[3.000000e+00, 1.000000e+00]> : tensor<2xf32>}
// CHECK: nn.conv %arg0, %[[W]], %[[B]] {{{.*}}group = 2 : i64
// CHECK-NOT: nn.batch_norm
func.func @depthwise_with_bias(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x3xf32> {
  %w = nn.constant {value = dense<[[[[1.0, 2.0]]], [[[1.0, 2.0]]]]> : tensor<2x1x1x2xf32>} : () -> tensor<2x1x1x2xf32>
  %c = nn.constant {value = dense<[1.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %s = nn.constant {value = dense<[4.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %b = nn.constant {value = dense<[3.0, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %m = nn.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %v = nn.constant {value = dense<[3.5, 3.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = nn.conv %x, %w, %c {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x4x3xf32>
  %z = nn.batch_norm %y, %s, %b, %m, %v {epsilon = 0.5 : f32} : (tensor<1x2x4x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x3xf32>
  return %z : tensor<1x2x4x3xf32>
}

// -----

// Not folded into the convolution: its result is used elsewhere too (folding
// would change that use), or its filter is not a constant. The statistics
// are, so each norm is a multiply-add by folded per-channel constants.
// CHECK-LABEL: func.func @not_folded
// CHECK: %[[Y:.*]] = nn.conv %arg0, %[[W:.*]] {
// CHECK: %[[S:.*]] = nn.mul %[[Y]], %{{.*}} : (tensor<1x1x4x4xf32>, tensor<1x1x1xf32>)
// CHECK: nn.add %[[S]], %{{.*}} : (tensor<1x1x4x4xf32>, tensor<1x1x1xf32>)
// CHECK: %[[Y2:.*]] = nn.conv %arg0, %arg1 {
// CHECK: nn.mul %[[Y2]]
// CHECK-NOT: nn.batch_norm
func.func @not_folded(%x: tensor<1x1x4x4xf32>, %f: tensor<1x1x1x1xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  %w = nn.constant {value = dense<2.0> : tensor<1x1x1x1xf32>} : () -> tensor<1x1x1x1xf32>
  %p = nn.constant {value = dense<1.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %y = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %z = nn.batch_norm %y, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x1x4x4xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  %y2 = nn.conv %x, %f {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %z2 = nn.batch_norm %y2, %p, %p, %p, %p {epsilon = 1.0e-05 : f32} : (tensor<1x1x4x4xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  return %y, %z, %z2 : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}

// -----

// A convolution without output channels has nothing to fold into (the taps
// per channel would be 0 / 0), nor anything to scale.
// CHECK-LABEL: func.func @no_channels
// CHECK: nn.batch_norm
func.func @no_channels(%x: tensor<1x1x4x4xf32>) -> tensor<1x0x4x4xf32> {
  %w = nn.constant {value = dense<> : tensor<0x1x1x1xf32>} : () -> tensor<0x1x1x1xf32>
  %p = nn.constant {value = dense<> : tensor<0xf32>} : () -> tensor<0xf32>
  %y = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<0x1x1x1xf32>) -> tensor<1x0x4x4xf32>
  %z = nn.batch_norm %y, %p, %p, %p, %p {epsilon = 1.0 : f32} : (tensor<1x0x4x4xf32>, tensor<0xf32>, tensor<0xf32>, tensor<0xf32>, tensor<0xf32>) -> tensor<1x0x4x4xf32>
  return %z : tensor<1x0x4x4xf32>
}

// -----

// After anything but a convolution (DenseNet's norms follow concatenations):
// g = scale / sqrt(var + eps) = [2 / 2, 6 / 3] and bias - mean * g =
// [1 - 1, 0 - 4], broadcast along the dims after the channel's.
// CHECK-LABEL: func.func @scale_and_shift
// CHECK-DAG: %[[G:.*]] = nn.constant {value = dense<{{\[}}{{\[}}[1.000000e+00]], {{\[}}[2.000000e+00]]]> : tensor<2x1x1xf32>}
// CHECK-DAG: %[[C:.*]] = nn.constant {value = dense<{{\[}}{{\[}}[0.000000e+00]], {{\[}}[-4.000000e+00]]]> : tensor<2x1x1xf32>}
// CHECK: %[[S:.*]] = nn.mul %arg0, %[[G]]
// CHECK: %[[Y:.*]] = nn.add %[[S]], %[[C]]
// CHECK: return %[[Y]]
// Statistics given at run time stay a batch norm, and so does an f16 input
// (its constants would be f32 values).
// CHECK-LABEL: func.func @runtime_statistics
// CHECK: nn.batch_norm
// CHECK-LABEL: func.func @half_input
// CHECK: nn.batch_norm
func.func @scale_and_shift(%x: tensor<3x2x4x4xf32>) -> tensor<3x2x4x4xf32> {
  %scale = nn.constant {value = dense<[2.0, 6.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %bias = nn.constant {value = dense<[1.0, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = nn.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = nn.constant {value = dense<[3.0, 8.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = nn.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<3x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2x4x4xf32>
  return %y : tensor<3x2x4x4xf32>
}
func.func @runtime_statistics(%x: tensor<3x2xf32>, %var: tensor<2xf32>) -> tensor<3x2xf32> {
  %p = nn.constant {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = nn.batch_norm %x, %p, %p, %p, %var {epsilon = 1.0 : f32} : (tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %y : tensor<3x2xf32>
}
func.func @half_input(%x: tensor<3x2xf16>) -> tensor<3x2xf16> {
  %p = nn.constant {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = nn.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0 : f32} : (tensor<3x2xf16>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf16>
  return %y : tensor<3x2xf16>
}
