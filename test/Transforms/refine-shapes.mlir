// RUN: nnc-opt %s --split-input-file --nn-refine-shapes | FileCheck %s

// An exporter's shape chain: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
// Folding and inference alternate until the reshape's result is static, which
// makes it a reshape to the input's own shape: it folds away. The function's
// result type follows.
// CHECK-LABEL: func.func @shape_chain
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %[[E:.*]] = nn.exp %[[X]] : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: return %[[E]] : tensor<2x8xf32>
func.func @shape_chain(%x: tensor<2x8xf32>) -> tensor<?x?xf32> {
  %s = nn.shape %x {start = 0 : i64, end = 2 : i64} : (tensor<2x8xf32>) -> tensor<2xi64>
  %i = nn.constant {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %d = nn.gather %s, %i {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %u = nn.unsqueeze %d {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
  %m = nn.constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %c = nn.concat %m, %u {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = nn.reshape %x, %c {allowzero = false} : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %e = nn.exp %r : (tensor<?x?xf32>) -> tensor<?x?xf32>
  return %e : tensor<?x?xf32>
}

// -----

// A dynamic dim the inputs do not fix stays dynamic; a broadcast against a
// static dim (other than 1) fixes it.
// CHECK-LABEL: func.func @partial
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[Y:.*]]: tensor<3x?xf32>) -> (tensor<?x4xf32>, tensor<3x4xf32>)
// CHECK: nn.relu %[[X]] : (tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: nn.add %[[X]], %[[Y]] : (tensor<?x4xf32>, tensor<3x?xf32>) -> tensor<3x4xf32>
func.func @partial(%x: tensor<?x4xf32>, %y: tensor<3x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %0 = nn.relu %x : (tensor<?x4xf32>) -> tensor<?x?xf32>
  %1 = nn.add %x, %y : (tensor<?x4xf32>, tensor<3x?xf32>) -> tensor<?x?xf32>
  return %0, %1 : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// Inference through several ops at once, and ConstantOfShape/Range of constants.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: -> (tensor<3x5xf32>, tensor<4xi64>)
// CHECK-DAG: nn.constant {value = dense<0.000000e+00> : tensor<3x5xf32>}
// CHECK-DAG: nn.constant {value = dense<[0, 2, 4, 6]> : tensor<4xi64>}
func.func @chain() -> (tensor<?x?xf32>, tensor<?xi64>) {
  %shape = nn.constant {value = dense<[3, 5]> : tensor<2xi64>} : () -> tensor<2xi64>
  %z = nn.constant_of_shape %shape {value = dense<0.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
  %start = nn.constant {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %limit = nn.constant {value = dense<8> : tensor<i64>} : () -> tensor<i64>
  %delta = nn.constant {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %r = nn.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %z, %r : tensor<?x?xf32>, tensor<?xi64>
}

// -----

// A Reshape by another tensor's dim of the input's origin (a detector's box
// regression reshaped by its proposals' count: both gathers of one index
// list) copies the input's dim, and its -1 is known.
// CHECK-LABEL: func.func @shared_origin
// CHECK: %[[R:.*]] = nn.reshape %{{.*}}, %{{.*}} {allowzero = false} : (tensor<?x12xf32>, tensor<2xi64>) -> tensor<?x12xf32>
// CHECK: %[[D:.*]] = nn.reshape %[[R]], %{{.*}} {allowzero = false} : (tensor<?x12xf32>, tensor<3xi64>) -> tensor<?x3x4xf32>
func.func @shared_origin(%boxes: tensor<9x4xf32>, %feats: tensor<9x12xf32>, %idx: tensor<?xi64>) -> tensor<?x?x4xf32> {
  %props = nn.gather %boxes, %idx {axis = 0 : i64} : (tensor<9x4xf32>, tensor<?xi64>) -> tensor<?x4xf32>
  %f = nn.gather %feats, %idx {axis = 0 : i64} : (tensor<9x12xf32>, tensor<?xi64>) -> tensor<?x12xf32>
  %w = nn.relu %f : (tensor<?x12xf32>) -> tensor<?x12xf32>
  %s = nn.shape %props {start = 0 : i64, end = 2 : i64} : (tensor<?x4xf32>) -> tensor<2xi64>
  %i = nn.constant {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %n = nn.gather %s, %i {axis = 0 : i64} : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
  %u = nn.unsqueeze %n {axes = array<i64: 0>} : (tensor<i64>) -> tensor<1xi64>
  %m = nn.constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %c = nn.concat %u, %m {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = nn.reshape %w, %c {allowzero = false} : (tensor<?x12xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %four = nn.constant {value = dense<4> : tensor<1xi64>} : () -> tensor<1xi64>
  %c3 = nn.concat %u, %m, %four {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %d = nn.reshape %r, %c3 {allowzero = false} : (tensor<?x?xf32>, tensor<3xi64>) -> tensor<?x?x4xf32>
  return %d : tensor<?x?x4xf32>
}

// -----

// Not when the named dim is another tensor's of its own origin: a Reshape of
// x by y's count copies x's dim where that count is 0 (allowzero = false),
// so r's dim is y's or x's, and xp reshaped by r's count keeps its -1.
// CHECK-LABEL: func.func @other_origin
// CHECK: nn.reshape %{{.*}}, %{{.*}} {allowzero = false} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
// CHECK-NOT: dense<[0, -1]>
// CHECK: return
func.func @other_origin(%x: tensor<?x?xf32>, %xp: tensor<?x?xf32>, %y: tensor<?xf32>) -> tensor<?x?xf32> {
  %sy = nn.shape %y {start = 0 : i64, end = 1 : i64} : (tensor<?xf32>) -> tensor<1xi64>
  %m = nn.constant {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %c = nn.concat %sy, %m {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %r = nn.reshape %x, %c {allowzero = false} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %rp = nn.reshape %xp, %c {allowzero = false} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %sr = nn.shape %r {start = 0 : i64, end = 1 : i64} : (tensor<?x?xf32>) -> tensor<1xi64>
  %c2 = nn.concat %sr, %m {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %out = nn.reshape %rp, %c2 {allowzero = false} : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %out : tensor<?x?xf32>
}
