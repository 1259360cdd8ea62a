// RUN: nnc-opt %s --nnc-loop-annotations | FileCheck %s
// RUN: nnc-opt %s --nnc-loop-annotations | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR

// The annotation SCF-to-CF and CF-to-LLVM leave on a loop's latch branch as
// a discardable attribute becomes the branch's own, so that translation
// gives the loop its metadata; a branch without one is left alone.

#unroll = #llvm.loop_unroll<disable = true>
#keep = #llvm.loop_annotation<unroll = #unroll>

// CHECK-LABEL: llvm.func @fill
// CHECK:       llvm.br ^bb1(%{{.*}} : i64){{$}}
// CHECK:       llvm.br ^bb1(%{{.*}} : i64) {loop_annotation = #{{.*}}}
// CHECK-NOT:   llvm.loop_annotation
// IR:          br label %{{.*}}, !llvm.loop ![[LOOP:[0-9]+]]
// IR:          ![[LOOP]] = distinct !{![[LOOP]], ![[DISABLE:[0-9]+]]}
// IR:          ![[DISABLE]] = !{!"llvm.loop.unroll.disable"}
llvm.func @fill(%p: !llvm.ptr, %v: f32) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c8 = llvm.mlir.constant(8 : i64) : i64
  llvm.br ^bb1(%c0 : i64)
^bb1(%i: i64):
  %done = llvm.icmp "sge" %i, %c8 : i64
  llvm.cond_br %done, ^bb3, ^bb2
^bb2:
  %q = llvm.getelementptr %p[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  llvm.store %v, %q : f32, !llvm.ptr
  %next = llvm.add %i, %c1 : i64
  llvm.br ^bb1(%next : i64) {llvm.loop_annotation = #keep}
^bb3:
  llvm.return
}
