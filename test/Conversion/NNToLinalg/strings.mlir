// RUN: nnc-opt %s --nnc-convert-nn-to-linalg --split-input-file -verify-diagnostics | FileCheck %s

// String tensors (docs/strings.md): an element is the address of its text,
// held as i64; data movement copies addresses, a Cast calls the runtime once
// per element on the host.
// CHECK-LABEL: func.func private @nnc_strings_format(i32, i64) -> i64
// CHECK-LABEL: func.func @to_text(
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32>) -> tensor<3x2xi64>
// CHECK: tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: scf.for
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: func.call @nnc_strings_format(%c1_i32, %{{.*}}) : (i32, i64) -> i64
// CHECK: tensor.expand_shape
// CHECK: linalg.generic
func.func @to_text(%x: tensor<2x3xf32>) -> tensor<3x2x!nn.string> {
  %s = nn.cast %x {to = !nn.string} : (tensor<2x3xf32>) -> tensor<2x3x!nn.string>
  %t = nn.transpose %s {perm = array<i64: 1, 0>} : (tensor<2x3x!nn.string>) -> tensor<3x2x!nn.string>
  return %t : tensor<3x2x!nn.string>
}

// -----

// Ops that would compare or combine the addresses are refused by name.
func.func @compare(%a: tensor<2x!nn.string>, %b: tensor<2x!nn.string>) -> tensor<2xi1> {
  // expected-error @+1 {{cannot compile nn.equal with string tensors: only Cast, StringNormalizer, Shape, Size and ops that move elements}}
  %e = nn.equal %a, %b : (tensor<2x!nn.string>, tensor<2x!nn.string>) -> tensor<2xi1>
  return %e : tensor<2xi1>
}
