// RUN: nnc-opt %s --nnc-share-concat-prefixes --split-input-file | FileCheck %s

// A DenseNet block: each layer reads the concat of all feature maps before
// it (the first, the block's input). The block's last concat inserts each input once, right after the input
// is computed; the layers' concats are slices of its prefixes.

// CHECK-LABEL: func.func @dense_block
// CHECK:       %[[ALL:.*]] = tensor.empty() : tensor<1x7x4x4xf32>
// CHECK-NEXT:  %[[P1:.*]] = tensor.insert_slice %arg0 into %[[ALL]][0, 0, 0, 0] [1, 3, 4, 4]
// CHECK-NEXT:  %[[F1:.*]] = call @layer(%arg0)
// CHECK-NEXT:  %[[P2:.*]] = tensor.insert_slice %[[F1]] into %[[P1]][0, 3, 0, 0] [1, 2, 4, 4]
// CHECK-NEXT:  %[[C2:.*]] = tensor.extract_slice %[[P2]][0, 0, 0, 0] [1, 5, 4, 4] [1, 1, 1, 1] : tensor<1x7x4x4xf32> to tensor<1x5x4x4xf32>
// CHECK-NEXT:  %[[F2:.*]] = call @layer2(%[[C2]])
// CHECK-NEXT:  %[[P3:.*]] = tensor.insert_slice %[[F2]] into %[[P2]][0, 5, 0, 0] [1, 2, 4, 4]
// CHECK-NOT:   tensor.empty
// CHECK-NOT:   tensor.insert_slice
// CHECK:       return %[[P3]]
func.func private @layer(tensor<1x3x4x4xf32>) -> tensor<1x2x4x4xf32>
func.func private @layer2(tensor<1x5x4x4xf32>) -> tensor<1x2x4x4xf32>
func.func @dense_block(%x: tensor<1x3x4x4xf32>) -> tensor<1x7x4x4xf32> {
  %f1 = call @layer(%x) : (tensor<1x3x4x4xf32>) -> tensor<1x2x4x4xf32>
  %e2 = tensor.empty() : tensor<1x5x4x4xf32>
  %a2 = tensor.insert_slice %x into %e2[0, 0, 0, 0] [1, 3, 4, 4] [1, 1, 1, 1] : tensor<1x3x4x4xf32> into tensor<1x5x4x4xf32>
  %c2 = tensor.insert_slice %f1 into %a2[0, 3, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x5x4x4xf32>
  %f2 = call @layer2(%c2) : (tensor<1x5x4x4xf32>) -> tensor<1x2x4x4xf32>
  %e3 = tensor.empty() : tensor<1x7x4x4xf32>
  %a3 = tensor.insert_slice %x into %e3[0, 0, 0, 0] [1, 3, 4, 4] [1, 1, 1, 1] : tensor<1x3x4x4xf32> into tensor<1x7x4x4xf32>
  %b3 = tensor.insert_slice %f1 into %a3[0, 3, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x7x4x4xf32>
  %c3 = tensor.insert_slice %f2 into %b3[0, 5, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x7x4x4xf32>
  return %c3 : tensor<1x7x4x4xf32>
}

// -----

// Left alone: inputs in another order, another axis, and a concat whose
// inputs are not all inserted (a pad's interior).

// CHECK-LABEL: func.func @unrelated
// CHECK-COUNT-3: tensor.empty
// CHECK-NOT:   tensor.extract_slice
func.func @unrelated(%x: tensor<1x3x4x4xf32>, %y: tensor<1x2x4x4xf32>) -> (tensor<1x5x4x4xf32>, tensor<1x3x8x4xf32>, tensor<1x3x6x4xf32>) {
  %e1 = tensor.empty() : tensor<1x5x4x4xf32>
  %a1 = tensor.insert_slice %y into %e1[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x5x4x4xf32>
  %c1 = tensor.insert_slice %x into %a1[0, 2, 0, 0] [1, 3, 4, 4] [1, 1, 1, 1] : tensor<1x3x4x4xf32> into tensor<1x5x4x4xf32>
  %e2 = tensor.empty() : tensor<1x3x8x4xf32>
  %a2 = tensor.insert_slice %x into %e2[0, 0, 0, 0] [1, 3, 4, 4] [1, 1, 1, 1] : tensor<1x3x4x4xf32> into tensor<1x3x8x4xf32>
  %c2 = tensor.insert_slice %x into %a2[0, 0, 4, 0] [1, 3, 4, 4] [1, 1, 1, 1] : tensor<1x3x4x4xf32> into tensor<1x3x8x4xf32>
  %e3 = tensor.empty() : tensor<1x3x6x4xf32>
  %c3 = tensor.insert_slice %x into %e3[0, 0, 1, 0] [1, 3, 4, 4] [1, 1, 1, 1] : tensor<1x3x4x4xf32> into tensor<1x3x6x4xf32>
  return %c1, %c2, %c3 : tensor<1x5x4x4xf32>, tensor<1x3x8x4xf32>, tensor<1x3x6x4xf32>
}

// -----

// Offsets given as values are left alone: the inserts would move above them.

// CHECK-LABEL: func.func @offsets_as_values
// CHECK-COUNT-2: tensor.empty
// CHECK-NOT:   tensor.extract_slice
func.func @offsets_as_values(%x: tensor<2xf32>, %y: tensor<2xf32>, %z: tensor<2xf32>) -> (tensor<4xf32>, tensor<6xf32>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<4xf32>
  %a = tensor.insert_slice %x into %e[%c0] [2] [1] : tensor<2xf32> into tensor<4xf32>
  %b = tensor.insert_slice %y into %a[%c2] [2] [1] : tensor<2xf32> into tensor<4xf32>
  %k4 = arith.constant 4 : index
  %e2 = tensor.empty() : tensor<6xf32>
  %a2 = tensor.insert_slice %x into %e2[%c0] [2] [1] : tensor<2xf32> into tensor<6xf32>
  %b2 = tensor.insert_slice %y into %a2[%c2] [2] [1] : tensor<2xf32> into tensor<6xf32>
  %c3 = tensor.insert_slice %z into %b2[%k4] [2] [1] : tensor<2xf32> into tensor<6xf32>
  return %b, %c3 : tensor<4xf32>, tensor<6xf32>
}
