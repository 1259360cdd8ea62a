//===- Passes.td - codegen passes of nnc --------------------*- tablegen -*-===//

#ifndef NNC_COMPILER_CODEGEN_PASSES_TD
#define NNC_COMPILER_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def OrderGlobals : Pass<"nnc-order-globals", "mlir::ModuleOp"> {
  let summary = "put the module's constant globals in a deterministic order and name";
  let description = [{
    One-shot bufferization turns each function's constants into
    `memref.global`s in the order it visits the functions, which in LLVM 22
    follows heap addresses: a module of several functions (a training
    module) came out differently from one compile to the next. This pass
    orders the constant globals by first use, walking the functions in module
    order, at the top of the module, and names them `__constant_<i>` in that
    order, so the same model always gives the same library.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def ConstantsAsBytes : Pass<"nnc-constants-as-bytes", "mlir::ModuleOp"> {
  let summary = "retype constant globals in the LLVM dialect as flat byte arrays";
  let description = [{
    A constant global whose value is a resource (the weights) has the
    nested array type of its shape, and translation to LLVM IR builds one
    uniqued constant per innermost row: ResNet-18's 3x3 filters alone made
    hundreds of thousands, a second of a compile, and code generation then
    emitted them one element at a time. Retyped as one `[N x i8]` array of
    the same bytes, each global becomes one constant that is emitted as a
    block. Readers are unaffected: they address the global through GEPs that
    carry their own element types.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def LoopAnnotations : Pass<"nnc-loop-annotations", "mlir::ModuleOp"> {
  let summary = "make the loop annotations on LLVM branches their loop metadata";
  let description = [{
    An `scf.for` carrying `llvm.loop_annotation` (a loop LLVM must not
    unroll, say) keeps it through SCF-to-CF, on its latch branch, and
    through CF-to-LLVM, but as a discardable attribute, which translation to
    LLVM IR ignores. This pass sets it as the `llvm.br` or `llvm.cond_br`'s
    own `loop_annotation`, which becomes the loop's `!llvm.loop` metadata.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def ShareConcatPrefixes : Pass<"nnc-share-concat-prefixes", "mlir::func::FuncOp"> {
  let summary = "compute concats whose inputs begin another concat's as views of it";
  let description = [{
    A DenseNet layer concatenates every feature map before it, so each
    layer's concat repeats the one before plus one input: copied, that is
    quadratic in the layers, in run time and in the IR bufferization
    analyzes and LLVM compiles. A static concat (an empty tensor and its
    inputs inserted in order along one axis) whose inputs are the first
    inputs of a longer one, in order, becomes a slice of the longer one's
    value after those inputs are inserted; the longer one's inserts move up
    to where each input is computed. Each input is then inserted once, and
    each shorter concat is a view of the prefix. Bufferization keeps the
    shared buffer in place where every read of a prefix comes before the
    next insert (a DenseNet block), and copies, correctly, where not.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def HoistBatchInvariants : Pass<"nnc-hoist-batch-invariants", "mlir::func::FuncOp"> {
  let summary = "move what a batch loop's iterations share out of the loop";
  let description = [{
    A loop over a dynamic batch (`nnc.batch_loop`, from the nn to linalg
    conversion) holds each sample's ops as their static lowering made them,
    weights' transposes and reshapes included. Those do not depend on the
    sample: computed once before the loop, a constant's transpose folds at
    compile time as in static code, and a run does not repeat it per sample.
    A pure op moves out when its operands are all defined outside the loop and
    no use of its result is an op's destination (an accumulator's
    initialization stays with the op it initializes, which the schedules fuse
    into each tile); empty tensors always move. Before that, a sample's
    result is set to be computed in place: the empty tensor its ops'
    destinations start from becomes its slot of the loop's result (seen
    through a final reshape), so that it is not computed apart and copied.
  }];
}

def ShapeFunctions : Pass<"nnc-shape-functions", "mlir::ModuleOp"> {
  let summary = "derive each dynamic function's shape function and move its checks there";
  let description = [{
    A public function with dynamic dims (docs/dynamic-shapes.md) gets a
    companion `@<name>__shapes(%in_dims: memref<Nxi64>, %out_dims:
    memref<Mxi64>, %status: memref<2xi64>)`, marked `nnc.shape_function`:
    from the dims of every input (all of them, in order) it computes the
    dims of every output, and it runs the function's `cf.assert` checks on
    dims, storing the first failing one's number plus one in `status[0]`
    (0: all hold). The messages are the `nnc.checks` array attribute of the
    function. `nnc-plan-memory` later stores the workspace size in
    `status[1]`. The runtime calls it before each run with new dims, to size
    the outputs and the workspace; the function itself keeps no checks.

    The shape function is the function itself cut down to the dims of its
    results: `tensor.dim` of an argument becomes a load of `%in_dims`, and
    what does not feed a result's dim or a check is deleted. An input whose
    values a dim or a check reads (a Reshape's shape given at run time) is
    passed too: such inputs follow `%status`, in order, and the function's
    `nnc.shape_inputs` attribute lists their indices.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::scf::SCFDialect"];
}

def ReadOnlyInputs : Pass<"nnc-readonly-inputs", "mlir::ModuleOp"> {
  let summary = "mark the tensor arguments of public functions read-only for bufferization";
  let description = [{
    The runtime binds a caller's buffers as a function's inputs and promises
    that compiled code never writes them (runtime.h), so a run can be repeated
    on the same inputs. One-shot bufferization takes function arguments as
    writable unless told otherwise: an op that updates its operand in place
    (a scatter into its data input) would write the caller's buffer. This
    pass sets `bufferization.writable = false` on every tensor argument of
    every public function; bufferization then copies such an operand into a
    buffer of its own before writing it.

    Before:
    ```mlir
    func.func @main(%data: tensor<5xf32>) -> tensor<5xf32>
    ```
    After:
    ```mlir
    func.func @main(%data: tensor<5xf32> {bufferization.writable = false}) -> tensor<5xf32>
    ```
  }];
}

def PlanMemory : Pass<"nnc-plan-memory", "mlir::ModuleOp"> {
  let summary = "place every intermediate buffer of @main in one workspace";
  let description = [{
    After bufferization, each static `memref.alloc` in `@main` becomes a
    `memref.view` into a new trailing workspace argument (`memref<Nxi8>`), at
    an offset chosen so that buffers whose lifetimes overlap never share bytes
    (first fit over program order). Their deallocations disappear; the
    workspace size is recorded as `nnc.workspace_size` on the function, and the
    runtime allocates it once per session. `memref.copy` becomes `linalg.copy`
    so no copy needs a runtime library. The buffers of a loop over a dynamic
    batch's body (`nnc.batch_loop`: one sample's temporaries) are laid out
    the same way over the body's ops, as views of one buffer before the loop,
    which the function's plan then places.

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

def TileAndVectorize : Pass<"nnc-cpu-tile-vectorize", "mlir::func::FuncOp"> {
  let summary = "tile and vectorize contractions for the CPU (linalg on tensors)";
  let description = [{
    Every f32 contraction with one m, n and k loop (matmul, batched matmul,
    convolutions lowered to matmul) is tiled into thread chunks, cache tiles
    (m 32, n 128, k 1024 multiply-adds per output, loops n, k, m), then
    register tiles of two vectors' width over four k steps (loops n, m, k;
    8x32 on AVX-512, 4x16 on AVX2), vectorized into `vector.contract`s whose
    accumulators stay in registers across the k loop. Elementwise ops are
    vectorized along rows, one vector register at a time. The vector unit
    comes from the options (the driver derives them from the target CPU).
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "width of the target's vector registers in bits (128, 256 or 512)">,
    Option<"vectorRegisters", "vector-registers", "int64_t", /*default=*/"32",
           "number of the target's vector registers">,
  ];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::scf::SCFDialect",
                           "mlir::affine::AffineDialect", "mlir::tensor::TensorDialect",
                           "mlir::math::MathDialect", "mlir::arith::ArithDialect"];
}

def LowerForallToRuntime : Pass<"nnc-cpu-parallel-calls", "mlir::ModuleOp"> {
  let summary = "run outermost scf.forall loops on the runtime's thread pool";
  let description = [{
    Runs on buffers, before the lowering to LLVM. Each outermost `scf.forall`
    (no `shared_outs`, no results) is outlined into a private function
    `@<func>_par<N>(ptr args, i64 begin, i64 end)` that runs the iterations
    with linear ids in [begin, end) (row-major over the forall's dimensions;
    lower bounds and steps respected). The values the body uses are stored in
    a struct on the caller's stack (memrefs as their LLVM descriptors, index
    as i64; constants are re-created in the body). At the forall's place the
    code loads the thread-local `nnc_context` (the `nnc_abi_context_t *` the
    entry wrapper sets) and calls its `parallel_for` with the total iteration
    count, or calls the body serially on [0, count) when there is no context,
    one thread, or at most one iteration. Foralls nested in a body become
    `scf.for` loops. A forall with tensor `shared_outs` is an error.

    Before:
    ```mlir
    scf.forall (%i) in (8) {
      memref.store %v, %out[%i] : memref<8xf32>
    }
    ```
    After:
    ```mlir
    %ctx = llvm.load %slot : !llvm.ptr -> !llvm.ptr
    scf.if %threaded {
      llvm.call %parallel_for(%runtime, %c8, %body, %args) : ...
    } else {
      func.call @main_par0(%args, %c0, %c8) : (!llvm.ptr, i64, i64) -> ()
    }
    func.func private @main_par0(%args: !llvm.ptr, %begin: i64, %end: i64) {
      scf.for %i = %b to %e step %c1 { memref.store %v, %out[%i] : memref<8xf32> }
    }
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::arith::ArithDialect",
                           "mlir::scf::SCFDialect", "mlir::func::FuncDialect"];
}

def OutlineLoops : Pass<"nnc-cpu-outline-loops", "mlir::ModuleOp"> {
  let summary = "loop nests as functions, for LLVM's loop passes";
  let description = [{
    Runs on buffers, after the thread pool's loops are outlined and the
    remaining linalg ops became loops. LLVM's loop strength reduction scans
    a function's code around each use of a loop's index, so a function of
    many loops with run-time trip counts takes superlinear time (minutes for
    MobileNetV2 with a dynamic batch, 15 s for an encoder with a dynamic
    sequence length), and scalar evolution's invalidation does in a function
    of many static loops (SSDlite's post-processing: 18 s). Two rewrites:
    - The body of each outermost loop over a dynamic batch (`nnc.batch_loop`,
      without results) moves into a private, not inlined function
      `@<func>_sample<N>(<the values it uses>..., index)`, and the loop calls
      it with its index.
    - Then each top-level op of a function that is or holds a loop moves,
      whole, into a private, not inlined
      function `@<func>_loop<N>(<the values it uses>...)` returning its
      results, called in its place.
    Constants are re-created in the functions.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def SinkBorderFills : Pass<"nnc-cpu-sink-border-fills", "mlir::func::FuncOp"> {
  let summary = "fill a pad's border in the thread chunks that write its interior";
  let description = [{
    After bufferization, the fills of a pad's border strips (marked
    `nnc.pad_border` by nnc-cpu-tile-vectorize) that come right before the
    `scf.forall` writing the padded buffer's interior in slabs of one dim (the
    channels) move into that loop: each chunk fills the strips' part in its
    own slab before writing it. The loop must write the buffer only (no read
    of it) through a subview at its induction variable, one step wide, of a
    subview spanning the dim; other fills stay where they are.

    Before:
    ```mlir
    linalg.fill ins(%zero : f32) outs(%top : memref<1x32x1x18xf32, ...>)
    scf.forall (%i) = (0) to (32) step (8) {
      %slab = memref.subview %interior[0, %i, 0, 0] [1, 8, 16, 16] [1, 1, 1, 1] ...
      ...
    }
    ```
    After:
    ```mlir
    scf.forall (%i) = (0) to (32) step (8) {
      %part = memref.subview %top[0, %i, 0, 0] [1, 8, 1, 18] [1, 1, 1, 1] ...
      linalg.fill ins(%zero : f32) outs(%part : ...)
      %slab = memref.subview %interior[0, %i, 0, 0] [1, 8, 16, 16] [1, 1, 1, 1] ...
      ...
    }
    ```

    Every border fill, sunk or not, then becomes `scf.for` loops annotated
    not to be unrolled (`llvm.loop_annotation`, nnc-loop-annotations): a
    loop per row and channel stays a loop instead of thousands of stores.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::linalg::LinalgDialect",
                           "mlir::scf::SCFDialect", "mlir::LLVM::LLVMDialect"];
}

def VectorizeCopies : Pass<"nnc-cpu-vectorize-copies", "mlir::func::FuncOp"> {
  let summary = "copies between buffers as vector loads and stores";
  let description = [{
    After bufferization and memory planning, each static `linalg.copy`
    (concatenation, padding, results) is tiled to one vector register of
    its innermost dim, the edge peeled, and vectorized. A large one at the
    function's top level (in no loop) is first split into thread chunks
    along its outer dims.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "width of the target's vector registers in bits">,
  ];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::scf::SCFDialect",
                           "mlir::affine::AffineDialect", "mlir::memref::MemRefDialect"];
}

def PrefetchPanels : Pass<"nnc-cpu-prefetch-panels", "mlir::func::FuncOp"> {
  let summary = "prefetch constant matmul panels too large to stay in cache";
  let description = [{
    A vector read of whole rows of a 2-D constant global (the packed panels of
    a matmul's constant B, `[N/w * K, w]`) inside a loop, when the global
    holds at least 2 MiB: such weights are evicted between runs by the rest
    of the model and come from memory, where the register tile that first
    reads each block stalls on them. Each row of the read gets a
    `memref.prefetch` per 64-byte line, 128 rows ahead. Smaller panels stay
    in cache, and their prefetches would cost issue slots for nothing.

    ```mlir
    %b = vector.transfer_read %panels[%k, %c0], %pad {in_bounds = [true, true]}
        : memref<147456x32xf32>, vector<4x32xf32>
    ```
    gets, before it, `memref.prefetch %panels[%k + 128 + r, 16 * l], read,
    locality<3>, data` for r in 0..3 and l in 0..1.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def ExpandDynamicViews : Pass<"nnc-expand-dynamic-views", "mlir::func::FuncOp"> {
  let summary = "expansions with several dynamic dims in a group as reinterpret casts";
  let description = [{
    A `memref.expand_shape` one of whose groups holds several dynamic dims
    (`[B*T, C]` viewed as `[B, T, C]`, both dynamic) becomes a
    `memref.reinterpret_cast` of its source's base with the sizes its
    `output_shape` states and the strides they imply. MLIR 22's
    `expand-strided-metadata` derives such a group's sizes from the static
    shape alone, and crashes on it.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def SplitBlocksAtRegions : Pass<"nnc-split-blocks-at-regions", "mlir::func::FuncOp"> {
  let summary = "a block of the function's body per op with regions, before SCF becomes a CFG";
  let description = [{
    `convert-scf-to-cf` splits the block an scf op sits in at it, moving
    every op after it: a function body of N ops with K loops and ifs costs
    N x K (SSDlite's post-processing, 157,000 ops and 1,400 nests at the
    top level of `@main`: 33 s). This pass makes each op with regions at the
    top level of a function body start a block of its own, reached by a
    `cf.br` from the one before, splitting from the last such op back, so
    each split moves only the ops up to the next one: linear. The CFG is
    the one the conversion would make; LLVM merges the straight-line blocks.

    Before:
    ```mlir
    %a = ...
    scf.for ... { ... }
    %b = ...
    scf.if ... { ... }
    ```
    After:
    ```mlir
    %a = ...
    cf.br ^bb1
  ^bb1:
    scf.for ... { ... }
    %b = ...
    cf.br ^bb2
  ^bb2:
    scf.if ... { ... }
    ```
  }];
  let dependentDialects = ["mlir::cf::ControlFlowDialect"];
}

//===----------------------------------------------------------------------===//
// CUDA
//===----------------------------------------------------------------------===//

def CUDAConstantsToArgument : Pass<"nnc-cuda-constants-to-argument", "mlir::ModuleOp"> {
  let summary = "place @main's constants in one device buffer passed as an argument";
  let description = [{
    Kernels cannot read the host's globals: the runtime uploads all of a
    module's constants to the device once per session, as one block. This
    pass lays out every constant `memref.global` that a public function reads
    in one byte block (each at a 64-byte aligned offset), replaces each
    `memref.get_global` by a `memref.view` into a new trailing argument
    `memref<Nxi8>`, records N as `nnc.constants_size` on the function, and
    replaces the globals by one public `@nnc_constants` holding the block
    (the artifact points the descriptor at it).

    Before:
    ```mlir
    memref.global "private" constant @w : memref<2xf32> = dense<[1.0, 2.0]>
    %w = memref.get_global @w : memref<2xf32>
    ```
    After (in `@main(..., %constants: memref<64xi8>)`):
    ```mlir
    %w = memref.view %constants[%c0][] : memref<64xi8> to memref<2xf32>
    ```
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def CUDASplitK : Pass<"nnc-cuda-split-k", "mlir::func::FuncOp"> {
  let summary = "split the reduction of contractions with few output tiles across blocks";
  let description = [{
    A contraction that the tiled matmul schedule would cover with too few
    blocks to fill the GPU (a batch-1 convolution of a late stage: 196
    outputs by 256 channels, 2304 terms each) is split along its outermost
    reduction dim that the chosen split divides: S partial contractions, each
    over a contiguous 1/S of that dim, write a [S, ...] tensor of partial
    results (the split index a parallel dim read by both operands, which the
    tiled schedule treats as a batch dim), and a second op combines each
    output's previous value with its S partials in order. The result is
    deterministic (no atomics); only the grouping of the terms changes.
    Runs on tensors, before bufferization, so the partials are planned with
    the other intermediates.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def CUDAMapToGPU : Pass<"nnc-cuda-map-to-gpu", "mlir::func::FuncOp"> {
  let summary = "turn each linalg op of a bufferized function into one GPU kernel launch";
  let description = [{
    Named linalg ops are generalized and their loops reordered so that
    reductions are innermost; each op then becomes a parallel loop nest whose
    parallel iterations, linearized, are spread over a grid of 256-thread
    blocks (consecutive threads take consecutive elements of the innermost
    dim, so accesses coalesce), each thread running the reduction loops for
    its output. Work that is not a parallel loop (scalar code, sequential
    loops) runs as a one-thread kernel, so no compiled code on the host ever
    touches device memory. Views and index arithmetic stay on the host.

    After, for a 1024-element elementwise op:
    ```mlir
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, ...) threads(%tx, %ty, %tz) in (%sx = %c256, ...) {
      %id = ... %bx * 256 + %tx
      scf.if (%id < 1024) { ... the op's body at %id ... }
    }
    ```
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256", "threads per block of mapped loops">,
    Option<"precision", "precision", "std::string", "\"f32\"",
           "what tiled contractions' products are computed in: f32 (exact, SIMT), "
           "tf32, bf16 or f16 (tensor cores, f32 sums)">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect", "mlir::vector::VectorDialect",
                           "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
                           "mlir::LLVM::LLVMDialect", "mlir::NVVM::NVVMDialect"];
}

def CUDAMergeKernels : Pass<"nnc-cuda-merge-kernels", "mlir::ModuleOp"> {
  let summary = "move every outlined kernel into one gpu.module with unique names";
  let description = [{
    Outlining makes one `gpu.module` per launch, whose kernels may share a
    name. The artifact holds one PTX image per chip with all kernels, so this
    pass moves them into one `gpu.module @nnc_kernels`, each kernel renamed to
    its former module's (unique) name, and updates the launches. Shared-memory
    buffers get 16-byte alignment, and each launch records its kernel's shared
    memory (`nnc.static_shared_bytes`) for `nnc --report`.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def CUDAApproximateMath : Pass<"nnc-cuda-approximate-math", "mlir::gpu::GPUModuleOp"> {
  let summary = "expand math ops in kernels into arithmetic (no libdevice needed)";
  let description = [{
    The NVVM lowering turns most math ops into calls to libdevice, which only
    the CUDA toolkit ships and which nnc never needs: sqrt, floor, ceil, trunc
    and roundeven become NVVM intrinsics (correctly rounded PTX
    instructions), rsqrt 1 / sqrt, and exp, log, tanh, erf and the like
    polynomial approximations accurate to a few ulp in f32. What must stay
    exact or has no f32 polynomial is expanded exactly (CUDA/ExactMath.h):
    |x| and copysign by bits, the float remainder (`arith.remf`, C's fmod) by a loop
    of exact subtractions, f64 exp and log to a few ulp, powf in f64 with C's
    signs and special cases, sinh, asinh and atanh near 0 by their series
    (sinh, cosh and asinh elsewhere without early overflow or cancellation),
    integer powers by squaring. A math op left over is an error naming it;
    `nnc-cuda-lower-launches` still rejects PTX that calls an external
    function.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::scf::SCFDialect", "mlir::vector::VectorDialect",
                           "mlir::LLVM::LLVMDialect"];
}

def CUDAEmulationImage : Pass<"nnc-cuda-emulation-image", "mlir::ModuleOp"> {
  let summary = "add the kernels rewritten for the host (the cuda-emulated device's image)";
  let description = [{
    Serializes `gpu.module @nnc_kernels` for its first NVVM target to LLVM
    bitcode (the IR the NVPTX back end receives, optimized), rewrites it for
    the host (compiler/Codegen/CUDA/HostKernels.h: NVVM intrinsics become
    accesses to the emulated thread's state, shared variables offsets into
    the block's shared memory, each kernel gets a host entry and a launch
    bounds record) and stores the result as the module attribute
    `nnc.cuda_host_image`, which the artifact links into the host code. An
    NVVM intrinsic the emulator does not implement is an error naming it.
    The `gpu.module` itself is left as it is.
  }];
}

def CUDALowerLaunches : Pass<"nnc-cuda-lower-launches", "mlir::ModuleOp"> {
  let summary = "lower kernel launches to calls of the runtime's launch hook";
  let description = [{
    Takes the PTX of the serialized `gpu.binary @nnc_kernels` into module
    attributes (`nnc.cuda_images`: chip -> PTX text; `nnc.cuda_kernels`: the
    kernel names in launch order), and replaces each `gpu.launch_func` by a
    call of `context->cuda->launch(device, kernel index, grid, block, 0,
    params)` with the thread-local context (see RuntimeContext.h); memref
    operands are passed expanded, as the NVVM kernels take them (allocated
    and aligned pointer, offset, sizes, strides).
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::arith::ArithDialect"];
}

def ProfileKernels : Pass<"nnc-profile-kernels", "mlir::ModuleOp"> {
  let summary = "call the runtime's profile hook as each kernel of a function starts";
  let description = [{
    For `nnc --profile`: before the first op of each kernel of a bufferized
    function (the groups of top-level ops `nnc --report` lists, in the same
    order) and before its return, calls `@nnc_profile_mark(k)`, an LLVM
    function this pass defines: it loads the call's `nnc_abi_context_t` from the
    module's thread-local slot and, when the context has a profile hook,
    calls `profile(profile_state, k)` (abi.h). The last mark has the kernel
    count. Without a hook (or a context) a mark costs a load and a branch.

    ```mlir
    linalg.matmul ins(...) outs(...)
    linalg.generic ...
    return
    // becomes
    llvm.call @nnc_profile_mark(%c0_i32) : (i32) -> ()
    linalg.matmul ins(...) outs(...)
    llvm.call @nnc_profile_mark(%c1_i32) : (i32) -> ()
    linalg.generic ...
    llvm.call @nnc_profile_mark(%c2_i32) : (i32) -> ()
    return
    ```
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::arith::ArithDialect"];
}

def FoldConstantTransposes : Pass<"nnc-fold-constant-transposes", "mlir::func::FuncOp"> {
  let summary = "make transposed constant matrices constants of their own";
  let description = [{
    A Gemm with transB or a convolution's filter seen as [K, M] reaches
    codegen as a 2-D transpose (a `linalg.transpose`, or a transposing copy
    generic) of a constant, through reshapes: left alone, every run would
    copy the weight. This pass evaluates such transposes of f32 constants at
    compile time, for every target.

    ```mlir
    %w = arith.constant dense<...> : tensor<10x512xf32>
    %t = linalg.transpose ins(%w : tensor<10x512xf32>) outs(%e : tensor<512x10xf32>)
           permutation = [1, 0]
    // becomes
    %t = arith.constant dense_resource<nnc_transposed> : tensor<512x10xf32>
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def FuseElementwise : Pass<"nnc-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "fuse chains of elementwise generics where nothing is recomputed";
  let description = [{
    Each all-parallel generic at the top of a function is fused into the
    generic consuming it, when that is its only use, and the consumer reads
    each of its elements once (a permutation map): bias, normalization,
    activation, residual add and layout copies become one op, one loop nest
    or kernel. With `broadcasts`, a producer read through a broadcast is fused
    too, into an all-parallel consumer (recomputing a per-channel value costs
    less than a GPU launch); never into a consumer with reductions, which
    would recompute it for every output (a layer norm inside a matmul).

    ```mlir
    %a = linalg.generic {add} ins(%x, %b) ...
    %r = linalg.generic {max} ins(%a) ...
    // becomes
    %r = linalg.generic {add; max} ins(%x, %b) ...
    ```
  }];
  let options = [
    Option<"broadcasts", "broadcasts", "bool", /*default=*/"false",
           "also fuse producers read through a broadcast into all-parallel consumers">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

#endif // NNC_COMPILER_CODEGEN_PASSES_TD
