//===- Passes.td - codegen passes of nnc --------------------*- tablegen -*-===//

#ifndef NNC_COMPILER_CODEGEN_PASSES_TD
#define NNC_COMPILER_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def PlanMemory : Pass<"nnc-plan-memory", "mlir::ModuleOp"> {
  let summary = "place every intermediate buffer of @main in one workspace";
  let description = [{
    After bufferization, each static `memref.alloc` in `@main` becomes a
    `memref.view` into a new trailing workspace argument (`memref<Nxi8>`), at
    an offset chosen so that buffers whose lifetimes overlap never share bytes
    (first fit over program order). Their deallocations disappear; the
    workspace size is recorded as `nnc.workspace_size` on the function, and the
    runtime allocates it once per session. `memref.copy` becomes `linalg.copy`
    so no copy needs a runtime library.

    Before:
    ```mlir
    %a = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
    ```
    After (in `@main(..., %ws: memref<256xi8>)`):
    ```mlir
    %a = memref.view %ws[%c0][] : memref<256xi8> to memref<4xf32>
    ```
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64", "byte alignment of each buffer">,
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::arith::ArithDialect",
                           "mlir::linalg::LinalgDialect"];
}

#endif // NNC_COMPILER_CODEGEN_PASSES_TD
