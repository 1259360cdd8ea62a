// RUN: nnc-opt %s --nnc-lower --nnc-cpu-bufferize | FileCheck %s

// CumSum's loop carries the running sum in one buffer updated in place: the
// add writes into the loop-carried accumulator (a fresh tensor per iteration
// would not bufferize: "Yield operand #1 is not equivalent to the
// corresponding iter bbArg").
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: memref<2x5xi32>, %[[Y:.*]]: memref<2x5xi32>
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK: arith.addi
func.func @main(%x: tensor<2x5xi32>) -> tensor<2x5xi32> {
  %0 = nn.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : (tensor<2x5xi32>) -> tensor<2x5xi32>
  return %0 : tensor<2x5xi32>
}
