// RUN: nnc-opt %s --nnc-cuda-lower-launches --split-input-file --verify-diagnostics | FileCheck %s

// The PTX moves into module attributes, kernels are numbered in launch
// order, and each launch becomes a call of context->cuda->launch with the
// parameters' addresses: a memref expanded as the NVVM kernel takes it
// (allocated and aligned pointer, offset, sizes, strides), an index as i64.

// CHECK:       module attributes {nnc.cuda_images = {sm_80 = "{{.*}}.target sm_80{{.*}}", sm_90 = "{{.*}}.target sm_90{{.*}}"}, nnc.cuda_kernels = ["k1", "k0"]}
// CHECK-NOT:   gpu.binary
// CHECK:       llvm.mlir.global external thread_local @nnc_context()
// CHECK-LABEL: func.func @main
// CHECK:         %[[VALUES:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr, i64, i64, i64, i64, i64, i64)>
// CHECK:         %[[ADDRS:.*]] = llvm.alloca %{{.*}} x !llvm.array<8 x ptr>
// CHECK:         %[[DESC:.*]] = builtin.unrealized_conversion_cast %{{.*}} : memref<2x3xf32> to !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK:         llvm.extractvalue %[[DESC]][0]
// CHECK:         llvm.extractvalue %[[DESC]][1]
// CHECK:         llvm.extractvalue %[[DESC]][2]
// CHECK:         llvm.extractvalue %[[DESC]][3, 0]
// CHECK:         llvm.extractvalue %[[DESC]][3, 1]
// CHECK:         llvm.extractvalue %[[DESC]][4, 0]
// CHECK:         llvm.extractvalue %[[DESC]][4, 1]
// CHECK:         arith.index_cast %{{.*}} : index to i64
// CHECK:         %[[CTX:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK:         %[[CUDA_ADDR:.*]] = llvm.getelementptr %[[CTX]][0, 3] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, i32, ptr, ptr)>
// CHECK:         %[[CUDA:.*]] = llvm.load %[[CUDA_ADDR]]
// CHECK:         %[[HOOK_ADDR:.*]] = llvm.getelementptr %[[CUDA]][0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(ptr, ptr, ptr)>
// CHECK:         %[[HOOK:.*]] = llvm.load %[[HOOK_ADDR]]
// CHECK:         %[[K1:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK:         llvm.call %[[HOOK]](%{{.*}}, %[[K1]], {{.*}}, %[[ADDRS]]) : !llvm.ptr, (!llvm.ptr, i32, i32, i32, i32, i32, i32, i32, i32, !llvm.ptr) -> i32
// CHECK:         %[[K0:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK:         llvm.call %{{.*}}(%{{.*}}, %[[K0]],
// CHECK-NOT:   gpu.launch_func
module attributes {gpu.container_module} {
  func.func @main(%a: memref<2x3xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    gpu.launch_func @nnc_kernels::@k1 blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%a : memref<2x3xf32>, %n : index)
    gpu.launch_func @nnc_kernels::@k0 blocks in (%c1, %c1, %c1) threads in (%c32, %c1, %c1) args(%a : memref<2x3xf32>)
    return
  }
  gpu.binary @nnc_kernels [#gpu.object<#nvvm.target<chip = "sm_80">, assembly = ".version 8.0\n.target sm_80\n">,
                           #gpu.object<#nvvm.target<chip = "sm_90">, assembly = ".version 8.0\n.target sm_90\n">]
}

// -----

// PTX that calls an external function (libdevice) cannot run on a driver.

module attributes {gpu.container_module} {
  func.func @main(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @nnc_kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  // expected-error @+1 {{a kernel calls an external function, which no CUDA driver provides: '.extern .func (.param .b32 func_retval0) __nv_expf'}}
  gpu.binary @nnc_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = ".version 8.0\n.target sm_90\n.extern .func (.param .b32 func_retval0) __nv_expf\n(\n.param .b32 x\n);\n">]
}
