// RUN: nnc-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(nnc-cpu-vectorize-copies))" | FileCheck %s

// A copy into a strided view (a concatenation's slot) becomes 16-wide vector
// transfers along rows of 40: two full vectors and a peeled edge of 8.
// CHECK-LABEL: func.func @concat_slot
// CHECK-SAME: (%[[SRC:.*]]: memref<3x40xf32>, %[[DST:.*]]: memref<6x40xf32>)
// CHECK: %[[SLOT:.*]] = memref.subview %[[DST]][3, 0] [3, 40] [1, 1]
// CHECK: scf.for %[[I:.*]] = %c0 to %c3 step %c1
// CHECK: scf.for %[[J:.*]] = %c0 to %c32 step %c16
// CHECK: %[[S16:.*]] = memref.subview %[[SRC]][%[[I]], %[[J]]] [1, 16]
// CHECK: %[[D16:.*]] = memref.subview %[[SLOT]][%[[I]], %[[J]]] [1, 16]
// CHECK: %[[V:.*]] = vector.transfer_read %[[S16]]{{.*}} vector<1x16xf32>
// CHECK: vector.transfer_write %[[V]], %[[D16]]
// CHECK: %[[S8:.*]] = memref.subview %[[SRC]][%[[I]], 32] [1, 8]
// CHECK: %[[D8:.*]] = memref.subview %[[SLOT]][%[[I]], 32] [1, 8]
// CHECK: %[[E:.*]] = vector.transfer_read %[[S8]]{{.*}} vector<1x8xf32>
// CHECK: vector.transfer_write %[[E]], %[[D8]]
// CHECK-NOT: linalg.copy
func.func @concat_slot(%src: memref<3x40xf32>, %dst: memref<6x40xf32>) {
  %slot = memref.subview %dst[3, 0] [3, 40] [1, 1] : memref<6x40xf32> to memref<3x40xf32, strided<[40, 1], offset: 120>>
  linalg.copy ins(%src : memref<3x40xf32>) outs(%slot : memref<3x40xf32, strided<[40, 1], offset: 120>>)
  return
}

// -----

// Booleans (bytes in memory, bits in vectors) keep their scalar copy.
// CHECK-LABEL: func.func @bools
// CHECK: linalg.copy
func.func @bools(%src: memref<4x32xi1>, %dst: memref<4x32xi1>) {
  linalg.copy ins(%src : memref<4x32xi1>) outs(%dst : memref<4x32xi1>)
  return
}

// -----

// A large copy outside any parallel loop (a stem convolution's padded input)
// is split into thread chunks along its outer dims: 8 images of 3x224x224,
// one chunk each. One inside a parallel loop is not split again.
// CHECK-LABEL: func.func @stem_input
// CHECK: scf.forall (%[[N:.*]]) in (8)
// CHECK: memref.subview %{{.*}}[%[[N]], 0, 0, 0] [1, 3, 224, 224]
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} vector<1x1x1x16xf32>
// CHECK-LABEL: func.func @inside_forall
// CHECK: scf.forall
// CHECK-NOT: scf.forall
func.func @stem_input(%src: memref<8x3x224x224xf32>, %dst: memref<8x3x226x226xf32>) {
  %interior = memref.subview %dst[0, 0, 1, 1] [8, 3, 224, 224] [1, 1, 1, 1] : memref<8x3x226x226xf32> to memref<8x3x224x224xf32, strided<[153228, 51076, 226, 1], offset: 227>>
  linalg.copy ins(%src : memref<8x3x224x224xf32>) outs(%interior : memref<8x3x224x224xf32, strided<[153228, 51076, 226, 1], offset: 227>>)
  return
}
func.func @inside_forall(%src: memref<8x3x224x224xf32>, %dst: memref<8x3x224x224xf32>) {
  scf.forall (%i) in (2) {
    linalg.copy ins(%src : memref<8x3x224x224xf32>) outs(%dst : memref<8x3x224x224xf32>)
  }
  return
}

// -----

// A large copy in a serial loop (a cumsum's step) is not split: each step
// would dispatch to the threads.
// CHECK-LABEL: func.func @in_serial_loop
// CHECK-NOT: scf.forall
func.func @in_serial_loop(%src: memref<255x256xf32>, %dst: memref<64x255x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c1 {
    %slot = memref.subview %dst[%i, 0, 0] [1, 255, 256] [1, 1, 1] : memref<64x255x256xf32> to memref<255x256xf32, strided<[256, 1], offset: ?>>
    linalg.copy ins(%src : memref<255x256xf32>) outs(%slot : memref<255x256xf32, strided<[256, 1], offset: ?>>)
  }
  return
}

// -----

// Dynamic outer dims (a key-value cache copied into its grown buffer) are
// loops over rows, each row of the static innermost dim in vectors; a copy
// of dynamic extents stays on one thread.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK-NOT: scf.forall
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c1
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c16
// CHECK: vector.transfer_read {{.*}} vector<1x1x16xf32>
// CHECK: vector.transfer_write
// CHECK-NOT: linalg.copy
func.func @dynamic_rows(%src: memref<?x?x64xf32>, %dst: memref<?x?x64xf32>, %past: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h = memref.dim %src, %c0 : memref<?x?x64xf32>
  %t = memref.dim %src, %c1 : memref<?x?x64xf32>
  %slot = memref.subview %dst[0, %past, 0] [%h, %t, 64] [1, 1, 1] : memref<?x?x64xf32> to memref<?x?x64xf32, strided<[?, 64, 1], offset: ?>>
  linalg.copy ins(%src : memref<?x?x64xf32>) outs(%slot : memref<?x?x64xf32, strided<[?, 64, 1], offset: ?>>)
  return
}
