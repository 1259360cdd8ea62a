// RUN: nnc-opt %s --nnc-plan-memory --split-input-file --verify-diagnostics

// A lowering's intermediate can be far larger than any tensor of the model
// (a pool's padded input with pads of 2^59): its byte size overflowed int64
// and the workspace was planned at 64 bytes, which the code then overran.

func.func @main(%out: memref<4xf32>) {
  // expected-error @+1 {{an intermediate buffer of type 'memref<1152921504606846980x4xf32>' needs more than 2^62 bytes}}
  %a = memref.alloc() : memref<1152921504606846980x4xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0, %c0] : memref<1152921504606846980x4xf32>
  memref.store %v, %out[%c0] : memref<4xf32>
  return
}

// -----

// Buffers that fit alone (2^61 bytes each) but not together, all alive at
// once.

func.func @main(%out: memref<4xf32>) {
  %a = memref.alloc() : memref<576460752303423488xf32>
  %b = memref.alloc() : memref<576460752303423488xf32>
  // expected-error @+1 {{the workspace would need more than 2^62 bytes}}
  %c = memref.alloc() : memref<576460752303423488xf32>
  linalg.add ins(%a, %b : memref<576460752303423488xf32>, memref<576460752303423488xf32>)
             outs(%c : memref<576460752303423488xf32>)
  %c0 = arith.constant 0 : index
  %z = memref.load %c[%c0] : memref<576460752303423488xf32>
  memref.store %z, %out[%c0] : memref<4xf32>
  return
}

// -----

// A buffer the plan cannot place (here: inside a parallel loop, whose
// iterations must not share it) is an error, not a malloc on every run.

func.func @main(%in: memref<4xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    // expected-error @+1 {{a buffer inside a loop or branch of type 'memref<4xf32>' is not in the workspace plan (it would be allocated on every run)}}
    %a = memref.alloc() : memref<4xf32>
    linalg.copy ins(%in : memref<4xf32>) outs(%a : memref<4xf32>)
    %v = memref.load %a[%i] : memref<4xf32>
    memref.store %v, %out[%i] : memref<4xf32>
    scf.reduce
  }
  return
}
