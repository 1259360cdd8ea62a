// RUN: nnc-opt %s --split-input-file --nn-trim-dead-taps | FileCheck %s

// A 3x3 filter over a 1x1 map padded by one: only the center tap reads the
// input. The filter keeps it (values 4 and 13, the centers of the two output
// channels' 0..8 and 9..17) and the pads go.
// CHECK-LABEL: func.func @center
// CHECK: %[[W:.*]] = nn.constant {value = dense<{{\[}}{{\[}}{{\[}}[4.000000e+00]]], {{\[}}{{\[}}[1.300000e+01]]]]> : tensor<2x1x1x1xf32>}
// CHECK: nn.conv %arg0, %[[W]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x1x1xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x1x1xf32>
func.func @center(%x: tensor<1x1x1x1xf32>) -> tensor<1x2x1x1xf32> {
  %w = nn.constant {value = dense<[[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]], [[[9.0, 10.0, 11.0], [12.0, 13.0, 14.0], [15.0, 16.0, 17.0]]]]> : tensor<2x1x3x3xf32>} : () -> tensor<2x1x3x3xf32>
  %y = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x1x1xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x1x1xf32>
  return %y : tensor<1x2x1x1xf32>
}

// -----

// Stride 2 from a 2x2 map padded by one to one output: tap 0 reads row -1
// only; taps 1 and 2 read rows 0 and 1. Rows and columns keep taps 1..2,
// the leading pads go and no trailing pad is needed.
// CHECK-LABEL: func.func @strided
// CHECK: %[[W:.*]] = nn.constant {value = dense<{{\[}}{{\[}}{{\[}}[4.000000e+00, 5.000000e+00], [7.000000e+00, 8.000000e+00]]]]> : tensor<1x1x2x2xf32>}
// CHECK: nn.conv %arg0, %[[W]] {{{.*}}pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>}
func.func @strided(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32> {
  %w = nn.constant {value = dense<[[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]]]> : tensor<1x1x3x3xf32>} : () -> tensor<1x1x3x3xf32>
  %y = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x2x2xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x1x1xf32>
  return %y : tensor<1x1x1x1xf32>
}

// -----

// Left alone: every tap reads the input somewhere (2x2 map, 3x3 filter, pads
// 1, stride 1), and a filter that is not a constant.
// CHECK-LABEL: func.func @kept
// CHECK: nn.conv %arg0, %{{.*}} {{{.*}}pads = array<i64: 1, 1, 1, 1>{{.*}} : (tensor<1x1x2x2xf32>, tensor<1x1x3x3xf32>)
// CHECK: nn.conv %arg2, %arg1 {{{.*}}pads = array<i64: 1, 1, 1, 1>{{.*}} : (tensor<1x1x1x1xf32>, tensor<1x1x3x3xf32>)
func.func @kept(%x: tensor<1x1x2x2xf32>, %w2: tensor<1x1x3x3xf32>, %x1: tensor<1x1x1x1xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) {
  %w = nn.constant {value = dense<1.0> : tensor<1x1x3x3xf32>} : () -> tensor<1x1x3x3xf32>
  %y = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x2x2xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  %z = nn.conv %x1, %w2 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x1x1xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x1x1xf32>
  return %y, %z : tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>
}

// -----

// A dynamic batch does not matter. Over a 1-row map only the middle row of
// taps is read; the columns keep all three taps and their pads, whose last
// window stops short of the input's end (stride 2, 6 columns).
// CHECK-LABEL: func.func @one_dim
// CHECK: nn.conv %arg0, %{{.*}} {{{.*}}pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x2x1x6xf32>, tensor<1x2x1x3xf32>) -> tensor<?x1x1x2xf32>
func.func @one_dim(%x: tensor<?x2x1x6xf32>) -> tensor<?x1x1x2xf32> {
  %w = nn.constant {value = dense<1.0> : tensor<1x2x3x3xf32>} : () -> tensor<1x2x3x3xf32>
  %y = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 2>} : (tensor<?x2x1x6xf32>, tensor<1x2x3x3xf32>) -> tensor<?x1x1x2xf32>
  return %y : tensor<?x1x1x2xf32>
}
