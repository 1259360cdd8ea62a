// RUN: nnc-opt %s --nnc-readonly-inputs | FileCheck %s

// Every tensor argument of a public function becomes read-only for
// bufferization; private functions and non-tensor arguments are left alone.

// CHECK-LABEL: func.func @main
// CHECK-SAME: %{{.*}}: tensor<5xf32> {bufferization.writable = false}
// CHECK-SAME: %{{.*}}: tensor<2xi64> {bufferization.writable = false, nn.name = "indices"}
// CHECK-SAME: %{{.*}}: index)
func.func @main(%data: tensor<5xf32>, %indices: tensor<2xi64> {nn.name = "indices"}, %n: index) -> tensor<5xf32> {
  return %data : tensor<5xf32>
}

// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%{{.*}}: tensor<5xf32>)
func.func private @helper(%data: tensor<5xf32>) -> tensor<5xf32> {
  return %data : tensor<5xf32>
}
