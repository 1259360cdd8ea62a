/*===- abi.h - the contract between compiled modules and the runtime ------===*
 *
 * A module compiled by nnc is a shared library that exports one symbol,
 * NNC_ABI_MODULE_SYMBOL, a function returning a pointer to a static
 * nnc_abi_module_t. The runtime dlopens the library, checks abi_version, and
 * calls the entry functions the descriptor lists. Nothing else crosses the
 * boundary: the compiler includes only this header from the runtime.
 *
 * Tensors are dense, row-major and contiguous; no alignment is assumed for
 * caller buffers. Element types use ONNX's TensorProto numbering.
 *
 *===----------------------------------------------------------------------===*/

#ifndef NNC_ABI_H
#define NNC_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change of the structs or the entry signature. */
#define NNC_ABI_VERSION 9
#define NNC_ABI_MODULE_SYMBOL "nnc_module_v1"

/* Element types (ONNX TensorProto.DataType values). */
typedef enum nnc_dtype {
  NNC_DTYPE_F32 = 1,
  NNC_DTYPE_U8 = 2,
  NNC_DTYPE_I8 = 3,
  NNC_DTYPE_U16 = 4,
  NNC_DTYPE_I16 = 5,
  NNC_DTYPE_I32 = 6,
  NNC_DTYPE_I64 = 7,
  /* An element is a `const char *` to a NUL-terminated UTF-8 string (see
   * nnc_abi_strings_t): an input's point to the caller's strings, which
   * compiled code only reads; an output's to strings the runtime owns, or,
   * where ops only moved elements (Reshape, Gather, ...), to the input's. */
  NNC_DTYPE_STRING = 8,
  NNC_DTYPE_BOOL = 9, /* one byte per element, 0 or 1 */
  NNC_DTYPE_F16 = 10,
  NNC_DTYPE_F64 = 11,
  NNC_DTYPE_U32 = 12,
  NNC_DTYPE_U64 = 13,
  NNC_DTYPE_BF16 = 16,
} nnc_dtype_t;

/* A function input or output. A dim of -1 is dynamic: its size is given at
 * run time (an input's) or computed by the function's prepare (an output's). */
typedef struct nnc_abi_tensor {
  const char *name;
  int32_t dtype; /* nnc_dtype_t */
  int32_t rank;
  const int64_t *shape;
} nnc_abi_tensor_t;

/* What the runtime offers a CUDA module's host code during a call. The host
 * code runs on the calling thread and only enqueues work: kernel launches on
 * the session's stream, in program order. It must enqueue the same launches,
 * with the same arguments, on every call of a session (the device addresses
 * it receives do not change): the runtime records them once into a CUDA graph
 * and replays that graph instead of calling the entry again. */
typedef struct nnc_abi_cuda {
  void *device; /* opaque, passed back to launch */
  /* Device address of the module's constants (nnc_abi_module_t.constants,
   * constants_size bytes, aligned to 256), uploaded by the runtime once per
   * session; NULL when constants_size is 0. */
  const void *constants;
  /* Enqueues kernel `kernel` (an index into nnc_abi_module_t.cuda_kernels)
   * with the given grid and block sizes and dynamic shared memory bytes.
   * params[i] points to the value of the kernel's i-th parameter (the
   * convention of cuLaunchKernel); the values are copied during the call, so
   * they may live on the caller's stack. More than 48 KiB of dynamic shared
   * memory is allowed (the runtime opts the kernel in). Returns 0, or nonzero
   * (the driver's CUresult, or 1, its invalid-value code, for a kernel index
   * out of range) when the launch failed. The entry function may stop and
   * return that value or go on; either way the runtime fails the run with
   * the first failed launch's error. */
  int32_t (*launch)(void *device, int32_t kernel, uint32_t grid_x, uint32_t grid_y,
                    uint32_t grid_z, uint32_t block_x, uint32_t block_y, uint32_t block_z,
                    uint32_t shared_bytes, void **params);
} nnc_abi_cuda_t;

/* What the runtime offers code that makes or reads strings (element type
 * NNC_DTYPE_STRING: Cast to and from numbers, StringNormalizer). Compiled
 * code calls these only from the thread that called the entry, never from a
 * parallel_for body. A call that fails returns NULL (format, change_case),
 * nonzero (parse) or -1 (is_stopword) and records why; the code may go on,
 * and the runtime then fails the run with the first such message. A
 * returned string is owned by the runtime and lives until the next run of
 * the same session, or its release. */
typedef struct nnc_abi_strings {
  void *state; /* opaque, passed back */
  /* Cast to string: the text of the value of `dtype` at `value` (f32, f64, or
   * a signed or unsigned integer of 8 to 64 bits): integers in decimal;
   * floats as NumPy's str() writes them, the shortest digits that read back
   * to the same value, positional from 1e-4 up to 1e16 ("0.5", "100.0"),
   * scientific outside ("1e-05", "1.5e+16"), and "nan", "inf", "-inf". */
  const char *(*format)(void *state, int32_t dtype, const void *value);
  /* Cast from string: reads `text` as a value of `dtype` (as format) into
   * *value. Floats: decimal or scientific, rounded to nearest (beyond the
   * type's range to an infinity, below half its smallest subnormal to zero),
   * and "inf", "+inf", "-inf", "nan" in any case; integers: decimal, within
   * the type's range. Leading and trailing whitespace is ignored. Returns 0,
   * or nonzero for text that is not such a number. */
  int32_t (*parse)(void *state, int32_t dtype, const char *text, void *value);
  /* StringNormalizer: 1 when `text` is one of the `count` stopwords (laid out
   * one after another, each NUL-terminated), compared byte for byte or, when
   * case_sensitive is 0, after lower-casing both; 0 when it is not; -1 on
   * failure (text that is not valid UTF-8). */
  int32_t (*is_stopword)(void *state, const char *text, const char *stopwords, int64_t count,
                         int32_t case_sensitive);
  /* StringNormalizer: `text` lower-cased (action 1), upper-cased (2) or as it
   * is (0), code point by code point with Unicode's simple case mappings;
   * NULL text reads as "". NULL on failure (text that is not valid UTF-8). */
  const char *(*change_case)(void *state, const char *text, int32_t action);
} nnc_abi_strings_t;

/* What the runtime offers compiled code during a call. May be NULL for a CPU
 * module without string ops: its code then runs serially. */
typedef struct nnc_abi_context {
  void *runtime; /* opaque, passed back to parallel_for */
  int32_t num_threads; /* parallel_for is not called when this is <= 1 */
  /* Runs body(arg, begin, end) over disjoint ranges covering [0, count), on
   * the runtime's thread pool, and returns when all are done. Compiled code
   * calls it only from the thread that called the entry function, never from
   * inside a body, and only with count > 1. */
  void (*parallel_for)(void *runtime, int64_t count,
                       void (*body)(void *arg, int64_t begin, int64_t end), void *arg);
  /* Set for CUDA modules (never NULL there), NULL for CPU modules. */
  const nnc_abi_cuda_t *cuda;
  /* Kernel timing, for functions compiled with `nnc --profile` (their
   * nnc_abi_function_t.kernels is set); NULL when not profiling. The
   * function's code calls profile(profile_state, k) as kernel k starts, in
   * the order of its kernel table, and profile(profile_state, num_kernels)
   * when the last one is done, all from the thread that called the entry. */
  void (*profile)(void *profile_state, int32_t kernel);
  void *profile_state;
  /* For a function whose prepare is set, never NULL: the
   * dims of every input, then of every output, each tensor's in order
   * (static ones too), then the workspace's size in bytes, as prepare
   * computed them for these inputs. NULL for other functions. */
  const int64_t *dims;
  /* For a function with data-dependent outputs (below), never NULL: where
   * the run writes the dims of every output, each tensor's in order (static
   * ones too), as the run computed them. NULL for other functions. */
  int64_t *output_dims;
  /* Never NULL for a CPU module's call; NULL for a CUDA module's (string
   * tensors run on the CPU only). A CPU module with string ops called
   * without a context (or without this) cannot report: its string ops give
   * NULL texts and zeros. */
  const nnc_abi_strings_t *strings;
} nnc_abi_context_t;

/* Runs one function. inputs[i] and outputs[i] point to the tensors' data in
 * the descriptor's order; workspace points to workspace_size bytes aligned to
 * workspace_alignment, owned by the caller and not shared with a concurrent
 * call. Compiled code never writes an input. For a CUDA module all of these
 * are device addresses (at least 256-byte aligned; NULL for a tensor or
 * workspace of no bytes), the same on every call of a session, and the call
 * returns once the work is enqueued on the session's stream. Returns 0 on
 * success. */
typedef int32_t (*nnc_abi_entry_fn)(void *const *inputs, void *const *outputs, void *workspace,
                                    const nnc_abi_context_t *context);

/* A kernel of a function compiled with `nnc --profile`, as nnc --report
 * describes it: what it is, the ONNX nodes whose work it does, and what the
 * compiler counted of its work. */
typedef struct nnc_abi_kernel {
  const char *kind;  /* "parallel loop", "linalg.matmul", ... */
  const char *nodes; /* ONNX node names, ", "-separated ("" when none) */
  double flops;
  double bytes_read;
  double bytes_written;
  double estimated_seconds; /* the compiler's roofline estimate; 0 when unknown */
} nnc_abi_kernel_t;

typedef struct nnc_abi_function {
  const char *name; /* "main"; later "train_step", "eval" */
  nnc_abi_entry_fn entry;
  int32_t num_inputs;
  int32_t num_outputs;
  const nnc_abi_tensor_t *inputs;
  const nnc_abi_tensor_t *outputs;
  uint64_t workspace_size; /* bytes of intermediates, from the compiler's memory plan */
  uint64_t workspace_alignment;
  int32_t num_kernels;              /* 0 unless compiled with --profile */
  const nnc_abi_kernel_t *kernels;  /* num_kernels, in execution order */
  /* Set for a function with dynamic dims (a -1 in a shape) or with shape
   * inputs below (its dims may all be static: a Reshape to a shape input
   * feeding a static output), NULL otherwise (workspace_size then holds;
   * it is 0 when prepare is set). From input_dims (the dims of every input,
   * each tensor's in order) and the values of the shape inputs below
   * (inputs[i] as the entry gets it; prepare reads no other input's data) it
   * computes output_dims (the same for the outputs) and *workspace_size, and
   * checks what the function assumes beyond the declared shapes (dims that
   * must agree, a shape whose element count must match). Returns 0, k + 1
   * when check k failed (its message is checks[k]), or -1 when the workspace
   * would need more than 2^62 bytes; the outputs' dims are then not
   * computed. Pure and thread-safe; the runtime calls it before a run whose
   * input dims, or shape inputs' values, differ from the last. */
  int32_t (*prepare)(const int64_t *input_dims, void *const *inputs, int64_t *output_dims,
                     uint64_t *workspace_size);
  int32_t num_checks;
  const char *const *checks;
  /* The inputs whose values, not only their dims, give the outputs' dims (a
   * Reshape's shape passed at run time): indices into inputs, increasing. */
  int32_t num_shape_inputs;
  const int32_t *shape_inputs;
  /* The outputs whose dims only the run knows (NonZero's count, Compress's
   * length): indices into outputs, increasing. For these prepare computes an
   * upper bound, which the output buffers are sized for; the run writes the
   * data laid out for the actual dims, and those dims to
   * context->output_dims. */
  int32_t num_data_dependent_outputs;
  const int32_t *data_dependent_outputs;
} nnc_abi_function_t;

/* x86-64 instruction set extensions a module's code may use beyond the
 * baseline (nnc_abi_module_t.cpu_features): the runtime refuses to load a
 * module that needs one this CPU lacks, rather than die of an illegal
 * instruction mid-run. Bits it does not know refuse the module too. */
#define NNC_CPU_AVX (1u << 0)
#define NNC_CPU_AVX2 (1u << 1)
#define NNC_CPU_FMA (1u << 2)
#define NNC_CPU_BMI2 (1u << 3)
#define NNC_CPU_AVX512F (1u << 4)
#define NNC_CPU_AVX512BW (1u << 5)
#define NNC_CPU_AVX512DQ (1u << 6)
#define NNC_CPU_AVX512VL (1u << 7)
#define NNC_CPU_AVX512VNNI (1u << 8)
#define NNC_CPU_AVX512BF16 (1u << 9)

/* The kernels of a CUDA module compiled for one chip: PTX text defining every
 * name of nnc_abi_module_t.cuda_kernels as a .entry. The runtime loads the
 * image for the newest chip the device runs ("sm_90a" only on compute
 * capability 9.0 exactly, "sm_XY" on X.Y and newer). */
typedef struct nnc_abi_cuda_image {
  const char *chip; /* "sm_80", "sm_90", "sm_90a" */
  const char *ptx;  /* NUL-terminated */
  uint64_t ptx_size; /* bytes, without the NUL */
} nnc_abi_cuda_image_t;

/* The cuda-emulated device runs a CUDA module's kernels on the host CPU: the
 * compiler rewrites each kernel's LLVM IR (as handed to the NVPTX back end)
 * for the host, turning every NVVM intrinsic into a read of, or a call
 * through, the state of the CUDA thread running it. One such state per CUDA
 * thread; the emulator fills it and passes it to the kernel's host entry. */
typedef struct nnc_abi_cuda_thread nnc_abi_cuda_thread_t;

/* Warp collectives (nnc_abi_cuda_thread_t.warp's op), with PTX's semantics:
 * shfl.sync.<mode> b, c; vote.sync.<mode>; bar.warp.sync. */
enum {
  NNC_CUDA_WARP_SHFL_UP = 0,
  NNC_CUDA_WARP_SHFL_DOWN = 1,
  NNC_CUDA_WARP_SHFL_BFLY = 2,
  NNC_CUDA_WARP_SHFL_IDX = 3,
  NNC_CUDA_WARP_VOTE_ALL = 4,
  NNC_CUDA_WARP_VOTE_ANY = 5,
  NNC_CUDA_WARP_VOTE_UNI = 6,
  NNC_CUDA_WARP_VOTE_BALLOT = 7,
  NNC_CUDA_WARP_SYNC = 8,
};

/* Warp-wide matrix multiply-accumulates (nnc_abi_cuda_thread_t.mma's kind):
 * mma.sync.aligned.<shape>.row.col.f32.<type>.<type>.f32, D = A * B + C with
 * A M x K, B K x N, C and D M x N, each lane holding the fragments PTX
 * assigns it. */
enum {
  NNC_CUDA_MMA_M16N8K8_TF32 = 0,  /* a: 4 tf32, b: 2 tf32 (f32 bits) */
  NNC_CUDA_MMA_M16N8K16_BF16 = 1, /* a: 4 bf16 pairs, b: 2 (low half first) */
  NNC_CUDA_MMA_M16N8K16_F16 = 2,  /* a: 4 f16 pairs, b: 2 (low half first) */
};

struct nnc_abi_cuda_thread {
  /* The special registers: %tid, %ntid, %ctaid, %nctaid (x, y, z), %laneid. */
  uint32_t tid[3];
  uint32_t ntid[3];
  uint32_t ctaid[3];
  uint32_t nctaid[3];
  uint32_t laneid;
  uint32_t reserved;
  /* The block's shared memory: the kernel's static shared variables at the
   * offsets the compiler chose (nnc_abi_cuda_host_kernel_t.shared_size bytes),
   * then the launch's dynamic shared memory. At least 16-byte aligned. */
  char *shared;
  void *emulator; /* opaque, for the hooks */
  /* barrier.cta.sync (__syncthreads), barrier `id`: returns once every
   * thread of the block that has not exited waits at the same barrier.
   * `site` numbers the call site in the module, so that threads waiting at
   * different barriers are told apart; `aligned` (the .aligned form) adds
   * that every thread of a warp executes it. */
  void (*barrier)(nnc_abi_cuda_thread_t *thread, int32_t id, int32_t site, int32_t aligned);
  /* A warp collective (NNC_CUDA_WARP_*) among the lanes of `mask`: returns
   * once each of them waits at the same one. a is the value (shuffles) or
   * predicate (votes), b and c the shuffle's lane and clamp operands. The
   * result is in the low 32 bits; bit 32 is a shuffle's in-range predicate. */
  uint64_t (*warp)(nnc_abi_cuda_thread_t *thread, int32_t op, int32_t site, uint32_t mask,
                   uint32_t a, uint32_t b, uint32_t c);
  /* mma.sync.aligned of `kind` (NNC_CUDA_MMA_*): returns once all 32 lanes
   * of the warp wait at one of the same kind. a and b are this lane's
   * registers of A's and B's fragments (4 and 2), c its 4 accumulators; its
   * 4 results go to d. */
  void (*mma)(nnc_abi_cuda_thread_t *thread, int32_t kind, int32_t site, const uint32_t *a,
              const uint32_t *b, const float *c, float *d);
};

/* nnc_abi_cuda_host_kernel_t.flags: the kernel calls barrier, warp or mma, so the
 * threads of a block must be able to wait for each other (the emulator gives
 * each its own stack); without it they may run one after the other. */
#define NNC_CUDA_HOST_KERNEL_COLLECTIVES (1u << 0)

/* One kernel's host image. The launch bounds are what the kernel's code was
 * optimized for (launch_bounds, known block sizes, value ranges of the
 * special registers): the emulator refuses a launch outside them, since the
 * code would silently compute something else. */
typedef struct nnc_abi_cuda_host_kernel {
  /* Runs one CUDA thread: params as nnc_abi_cuda_t.launch receives them. */
  void (*entry)(void **params, nnc_abi_cuda_thread_t *thread);
  uint32_t flags; /* NNC_CUDA_HOST_KERNEL_* */
  uint32_t shared_size; /* bytes of static shared memory; the dynamic part follows */
  uint32_t block_min[3], block_max[3]; /* each block dim d: min <= ntid[d] <= max */
  uint32_t grid_min[3], grid_max[3];   /* each grid dim d: min <= nctaid[d] <= max */
} nnc_abi_cuda_host_kernel_t;

typedef struct nnc_abi_module {
  uint32_t abi_version; /* NNC_ABI_VERSION of the compiler that wrote it */
  uint32_t cpu_features; /* NNC_CPU_* bits the code needs (0 on other targets) */
  const char *producer;   /* e.g. "nnc 0.1" */
  const char *target;     /* "cpu" or "cuda" */
  const char *target_cpu; /* the CPU the code was compiled for, e.g. "znver5" */
  int32_t num_functions;
  const nnc_abi_function_t *functions;
  uint64_t constants_size; /* bytes of embedded weights */
  /* CUDA modules only (zero and NULL otherwise): the weights as one host
   * block of constants_size bytes, which the runtime copies to the device; the
   * kernels' entry names; the PTX images, one per chip. */
  const void *constants;
  int32_t num_cuda_kernels;
  const char *const *cuda_kernels;
  int32_t num_cuda_images;
  const nnc_abi_cuda_image_t *cuda_images;
  /* CUDA modules: the kernels' host images for the cuda-emulated device, in
   * the order of cuda_kernels; NULL when the module has none. */
  const nnc_abi_cuda_host_kernel_t *cuda_host_kernels;
  /* What contractions' products are computed in: "f32" (exactly as written),
   * or on CUDA's tensor cores "tf32", "bf16" or "f16" (nnc --precision). NULL reads
   * as "f32". */
  const char *precision;
} nnc_abi_module_t;

typedef const nnc_abi_module_t *(*nnc_abi_module_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* NNC_ABI_H */
