// RUN: nnc-opt %s --nnc-cuda-constants-to-argument --allow-unregistered-dialect --mlir-print-elementsattrs-with-hex-if-larger=-1 | FileCheck %s

// Every constant a public function reads gets a 64-byte aligned place in one
// block, passed as a new trailing argument; each read becomes a view of it,
// and the block's bytes (little-endian, an i1 per byte, splats expanded)
// replace the globals.

memref.global "private" constant @w : memref<2xf32> = dense<[1.0, 2.0]>
memref.global "private" constant @flags : memref<3xi1> = dense<[true, false, true]>
memref.global "private" constant @splat : memref<4xf16> = dense<1.5>

// CHECK-LABEL: func.func @main
// CHECK-SAME:    %[[WS:.*]]: memref<64xi8>, %[[C:.*]]: memref<192xi8>)
// CHECK-SAME:    nnc.constants_size = 192 : i64
// CHECK:         %[[O0:.*]] = arith.constant 0 : index
// CHECK:         %[[W:.*]] = memref.view %[[C]][%[[O0]]][] : memref<192xi8> to memref<2xf32>
// CHECK:         %[[O64:.*]] = arith.constant 64 : index
// CHECK:         %[[F:.*]] = memref.view %[[C]][%[[O64]]][] : memref<192xi8> to memref<3xi1>
// CHECK:         %[[O128:.*]] = arith.constant 128 : index
// CHECK:         %[[S:.*]] = memref.view %[[C]][%[[O128]]][] : memref<192xi8> to memref<4xf16>
// CHECK:         %[[W2:.*]] = memref.view %[[C]][%{{.*}}][] : memref<192xi8> to memref<2xf32>
// CHECK:         linalg.add ins(%{{.*}}, %[[W]] :
// CHECK:         linalg.add ins(%{{.*}}, %[[W2]] :
// CHECK:         "test.use"(%[[F]], %[[S]])
// CHECK-NOT:   memref.global "private"
// CHECK:       memref.global "public" constant @nnc_constants : memref<192xi8> = dense_resource<nnc_constants> {alignment = 64 : i64}
// (the resource's alignment, 64) 1.0f, 2.0f | to 64: true, false, true | to
// 128: four f16 1.5 (0x3E00) | to 192
// CHECK:       nnc_constants: "0x400000000000803F00000040000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001000100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000003E003E003E003E0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
func.func @main(%x: memref<2xf32>, %y: memref<2xf32>, %ws: memref<64xi8>) {
  %w = memref.get_global @w : memref<2xf32>
  %f = memref.get_global @flags : memref<3xi1>
  %s = memref.get_global @splat : memref<4xf16>
  %w2 = memref.get_global @w : memref<2xf32>
  linalg.add ins(%x, %w : memref<2xf32>, memref<2xf32>) outs(%y : memref<2xf32>)
  linalg.add ins(%y, %w2 : memref<2xf32>, memref<2xf32>) outs(%y : memref<2xf32>)
  "test.use"(%f, %s) : (memref<3xi1>, memref<4xf16>) -> ()
  return
}
