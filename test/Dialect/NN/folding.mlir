// RUN: nnc-opt %s --split-input-file --canonicalize | FileCheck %s

// Shape and size of static tensors are constants.
// CHECK-LABEL: func.func @shape_size
// CHECK-DAG: %[[S:.*]] = nn.constant {value = dense<[3, 4]> : tensor<2xi64>}
// CHECK-DAG: %[[N:.*]] = nn.constant {value = dense<12> : tensor<i64>}
// CHECK: return %[[S]], %[[N]]
func.func @shape_size(%x: tensor<3x4xf32>) -> (tensor<2xi64>, tensor<i64>) {
  %0 = nn.shape %x {start = 0 : i64, end = 2 : i64} : (tensor<3x4xf32>) -> tensor<2xi64>
  %1 = nn.size %x : (tensor<3x4xf32>) -> tensor<i64>
  return %0, %1 : tensor<2xi64>, tensor<i64>
}

// -----

// A partly dynamic shape does not fold, but its static slice does.
// CHECK-LABEL: func.func @shape_dynamic
// CHECK-DAG: %[[S:.*]] = nn.shape %{{.*}} {end = 2 : i64, start = 0 : i64}
// CHECK-DAG: %[[T:.*]] = nn.constant {value = dense<4> : tensor<1xi64>}
// CHECK: return %[[S]], %[[T]]
func.func @shape_dynamic(%x: tensor<?x4xf32>) -> (tensor<2xi64>, tensor<1xi64>) {
  %0 = nn.shape %x {start = 0 : i64, end = 2 : i64} : (tensor<?x4xf32>) -> tensor<2xi64>
  %1 = nn.shape %x {start = 1 : i64, end = 2 : i64} : (tensor<?x4xf32>) -> tensor<1xi64>
  return %0, %1 : tensor<2xi64>, tensor<1xi64>
}

// -----

// Integer arithmetic, comparisons and selects on small constants fold,
// with broadcasting; integer division truncates toward zero.
// CHECK-LABEL: func.func @int_math
// CHECK-DAG: nn.constant {value = dense<[11, 22, 33]> : tensor<3xi64>}
// CHECK-DAG: nn.constant {value = dense<[-3, 3, 4]> : tensor<3xi64>}
// CHECK-DAG: nn.constant {value = dense<[false, true, true]> : tensor<3xi1>}
// CHECK-DAG: nn.constant {value = dense<[10, 2, 3]> : tensor<3xi64>}
// CHECK-NOT: nn.add
// CHECK-NOT: nn.div
func.func @int_math() -> (tensor<3xi64>, tensor<3xi64>, tensor<3xi1>, tensor<3xi64>) {
  %a = nn.constant {value = dense<[1, 2, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  %b = nn.constant {value = dense<10> : tensor<i64>} : () -> tensor<i64>
  %c = nn.constant {value = dense<[-7, 7, 8]> : tensor<3xi64>} : () -> tensor<3xi64>
  %two = nn.constant {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %ab = nn.mul %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %sum = nn.add %ab, %a : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %q = nn.div %c, %two : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %gt = nn.greater %a, %two : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %ge = nn.greater_equal %a, %two : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %sel = nn.where %ge, %a, %b : (tensor<3xi1>, tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  return %sum, %q, %ge, %sel : tensor<3xi64>, tensor<3xi64>, tensor<3xi1>, tensor<3xi64>
}

// -----

// Division by a constant zero is left to run time, never folded.
// CHECK-LABEL: func.func @div_by_zero
// CHECK: nn.div
func.func @div_by_zero() -> tensor<i64> {
  %a = nn.constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %z = nn.constant {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %q = nn.div %a, %z : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %q : tensor<i64>
}

// -----

// So is INT64_MIN / -1, which has no int64 value (and traps when folded with
// the host's division); sums and products wrap as in the compiled code.
// CHECK-LABEL: func.func @int64_edges
// CHECK-DAG: %[[SUM:.*]] = nn.constant {value = dense<-9223372036854775808> : tensor<i64>}
// CHECK-DAG: %[[PRODUCT:.*]] = nn.constant {value = dense<-2> : tensor<i64>}
// CHECK-DAG: %[[Q:.*]] = nn.div
// CHECK: return %[[Q]], %[[SUM]], %[[PRODUCT]]
func.func @int64_edges() -> (tensor<i64>, tensor<i64>, tensor<i64>) {
  %min = nn.constant {value = dense<-9223372036854775808> : tensor<i64>} : () -> tensor<i64>
  %max = nn.constant {value = dense<9223372036854775807> : tensor<i64>} : () -> tensor<i64>
  %m1 = nn.constant {value = dense<-1> : tensor<i64>} : () -> tensor<i64>
  %one = nn.constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %two = nn.constant {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %q = nn.div %min, %m1 : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %s = nn.add %max, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %p = nn.mul %max, %two : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %q, %s, %p : tensor<i64>, tensor<i64>, tensor<i64>
}

// -----

// Unary integer ops fold too (an expanded LayerNormalization negates its
// axis to size a ConstantOfShape): negation wraps, not of a bool.
// CHECK-LABEL: func.func @unary_int
// CHECK-DAG: dense<[2, -3, -9223372036854775808]> : tensor<3xi64>
// CHECK-DAG: dense<[2, 3, -9223372036854775808]> : tensor<3xi64>
// CHECK-DAG: dense<[-1, 1, -1]> : tensor<3xi64>
// CHECK-DAG: dense<[0, 3, 0]> : tensor<3xi64>
// CHECK-DAG: dense<[false, true]> : tensor<2xi1>
// CHECK-NOT: nn.neg
// CHECK-NOT: nn.abs
// CHECK-NOT: nn.sign
// CHECK-NOT: nn.not
func.func @unary_int() -> (tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<2xi1>) {
  %a = nn.constant {value = dense<[-2, 3, -9223372036854775808]> : tensor<3xi64>} : () -> tensor<3xi64>
  %n = nn.neg %a : (tensor<3xi64>) -> tensor<3xi64>
  %abs = nn.abs %a : (tensor<3xi64>) -> tensor<3xi64>
  %s = nn.sign %a : (tensor<3xi64>) -> tensor<3xi64>
  %r = nn.relu %a : (tensor<3xi64>) -> tensor<3xi64>
  %t = nn.constant {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  %nt = nn.not %t : (tensor<2xi1>) -> tensor<2xi1>
  return %n, %abs, %s, %r, %nt : tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<3xi64>, tensor<2xi1>
}

// -----

// Unsigned values at and above 2^63 are large, not negative: abs and relu
// keep them, sign is 1, and comparisons, max and min are unsigned.
// CHECK-LABEL: func.func @unsigned_large
// CHECK-DAG: dense<[9223372036854775809, 5]> : tensor<2xui64>
// CHECK-DAG: dense<1> : tensor<2xui64>
// CHECK-DAG: dense<[true, false]> : tensor<2xi1>
// CHECK-NOT: nn.abs
// CHECK-NOT: nn.sign
// CHECK-NOT: nn.max
// CHECK-NOT: nn.less
func.func @unsigned_large() -> (tensor<2xui64>, tensor<2xui64>, tensor<2xui64>, tensor<2xi1>) {
  %a = nn.constant {value = dense<[9223372036854775809, 5]> : tensor<2xui64>} : () -> tensor<2xui64>
  %five = nn.constant {value = dense<5> : tensor<ui64>} : () -> tensor<ui64>
  %abs = nn.abs %a : (tensor<2xui64>) -> tensor<2xui64>
  %sign = nn.sign %a : (tensor<2xui64>) -> tensor<2xui64>
  %max = nn.max %a, %five : (tensor<2xui64>, tensor<ui64>) -> tensor<2xui64>
  %less = nn.less %five, %a : (tensor<ui64>, tensor<2xui64>) -> tensor<2xi1>
  return %abs, %sign, %max, %less : tensor<2xui64>, tensor<2xui64>, tensor<2xui64>, tensor<2xi1>
}

// -----

// Float math folds where IEEE 754 makes the result exact, in the element
// type: torchvision's detection transform rounds a size up in floats,
// ceil(reduce_max(sizes) / 32) * 32, then casts it to int64. 0.1 + 0.2 is
// 0.3 in f32 but not in f64 (0.30000000000000004): f32 arithmetic, not
// doubles rounded after. Casts to integers truncate; max and min propagate
// NaN.
// CHECK-LABEL: func.func @float_exact
// CHECK-DAG: nn.constant {value = dense<[352, 320]> : tensor<2xi64>}
// CHECK-DAG: nn.constant {value = dense<3.000000e-01> : tensor<f32>}
// CHECK-DAG: nn.constant {value = dense<[-2, 2, -3, 3, -2, 2]> : tensor<6xi32>}
// CHECK-DAG: nn.constant {value = dense<[0x7FC00000, 1.000000e+00]> : tensor<2xf32>}
// CHECK-DAG: nn.constant {value = dense<[true, false, false]> : tensor<3xi1>}
// CHECK-DAG: nn.constant {value = dense<[-2.000000e+00, 2.000000e+00, 2.000000e+00, 2.000000e+00]> : tensor<4xf32>}
// CHECK-DAG: nn.constant {value = dense<0x4B800000> : tensor<f32>}
// CHECK-NOT: nn.add
// CHECK-NOT: nn.div
// CHECK-NOT: nn.ceil
// CHECK-NOT: nn.cast
// CHECK-NOT: nn.reduce_max
// CHECK-NOT: nn.max
func.func @float_exact() -> (tensor<2xi64>, tensor<f32>, tensor<6xi32>, tensor<2xf32>, tensor<3xi1>, tensor<4xf32>, tensor<f32>) {
  %sizes = nn.constant {value = dense<[[321.0, 300.0], [330.0, 250.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %largest = nn.reduce_max %sizes {axes = array<i64: 0>, keepdims = false} : (tensor<2x2xf32>) -> tensor<2xf32>
  %stride = nn.constant {value = dense<32.0> : tensor<f32>} : () -> tensor<f32>
  %q = nn.div %largest, %stride : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %up = nn.ceil %q : (tensor<2xf32>) -> tensor<2xf32>
  %padded = nn.mul %up, %stride : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %size = nn.cast %padded {to = i64} : (tensor<2xf32>) -> tensor<2xi64>
  %a = nn.constant {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %b = nn.constant {value = dense<0.2> : tensor<f32>} : () -> tensor<f32>
  %sum = nn.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %r = nn.constant {value = dense<[-2.5, 2.5, -3.5, 3.5, -2.9, 2.9]> : tensor<6xf32>} : () -> tensor<6xf32>
  %t = nn.cast %r {to = i32} : (tensor<6xf32>) -> tensor<6xi32>
  %nan = nn.constant {value = dense<[0x7FC00000, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %zero = nn.constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %m = nn.max %nan, %zero : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %three = nn.constant {value = dense<[1.0, 2.0, 0x7FC00000]> : tensor<3xf32>} : () -> tensor<3xf32>
  %one = nn.constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %eq = nn.equal %three, %one : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
  %h = nn.constant {value = dense<[-2.5, 2.5, 1.5, 2.5]> : tensor<4xf32>} : () -> tensor<4xf32>
  %even = nn.round %h : (tensor<4xf32>) -> tensor<4xf32>
  %big = nn.constant {value = dense<16777217> : tensor<i64>} : () -> tensor<i64>
  %bigf = nn.cast %big {to = f32} : (tensor<i64>) -> tensor<f32>
  return %size, %sum, %t, %m, %eq, %even, %bigf : tensor<2xi64>, tensor<f32>, tensor<6xi32>, tensor<2xf32>, tensor<3xi1>, tensor<4xf32>, tensor<f32>
}

// -----

// Float math whose result is not exactly specified, or that has none, stays
// in the compiled code: transcendentals, powers, a float sum (its rounding
// depends on the order), a cast of a value out of the integer's range, and
// the maximum of no elements, and a maximum or minimum of -0 and +0 (the
// compiled code may pick either).
// CHECK-LABEL: func.func @float_inexact
// CHECK-DAG: nn.sqrt
// CHECK-DAG: nn.pow
// CHECK-DAG: nn.reduce_sum
// CHECK-DAG: nn.cast
// CHECK-DAG: nn.reduce_max %{{.*}} : (tensor<0xf32>) -> tensor<f32>
// CHECK-DAG: nn.reduce_max %{{.*}} : (tensor<2xf32>) -> tensor<f32>
// CHECK-DAG: nn.min
func.func @float_inexact() -> (tensor<2xf32>, tensor<2xf32>, tensor<f32>, tensor<2xi32>, tensor<f32>, tensor<f32>, tensor<2xf32>) {
  %a = nn.constant {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %s = nn.sqrt %a : (tensor<2xf32>) -> tensor<2xf32>
  %p = nn.pow %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %sum = nn.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
  %huge = nn.constant {value = dense<[3.0e9, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = nn.cast %huge {to = i32} : (tensor<2xf32>) -> tensor<2xi32>
  %none = nn.constant {value = dense<> : tensor<0xf32>} : () -> tensor<0xf32>
  %m = nn.reduce_max %none {axes = array<i64: 0>, keepdims = false} : (tensor<0xf32>) -> tensor<f32>
  %zeros = nn.constant {value = dense<[0.0, -0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %zm = nn.reduce_max %zeros {axes = array<i64: 0>, keepdims = false} : (tensor<2xf32>) -> tensor<f32>
  %nz = nn.constant {value = dense<-0.0> : tensor<f32>} : () -> tensor<f32>
  %zmin = nn.min %zeros, %nz : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  return %s, %p, %sum, %c, %m, %zm, %zmin : tensor<2xf32>, tensor<2xf32>, tensor<f32>, tensor<2xi32>, tensor<f32>, tensor<f32>, tensor<2xf32>
}

// -----

// Integer reductions of small constants fold: sum and product wrap, axes
// reduce with or without keepdims.
// CHECK-LABEL: func.func @reduce_int
// CHECK-DAG: nn.constant {value = dense<[4, 6]> : tensor<2xi64>}
// CHECK-DAG: nn.constant {value = dense<{{\[\[}}2], [12]]> : tensor<2x1xi64>}
// CHECK-DAG: nn.constant {value = dense<1> : tensor<i64>}
// CHECK-NOT: nn.reduce
func.func @reduce_int() -> (tensor<2xi64>, tensor<2x1xi64>, tensor<i64>) {
  %a = nn.constant {value = dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>} : () -> tensor<2x2xi64>
  %sum = nn.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<2x2xi64>) -> tensor<2xi64>
  %prod = nn.reduce_prod %a {axes = array<i64: 1>, keepdims = true} : (tensor<2x2xi64>) -> tensor<2x1xi64>
  %min = nn.reduce_min %a {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x2xi64>) -> tensor<i64>
  return %sum, %prod, %min : tensor<2xi64>, tensor<2x1xi64>, tensor<i64>
}

// -----

// Gather, Slice, Concat, Unsqueeze, Squeeze, Reshape, Cast of small integer constants.
// CHECK-LABEL: func.func @data_movement
// CHECK-DAG: nn.constant {value = dense<[30, 10]> : tensor<2xi64>}
// CHECK-DAG: nn.constant {value = dense<[40, 20]> : tensor<2xi64>}
// CHECK-DAG: nn.constant {value = dense<{{\[\[}}10, 20, 30, 40, 10]]> : tensor<1x5xi64>}
// CHECK-DAG: nn.constant {value = dense<[1.000000e+01, 2.000000e+01, 3.000000e+01, 4.000000e+01]> : tensor<4xf32>}
func.func @data_movement() -> (tensor<2xi64>, tensor<2xi64>, tensor<1x5xi64>, tensor<4xf32>) {
  %x = nn.constant {value = dense<[10, 20, 30, 40]> : tensor<4xi64>} : () -> tensor<4xi64>
  %i = nn.constant {value = dense<[2, -4]> : tensor<2xi64>} : () -> tensor<2xi64>
  %g = nn.gather %x, %i {axis = 0 : i64} : (tensor<4xi64>, tensor<2xi64>) -> tensor<2xi64>
  %start = nn.constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %end = nn.constant {value = dense<-5> : tensor<1xi64>} : () -> tensor<1xi64>
  %axes = nn.constant {value = dense<0> : tensor<1xi64>} : () -> tensor<1xi64>
  %steps = nn.constant {value = dense<-2> : tensor<1xi64>} : () -> tensor<1xi64>
  %s = nn.slice %x, %start, %end, %axes, %steps : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %one = nn.constant {value = dense<10> : tensor<1xi64>} : () -> tensor<1xi64>
  %c = nn.concat %x, %one {axis = 0 : i64} : (tensor<4xi64>, tensor<1xi64>) -> tensor<5xi64>
  %u = nn.unsqueeze %c {axes = array<i64: 0>} : (tensor<5xi64>) -> tensor<1x5xi64>
  %f = nn.cast %x {to = f32} : (tensor<4xi64>) -> tensor<4xf32>
  return %g, %s, %u, %f : tensor<2xi64>, tensor<2xi64>, tensor<1x5xi64>, tensor<4xf32>
}

// -----

// Ops that do nothing fold to their input.
// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]], %[[X]], %[[X]] : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
func.func @identities(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %t = nn.transpose %x {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = nn.constant {value = dense<[2, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %r = nn.reshape %x, %s {allowzero = false} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %c = nn.cast %x {to = f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %t, %r, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// A transposed integer constant folds (PyTorch's F.pad computes its pads so).
// CHECK-LABEL: func.func @transpose_constant
// CHECK: %[[T:.*]] = nn.constant {value = dense<{{\[\[}}0, 0, 0, 1], [0, 0, 3, 2]]> : tensor<2x4xi64>}
// CHECK-NEXT: return %[[T]]
func.func @transpose_constant() -> tensor<2x4xi64> {
  %p = nn.constant {value = dense<[[0, 0], [0, 0], [0, 3], [1, 2]]> : tensor<4x2xi64>} : () -> tensor<4x2xi64>
  %t = nn.transpose %p {perm = array<i64: 1, 0>} : (tensor<4x2xi64>) -> tensor<2x4xi64>
  return %t : tensor<2x4xi64>
}

// -----

// A check that holds whatever the inputs is dropped; one that depends on a
// value stays.
// CHECK-LABEL: func.func @checks
// CHECK-SAME: (%[[X:.*]]: tensor<3xi1>, %[[C:.*]]: tensor<i1>)
// CHECK-NEXT: %[[KEPT:.*]] = nn.check %[[X]], %[[C]] {message = "depends"}
// CHECK-NEXT: return %[[X]], %[[KEPT]]
func.func @checks(%x: tensor<3xi1>, %c: tensor<i1>) -> (tensor<3xi1>, tensor<3xi1>) {
  %true = nn.constant {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %a = nn.check %x, %true {message = "always"} : (tensor<3xi1>, tensor<i1>) -> tensor<3xi1>
  %b = nn.check %x, %c {message = "depends"} : (tensor<3xi1>, tensor<i1>) -> tensor<3xi1>
  return %a, %b : tensor<3xi1>, tensor<3xi1>
}

// -----

// Integer remainders fold: with the divisor's sign (Python's %), or the
// dividend's (fmod); a remainder by zero stays.
// CHECK-LABEL: func.func @mod_int
// CHECK-DAG: nn.constant {value = dense<[1, -2, 2, -1]> : tensor<4xi64>}
// CHECK-DAG: nn.constant {value = dense<[1, 1, -1, -1]> : tensor<4xi64>}
// CHECK-DAG: nn.mod %{{.*}}, %{{.*}} {fmod = false} : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
func.func @mod_int() -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) {
  %a = nn.constant {value = dense<[7, 7, -7, -7]> : tensor<4xi64>} : () -> tensor<4xi64>
  %b = nn.constant {value = dense<[3, -3, 3, -3]> : tensor<4xi64>} : () -> tensor<4xi64>
  %zero = nn.constant {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %py = nn.mod %a, %b {fmod = false} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %c = nn.mod %a, %b {fmod = true} : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %z = nn.mod %a, %zero {fmod = false} : (tensor<4xi64>, tensor<i64>) -> tensor<4xi64>
  return %py, %c, %z : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>
}

// -----

// 1 / x folds as the compiled division rounds it (IEEE 754's correctly
// rounded quotient, 0.333333343 for 1/3 in f32): torchvision's resize scale,
// min_size * (1 / size), then floor(size * scale), is a constant size.
// CHECK-LABEL: func.func @reciprocal
// CHECK-DAG: nn.constant {value = dense<8.000000e+02> : tensor<f32>}
// CHECK-DAG: nn.constant {value = dense<0.333333343> : tensor<f32>}
// CHECK-NOT: nn.reciprocal
// CHECK-NOT: nn.floor
func.func @reciprocal() -> (tensor<f32>, tensor<f32>) {
  %size = nn.constant {value = dense<320.0> : tensor<f32>} : () -> tensor<f32>
  %min = nn.constant {value = dense<800.0> : tensor<f32>} : () -> tensor<f32>
  %inverse = nn.reciprocal %size : (tensor<f32>) -> tensor<f32>
  %scale = nn.mul %min, %inverse : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %scaled = nn.mul %size, %scale : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %resized = nn.floor %scaled : (tensor<f32>) -> tensor<f32>
  %three = nn.constant {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %third = nn.reciprocal %three : (tensor<f32>) -> tensor<f32>
  return %resized, %third : tensor<f32>, tensor<f32>
}
