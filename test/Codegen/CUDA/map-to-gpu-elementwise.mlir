// RUN: nnc-opt %s --nnc-cuda-map-to-gpu --canonicalize --split-input-file | FileCheck %s

// An elementwise op: its iterations, linearized with the innermost dim
// fastest, one per thread of 256-thread blocks (586 of them for 150000
// elements); a guard for the last block.

// CHECK-LABEL: func.func @elementwise
// CHECK-DAG:   %[[C586:.*]] = arith.constant 586 : index
// CHECK-DAG:   %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG:   %[[TOTAL:.*]] = arith.constant 150000 : index
// CHECK-DAG:   %[[C500:.*]] = arith.constant 500 : index
// CHECK:       gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C586]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C256]],
// CHECK:         %[[BASE:.*]] = arith.muli %[[BX]], %[[C256]]
// CHECK:         %[[ID:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK:         %[[IN:.*]] = arith.cmpi ult, %[[ID]], %[[TOTAL]]
// CHECK:         scf.if %[[IN]] {
// CHECK:           %[[COL:.*]] = arith.remui %[[ID]], %[[C500]]
// CHECK:           %[[ROW:.*]] = arith.divui %[[ID]], %[[C500]]
// CHECK:           memref.load %{{.*}}[%[[ROW]], %[[COL]]] : memref<300x500xf32>
// CHECK:           arith.addf
// CHECK:           memref.store %{{.*}}, %{{.*}}[%[[ROW]], %[[COL]]] : memref<300x500xf32>
// CHECK:         gpu.terminator
// CHECK-NOT:   linalg.
func.func @elementwise(%a: memref<300x500xf32>, %b: memref<300x500xf32>, %c: memref<300x500xf32>) {
  linalg.add ins(%a, %b : memref<300x500xf32>, memref<300x500xf32>) outs(%c : memref<300x500xf32>)
  return
}

// -----

// A matmul: one thread per output, the reduction a loop in each thread.
// Small loops get one block of whole warps (6 outputs: 32 threads).

// CHECK-LABEL: func.func @matmul
// CHECK-DAG:   %[[C32:.*]] = arith.constant 32 : index
// CHECK-DAG:   %[[C6:.*]] = arith.constant 6 : index
// CHECK:       gpu.launch {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C32]],
// CHECK:         arith.cmpi ult, %[[TX]], %[[C6]]
// CHECK:         scf.if
// CHECK:           scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             memref.load %{{.*}}[%{{.*}}, %[[K]]] : memref<2x4xf32>
// CHECK:             memref.load %{{.*}}[%[[K]], %{{.*}}] : memref<4x3xf32>
// CHECK:             arith.mulf
// CHECK:             arith.addf
// CHECK-NOT:   linalg.
func.func @matmul(%a: memref<2x4xf32>, %b: memref<4x3xf32>, %c: memref<2x3xf32>) {
  linalg.matmul ins(%a, %b : memref<2x4xf32>, memref<4x3xf32>) outs(%c : memref<2x3xf32>)
  return
}

// -----

// A reduction over the outer dim: loops are reordered so that the parallel
// dim is spread over threads and the reduction (too short to split, see
// split-reduction.mlir) runs inside each.

// CHECK-LABEL: func.func @outer_reduction
// CHECK:       gpu.launch {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in
// CHECK:         scf.if
// CHECK:           scf.for %[[K:.*]] = {{.*}} {
// CHECK:             memref.load %{{.*}}[%[[K]], %[[TX]]] : memref<16x40xf32>
func.func @outer_reduction(%a: memref<16x40xf32>, %c: memref<40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(k, j) -> (k, j)>, affine_map<(k, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<16x40xf32>) outs(%c : memref<40xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Code that is no parallel loop (a scatter's sequential updates) runs in one
// thread on the device; views stay on the host.

// CHECK-LABEL: func.func @serial
// CHECK-DAG:   %[[ONE:.*]] = arith.constant 1 : index
// CHECK:       %[[V:.*]] = memref.view
// CHECK:       gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]]) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]], %{{.*}} = %[[ONE]])
// CHECK:         scf.for
// CHECK:           memref.store %{{.*}}, %[[V]]
// CHECK:         gpu.terminator
func.func @serial(%ws: memref<64xi8>, %i: memref<2xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %f = arith.constant 1.0 : f32
  %v = memref.view %ws[%c0][] : memref<64xi8> to memref<4xf32>
  scf.for %k = %c0 to %c2 step %c1 {
    %j = memref.load %i[%k] : memref<2xindex>
    memref.store %f, %v[%j] : memref<4xf32>
  }
  return
}

// -----

// A reduction to a 0-D result has no parallel loop: it runs serially, and the
// launch goes after the last serial op, below the host's constants and views
// that the loops between them use (placed first, they did not dominate it).

// CHECK-LABEL: func.func @serial_full_reduction
// CHECK:       %[[OUT:.*]] = memref.view %{{.*}} to memref<f32>
// CHECK:       gpu.launch
// CHECK:         memref.store %{{.*}}, %[[OUT]][]
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             memref.store %{{.*}}, %[[OUT]][]
// CHECK:         gpu.terminator
func.func @serial_full_reduction(%ws: memref<64xi8>, %a: memref<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %out = memref.view %ws[%c0][] : memref<64xi8> to memref<f32>
  linalg.fill ins(%zero : f32) outs(%out : memref<f32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<4x5xf32>) outs(%out : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}
