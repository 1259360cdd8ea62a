// RUN: nnc-opt %s --nnc-cuda-emulation-image -split-input-file -verify-diagnostics

// An NVVM intrinsic without a host meaning is an error naming it, never a
// guess.
module {
  // expected-error @+1 {{'gpu.module' op cannot run on the cuda-emulated device: 'clock' calls 'llvm.nvvm.read.ptx.sreg.clock', which the cuda-emulated device does not implement}}
  gpu.module @nnc_kernels [#nvvm.target<chip = "sm_80", features = "+ptx80">] {
    llvm.func @clock(%out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %c = nvvm.read.ptx.sreg.clock : i32
      llvm.store %c, %out : i32, !llvm.ptr
      llvm.return
    }
  }
}

// -----

// So is a function that only exists on the GPU (the CUDA runtime's printf).
module {
  // expected-error @+1 {{'gpu.module' op cannot run on the cuda-emulated device: the kernels call 'vprintf', which the cuda-emulated device does not provide}}
  gpu.module @nnc_kernels [#nvvm.target<chip = "sm_80", features = "+ptx80">] {
    llvm.func @vprintf(!llvm.ptr, !llvm.ptr) -> i32
    llvm.func @print(%format: !llvm.ptr, %args: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %n = llvm.call @vprintf(%format, %args) : (!llvm.ptr, !llvm.ptr) -> i32
      llvm.return
    }
  }
}

// -----

// Kernels need a target to be serialized for.
module {
  // expected-error @+1 {{'gpu.module' op expected a GPU target to serialize the kernels for}}
  gpu.module @nnc_kernels {
  }
}

// -----

// A writable device variable would be one per process on the host rather
// than one per CUDA context.
module {
  // expected-error @+1 {{'gpu.module' op cannot run on the cuda-emulated device: device variable 'counter' (address space 1) is not supported by the cuda-emulated device}}
  gpu.module @nnc_kernels [#nvvm.target<chip = "sm_80", features = "+ptx80">] {
    llvm.mlir.global internal @counter(0 : i32) {addr_space = 1 : i32} : i32
    llvm.func @count(%out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %p = llvm.mlir.addressof @counter : !llvm.ptr<1>
      %one = llvm.mlir.constant(1 : i32) : i32
      %old = llvm.atomicrmw add %p, %one monotonic : !llvm.ptr<1>, i32
      llvm.store %old, %out : i32, !llvm.ptr
      llvm.return
    }
  }
}
