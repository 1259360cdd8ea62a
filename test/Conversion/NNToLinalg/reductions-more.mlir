// RUN: nnc-opt %s --nnc-convert-nn-to-linalg --split-input-file | FileCheck %s

// Mean: the sum over both axes, kept as size-1 dims, divided by 3 * 4.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @reduce_mean
// CHECK-DAG: %[[N:.*]] = arith.constant 1.200000e+01 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<2xf32>)
// CHECK: arith.addf
// CHECK: %[[K:.*]] = tensor.expand_shape %[[SUM]] {{\[\[}}0, 1, 2]] output_shape [2, 1, 1]
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[K]] : tensor<2x1x1xf32>)
// CHECK: ^bb0(%[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT: linalg.yield %[[D]] : f32
// CHECK: tensor.collapse_shape %[[MEAN]] {{\[\[}}0, 1, 2]] : tensor<2x1x1xf32> into tensor<2xf32>
func.func @reduce_mean(%x: tensor<2x3x4xf32>) -> tensor<2xf32> {
  %0 = nn.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Integer mean divides with divsi.
// CHECK-LABEL: func.func @reduce_mean_i32
// CHECK-DAG: %[[N:.*]] = arith.constant 4 : i32
// CHECK: arith.addi
// CHECK: ^bb0(%[[S:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[D:.*]] = arith.divsi %[[S]], %[[N]] : i32
func.func @reduce_mean_i32(%x: tensor<2x4xi32>) -> tensor<2x1xi32> {
  %0 = nn.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x4xi32>) -> tensor<2x1xi32>
  return %0 : tensor<2x1xi32>
}

// -----

// Float max / min start from -inf / +inf; which of -0 and +0 they keep is
// left open (nsz), NaN propagates.
// CHECK-LABEL: func.func @reduce_max_min_f32
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NINF]] : f32)
// CHECK: ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: arith.maximumf %[[ACC]], %[[V]] fastmath<nsz> : f32
// CHECK: %[[PINF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: linalg.fill ins(%[[PINF]] : f32)
// CHECK: ^bb0(%[[V2:.*]]: f32, %[[ACC2:.*]]: f32):
// CHECK-NEXT: arith.minimumf %[[ACC2]], %[[V2]] fastmath<nsz> : f32
func.func @reduce_max_min_f32(%x: tensor<2x4xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = nn.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<2xf32>
  %1 = nn.reduce_min %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// Signed integers start from the type's lowest / highest value.
// CHECK-LABEL: func.func @reduce_max_min_i16
// CHECK: %[[LO:.*]] = arith.constant -32768 : i16
// CHECK: linalg.fill ins(%[[LO]] : i16)
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : i16
// CHECK: %[[HI:.*]] = arith.constant 32767 : i16
// CHECK: linalg.fill ins(%[[HI]] : i16)
// CHECK: arith.minsi %{{.*}}, %{{.*}} : i16
func.func @reduce_max_min_i16(%x: tensor<2x4xi16>) -> (tensor<2xi16>, tensor<2xi16>) {
  %0 = nn.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xi16>) -> tensor<2xi16>
  %1 = nn.reduce_min %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xi16>) -> tensor<2xi16>
  return %0, %1 : tensor<2xi16>, tensor<2xi16>
}

// -----

// Unsigned integers start from 0 / all ones (65535 prints as -1) and compare unsigned.
// CHECK-LABEL: func.func @reduce_max_min_ui16
// CHECK: %[[LO:.*]] = arith.constant 0 : i16
// CHECK: linalg.fill ins(%[[LO]] : i16)
// CHECK: arith.maxui %{{.*}}, %{{.*}} : i16
// CHECK: %[[HI:.*]] = arith.constant -1 : i16
// CHECK: linalg.fill ins(%[[HI]] : i16)
// CHECK: arith.minui %{{.*}}, %{{.*}} : i16
func.func @reduce_max_min_ui16(%x: tensor<2x4xui16>) -> (tensor<2xui16>, tensor<2xui16>) {
  %0 = nn.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xui16>) -> tensor<2xui16>
  %1 = nn.reduce_min %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xui16>) -> tensor<2xui16>
  return %0, %1 : tensor<2xui16>, tensor<2xui16>
}

// -----

// CHECK-LABEL: func.func @reduce_prod
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: linalg.fill ins(%[[ONE]] : f32)
// CHECK: ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[ACC]], %[[V]] : f32
// CHECK-NEXT: linalg.yield %[[P]] : f32
func.func @reduce_prod(%x: tensor<2x4xf32>) -> tensor<2xf32> {
  %0 = nn.reduce_prod %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_prod_i64
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: linalg.fill ins(%[[ONE]] : i64)
// CHECK: arith.muli %{{.*}}, %{{.*}} : i64
func.func @reduce_prod_i64(%x: tensor<2x4xi64>) -> tensor<2xi64> {
  %0 = nn.reduce_prod %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// L1 sums absolute values: absf for floats, absi for signed integers, the
// value itself for unsigned ones.
// CHECK-LABEL: func.func @reduce_l1
// CHECK: ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[A:.*]] = math.absf %[[V]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[A]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: ^bb0(%[[VI:.*]]: i32, %[[ACCI:.*]]: i32):
// CHECK-NEXT: %[[AI:.*]] = math.absi %[[VI]] : i32
// CHECK-NEXT: %[[SI:.*]] = arith.addi %[[ACCI]], %[[AI]] : i32
// CHECK-NEXT: linalg.yield %[[SI]] : i32
// CHECK: ^bb0(%[[VU:.*]]: i32, %[[ACCU:.*]]: i32):
// CHECK-NEXT: %[[SU:.*]] = arith.addi %[[ACCU]], %[[VU]] : i32
// CHECK-NEXT: linalg.yield %[[SU]] : i32
func.func @reduce_l1(%x: tensor<2x4xf32>, %i: tensor<2x4xi32>, %u: tensor<2x4xui32>) -> (tensor<2xf32>, tensor<2xi32>, tensor<2xui32>) {
  %0 = nn.reduce_l1 %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<2xf32>
  %1 = nn.reduce_l1 %i {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xi32>) -> tensor<2xi32>
  %2 = nn.reduce_l1 %u {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xui32>) -> tensor<2xui32>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xi32>, tensor<2xui32>
}

// -----

// L2: the sum of squares, then sqrt (in f32 for f16).
// CHECK-LABEL: func.func @reduce_l2_f16
// CHECK: ^bb0(%[[V:.*]]: f16, %[[ACC:.*]]: f16):
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f16
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[SQ]] : f16
// CHECK: ^bb0(%[[T:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[T]] : f16 to f32
// CHECK-NEXT: %[[R:.*]] = math.sqrt %[[W]] : f32
// CHECK-NEXT: %[[N:.*]] = arith.truncf %[[R]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[N]] : f16
func.func @reduce_l2_f16(%x: tensor<2x4xf16>) -> tensor<2xf16> {
  %0 = nn.reduce_l2 %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xf16>) -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

// Sum of squares: no sqrt afterwards.
// CHECK-LABEL: func.func @reduce_sum_square
// CHECK: ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK-NOT: math.sqrt
func.func @reduce_sum_square(%x: tensor<2x4xf32>) -> tensor<2xf32> {
  %0 = nn.reduce_sum_square %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Log-sum: the sum, then log.
// CHECK-LABEL: func.func @reduce_log_sum
// CHECK: ^bb0(%[[V:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: arith.addf %[[ACC]], %[[V]] : f32
// CHECK: ^bb0(%[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[L:.*]] = math.log %[[S]] : f32
// CHECK-NEXT: linalg.yield %[[L]] : f32
func.func @reduce_log_sum(%x: tensor<2x4xf32>) -> tensor<2xf32> {
  %0 = nn.reduce_log_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Log-sum-exp shifts by the maximum (by 0 where it is infinite), sums
// exp(x - shift) and adds the shift back to the log.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @reduce_log_sum_exp
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>)
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NINF]] : f32)
// CHECK: arith.maximumf
// CHECK: %[[M:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 1]
// CHECK: %[[SHIFT:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<2x1xf32>)
// CHECK: ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-DAG: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ABS:.*]] = math.absf %[[V]] : f32
// CHECK-DAG: %[[FIN:.*]] = arith.cmpf one, %[[ABS]], %[[INF]] : f32
// CHECK-DAG: %[[SEL:.*]] = arith.select %[[FIN]], %[[V]], %[[ZERO]] : f32
// CHECK: linalg.yield %[[SEL]] : f32
// CHECK: %[[E:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]], {{.*}} ins(%[[X]], %[[SHIFT]] : tensor<2x4xf32>, tensor<2x1xf32>)
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[A]], %[[B]] : f32
// CHECK-NEXT: %[[EX:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[EX]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[E]] : tensor<2x4xf32>)
// CHECK: arith.addf
// CHECK: %[[SUM:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 1]
// CHECK: linalg.generic {{.*}} ins(%[[SUM]], %[[SHIFT]] : tensor<2x1xf32>, tensor<2x1xf32>)
// CHECK: ^bb0(%[[S:.*]]: f32, %[[SH:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[L:.*]] = math.log %[[S]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[L]], %[[SH]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @reduce_log_sum_exp(%x: tensor<2x4xf32>) -> tensor<2xf32> {
  %0 = nn.reduce_log_sum_exp %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Reducing every axis of a 2-D tensor gives a 0-D one: kept 1x1 dims reach
// rank 0 through a collapse with an empty reassociation.
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @reduce_sum_all
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[SCALAR]]], iterator_types = ["reduction", "reduction"]} {{.*}} outs(%{{.*}} : tensor<f32>)
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1x1xf32> into tensor<f32>
func.func @reduce_sum_all(%x: tensor<2x4xf32>) -> tensor<f32> {
  %0 = nn.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// ArgMin with select_last_index: a later equal value wins (ole), and any NaN
// (uno) wins, so the last NaN is reported; the first element always wins so
// the index is valid. Starts from +inf.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @argmin_last
// CHECK: %[[PINF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[VALS:.*]] = linalg.fill ins(%[[PINF]] : f32) outs(%{{.*}} : tensor<2xf32>)
// CHECK: %[[IDXS:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%{{.*}} : tensor<2xi64>)
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [#[[IN]], #[[OUT]], #[[OUT]]], iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<2x8xf32>) outs(%[[VALS]], %[[IDXS]] : tensor<2xf32>, tensor<2xi64>)
// CHECK: ^bb0(%[[V:.*]]: f32, %[[BEST:.*]]: f32, %[[BI:.*]]: i64):
// CHECK-DAG: %[[IX:.*]] = linalg.index 1 : index
// CHECK-DAG: %[[I:.*]] = arith.index_cast %[[IX]] : index to i64
// CHECK-DAG: %[[LE:.*]] = arith.cmpf ole, %[[V]], %[[BEST]] : f32
// CHECK-DAG: %[[NAN:.*]] = arith.cmpf uno, %[[V]], %[[V]] : f32
// CHECK-DAG: %[[LEORNAN:.*]] = arith.ori %[[LE]], %[[NAN]] : i1
// CHECK-DAG: %[[Z:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[FIRST:.*]] = arith.cmpi eq, %[[I]], %[[Z]] : i64
// CHECK-DAG: %[[TAKE:.*]] = arith.ori %[[LEORNAN]], %[[FIRST]] : i1
// CHECK-DAG: %[[NV:.*]] = arith.select %[[TAKE]], %[[V]], %[[BEST]] : f32
// CHECK-DAG: %[[NI:.*]] = arith.select %[[TAKE]], %[[I]], %[[BI]] : i64
// CHECK: linalg.yield %[[NV]], %[[NI]] : f32, i64
// CHECK: tensor.expand_shape %[[R]]#1 {{\[\[}}0, 1]] output_shape [2, 1] : tensor<2xi64> into tensor<2x1xi64>
func.func @argmin_last(%x: tensor<2x8xf32>) -> tensor<2x1xi64> {
  %0 = nn.argmin %x {axis = 1 : i64, keepdims = true, select_last_index = true} : (tensor<2x8xf32>) -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}

// -----

// ArgMin without select_last_index keeps the first minimum (olt) and the
// first NaN: a NaN wins only over a best that is not one.
// CHECK-LABEL: func.func @argmin_first
// CHECK: ^bb0(%[[V:.*]]: f32, %[[BEST:.*]]: f32, %{{.*}}: i64):
// CHECK-DAG: %[[LT:.*]] = arith.cmpf olt, %[[V]], %[[BEST]] : f32
// CHECK-DAG: %[[NAN:.*]] = arith.cmpf uno, %[[V]], %[[V]] : f32
// CHECK-DAG: %[[BESTNAN:.*]] = arith.cmpf uno, %[[BEST]], %[[BEST]] : f32
// CHECK-DAG: %[[NOTBESTNAN:.*]] = arith.xori %[[BESTNAN]], %{{.*}} : i1
// CHECK-DAG: %[[NEWNAN:.*]] = arith.andi %[[NAN]], %[[NOTBESTNAN]] : i1
// CHECK-DAG: arith.ori %[[LT]], %[[NEWNAN]] : i1
func.func @argmin_first(%x: tensor<2x8xf32>) -> tensor<2xi64> {
  %0 = nn.argmin %x {axis = 1 : i64, keepdims = false, select_last_index = false} : (tensor<2x8xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// ArgMax over axis 0 of integers: starts from the lowest value, sgt keeps the
// first maximum; unsigned with select_last_index uses uge.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @argmax_int
// CHECK: %[[LO:.*]] = arith.constant -2147483648 : i32
// CHECK: linalg.fill ins(%[[LO]] : i32)
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]], #[[OUT]]], iterator_types = ["reduction", "parallel"]}
// CHECK: linalg.index 0 : index
// CHECK: arith.cmpi sgt, %{{.*}}, %{{.*}} : i32
// CHECK: %[[ULO:.*]] = arith.constant 0 : i8
// CHECK: linalg.fill ins(%[[ULO]] : i8)
// CHECK: arith.cmpi uge, %{{.*}}, %{{.*}} : i8
func.func @argmax_int(%x: tensor<3x5xi32>, %u: tensor<3x5xui8>) -> (tensor<5xi64>, tensor<5xi64>) {
  %0 = nn.argmax %x {axis = 0 : i64, keepdims = false, select_last_index = false} : (tensor<3x5xi32>) -> tensor<5xi64>
  %1 = nn.argmax %u {axis = 0 : i64, keepdims = false, select_last_index = true} : (tensor<3x5xui8>) -> tensor<5xi64>
  return %0, %1 : tensor<5xi64>, tensor<5xi64>
}

// -----

// LogSoftmax: x - max - log(sum(exp(x - max))).
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func.func @log_softmax
// CHECK: arith.maximumf
// CHECK: %[[M:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 1]
// CHECK: %[[SH:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]], {{.*}} ins(%{{.*}}, %[[M]] : tensor<2x8xf32>, tensor<2x1xf32>)
// CHECK: arith.subf
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[SH]] : tensor<2x8xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[E]] : tensor<2x8xf32>)
// CHECK: arith.addf
// CHECK: %[[S:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 1]
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[COL]], #[[ID]]], {{.*}} ins(%[[SH]], %[[S]] : tensor<2x8xf32>, tensor<2x1xf32>)
// CHECK: ^bb0(%[[V:.*]]: f32, %[[SUM:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[L:.*]] = math.log %[[SUM]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.subf %[[V]], %[[L]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NOT: arith.divf
func.func @log_softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = nn.log_softmax %x {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// LayerNorm from axis 1: mean and variance over (d1, d2) divided by 12,
// rsqrt(var + eps), then scale [3, 4] and bias [4] broadcast from the right.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[RED:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[STAT:.*]] = affine_map<(d0, d1, d2) -> (d0, 0, 0)>
// CHECK-DAG: #[[SCALE:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[BIAS:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[SC:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK-DAG: %[[N:.*]] = arith.constant 1.200000e+01 : f32
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[RED]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[X]] : tensor<2x3x4xf32>)
// CHECK: arith.addf
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x1x1xf32>)
// CHECK: arith.divf %{{.*}}, %[[N]] : f32
// CHECK: %[[C:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[STAT]], #[[ID]]], {{.*}} ins(%[[X]], %[[MEAN]] : tensor<2x3x4xf32>, tensor<2x1x1xf32>)
// CHECK: arith.subf
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<2x3x4xf32>)
// CHECK: arith.mulf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[RED]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[SQ]] : tensor<2x3x4xf32>)
// CHECK: %[[INV:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x1x1xf32>)
// CHECK: ^bb0(%[[S:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[VAR:.*]] = arith.divf %[[S]], %[[N]] : f32
// CHECK-NEXT: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT: %[[VE:.*]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK-NEXT: %[[RS:.*]] = math.rsqrt %[[VE]] : f32
// CHECK-NEXT: linalg.yield %[[RS]] : f32
// CHECK: %[[NORM:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[STAT]], #[[ID]]], {{.*}} ins(%[[C]], %[[INV]] : tensor<2x3x4xf32>, tensor<2x1x1xf32>)
// CHECK: arith.mulf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SCALE]], #[[BIAS]], #[[ID]]], {{.*}} ins(%[[NORM]], %[[SC]], %[[B]] : tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<4xf32>)
// CHECK: ^bb0(%[[Y:.*]]: f32, %[[G:.*]]: f32, %[[BE:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[YG:.*]] = arith.mulf %[[Y]], %[[G]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[YG]], %[[BE]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @layer_norm(%x: tensor<2x3x4xf32>, %s: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = nn.layer_norm %x, %s, %b {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Without a bias the last generic only scales.
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @layer_norm_no_bias
// CHECK: math.rsqrt
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[ROW]], #{{.*}}], {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4xf32>)
// CHECK: ^bb0(%[[Y:.*]]: f32, %[[G:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[Y]], %[[G]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @layer_norm_no_bias(%x: tensor<2x4xf32>, %s: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = nn.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// InstanceNorm: statistics over the spatial dims (16 elements) per (n, c),
// then the per-channel scale and bias viewed as [C, 1, 1].
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[RED:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// CHECK-LABEL: func.func @instance_norm
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x4x4xf32>, %[[SC:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK-DAG: %[[N:.*]] = arith.constant 1.600000e+01 : f32
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[RED]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%[[X]] : tensor<1x3x4x4xf32>)
// CHECK: arith.divf %{{.*}}, %[[N]] : f32
// CHECK: arith.subf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[RED]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK: %[[EPS:.*]] = arith.constant 1.000000e-03 : f32
// CHECK: math.rsqrt
// CHECK: %[[NORM:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK-DAG: %[[SV:.*]] = tensor.expand_shape %[[SC]] {{\[\[}}0, 1, 2]] output_shape [3, 1, 1]
// CHECK-DAG: %[[BV:.*]] = tensor.expand_shape %[[B]] {{\[\[}}0, 1, 2]] output_shape [3, 1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[CH]], #[[ID]]], {{.*}} ins(%[[NORM]], %[[SV]], %[[BV]] : tensor<1x3x4x4xf32>, tensor<3x1x1xf32>, tensor<3x1x1xf32>)
// CHECK: ^bb0(%[[Y:.*]]: f32, %[[G:.*]]: f32, %[[BE:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[YG:.*]] = arith.mulf %[[Y]], %[[G]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[YG]], %[[BE]] : f32
func.func @instance_norm(%x: tensor<1x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = nn.instance_norm %x, %s, %b {epsilon = 1.0e-03 : f32} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// Exclusive, reverse CumSum: the loop walks the axis from the end
// (position 4 - i) and writes the running sum before adding the element.
// CHECK-LABEL: func.func @cumsum_exclusive_reverse
// CHECK-SAME: (%[[X:.*]]: tensor<2x5xi32>)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[OUT:.*]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.*}} : tensor<2x5xi32>)
// CHECK: %[[ACC:.*]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.*}} : tensor<2x1xi32>)
// CHECK: %[[R:.*]]:2 = scf.for %[[I:.*]] = %[[C0]] to %[[C5]] step %[[C1]] iter_args(%[[RES:.*]] = %[[OUT]], %[[PARTIAL:.*]] = %[[ACC]]) -> (tensor<2x5xi32>, tensor<2x1xi32>)
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[POS:.*]] = arith.subi %[[C4]], %[[I]] : index
// CHECK: %[[SL:.*]] = tensor.extract_slice %[[X]][0, %[[POS]]] [2, 1] [1, 1] : tensor<2x5xi32> to tensor<2x1xi32>
// The running sum is stored before it is updated, in place, into itself.
// CHECK: %[[W:.*]] = tensor.insert_slice %[[PARTIAL]] into %[[RES]][0, %[[POS]]] [2, 1] [1, 1] : tensor<2x1xi32> into tensor<2x5xi32>
// CHECK: %[[NEXT:.*]] = linalg.generic {{.*}} ins(%[[PARTIAL]], %[[SL]] : tensor<2x1xi32>, tensor<2x1xi32>) outs(%[[PARTIAL]] : tensor<2x1xi32>)
// CHECK: arith.addi
// CHECK: scf.yield %[[W]], %[[NEXT]] : tensor<2x5xi32>, tensor<2x1xi32>
// CHECK: return %[[R]]#0
func.func @cumsum_exclusive_reverse(%x: tensor<2x5xi32>) -> tensor<2x5xi32> {
  %0 = nn.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : (tensor<2x5xi32>) -> tensor<2x5xi32>
  return %0 : tensor<2x5xi32>
}

// -----

// Inclusive, forward: the position is the induction variable and the slice
// written is the new running sum.
// CHECK-LABEL: func.func @cumsum_inclusive
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[RES:.*]] = %{{.*}}, %[[PARTIAL:.*]] = %{{.*}})
// CHECK-NOT: arith.subi
// CHECK: tensor.extract_slice %{{.*}}[%[[I]], 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<1x3xf32>
// CHECK: %[[NEXT:.*]] = linalg.generic
// CHECK: arith.addf
// CHECK: %[[W:.*]] = tensor.insert_slice %[[NEXT]] into %[[RES]][%[[I]], 0] [1, 3] [1, 1]
// CHECK: scf.yield %[[W]], %[[NEXT]]
func.func @cumsum_inclusive(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = nn.cumsum %x {axis = 0 : i64, exclusive = false, reverse = false} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
