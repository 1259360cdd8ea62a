/*===- runtime.h - the nnc runtime C API ----------------------------------===*
 *
 * Loads modules compiled by nnc and runs their functions on the host's CPU
 * or, for modules compiled for CUDA, on an NVIDIA GPU (or emulated on the
 * CPU):
 *
 *   nnc_runtime_create -> nnc_module_load -> nnc_session_create
 *     -> nnc_session_bind_input (zero-copy) -> nnc_session_run
 *     -> nnc_session_output
 *
 * and trains the modules nnc compiles with --train (nnc_trainer_create ->
 * nnc_trainer_step, docs/training.md).
 *
 * Conventions:
 * - Every call that can fail returns nnc_status_t: NULL on success, otherwise a
 *   status that the caller owns and frees with nnc_status_free. Out-parameters
 *   are written only on success.
 * - Objects are opaque. nnc_<object>_release drops the caller's reference; a
 *   session keeps its runtime and module alive, so they may be released in any
 *   order.
 * - Runtimes and modules are immutable once created: any number of threads may
 *   use one concurrently. A session is used by one thread at a time; to run a
 *   module from several threads, give each thread its own session.
 * - Strings, shapes and nnc_tensor_info_t pointers returned by getters are
 *   owned by the module and stay valid while the module is alive.
 * - Calls returning a status check every argument. Getters (which cannot
 *   report) require valid, non-NULL handles.
 * - Small bookkeeping allocations abort on exhaustion, as the C++ standard
 *   library does; tensor-sized allocations (workspace, outputs) and thread
 *   creation report NNC_STATUS_RESOURCE_EXHAUSTED.
 *
 *===----------------------------------------------------------------------===*/

#ifndef NNC_RUNTIME_H
#define NNC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "nnc/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(NNC_RUNTIME_BUILDING)
#define NNC_API __attribute__((visibility("default")))
#else
#define NNC_API
#endif

/*===-------------------------------------------------------------------===*
 * Status
 *===-------------------------------------------------------------------===*/

/* Codes follow the gRPC/absl numbering. */
typedef enum nnc_status_code {
  NNC_STATUS_OK = 0,
  /* A bad argument: null pointer, dtype/shape/size mismatch, unknown device,
   * a file that is not an nnc module or holds a malformed descriptor, a
   * training module whose functions disagree, a bad checkpoint. */
  NNC_STATUS_INVALID_ARGUMENT = 3,
  /* A module or checkpoint file, function, input, output or parameter that
   * does not exist. */
  NNC_STATUS_NOT_FOUND = 5,
  /* Memory for a workspace, output or trainer buffer (host or device), or a
   * thread, or room for a checkpoint, could not be obtained. */
  NNC_STATUS_RESOURCE_EXHAUSTED = 8,
  /* The call is valid but the state is not: a module built for another ABI
   * version or for a CPU or GPU this machine does not have, an input not bound
   * before run, an output read before run, a trainer for a module compiled
   * without --train. */
  NNC_STATUS_FAILED_PRECONDITION = 9,
  /* An input or output index outside the function's list. */
  NNC_STATUS_OUT_OF_RANGE = 11,
  /* A feature this runtime does not have yet (dynamic dims or string tensors
   * on a GPU, string tensors in a trainer). */
  NNC_STATUS_UNIMPLEMENTED = 12,
  /* The compiled function reported a failure, or the GPU or its driver failed
   * during a run (a launch, a copy), or the cuda-emulated device found a
   * kernel breaking CUDA's rules. */
  NNC_STATUS_INTERNAL = 13,
  /* A device that this machine cannot provide: no CUDA driver, no GPU, a
   * driver that does not initialize. */
  NNC_STATUS_UNAVAILABLE = 14,
} nnc_status_code_t;

/* NULL means success. */
typedef struct nnc_status *nnc_status_t;

/* The status's code; NNC_STATUS_OK for NULL. Thread-safe. */
NNC_API nnc_status_code_t nnc_status_code(nnc_status_t status);

/* The status's message, e.g. "input 'x': expected shape 1x3 (got 1x4)"; "ok"
 * for NULL. Owned by the status: valid until nnc_status_free. Thread-safe. */
NNC_API const char *nnc_status_message(nnc_status_t status);

/* Frees a status; NULL is a no-op. */
NNC_API void nnc_status_free(nnc_status_t status);

/*===-------------------------------------------------------------------===*
 * Element types (nnc_dtype_t, ONNX numbering, is declared in abi.h)
 *===-------------------------------------------------------------------===*/

/* Short name for messages ("f32", "i64", "bool", "string", ...), or
 * "unknown" for a value that is not an nnc_dtype_t. Static storage.
 * Thread-safe. */
NNC_API const char *nnc_dtype_name(int32_t dtype);

/* Bytes per element (bool is one byte, a string element is a pointer:
 * sizeof(const char *)), or 0 for an unknown value. Thread-safe. */
NNC_API size_t nnc_dtype_size(int32_t dtype);

/*===-------------------------------------------------------------------===*
 * Tensors
 *===-------------------------------------------------------------------===*/

/* A function input or output as the module declares it. Tensors are dense and
 * row-major. Owned by the module. */
typedef struct nnc_tensor_info {
  const char *name;
  int32_t dtype; /* nnc_dtype_t */
  int32_t rank;
  const int64_t *shape;  /* rank dims; -1 marks a dynamic dim */
  int64_t element_count; /* -1 when a dim is dynamic */
  size_t byte_size;      /* 0 when a dim is dynamic */
} nnc_tensor_info_t;

/* A dense row-major host buffer. Filled by the caller to bind a buffer (which
 * the caller keeps owning), or by nnc_session_output to describe a result.
 * For NNC_DTYPE_STRING the buffer is an array of `const char *`, one per
 * element, each pointing to a NUL-terminated UTF-8 string: an input's to
 * strings the caller owns (none may be NULL), an output's to strings the
 * session owns or to the run's input strings (see nnc_session_run). */
typedef struct nnc_tensor_view {
  void *data;
  size_t byte_size; /* bytes available at data; at least the tensor's size */
  int32_t dtype;    /* nnc_dtype_t; any value is checked */
  int32_t rank;
  const int64_t *shape;
} nnc_tensor_view_t;

/*===-------------------------------------------------------------------===*
 * Runtime: the host's CPU thread pool
 *===-------------------------------------------------------------------===*/

typedef struct nnc_runtime nnc_runtime_t;

#define NNC_RUNTIME_MAX_THREADS 1024

typedef struct nnc_runtime_options {
  /* Threads that run parallel loops, the calling thread included: 0 (the
   * default) means one per core available to the process, 1 runs everything
   * on the calling thread; at most NNC_RUNTIME_MAX_THREADS. */
  int32_t num_threads;
} nnc_runtime_options_t;

/* Sets the defaults. */
NNC_API void nnc_runtime_options_initialize(nnc_runtime_options_t *options);

/* Creates a runtime and starts its threads. options may be NULL for the
 * defaults. The caller owns *out_runtime and releases it with
 * nnc_runtime_release. Thread-safe. */
NNC_API nnc_status_t nnc_runtime_create(const nnc_runtime_options_t *options,
                                        nnc_runtime_t **out_runtime);

/* Drops the caller's reference; the threads stop when the last session using
 * the runtime is released too. NULL is a no-op. Must not race with other uses
 * of the same reference. */
NNC_API void nnc_runtime_release(nnc_runtime_t *runtime);

/* The number of threads parallel loops use, the calling thread included.
 * Thread-safe. */
NNC_API int32_t nnc_runtime_num_threads(const nnc_runtime_t *runtime);

/*===-------------------------------------------------------------------===*
 * Module: one compiled shared library
 *===-------------------------------------------------------------------===*/

typedef struct nnc_module nnc_module_t;
typedef struct nnc_function nnc_function_t; /* owned by its module */

/* Loads the module at path (dlopen with RTLD_NOW | RTLD_LOCAL; a path without
 * a '/' is taken relative to the current directory, not searched in the
 * library path) and checks its descriptor: it must export NNC_ABI_MODULE_SYMBOL
 * and have been built for NNC_ABI_VERSION, and this CPU must have the
 * instruction set extensions its code uses (NNC_STATUS_FAILED_PRECONDITION
 * names those it lacks). The caller owns *out_module and releases it with
 * nnc_module_release. Thread-safe. */
NNC_API nnc_status_t nnc_module_load(const char *path, nnc_module_t **out_module);

/* Drops the caller's reference; the library is unloaded when the last session
 * using it is released too. NULL is a no-op. Must not race with other uses of
 * the same reference. */
NNC_API void nnc_module_release(nnc_module_t *module);

/* The path the module was loaded from. Thread-safe. */
NNC_API const char *nnc_module_path(const nnc_module_t *module);

/* Who wrote the module, e.g. "nnc 0.1". Thread-safe. */
NNC_API const char *nnc_module_producer(const nnc_module_t *module);

/* The device family the module was compiled for: "cpu" or "cuda". A session
 * must run it on that family's device. Thread-safe. */
NNC_API const char *nnc_module_target(const nnc_module_t *module);

/* What the module's matmuls and convolutions compute their products in:
 * "f32" (exactly as written), or on CUDA's tensor cores "tf32", "bf16" or "f16"
 * (nnc --precision), whose results are compared with looser tolerances
 * (docs/CUDA.md). Thread-safe. */
NNC_API const char *nnc_module_precision(const nnc_module_t *module);

/* The CPU the code was tuned for, e.g. "znver5". Thread-safe. */
NNC_API const char *nnc_module_target_cpu(const nnc_module_t *module);

/* Number of entry functions. Thread-safe. */
NNC_API int32_t nnc_module_function_count(const nnc_module_t *module);

/* The index-th function, or NULL when index is out of range. Thread-safe. */
NNC_API const nnc_function_t *nnc_module_function(const nnc_module_t *module, int32_t index);

/* Finds a function by name (NNC_STATUS_NOT_FOUND lists the names there are).
 * Thread-safe. */
NNC_API nnc_status_t nnc_module_find_function(const nnc_module_t *module, const char *name,
                                              const nnc_function_t **out_function);

/* The function's name, e.g. "main". Thread-safe. */
NNC_API const char *nnc_function_name(const nnc_function_t *function);

/* Numbers of inputs and outputs. Thread-safe. */
NNC_API int32_t nnc_function_input_count(const nnc_function_t *function);
NNC_API int32_t nnc_function_output_count(const nnc_function_t *function);

/* The index-th input or output, or NULL when index is out of range.
 * Thread-safe. */
NNC_API const nnc_tensor_info_t *nnc_function_input(const nnc_function_t *function,
                                                    int32_t index);
NNC_API const nnc_tensor_info_t *nnc_function_output(const nnc_function_t *function,
                                                     int32_t index);

/* Finds an input or output index by name (NNC_STATUS_NOT_FOUND lists the
 * names there are). Thread-safe. */
NNC_API nnc_status_t nnc_function_find_input(const nnc_function_t *function, const char *name,
                                             int32_t *out_index);
NNC_API nnc_status_t nnc_function_find_output(const nnc_function_t *function, const char *name,
                                              int32_t *out_index);

/* Bytes of scratch memory a session of this function allocates (the
 * compiler's memory plan); 0 for a function whose workspace each run sizes:
 * one with dynamic dims, or with shapes given as input values (a Reshape to
 * a shape input), static dims or not. Thread-safe. */
NNC_API uint64_t nnc_function_workspace_size(const nnc_function_t *function);

/* A kernel of a function compiled with `nnc --profile`: a row of nnc
 * --report's table (docs/report.md). Owned by the module. */
typedef struct nnc_kernel_info {
  const char *kind;  /* "parallel loop", "serial loop", "linalg.matmul", ... */
  const char *nodes; /* the ONNX nodes whose work it does, ", "-separated */
  double flops;      /* floating-point operations it executes (an FMA is 2) */
  double bytes_read; /* sizes of the buffers it reads */
  double bytes_written;
  double estimated_seconds; /* the compiler's roofline estimate; 0 when unknown */
} nnc_kernel_info_t;

/* Number of kernels the module describes for this function: 0 unless it was
 * compiled with nnc --profile. Thread-safe. */
NNC_API int32_t nnc_function_kernel_count(const nnc_function_t *function);

/* The index-th kernel, in execution order, or NULL when index is out of
 * range. Thread-safe. */
NNC_API const nnc_kernel_info_t *nnc_function_kernel(const nnc_function_t *function,
                                                     int32_t index);

/*===-------------------------------------------------------------------===*
 * Session: one function of a module, ready to run
 *===-------------------------------------------------------------------===*/

typedef struct nnc_session nnc_session_t;

typedef struct nnc_session_options {
  const char *function; /* default "main" */
  /* Where the function runs; it must be the module's target family (else
   * NNC_STATUS_INVALID_ARGUMENT), and is never silently replaced by another:
   * - "cpu" (the default): modules compiled for the CPU.
   * - "cuda" or "cuda:<ordinal>" (GPU 0, or the given one): modules compiled
   *   for CUDA. The driver is libcuda.so.1, loaded at the first such session
   *   (the environment variable NNC_CUDA_DRIVER names another library); no
   *   driver, no GPU or a driver that fails to initialize is
   *   NNC_STATUS_UNAVAILABLE.
   * - "cuda-emulated": modules compiled for CUDA, their kernels run on this
   *   CPU from the module's host image of them (docs/cuda-emulated.md); no
   *   GPU or driver needed. A module without a host image is
   *   NNC_STATUS_FAILED_PRECONDITION. Blocks run on the runtime's threads,
   *   each thread of a kernel with barriers or warp collectives on a fiber of
   *   its own. A run fails (NNC_STATUS_INTERNAL, naming the kernel, block and
   *   threads) on a launch outside the bounds the kernel was compiled for, a
   *   divergent barrier or a warp collective that cannot complete. With the
   *   environment variable NNC_CUDA_EMULATED_CHECK set (and not "0") every
   *   launch runs twice, serially, the second time in reversed thread and
   *   block order with poisoned shared memory, and results that differ (a
   *   race) or kernels that write inputs or constants fail the run. */
  const char *device;
  /* Nonzero: time each kernel of every run (nnc_session_kernel_seconds). The
   * function must have been compiled with nnc --profile (else
   * NNC_STATUS_FAILED_PRECONDITION). On "cpu" and "cuda-emulated" the host's
   * clock times the kernels; on "cuda" events recorded on the session's
   * stream at each kernel's start do (NNC_STATUS_UNIMPLEMENTED with a driver
   * that lacks them), and runs launch the kernels one by one rather than
   * replaying a CUDA graph, so a kernel shorter than a launch's host
   * overhead counts that overhead too. Default 0: the marks in a profiled
   * function then cost a call, a load and a branch each. */
  int32_t profile;
} nnc_session_options_t;

/* Sets the defaults. */
NNC_API void nnc_session_options_initialize(nnc_session_options_t *options);

/* Creates a session running one function of module on runtime's threads.
 * Allocates everything a run needs once: the workspace (the function's
 * workspace_size, aligned to at least 64 bytes) and a buffer per output, so
 * runs allocate nothing (but the strings of string outputs, see
 * nnc_session_run); a function that needs more host memory (workspace
 * and outputs) than the machine has is NNC_STATUS_RESOURCE_EXHAUSTED before
 * anything is allocated. options may be NULL for the defaults; its strings are
 * not kept. The session holds references to runtime and module. The caller
 * owns *out_session and releases it with nnc_session_release.
 * On "cuda-emulated" the session allocates the same buffers in host memory
 * and copies the constants once; fiber stacks and per-thread shared memory
 * are made at the first launch that needs them and kept.
 * On a CUDA device the session also retains the GPU's primary context (shared
 * with other CUDA users of the process), creates a stream, JIT-compiles the
 * module's PTX image for the newest chip the GPU runs ("sm_90a" only on
 * compute capability 9.0, "sm_XY" on X.Y and newer; none is
 * NNC_STATUS_FAILED_PRECONDITION naming the GPU and the images), uploads the
 * module's constants and allocates the workspace and one device buffer per
 * input and output; the host keeps the output buffers. A failed driver call
 * is a status naming the call and the driver's error (and for a failed JIT
 * compilation, its log).
 * Thread-safe (runtime and module may be shared by concurrent calls). */
NNC_API nnc_status_t nnc_session_create(nnc_runtime_t *runtime, nnc_module_t *module,
                                        const nnc_session_options_t *options,
                                        nnc_session_t **out_session);

/* Frees the session, its workspace and the output buffers it owns (on a GPU:
 * its kernels, device memory and stream, and its reference to the primary
 * context), and drops its references to the runtime and module. NULL is a
 * no-op. Not thread-safe. */
NNC_API void nnc_session_release(nnc_session_t *session);

/* The function the session runs. Thread-safe. */
NNC_API const nnc_function_t *nnc_session_function(const nnc_session_t *session);

/* What the session runs on, for people: "cpu", or for a GPU its ordinal, name,
 * compute capability, the module image loaded and the driver version, e.g.
 * "cuda:0 'NVIDIA H100 80GB HBM3' (compute capability 9.0, image sm_90a,
 * driver 13.0)", or "cuda-emulated (kernels on the host CPU, 8 threads)".
 * Owned by the session. Thread-safe. */
NNC_API const char *nnc_session_device(const nnc_session_t *session);

/* Binds the caller's buffer as input index (zero-copy: the session keeps the
 * pointer, never a copy, and the compiled code reads it during each run and
 * never writes it). The buffer must stay valid and unchanged during runs,
 * until it is rebound or the session is released; bindings persist across
 * runs; for a string input, so must the strings its elements point to. The
 * view's dtype, rank and shape must match the input exactly, a dynamic dim
 * (-1) taking any size, and its byte_size must cover the tensor.
 * Not thread-safe. */
NNC_API nnc_status_t nnc_session_bind_input(nnc_session_t *session, int32_t index,
                                            const nnc_tensor_view_t *view);
NNC_API nnc_status_t nnc_session_bind_input_by_name(nnc_session_t *session, const char *name,
                                                    const nnc_tensor_view_t *view);

/* Makes runs write output index into the caller's buffer instead of the one
 * the session owns; a NULL view makes them write the session's buffer again.
 * Same rules as binding an input; for a dynamic output the view's shape must
 * be the one the run's inputs give (checked by the run). Output buffers must
 * not overlap inputs or each other (nor may an input be bound over an output
 * buffer the session owns): a run that finds such an overlap fails with
 * NNC_STATUS_INVALID_ARGUMENT naming both tensors. An output whose dims only
 * the run computes (NonZero's count; docs/dynamic-shapes.md) cannot be bound:
 * NNC_STATUS_FAILED_PRECONDITION. Not thread-safe. */
NNC_API nnc_status_t nnc_session_bind_output(nnc_session_t *session, int32_t index,
                                             const nnc_tensor_view_t *view);
NNC_API nnc_status_t nnc_session_bind_output_by_name(nnc_session_t *session, const char *name,
                                                     const nnc_tensor_view_t *view);

/* Binds a buffer in the session's device memory as input (output) index, so
 * that runs read (write) it there, with no copy through the host: on "cuda",
 * view->data is a device address (a CUdeviceptr cast to a pointer) valid in
 * the session's context, the GPU's primary context, which the CUDA runtime
 * and frameworks such as PyTorch use too (so their allocations qualify); on
 * "cuda-emulated", where device memory is host memory, any host buffer. The
 * view is checked as by nnc_session_bind_input/output; the session cannot
 * check that the address is device memory of that size, and a wrong one fails
 * a run (or corrupts device memory), as a wrong host pointer would on the
 * CPU. The buffer must not change during a run, and a run returns only when
 * the GPU has finished it, so the caller finishes its own writes to an input
 * (and waits for them) before calling nnc_session_run. A new address makes
 * the next run record its CUDA graph again. nnc_session_output describes a
 * device-bound output with its device address. A NULL view unbinds a device
 * input (bind it again before the next run) and returns a device output to
 * the session's own host buffer; binding a host buffer with
 * nnc_session_bind_input/output ends a device binding too. In a session on
 * "cpu": NNC_STATUS_INVALID_ARGUMENT. Not thread-safe. */
NNC_API nnc_status_t nnc_session_bind_device_input(nnc_session_t *session, int32_t index,
                                                   const nnc_tensor_view_t *view);
NNC_API nnc_status_t nnc_session_bind_device_output(nnc_session_t *session, int32_t index,
                                                    const nnc_tensor_view_t *view);

/* Runs the function once. Every input must be bound. Parallel loops use the
 * runtime's threads; while another session holds them, this run's loops execute
 * on the calling thread instead (same results, no deadlock).
 * String tensors (NNC_DTYPE_STRING, CPU sessions only: a function with one is
 * NNC_STATUS_UNIMPLEMENTED on a CUDA device): an input's strings must stay
 * valid and unchanged during the run; a NULL element is
 * NNC_STATUS_INVALID_ARGUMENT before the run starts. The strings a run
 * makes for its outputs (in the session's buffers or bound ones) are owned
 * by the session and stay valid until its next run starts or it is
 * released: a run frees the last run's strings as it starts, so an input
 * element pointing to one of them is refused (NNC_STATUS_INVALID_ARGUMENT;
 * copy the string to feed it back). Ops that only move elements (Reshape,
 * Gather, Concat, ...) copy the pointers, not the text: such an output
 * element points to the caller's input string, valid as long as that is.
 * Text that a string operation cannot take (a
 * Cast of "abc" to f32, invalid UTF-8 for a case change) fails the run with
 * NNC_STATUS_INVALID_ARGUMENT, e.g. "function 'main' of module 'm.so':
 * cannot read 'abc' as f32". The strings' memory is the one allocation a
 * run may make: it is kept from run to run (as much as the last run used),
 * so repeated runs on similar inputs allocate nothing.
 * A function with dynamic dims (docs/dynamic-shapes.md): a run with input dims
 * not seen in the last run (or, for an input that gives a shape, such as a
 * Reshape's, other values) first computes the output dims and the workspace
 * size, fails with NNC_STATUS_INVALID_ARGUMENT when the dims or values break
 * what the model requires (the message says what, naming the node and showing
 * the values), and grows the workspace and the
 * session's own output buffers when they are too small; the same or smaller
 * dims again allocate nothing.
 * On a CUDA device a run copies the bound inputs to the device, enqueues the
 * function's kernels, copies the outputs back into the host buffers and waits
 * for the GPU, so results are read exactly as on the CPU (tensors bound to
 * device memory are not copied). The first successful
 * run launches the kernels one by one; the next captures them into a CUDA
 * graph, which later runs replay (where the driver cannot capture, runs keep
 * launching one by one). Not thread-safe. */
NNC_API nnc_status_t nnc_session_run(nnc_session_t *session);

/* Seconds each kernel took in the last successful run of a session created
 * with options.profile set: out_seconds[k] for kernel k of
 * nnc_function_kernel(function, k), for count kernels, which must be the
 * function's kernel count. A kernel's time runs from its start to the next
 * one's, so the host code between them is included. FAILED_PRECONDITION
 * without profiling or before a successful run. Not thread-safe. */
NNC_API nnc_status_t nnc_session_kernel_seconds(const nnc_session_t *session,
                                               double *out_seconds, int32_t count);

/* Describes output index as written by the last successful run, with that
 * run's shape: data points to the session's buffer (valid until the session
 * is released or a run with larger dims) or to the caller's bound buffer.
 * A string output's buffer holds `const char *` elements pointing to strings
 * the session owns, valid until the next run starts or the session is
 * released, or to the run's input strings (nnc_session_run).
 * byte_size may exceed the shape's bytes: an output whose dims only the run
 * computes (NonZero's count) has a buffer sized for the most its input dims
 * allow, allocated when the dims change, and its shape is what the run found.
 * Fails until a run succeeds, and again after a failed run or a bind_output.
 * Not thread-safe. */
NNC_API nnc_status_t nnc_session_output(const nnc_session_t *session, int32_t index,
                                        nnc_tensor_view_t *out_view);

/*===-------------------------------------------------------------------===*
 * Trainer: the training functions of a module, and the weights they update
 *===-------------------------------------------------------------------===*/

/* A module compiled with nnc --train exports four functions (docs/training.md):
 * init, train_step, loss_and_gradients and eval, whose tensors are named
 * `param:<P>` (parameters), `state:<S>` (optimizer state), `grad:<P>`,
 * `labels` and `loss`. A trainer runs them: it holds one session per function
 * on one device and keeps the parameters and the optimizer state between
 * calls, in host memory (on a GPU each call copies them in and out).
 *
 * A trainer is used by one thread at a time, like a session; its getters of
 * tensor infos are thread-safe. Parameter names are given without the
 * "param:" prefix. */
typedef struct nnc_trainer nnc_trainer_t;

/* Creates a trainer for a training module. options may be NULL for the
 * defaults; only options->device is used (the functions are the four above),
 * and its strings are not kept.
 * The module must have the four functions (else
 * NNC_STATUS_FAILED_PRECONDITION naming those it lacks), none with a string
 * tensor (else NNC_STATUS_UNIMPLEMENTED naming it), and their signatures
 * must agree (else NNC_STATUS_INVALID_ARGUMENT naming the first tensor that
 * does not): init takes nothing and returns every parameter and state tensor;
 * train_step takes the model's inputs, then `labels` (unless the loss is the
 * model's own, when eval takes the same inputs), then the parameters and
 * the state, and returns `loss` (f32, 0-D) and the same parameters and state;
 * loss_and_gradients takes the same inputs and labels and the parameters and
 * returns `loss` and `grad:<P>` per parameter; eval takes the model's inputs,
 * the parameters and any of train_step's state it reads (batch norms' running
 * statistics, `state:running:<R>`). Names, dtypes, shapes and order must
 * match throughout.
 * Creates the sessions (see nnc_session_create), allocates two host buffers
 * per parameter and state tensor (NNC_STATUS_RESOURCE_EXHAUSTED when that
 * fails) and runs init once to fill one of them. A step reads one set and
 * writes the other, then swaps them: compiled code never writes its inputs,
 * and a failed step leaves the parameters as they were.
 * The trainer holds references to runtime and module. The caller owns
 * *out_trainer and releases it with nnc_trainer_release. Thread-safe
 * (runtime and module may be shared by concurrent calls). */
NNC_API nnc_status_t nnc_trainer_create(nnc_runtime_t *runtime, nnc_module_t *module,
                                        const nnc_session_options_t *options,
                                        nnc_trainer_t **out_trainer);

/* Frees the trainer, its sessions and buffers, and drops its references to
 * the runtime and module. NULL is a no-op. Not thread-safe. */
NNC_API void nnc_trainer_release(nnc_trainer_t *trainer);

/* What the trainer runs on, as nnc_session_device says. Owned by the trainer.
 * Thread-safe. */
NNC_API const char *nnc_trainer_device(const nnc_trainer_t *trainer);

/* The inputs a step takes: train_step's inputs that are neither parameters
 * nor state, in its order: the model's inputs, then `labels` (the last)
 * unless the module's loss is the model's own (nnc --loss=model: the labels,
 * if any, are among the model's inputs). nnc_trainer_eval takes the model's
 * inputs. nnc_trainer_input returns NULL when index is out of range; the info
 * is owned by the module. Thread-safe. */
NNC_API int32_t nnc_trainer_input_count(const nnc_trainer_t *trainer);
NNC_API const nnc_tensor_info_t *nnc_trainer_input(const nnc_trainer_t *trainer, int32_t index);

/* 1 when a step's last input is `labels`, which eval does not take; 0 when
 * the module's loss is the model's own. Thread-safe. */
NNC_API int32_t nnc_trainer_has_labels(const nnc_trainer_t *trainer);

/* The parameters, in the module's order. The info's name lacks the "param:"
 * prefix (e.g. "fc1.weight"); NULL when index is out of range. Owned by the
 * trainer: valid until it is released. Thread-safe. */
NNC_API int32_t nnc_trainer_parameter_count(const nnc_trainer_t *trainer);
NNC_API const nnc_tensor_info_t *nnc_trainer_parameter(const nnc_trainer_t *trainer,
                                                       int32_t index);

/* Copies parameter `name`'s current value into data, or replaces it with
 * data's. bytes must be the parameter's byte_size exactly. An unknown name is
 * NNC_STATUS_NOT_FOUND listing the parameters. Writing changes what the next
 * step, loss_and_gradients or eval sees. Not thread-safe. */
NNC_API nnc_status_t nnc_trainer_read_parameter(const nnc_trainer_t *trainer, const char *name,
                                                void *data, size_t bytes);
NNC_API nnc_status_t nnc_trainer_write_parameter(nnc_trainer_t *trainer, const char *name,
                                                 const void *data, size_t bytes);

/* Steps taken: successful nnc_trainer_step calls, counted from the
 * checkpoint's `state:step` after a load (when the module has one).
 * Not thread-safe. */
NNC_API int64_t nnc_trainer_steps(const nnc_trainer_t *trainer);

/* One optimizer step on a batch: runs train_step on inputs (count views, in
 * nnc_trainer_input's order: the model's inputs, then the labels if
 * nnc_trainer_has_labels) and the
 * current parameters and state, which it then replaces with the updated ones.
 * Writes the batch's loss (before the update) to *out_loss unless it is NULL.
 * The views are checked as nnc_session_bind_input checks them and read only
 * during the call. On failure nothing changes. Not thread-safe. */
NNC_API nnc_status_t nnc_trainer_step(nnc_trainer_t *trainer, const nnc_tensor_view_t *inputs,
                                      int32_t count, float *out_loss);

/* The loss and every parameter's gradient on a batch (inputs as for
 * nnc_trainer_step), without changing the parameters or the state. Writes the
 * loss to *out_loss unless it is NULL; the gradients are read with
 * nnc_trainer_read_gradient. Not thread-safe. */
NNC_API nnc_status_t nnc_trainer_loss_and_gradients(nnc_trainer_t *trainer,
                                                    const nnc_tensor_view_t *inputs,
                                                    int32_t count, float *out_loss);

/* Copies the gradient of parameter `name` (without "param:") computed by the
 * last nnc_trainer_loss_and_gradients call into data; bytes must be the
 * parameter's byte_size exactly. NNC_STATUS_FAILED_PRECONDITION until such a
 * call succeeds, and again after one fails. Not thread-safe. */
NNC_API nnc_status_t nnc_trainer_read_gradient(const nnc_trainer_t *trainer, const char *name,
                                               void *data, size_t bytes);

/* Runs the model (eval) on its inputs (count views: nnc_trainer_input's
 * without the labels, see nnc_trainer_has_labels) with the current parameters and running statistics.
 * Not thread-safe. */
NNC_API nnc_status_t nnc_trainer_eval(nnc_trainer_t *trainer, const nnc_tensor_view_t *inputs,
                                      int32_t count);

/* Describes eval's output index as written by the last nnc_trainer_eval call
 * (as nnc_session_output does; the data is owned by the trainer and valid
 * until the next eval call or release). NNC_STATUS_FAILED_PRECONDITION until
 * an eval call succeeds, and again after one fails. The outputs are those of
 * the module's function "eval" (nnc_module_find_function). Not thread-safe. */
NNC_API nnc_status_t nnc_trainer_eval_output(const nnc_trainer_t *trainer, int32_t index,
                                             nnc_tensor_view_t *out_view);

/* Writes the parameters and the optimizer state to the file at path in the
 * checkpoint format of docs/training.md, replacing the file only once the
 * whole checkpoint is written (through path + ".tmp", removed on failure).
 * Not thread-safe. */
NNC_API nnc_status_t nnc_trainer_save_checkpoint(const nnc_trainer_t *trainer, const char *path);

/* Replaces the parameters and the optimizer state with a checkpoint's. The
 * whole file is checked before anything changes, and a bad one is refused
 * with NNC_STATUS_INVALID_ARGUMENT (NNC_STATUS_NOT_FOUND for a missing file):
 * not a checkpoint, truncated, trailing bytes, a signature of another model
 * or optimizer ("checkpoint '<path>' belongs to another model or
 * optimizer"), or tensors that differ from the trainer's in count, name,
 * dtype, shape or size. Not thread-safe. */
NNC_API nnc_status_t nnc_trainer_load_checkpoint(nnc_trainer_t *trainer, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* NNC_RUNTIME_H */
