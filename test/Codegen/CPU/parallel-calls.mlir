// RUN: nnc-opt %s --split-input-file --nnc-cpu-parallel-calls | FileCheck %s

// The module gets one thread-local context slot, which the entry wrapper sets.
// CHECK: llvm.mlir.global external thread_local @nnc_context() {{.*}} : !llvm.ptr
// CHECK-NEXT: llvm.mlir.zero : !llvm.ptr

// The captured memrefs (their aligned pointers: the types state the rest of
// their descriptors) and scalar go to a stack struct allocated in the entry
// block; the constant is re-created in the body.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[IN:.*]]: memref<8xf32>, %[[OUT:.*]]: memref<8xf32>, %[[S:.*]]: f32)
// CHECK: %[[ARGS:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, f32, ptr)>
// CHECK: %[[COUNT:.*]] = arith.constant 8 : i64
// CHECK: %[[IND:.*]] = builtin.unrealized_conversion_cast %[[IN]] : memref<8xf32> to !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK: %[[INP:.*]] = llvm.extractvalue %[[IND]][1]
// CHECK: %[[F0:.*]] = llvm.getelementptr %[[ARGS]][0, 0]
// CHECK: llvm.store %[[INP]], %[[F0]] : !llvm.ptr, !llvm.ptr
// CHECK: %[[F1:.*]] = llvm.getelementptr %[[ARGS]][0, 1]
// CHECK: llvm.store %[[S]], %[[F1]] : f32, !llvm.ptr
// CHECK: %[[OUTD:.*]] = builtin.unrealized_conversion_cast %[[OUT]]
// CHECK: %[[OUTP:.*]] = llvm.extractvalue %[[OUTD]][1]
// CHECK: %[[F2:.*]] = llvm.getelementptr %[[ARGS]][0, 2]
// CHECK: llvm.store %[[OUTP]], %[[F2]]
// The body's address, and the context of this thread.
// CHECK: %[[FN:.*]] = {{(func\.)?}}constant @main_par0 : (!llvm.ptr, i64, i64) -> ()
// CHECK: %[[FNPTR:.*]] = builtin.unrealized_conversion_cast %[[FN]] : (!llvm.ptr, i64, i64) -> () to !llvm.ptr
// CHECK: %[[SLOTADDR:.*]] = llvm.mlir.addressof @nnc_context
// CHECK: %[[SLOT:.*]] = "llvm.intr.threadlocal.address"(%[[SLOTADDR]])
// CHECK: %[[CTX:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// Threads only with a context, more than one iteration and num_threads > 1.
// CHECK: %[[PRESENT:.*]] = llvm.icmp "ne" %[[CTX]], %{{.*}} : !llvm.ptr
// CHECK: %[[SEVERAL:.*]] = arith.cmpi sgt, %[[COUNT]], %{{.*}} : i64
// CHECK: %[[MAYBE:.*]] = arith.andi %[[PRESENT]], %[[SEVERAL]]
// CHECK: %[[THREADED:.*]] = scf.if %[[MAYBE]] -> (i1) {
// CHECK:   %[[NTADDR:.*]] = llvm.getelementptr %[[CTX]][0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, i32, ptr)>
// CHECK:   %[[NT:.*]] = llvm.load %[[NTADDR]] : !llvm.ptr -> i32
// CHECK:   %[[MANY:.*]] = arith.cmpi sgt, %[[NT]], %{{.*}} : i32
// CHECK:   scf.yield %[[MANY]]
// CHECK: } else {
// CHECK:   scf.yield %false
// CHECK: scf.if %[[THREADED]] {
// CHECK:   %[[RTADDR:.*]] = llvm.getelementptr %[[CTX]][0, 0]
// CHECK:   %[[RT:.*]] = llvm.load %[[RTADDR]] : !llvm.ptr -> !llvm.ptr
// CHECK:   %[[PFADDR:.*]] = llvm.getelementptr %[[CTX]][0, 2]
// CHECK:   %[[PF:.*]] = llvm.load %[[PFADDR]] : !llvm.ptr -> !llvm.ptr
// The calling thread runs its share with the context cleared, then restores it.
// CHECK:   llvm.store %{{.*}}, %[[SLOT]]
// CHECK:   llvm.call %[[PF]](%[[RT]], %[[COUNT]], %[[FNPTR]], %[[ARGS]]) : !llvm.ptr, (!llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> ()
// CHECK:   llvm.store %[[CTX]], %[[SLOT]]
// CHECK: } else {
// CHECK:   %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:   func.call @main_par0(%[[ARGS]], %[[ZERO]], %[[COUNT]]) : (!llvm.ptr, i64, i64) -> ()
// CHECK-NOT: scf.forall

// CHECK-LABEL: func.func private @main_par0
// CHECK-SAME: (%[[A:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i64, %[[END:.*]]: i64)
// Kept out of line: the serial call would otherwise inline a second copy.
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// The descriptor rebuilt from the pointer and the type: offset 0, size 8, stride 1.
// CHECK: %[[G0:.*]] = llvm.getelementptr %[[A]][0, 0]
// CHECK: %[[P0:.*]] = llvm.load %[[G0]] : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.insertvalue %[[P0]], %{{.*}}[0]
// CHECK: llvm.insertvalue %[[P0]], %{{.*}}[1]
// CHECK: %[[OFF:.*]] = llvm.mlir.constant(0 : index) : i64
// CHECK: llvm.insertvalue %[[OFF]], %{{.*}}[2]
// CHECK: %[[SIZE:.*]] = llvm.mlir.constant(8 : index) : i64
// CHECK: llvm.insertvalue %[[SIZE]], %{{.*}}[3, 0]
// CHECK: %[[STRIDE:.*]] = llvm.mlir.constant(1 : index) : i64
// CHECK: %[[D0:.*]] = llvm.insertvalue %[[STRIDE]], %{{.*}}[4, 0]
// CHECK: %[[BIN:.*]] = builtin.unrealized_conversion_cast %[[D0]] : {{.*}} to memref<8xf32>
// CHECK: %[[G1:.*]] = llvm.getelementptr %[[A]][0, 1]
// CHECK: %[[BS:.*]] = llvm.load %[[G1]] : !llvm.ptr -> f32
// CHECK: %[[G2:.*]] = llvm.getelementptr %[[A]][0, 2]
// CHECK: llvm.load %[[G2]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[BOUT:.*]] = builtin.unrealized_conversion_cast %{{.*}} : {{.*}} to memref<8xf32>
// CHECK: %[[B:.*]] = arith.index_cast %[[BEGIN]] : i64 to index
// CHECK: %[[E:.*]] = arith.index_cast %[[END]] : i64 to index
// CHECK: scf.for %[[I:.*]] = %[[B]] to %[[E]] step %{{.*}} {
// CHECK:   %[[X:.*]] = memref.load %[[BIN]][%[[I]]]
// CHECK:   %[[Y:.*]] = arith.mulf %[[X]], %[[BS]]
// CHECK:   %[[Z:.*]] = arith.addf %[[Y]], %[[ONE]]
// CHECK:   memref.store %[[Z]], %[[BOUT]][%[[I]]]
func.func @main(%in: memref<8xf32>, %out: memref<8xf32>, %s: f32) {
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (8) {
    %x = memref.load %in[%i] : memref<8xf32>
    %y = arith.mulf %x, %s : f32
    %z = arith.addf %y, %one : f32
    memref.store %z, %out[%i] : memref<8xf32>
  }
  return
}

// -----

// Two dimensions with lower bounds, steps and a dynamic bound: the count is
// 3 * max(0, ceil(n / 2)); a linear id is split row-major. The nested forall
// runs serially in the body, and a forall inside a serial loop gets its
// argument struct in the function's entry block.
// CHECK-LABEL: func.func @grid
// CHECK-SAME: (%[[OUT:.*]]: memref<10x6xf32>, %[[N:.*]]: index)
// CHECK-NEXT: llvm.mlir.constant(1 : i64)
// CHECK-NEXT: %[[ARGS:.*]] = llvm.alloca
// CHECK: scf.for
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[CEIL:.*]] = arith.ceildivsi %[[N]], %[[C2]] : index
// CHECK: %[[J:.*]] = arith.maxsi %[[CEIL]], %{{.*}} : index
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[TOTAL:.*]] = arith.muli %[[C3]], %[[J]] : index
// CHECK: %[[COUNT:.*]] = arith.index_cast %[[TOTAL]] : index to i64
// CHECK: llvm.call %{{.*}}(%{{.*}}, %[[COUNT]], %{{.*}}, %[[ARGS]])
// CHECK: func.call @grid_par0(%[[ARGS]], %{{.*}}, %[[COUNT]])

// CHECK-LABEL: func.func private @grid_par0
// CHECK: %[[BN:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[BCEIL:.*]] = arith.ceildivsi %[[BN]], %{{.*}} : index
// CHECK: %[[BJ:.*]] = arith.maxsi %[[BCEIL]], %{{.*}} : index
// CHECK-DAG: %[[LB0:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[STEP0:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[STEP1:.*]] = arith.constant 2 : index
// CHECK: scf.for %[[L:.*]] = %{{.*}} to %{{.*}} step
// CHECK:   %[[IDX1:.*]] = arith.remui %[[L]], %[[BJ]] : index
// CHECK:   %[[IDX0:.*]] = arith.divui %[[L]], %[[BJ]] : index
// CHECK:   %[[IV1:.*]] = arith.muli %[[IDX1]], %[[STEP1]] : index
// CHECK:   %[[OFF0:.*]] = arith.muli %[[IDX0]], %[[STEP0]] : index
// CHECK:   %[[IV0:.*]] = arith.addi %[[LB0]], %[[OFF0]] : index
// CHECK:   scf.for %[[K:.*]] =
// CHECK:     %[[JK:.*]] = arith.addi %[[IV1]], %[[K]] : index
// CHECK:     memref.store %{{.*}}, %{{.*}}[%[[IV0]], %[[JK]]]
// CHECK-NOT: scf.forall
func.func @grid(%out: memref<10x6xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  scf.for %t = %c0 to %c2 step %c2 {
    %v = arith.index_cast %t : index to i32
    %f = arith.sitofp %v : i32 to f32
    scf.forall (%i, %j) = (1, 0) to (10, %n) step (3, 2) {
      scf.forall (%k) in (2) {
        %jk = arith.addi %j, %k : index
        memref.store %f, %out[%i, %jk] : memref<10x6xf32>
      }
    }
  }
  return
}

// -----

// Nothing captured: the body gets a null argument. Its stack buffers are
// scoped to one iteration. A single iteration is just a call.
// CHECK-LABEL: func.func @scratch
// CHECK: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK: llvm.call %{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %[[NULL]])
// CHECK: func.call @scratch_par0(%[[NULL]],
// CHECK-LABEL: func.func private @scratch_par0
// CHECK: scf.for
// CHECK-NEXT: memref.alloca_scope {
// CHECK-NEXT: memref.alloca() : memref<4xf32>
// CHECK-LABEL: func.func @single
// CHECK-NOT: llvm.call
// CHECK-NOT: nnc_context
// CHECK: {{(func\.)?}}call @single_par0(
// CHECK-NEXT: return
func.func @scratch(%out: memref<4xf32>) {
  scf.forall (%i) in (4) {
    %a = memref.alloca() : memref<4xf32>
    %c0 = arith.constant 0 : index
    %x = memref.load %a[%c0] : memref<4xf32>
  }
  return
}
func.func @single(%out: memref<4xf32>) {
  %c0 = arith.constant 0.0 : f32
  scf.forall (%i) in (1) {
    memref.store %c0, %out[%i] : memref<4xf32>
  }
  return
}

// -----

// A view's dynamic offset and size travel after its pointer; its static
// strides do not (the last field is the loop's bound).
// CHECK-LABEL: func.func @views
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(ptr, i64, i64, i64)>
// CHECK: %[[D:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<?x4xf32, strided<[4, 1], offset: ?>> to
// CHECK: %[[P:.*]] = llvm.extractvalue %[[D]][1]
// CHECK: llvm.store %[[P]], %{{.*}} : !llvm.ptr, !llvm.ptr
// CHECK: %[[OFF:.*]] = llvm.extractvalue %[[D]][2]
// CHECK: llvm.store %[[OFF]], %{{.*}} : i64, !llvm.ptr
// CHECK: %[[ROWS:.*]] = llvm.extractvalue %[[D]][3, 0]
// CHECK: llvm.store %[[ROWS]], %{{.*}} : i64, !llvm.ptr
// CHECK-LABEL: func.func private @views_par0
// CHECK: %[[BP:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.insertvalue %[[BP]], %{{.*}}[1]
// CHECK-DAG: llvm.insertvalue %{{.*}}, %{{.*}}[4, 0]
// CHECK-DAG: llvm.insertvalue %{{.*}}, %{{.*}}[3, 1]
// CHECK-DAG: llvm.insertvalue %{{.*}}, %{{.*}}[4, 1]
// CHECK: %[[BOFF:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: llvm.insertvalue %[[BOFF]], %{{.*}}[2]
// CHECK: %[[BROWS:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK: %[[BD:.*]] = llvm.insertvalue %[[BROWS]], %{{.*}}[3, 0]
// CHECK: builtin.unrealized_conversion_cast %[[BD]] : {{.*}} to memref<?x4xf32, strided<[4, 1], offset: ?>>
func.func @views(%buf: memref<?x4xf32, strided<[4, 1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %buf, %c0 : memref<?x4xf32, strided<[4, 1], offset: ?>>
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (%n) {
    memref.store %zero, %buf[%i, %c0] : memref<?x4xf32, strided<[4, 1], offset: ?>>
  }
  return
}

// -----

// Identical bodies are compiled once; a body that differs in a constant is
// its own.
// CHECK-LABEL: func.func @twice
// CHECK: call @twice_par0(
// CHECK: constant @twice_par0
// CHECK: call @twice_par0(
// CHECK: constant @twice_par2
// CHECK: call @twice_par2(
// CHECK-NOT: @twice_par1
func.func @twice(%a: memref<64xf32>, %b: memref<64xf32>) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  scf.forall (%i) in (64) {
    memref.store %one, %a[%i] : memref<64xf32>
  }
  scf.forall (%i) in (64) {
    memref.store %one, %b[%i] : memref<64xf32>
  }
  scf.forall (%i) in (64) {
    memref.store %two, %b[%i] : memref<64xf32>
  }
  return
}

// -----

// Full descriptors where the body could tell the difference: a memref in
// another memory space (its pointers are not plain pointers), and a body that
// frees a buffer (its allocated pointer must be the real one).
// CHECK-LABEL: func.func @other_space
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(struct<(ptr<1>, ptr<1>, i64, array<1 x i64>, array<1 x i64>)>)>
// CHECK-LABEL: func.func @frees
// CHECK: llvm.alloca %{{.*}} x !llvm.struct<(struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>)>
func.func @other_space(%a: memref<64xf32, 1>) {
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (64) {
    memref.store %one, %a[%i] : memref<64xf32, 1>
  }
  return
}
func.func @frees(%a: memref<64xf32>) {
  scf.forall (%i) in (2) {
    memref.dealloc %a : memref<64xf32>
  }
  return
}
