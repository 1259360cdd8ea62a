// RUN: nnc-opt %s --split-input-file --nnc-cpu-parallel-calls --verify-diagnostics

// A forall that still carries tensors was not bufferized; splitting it across
// threads would drop its results.
func.func @main(%t: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'scf.forall' op expected a bufferized loop (no shared_outs, no results) to run on the thread pool}}
  %r = scf.forall (%i) in (8) shared_outs(%o = %t) -> (tensor<8xf32>) {
    %s = tensor.extract_slice %o[%i] [1] [1] : tensor<8xf32> to tensor<1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %s into %o[%i] [1] [1] : tensor<1xf32> into tensor<8xf32>
    }
  }
  return %r : tensor<8xf32>
}

// -----

// The context slot's name is taken by something else.
// expected-error @+1 {{'llvm.mlir.global' op expected 'nnc_context' to be a thread-local 'llvm.ptr' global}}
llvm.mlir.global external @nnc_context() : i32
func.func @main(%out: memref<8xf32>, %v: f32) {
  scf.forall (%i) in (8) {
    memref.store %v, %out[%i] : memref<8xf32>
  }
  return
}
