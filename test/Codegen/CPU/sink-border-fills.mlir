// RUN: nnc-opt %s --split-input-file --nnc-cpu-sink-border-fills | FileCheck %s

// A 1x8x4x4 image padded to 6x6: its four border strips are filled by the
// chunk loop that writes the interior two channels at a time, each chunk its
// own two channels of every strip; the fill of another buffer stays. Border
// fills become loops LLVM must not unroll.
// CHECK-DAG: #[[UNROLL:.*]] = #llvm.loop_unroll<disable = true>
// CHECK-DAG: #[[KEEP:.*]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-LABEL: func.func @sunk
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OTHER:.*]] : memref<16xf32>)
// CHECK-NOT: linalg.fill
// CHECK: scf.forall (%[[I:.*]]) = (0) to (8) step (2) {
// CHECK-NEXT: %[[P0:.*]] = memref.subview %[[TOP:.*]][0, %[[I]], 0, 0] [1, 2, 1, 6] [1, 1, 1, 1]
// CHECK: memref.store %{{.*}}, %[[P0]]
// CHECK-NEXT: } {llvm.loop_annotation = #[[KEEP]]}
// CHECK: %[[P1:.*]] = memref.subview %{{.*}}[0, %[[I]], 0, 0] [1, 2, 1, 6] [1, 1, 1, 1] {{.*}} offset: 30>> to
// CHECK: memref.store %{{.*}}, %[[P1]]
// CHECK: %[[P2:.*]] = memref.subview %{{.*}}[0, %[[I]], 0, 0] [1, 2, 6, 1] [1, 1, 1, 1]
// CHECK: memref.store %{{.*}}, %[[P2]]
// CHECK: %[[P3:.*]] = memref.subview %{{.*}}[0, %[[I]], 0, 0] [1, 2, 6, 1] [1, 1, 1, 1] {{.*}} offset: 5>> to
// CHECK: memref.store %{{.*}}, %[[P3]]
// CHECK: memref.subview %{{.*}}[0, %[[I]], 0, 0] [1, 2, 4, 4]
// CHECK-NOT: linalg.fill
// CHECK: vector.transfer_write
func.func @sunk(%src: memref<1x8x4x4xf32>, %other: memref<16xf32>) -> memref<1x8x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %pad = memref.alloc() : memref<1x8x6x6xf32>
  linalg.fill ins(%zero : f32) outs(%other : memref<16xf32>)
  %top = memref.subview %pad[0, 0, 0, 0] [1, 8, 1, 6] [1, 1, 1, 1] : memref<1x8x6x6xf32> to memref<1x8x1x6xf32, strided<[288, 36, 6, 1]>>
  linalg.fill {nnc.pad_border} ins(%zero : f32) outs(%top : memref<1x8x1x6xf32, strided<[288, 36, 6, 1]>>)
  %bottom = memref.subview %pad[0, 0, 5, 0] [1, 8, 1, 6] [1, 1, 1, 1] : memref<1x8x6x6xf32> to memref<1x8x1x6xf32, strided<[288, 36, 6, 1], offset: 30>>
  linalg.fill {nnc.pad_border} ins(%zero : f32) outs(%bottom : memref<1x8x1x6xf32, strided<[288, 36, 6, 1], offset: 30>>)
  %left = memref.subview %pad[0, 0, 0, 0] [1, 8, 6, 1] [1, 1, 1, 1] : memref<1x8x6x6xf32> to memref<1x8x6x1xf32, strided<[288, 36, 6, 1]>>
  linalg.fill {nnc.pad_border} ins(%zero : f32) outs(%left : memref<1x8x6x1xf32, strided<[288, 36, 6, 1]>>)
  %right = memref.subview %pad[0, 0, 0, 5] [1, 8, 6, 1] [1, 1, 1, 1] : memref<1x8x6x6xf32> to memref<1x8x6x1xf32, strided<[288, 36, 6, 1], offset: 5>>
  linalg.fill {nnc.pad_border} ins(%zero : f32) outs(%right : memref<1x8x6x1xf32, strided<[288, 36, 6, 1], offset: 5>>)
  %interior = memref.subview %pad[0, 0, 1, 1] [1, 8, 4, 4] [1, 1, 1, 1] : memref<1x8x6x6xf32> to memref<1x8x4x4xf32, strided<[288, 36, 6, 1], offset: 7>>
  scf.forall (%i) = (0) to (8) step (2) {
    %slab = memref.subview %interior[0, %i, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x8x4x4xf32, strided<[288, 36, 6, 1], offset: 7>> to memref<1x2x4x4xf32, strided<[288, 36, 6, 1], offset: ?>>
    %v = vector.transfer_read %src[%c0, %i, %c0, %c0], %zero {in_bounds = [true, true, true, true]} : memref<1x8x4x4xf32>, vector<1x2x4x4xf32>
    vector.transfer_write %v, %slab[%c0, %c0, %c0, %c0] {in_bounds = [true, true, true, true]} : vector<1x2x4x4xf32>, memref<1x2x4x4xf32, strided<[288, 36, 6, 1], offset: ?>>
  }
  return %pad : memref<1x8x6x6xf32>
}

// -----

// Left alone: a loop that also reads the padded buffer (a chunk could read
// another chunk's border before it is filled; the border is filled before
// the loop, still as loops kept rolled), and fills not marked as a pad's
// border.
// CHECK-LABEL: func.func @kept
// CHECK: %[[TOP:.*]] = memref.subview
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[TOP]]
// CHECK: } {llvm.loop_annotation =
// CHECK: memref.subview %{{.*}}[0, 0, 1, 1] [1, 8, 4, 4]
// CHECK-NEXT: scf.forall
// CHECK-NOT: memref.store
// CHECK: linalg.fill ins
// CHECK-NEXT: memref.subview
// CHECK-NEXT: scf.forall
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @kept(%src: memref<1x8x4x4xf32>, %out: memref<1x8x4x4xf32>) -> (memref<1x8x6x6xf32>, memref<1x8x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %pad = memref.alloc() : memref<1x8x6x6xf32>
  %top = memref.subview %pad[0, 0, 0, 0] [1, 8, 1, 6] [1, 1, 1, 1] : memref<1x8x6x6xf32> to memref<1x8x1x6xf32, strided<[288, 36, 6, 1]>>
  linalg.fill {nnc.pad_border} ins(%zero : f32) outs(%top : memref<1x8x1x6xf32, strided<[288, 36, 6, 1]>>)
  %interior = memref.subview %pad[0, 0, 1, 1] [1, 8, 4, 4] [1, 1, 1, 1] : memref<1x8x6x6xf32> to memref<1x8x4x4xf32, strided<[288, 36, 6, 1], offset: 7>>
  scf.forall (%i) = (0) to (8) step (2) {
    %slab = memref.subview %interior[0, %i, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x8x4x4xf32, strided<[288, 36, 6, 1], offset: 7>> to memref<1x2x4x4xf32, strided<[288, 36, 6, 1], offset: ?>>
    %v = vector.transfer_read %pad[%c0, %c0, %c0, %c0], %zero {in_bounds = [true, true, true, true]} : memref<1x8x6x6xf32>, vector<1x2x4x4xf32>
    vector.transfer_write %v, %slab[%c0, %c0, %c0, %c0] {in_bounds = [true, true, true, true]} : vector<1x2x4x4xf32>, memref<1x2x4x4xf32, strided<[288, 36, 6, 1], offset: ?>>
  }
  %pad2 = memref.alloc() : memref<1x8x6x6xf32>
  %top2 = memref.subview %pad2[0, 0, 0, 0] [1, 8, 1, 6] [1, 1, 1, 1] : memref<1x8x6x6xf32> to memref<1x8x1x6xf32, strided<[288, 36, 6, 1]>>
  linalg.fill ins(%zero : f32) outs(%top2 : memref<1x8x1x6xf32, strided<[288, 36, 6, 1]>>)
  %interior2 = memref.subview %pad2[0, 0, 1, 1] [1, 8, 4, 4] [1, 1, 1, 1] : memref<1x8x6x6xf32> to memref<1x8x4x4xf32, strided<[288, 36, 6, 1], offset: 7>>
  scf.forall (%i) = (0) to (8) step (2) {
    %slab = memref.subview %interior2[0, %i, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : memref<1x8x4x4xf32, strided<[288, 36, 6, 1], offset: 7>> to memref<1x2x4x4xf32, strided<[288, 36, 6, 1], offset: ?>>
    %v = vector.transfer_read %src[%c0, %i, %c0, %c0], %zero {in_bounds = [true, true, true, true]} : memref<1x8x4x4xf32>, vector<1x2x4x4xf32>
    vector.transfer_write %v, %slab[%c0, %c0, %c0, %c0] {in_bounds = [true, true, true, true]} : vector<1x2x4x4xf32>, memref<1x2x4x4xf32, strided<[288, 36, 6, 1], offset: ?>>
  }
  return %pad, %pad2 : memref<1x8x6x6xf32>, memref<1x8x6x6xf32>
}
