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

// So is a function that only exists on the GPU (libdevice's).
module {
  // expected-error @+1 {{'gpu.module' op cannot run on the cuda-emulated device: the kernels call '__nv_expf', which the cuda-emulated device does not provide}}
  gpu.module @nnc_kernels [#nvvm.target<chip = "sm_80", features = "+ptx80">] {
    llvm.func @__nv_expf(f32) -> f32
    llvm.func @exp(%out: !llvm.ptr, %x: f32) attributes {gpu.kernel, nvvm.kernel} {
      %e = llvm.call @__nv_expf(%x) : (f32) -> f32
      llvm.store %e, %out : f32, !llvm.ptr
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
