// RUN: nnc-opt %s | FileCheck %s
// Round trip: the printed form parses back to the same ops, and it verifies.
// RUN: nnc-opt %s | nnc-opt | FileCheck %s

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %i: tensor<2x3xi32>, %b: tensor<2x3xi1>) -> tensor<2x3xf32> {
  // CHECK: nn.sqrt %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = nn.sqrt %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = nn.exp %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = nn.log %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = nn.erf %2 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = nn.sigmoid %3 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = nn.tanh %4 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = nn.softplus %5 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = nn.hard_swish %6 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = nn.floor %7 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = nn.ceil %8 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %10 = nn.round %9 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %11 = nn.reciprocal %10 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %12 = nn.sin %11 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %13 = nn.cos %12 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: nn.neg %{{.*}} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %14 = nn.neg %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %15 = nn.abs %14 : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %16 = nn.sign %15 : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %17 = nn.relu %13 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: nn.not %{{.*}} : (tensor<2x3xi1>) -> tensor<2x3xi1>
  %18 = nn.not %b : (tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: nn.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f32}
  %19 = nn.leaky_relu %17 {alpha = 0.1 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %20 = nn.elu %19 {alpha = 1.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %21 = nn.selu %20 {alpha = 1.67 : f32, gamma = 1.05 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %22 = nn.hard_sigmoid %21 {alpha = 0.2 : f32, beta = 0.5 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK: nn.cast %{{.*}} {to = f32} : (tensor<2x3xi32>) -> tensor<2x3xf32>
  %23 = nn.cast %16 {to = f32} : (tensor<2x3xi32>) -> tensor<2x3xf32>
  // CHECK: nn.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %24 = nn.add %22, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %25 = nn.sub %24, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %26 = nn.mul %25, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %27 = nn.div %26, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %28 = nn.max %27, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %29 = nn.min %28, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %30 = nn.pow %29, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: nn.mod %{{.*}}, %{{.*}} {fmod = true}
  %31 = nn.mod %30, %y {fmod = true} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: nn.less %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %32 = nn.less %31, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %33 = nn.less_equal %31, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %34 = nn.greater %31, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %35 = nn.greater_equal %31, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %36 = nn.equal %31, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %37 = nn.and %32, %33 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %38 = nn.or %37, %34 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %39 = nn.xor %38, %35 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %40 = nn.and %39, %36 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %41 = nn.and %40, %18 : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK: nn.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %42 = nn.where %41, %23, %y : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %42 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @linear_algebra
func.func @linear_algebra(%a: tensor<8x16x32xf32>, %b: tensor<32x64xf32>, %v: tensor<32xf32>,
                          %x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %bias: tensor<4xf32>) {
  // CHECK: nn.matmul %{{.*}}, %{{.*}} : (tensor<8x16x32xf32>, tensor<32x64xf32>) -> tensor<8x16x64xf32>
  %0 = nn.matmul %a, %b : (tensor<8x16x32xf32>, tensor<32x64xf32>) -> tensor<8x16x64xf32>
  // CHECK: nn.matmul %{{.*}}, %{{.*}} : (tensor<8x16x32xf32>, tensor<32xf32>) -> tensor<8x16xf32>
  %1 = nn.matmul %a, %v : (tensor<8x16x32xf32>, tensor<32xf32>) -> tensor<8x16xf32>
  // CHECK: nn.conv
  %2 = nn.conv %x, %w, %bias {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  // CHECK: nn.conv_transpose
  %3 = nn.conv_transpose %2, %w {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x16x16xf32>
  // CHECK: nn.max_pool
  %4 = nn.max_pool %2 {ceil_mode = false, dilations = array<i64: 1, 1>, kernel = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  // CHECK: nn.avg_pool
  %5 = nn.avg_pool %2 {ceil_mode = true, count_include_pad = false, dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32>
  // CHECK: nn.batch_norm
  %6 = nn.batch_norm %2, %bias, %bias, %bias, %bias {epsilon = 1.0e-05 : f32} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  // CHECK: nn.instance_norm
  %7 = nn.instance_norm %6, %bias, %bias {epsilon = 1.0e-05 : f32} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  // CHECK: nn.layer_norm
  %8 = nn.layer_norm %a, %v {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<8x16x32xf32>, tensor<32xf32>) -> tensor<8x16x32xf32>
  // CHECK: nn.softmax %{{.*}} {axis = 2 : i64}
  %9 = nn.softmax %8 {axis = 2 : i64} : (tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  %10 = nn.log_softmax %9 {axis = 0 : i64} : (tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  // CHECK: nn.cumsum
  %11 = nn.cumsum %10 {axis = 1 : i64, exclusive = true, reverse = false} : (tensor<8x16x32xf32>) -> tensor<8x16x32xf32>
  // CHECK: nn.trilu
  %k = nn.constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %12 = nn.trilu %11, %k {upper = false} : (tensor<8x16x32xf32>, tensor<i64>) -> tensor<8x16x32xf32>
  // CHECK: nn.einsum %{{.*}}, %{{.*}} {equation = "bij,jk->bik"} : (tensor<8x16x32xf32>, tensor<32x64xf32>) -> tensor<8x16x64xf32>
  %13 = nn.einsum %12, %b {equation = "bij,jk->bik"} : (tensor<8x16x32xf32>, tensor<32x64xf32>) -> tensor<8x16x64xf32>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x8x4xf32>, %kk: tensor<1xi64>) {
  // CHECK: nn.reduce_sum %{{.*}} {axes = array<i64: 1>, keepdims = true} : (tensor<2x8x4xf32>) -> tensor<2x1x4xf32>
  %0 = nn.reduce_sum %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x8x4xf32>) -> tensor<2x1x4xf32>
  // CHECK: nn.reduce_mean %{{.*}} {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x8x4xf32>) -> tensor<8xf32>
  %1 = nn.reduce_mean %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x8x4xf32>) -> tensor<8xf32>
  %2 = nn.reduce_max %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x8x4xf32>) -> tensor<2x8xf32>
  %3 = nn.reduce_min %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x8x4xf32>) -> tensor<2x8xf32>
  %4 = nn.reduce_prod %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x8x4xf32>) -> tensor<2x8xf32>
  %5 = nn.reduce_l1 %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x8x4xf32>) -> tensor<2x8xf32>
  %6 = nn.reduce_l2 %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x8x4xf32>) -> tensor<2x8xf32>
  %7 = nn.reduce_sum_square %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x8x4xf32>) -> tensor<2x8xf32>
  %8 = nn.reduce_log_sum %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x8x4xf32>) -> tensor<2x8xf32>
  %9 = nn.reduce_log_sum_exp %x {axes = array<i64: 2>, keepdims = false} : (tensor<2x8x4xf32>) -> tensor<2x8xf32>
  // CHECK: nn.argmax %{{.*}} {axis = 1 : i64, keepdims = false, select_last_index = false} : (tensor<2x8x4xf32>) -> tensor<2x4xi64>
  %10 = nn.argmax %x {axis = 1 : i64, keepdims = false, select_last_index = false} : (tensor<2x8x4xf32>) -> tensor<2x4xi64>
  %11 = nn.argmin %x {axis = 1 : i64, keepdims = true, select_last_index = true} : (tensor<2x8x4xf32>) -> tensor<2x1x4xi64>
  // A constant k sizes the axis; one known at run time leaves it dynamic.
  // CHECK: nn.top_k %{{.*}}, %{{.*}} {axis = 1 : i64, largest = true} : (tensor<2x8x4xf32>, tensor<1xi64>) -> (tensor<2x3x4xf32>, tensor<2x3x4xi64>)
  %k = nn.constant {value = dense<3> : tensor<1xi64>} : () -> tensor<1xi64>
  %12:2 = nn.top_k %x, %k {axis = 1 : i64, largest = true} : (tensor<2x8x4xf32>, tensor<1xi64>) -> (tensor<2x3x4xf32>, tensor<2x3x4xi64>)
  %13:2 = nn.top_k %x, %kk {axis = 2 : i64, largest = false} : (tensor<2x8x4xf32>, tensor<1xi64>) -> (tensor<2x8x?xf32>, tensor<2x8x?xi64>)
  return
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<?x4xf32>, %s: tensor<2xi64>, %idx: tensor<3xi32>) {
  // CHECK: nn.constant {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %c = nn.constant {value = dense<[1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %axes = nn.constant {value = dense<[0, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // CHECK: nn.shape %{{.*}} {end = 2 : i64, start = 0 : i64} : (tensor<?x4xf32>) -> tensor<2xi64>
  %0 = nn.shape %x {start = 0 : i64, end = 2 : i64} : (tensor<?x4xf32>) -> tensor<2xi64>
  %1 = nn.size %x : (tensor<?x4xf32>) -> tensor<i64>
  %2 = nn.constant_of_shape %s {value = dense<0.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
  %3 = nn.range %1, %1, %1 : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  // CHECK: nn.reshape %{{.*}}, %{{.*}} {allowzero = false} : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %4 = nn.reshape %x, %s {allowzero = false} : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %5 = nn.flatten %x {axis = 0 : i64} : (tensor<?x4xf32>) -> tensor<1x?xf32>
  %6 = nn.unsqueeze %x {axes = array<i64: 0, 3>} : (tensor<?x4xf32>) -> tensor<1x?x4x1xf32>
  %7 = nn.squeeze %6 {axes = array<i64: 0, 3>} : (tensor<1x?x4x1xf32>) -> tensor<?x4xf32>
  %8 = nn.transpose %7 {perm = array<i64: 1, 0>} : (tensor<?x4xf32>) -> tensor<4x?xf32>
  // CHECK: nn.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  %9 = nn.concat %x, %7 {axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  // CHECK: nn.split %{{.*}} {axis = 1 : i64, sizes = array<i64: 3, 5>} : (tensor<?x8xf32>) -> (tensor<?x3xf32>, tensor<?x5xf32>)
  %10:2 = nn.split %9 {axis = 1 : i64, sizes = array<i64: 3, 5>} : (tensor<?x8xf32>) -> (tensor<?x3xf32>, tensor<?x5xf32>)
  %11 = nn.slice %x, %c, %c, %axes, %c : (tensor<?x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>
  // CHECK: nn.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<?x3xf32>
  %12 = nn.gather %x, %idx {axis = 1 : i64} : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<?x3xf32>
  %13 = nn.expand %x, %s : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %14 = nn.tile %x, %s : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %zero = nn.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %p = nn.constant {value = dense<[0, 1, 0, 1]> : tensor<4xi64>} : () -> tensor<4xi64>
  // CHECK: nn.pad %{{.*}}, %{{.*}}, %{{.*}} {mode = "reflect"} : (tensor<?x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<?x6xf32>
  %15 = nn.pad %x, %p, %zero {mode = "reflect"} : (tensor<?x4xf32>, tensor<4xi64>, tensor<f32>) -> tensor<?x6xf32>
  %scales = nn.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  // CHECK: nn.resize %{{.*}}, %{{.*}} {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -7.500000e-01 : f32, exclude_outside = false, mode = "nearest", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<?x4xf32>, tensor<2xf32>) -> tensor<?x8xf32>
  %16 = nn.resize %x, %scales {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "nearest", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<?x4xf32>, tensor<2xf32>) -> tensor<?x8xf32>
  return
}
