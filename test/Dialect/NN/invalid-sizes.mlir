// RUN: nnc-opt %s -split-input-file -verify-diagnostics

// Shape arithmetic on sizes chosen to overflow int64, divide by zero or go
// negative: each is a diagnostic at the op, never a wrapped size.

func.func @expand_negative(%x: tensor<1xf32>) {
  %s = nn.constant {value = dense<-5> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+2 {{'nn.expand' op expected non-negative dims in 'shape' (got '-5')}}
  // expected-error @+1 {{'nn.expand' op failed to infer returned types}}
  %0 = nn.expand %x, %s : (tensor<1xf32>, tensor<1xi64>) -> tensor<?xf32>
  return
}

// -----

// 3074457345618258603 * 6 wraps to 2, the input's element count.
func.func @reshape_count(%x: tensor<2xf32>) {
  %s = nn.constant {value = dense<[3074457345618258603, 6]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+2 {{'nn.reshape' op element count of the result shape '3074457345618258603x6' overflows int64}}
  // expected-error @+1 {{'nn.reshape' op failed to infer returned types}}
  %0 = nn.reshape %x, %s {allowzero = false} : (tensor<2xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return
}

// -----

// Every operand and result must be a tensor whose bytes int64 can count.
func.func @operand_too_large(%x: tensor<4294967296x4294967296xf32>) {
  // expected-error @+1 {{'nn.relu' op operand #0 has more than 2^63 - 1 bytes (shape '4294967296x4294967296' of 'f32')}}
  %0 = nn.relu %x : (tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32>
  return
}

// -----

// 2^62 elements fit; 2^62 f32 are 2^64 bytes, which do not.
func.func @bytes_too_large(%x: tensor<?xf32>) {
  // expected-error @+1 {{'nn.relu' op result #0 has more than 2^63 - 1 bytes (shape '4611686018427387904' of 'f32')}}
  %0 = nn.relu %x : (tensor<?xf32>) -> tensor<4611686018427387904xf32>
  return
}

// -----

// An empty tensor has no bytes, whatever its other dims.
func.func @empty_is_fine(%x: tensor<0x9223372036854775807x9223372036854775807xf32>) {
  %0 = nn.relu %x : (tensor<0x9223372036854775807x9223372036854775807xf32>) -> tensor<0x9223372036854775807x9223372036854775807xf32>
  return
}

// -----

func.func @constant_of_shape(%x: tensor<1xf32>) {
  %s = nn.constant {value = dense<[4611686018427387904, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+2 {{'nn.constant_of_shape' op result #0 has more than 2^63 - 1 bytes (shape '4611686018427387904x2' of 'f32')}}
  // expected-error @+1 {{'nn.constant_of_shape' op failed to infer returned types}}
  %0 = nn.constant_of_shape %s {value = dense<0.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
  return
}

// -----

func.func @conv_pads(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+2 {{'nn.conv' op padded input size along dim 2 overflows int64}}
  // expected-error @+1 {{'nn.conv' op failed to infer returned types}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 9223372036854775807, 0, 1, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<?x?x?x?xf32>
  return
}

// -----

func.func @conv_dilation(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+2 {{'nn.conv' op dilated filter size along dim 3 overflows int64}}
  // expected-error @+1 {{'nn.conv' op failed to infer returned types}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 4611686018427387904>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<?x?x?x?xf32>
  return
}

// -----

func.func @conv_group(%x: tensor<1x2x4x4xf32>, %w: tensor<4x2x3x3xf32>) {
  // A filter channel count times group that overflows matches no input channel count.
  // expected-error @+2 {{'nn.conv' op expected input channels (2) = filter channels (2) * group (4611686018427387904)}}
  // expected-error @+1 {{'nn.conv' op failed to infer returned types}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 4611686018427387904 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<?x?x?x?xf32>
  return
}

// -----

func.func @conv_transpose_size(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+2 {{'nn.conv_transpose' op output size along dim 2 overflows int64}}
  // expected-error @+1 {{'nn.conv_transpose' op failed to infer returned types}}
  %0 = nn.conv_transpose %x, %w {dilations = array<i64: 1>, group = 1 : i64, output_padding = array<i64: 0>, pads = array<i64: 0, 0>, strides = array<i64: 4611686018427387904>} : (tensor<1x1x4xf32>, tensor<1x1x3xf32>) -> tensor<?x?x?xf32>
  return
}

// -----

func.func @pool_pads(%x: tensor<1x1x4xf32>) {
  // expected-error @+2 {{'nn.max_pool' op padded input size along dim 2 overflows int64}}
  // expected-error @+1 {{'nn.max_pool' op failed to infer returned types}}
  %0 = nn.max_pool %x {ceil_mode = true, dilations = array<i64: 1>, kernel = array<i64: 2>, pads = array<i64: 9223372036854775807, 1>, strides = array<i64: 1>} : (tensor<1x1x4xf32>) -> tensor<?x?x?xf32>
  return
}

// -----

func.func @concat(%x: tensor<4611686018427387904xi8>) {
  // expected-error @+2 {{'nn.concat' op result size along axis 0 overflows int64}}
  // expected-error @+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %x, %x {axis = 0 : i64} : (tensor<4611686018427387904xi8>, tensor<4611686018427387904xi8>) -> tensor<?xi8>
  return
}

// -----

func.func @split(%x: tensor<8xf32>) {
  // expected-error @+2 {{'nn.split' op sum of the sizes overflows int64}}
  // expected-error @+1 {{'nn.split' op failed to infer returned types}}
  %0:2 = nn.split %x {axis = 0 : i64, sizes = array<i64: 9223372036854775807, 9>} : (tensor<8xf32>) -> (tensor<?xf32>, tensor<?xf32>)
  return
}

// -----

func.func @tile(%x: tensor<2xi8>) {
  %r = nn.constant {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  // expected-error @+2 {{'nn.tile' op result size along dim 0 overflows int64}}
  // expected-error @+1 {{'nn.tile' op failed to infer returned types}}
  %0 = nn.tile %x, %r : (tensor<2xi8>, tensor<1xi64>) -> tensor<?xi8>
  return
}

// -----

func.func @pad(%x: tensor<2xi8>, %v: tensor<i8>) {
  %p = nn.constant {value = dense<[9223372036854775807, 1]> : tensor<2xi64>} : () -> tensor<2xi64>
  // expected-error @+2 {{'nn.pad' op padded size of dim 0 overflows int64}}
  // expected-error @+1 {{'nn.pad' op failed to infer returned types}}
  %0 = nn.pad %x, %p, %v {mode = "constant"} : (tensor<2xi8>, tensor<2xi64>, tensor<i8>) -> tensor<?xi8>
  return
}

// -----

func.func @range_count() {
  %lo = nn.constant {value = dense<-9223372036854775808> : tensor<i64>} : () -> tensor<i64>
  %hi = nn.constant {value = dense<9223372036854775807> : tensor<i64>} : () -> tensor<i64>
  %one = nn.constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  // expected-error @+2 {{'nn.range' op element count overflows int64}}
  // expected-error @+1 {{'nn.range' op failed to infer returned types}}
  %0 = nn.range %lo, %hi, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return
}

// -----

func.func @range_float() {
  %zero = nn.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %inf = nn.constant {value = dense<0x7F800000> : tensor<f32>} : () -> tensor<f32>
  %one = nn.constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  // expected-error @+2 {{'nn.range' op expected finite start, limit and delta}}
  // expected-error @+1 {{'nn.range' op failed to infer returned types}}
  %0 = nn.range %zero, %inf, %one : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return
}

// -----

func.func @resize_scale(%x: tensor<1x4xf32>) {
  %s = nn.constant {value = dense<[1.0, 1.0e30]> : tensor<2xf32>} : () -> tensor<2xf32>
  // expected-error @+2 {{'nn.resize' op result size along dim 1 overflows int64}}
  // expected-error @+1 {{'nn.resize' op failed to infer returned types}}
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "nearest", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x4xf32>, tensor<2xf32>) -> tensor<?x?xf32>
  return
}

// -----

func.func @resize_nan(%x: tensor<1x4xf32>) {
  %s = nn.constant {value = dense<[1.0, 0x7FC00000]> : tensor<2xf32>} : () -> tensor<2xf32>
  // expected-error @+2 {{'nn.resize' op expected positive scales}}
  // expected-error @+1 {{'nn.resize' op failed to infer returned types}}
  %0 = nn.resize %x, %s {coordinate_transformation_mode = "asymmetric", cubic_coeff_a = -0.75 : f32, exclude_outside = false, mode = "nearest", nearest_mode = "floor", operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x4xf32>, tensor<2xf32>) -> tensor<?x?xf32>
  return
}

// -----

// A step past the dim takes one element, in either direction (the count
// used to overflow to 0); an empty dim gives an empty slice.
func.func @slice_huge_steps(%x: tensor<10xf32>, %e: tensor<0xf32>) {
  %zero = nn.constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %ten = nn.constant {value = dense<10> : tensor<1xi64>} : () -> tensor<1xi64>
  %nine = nn.constant {value = dense<9> : tensor<1xi64>} : () -> tensor<1xi64>
  %before = nn.constant {value = dense<-11> : tensor<1xi64>} : () -> tensor<1xi64>
  %up = nn.constant {value = dense<9223372036854775807> : tensor<1xi64>} : () -> tensor<1xi64>
  %down = nn.constant {value = dense<-9223372036854775808> : tensor<1xi64>} : () -> tensor<1xi64>
  %0 = nn.slice %x, %zero, %ten, %zero, %up : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xf32>
  %1 = nn.slice %x, %nine, %before, %zero, %down : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xf32>
  %2 = nn.slice %e, %nine, %before, %zero, %down : (tensor<0xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<0xf32>
  return
}
