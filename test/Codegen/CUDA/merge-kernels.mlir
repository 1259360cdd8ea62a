// RUN: nnc-opt %s --nnc-cuda-merge-kernels | FileCheck %s

// Outlining made one module per launch, both with a kernel named
// @main_kernel: they move into @nnc_kernels under their modules' names, and
// the launches follow. Shared-memory buffers become 16-byte aligned (the
// tiled matmul reads them as 4-float vectors), and each launch records its
// kernel's shared memory for the report (16x68 floats: 4352 bytes).

// CHECK-LABEL: func.func @main
// CHECK:       gpu.launch_func @nnc_kernels::@main_kernel blocks {{.*}} {nnc.static_shared_bytes = 0 : i64}
// CHECK:       gpu.launch_func @nnc_kernels::@main_kernel_0 blocks {{.*}} {nnc.static_shared_bytes = 4352 : i64}
// CHECK:       gpu.module @nnc_kernels {
// CHECK-NEXT:    gpu.func @main_kernel(%{{.*}}: memref<4xf32>) kernel
// CHECK:         gpu.func @main_kernel_0(%{{.*}}: memref<8xf32>) workgroup(%{{.*}} : memref<16x68xf32, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}) kernel
// CHECK-NOT:   gpu.module
module attributes {gpu.container_module} {
  func.func @main(%a: memref<4xf32>, %b: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @main_kernel::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @main_kernel_0::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<8xf32>)
    return
  }
  gpu.module @main_kernel {
    gpu.func @main_kernel(%a: memref<4xf32>) kernel { gpu.return }
  }
  gpu.module @main_kernel_0 {
    gpu.func @main_kernel(%b: memref<8xf32>) workgroup(%tile : memref<16x68xf32, #gpu.address_space<workgroup>>) kernel { gpu.return }
  }
}
