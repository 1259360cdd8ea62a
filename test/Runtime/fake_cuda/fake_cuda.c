/*===- fake_cuda.c - a CUDA driver on host memory, for the runtime's tests -===*
 *
 * Declares the driver's types itself, from the CUDA documentation, rather
 * than sharing the runtime's declarations: a mistake there shows up here as a
 * mismatch instead of being repeated. See fake_cuda.h for what it does.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include "fake_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_ILLEGAL_STATE = 401,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_UNKNOWN = 999,
};

enum { ATTRIBUTE_CC_MAJOR = 75, ATTRIBUTE_CC_MINOR = 76 };
enum { JIT_ERROR_LOG_BUFFER = 5, JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 };
enum { FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 };

#define MAX_DEVICES 8
#define MAX_PARAMS 32
#define DEFAULT_SHARED_LIMIT (48 * 1024)
#define MAX_SHARED_OPT_IN (227 * 1024) /* sm_90's */

/*===- state ------------------------------------------------------------===*/

typedef struct CUctx_st {
  int device;
  int references;
} *CUcontext;

typedef struct Launch {
  struct CUfunc_st *function;
  nnc_fake_cuda_launch_t shape;
  /* the parameters' values, copied at launch; aligned as the driver aligns them */
  _Alignas(16) unsigned char values[MAX_PARAMS][16];
} Launch;

typedef struct CUgraph_st {
  Launch *launches;
  int count;
} *CUgraph;

typedef struct CUgraphExec_st {
  struct CUgraph_st graph; /* a copy: instantiation does not keep the graph */
} *CUgraphExec;

typedef struct CUstream_st {
  CUgraph capture; /* non-NULL while capturing */
} *CUstream;

typedef struct CUfunc_st {
  char name[128];
  int param_sizes[MAX_PARAMS];
  int num_params;
  unsigned max_dynamic_shared;
  nnc_fake_cuda_kernel_fn host;
} *CUfunction;

typedef struct CUmod_st {
  char target[16];
  struct CUfunc_st *functions;
  int count;
  void *kernels; /* the NNC_FAKE_CUDA_KERNELS library */
} *CUmodule;

typedef struct Allocation {
  void *data;
  size_t size;
  struct Allocation *next;
} Allocation;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static struct CUctx_st contexts[MAX_DEVICES];
static Allocation *allocations;
static long live_allocations, live_streams, live_modules, live_graphs, live_graph_execs,
    live_events;
/* Bytes allocated and not freed, and the fake device's memory. */
static size_t live_bytes;
#define FAKE_DEVICE_BYTES ((size_t)16 << 30)
/* The fake GPU's clock, in milliseconds: each kernel run takes one
 * microsecond per block, so event timings are known to the tests. */
static double gpu_clock_ms;
static char *log_text;
static size_t log_size, log_capacity;

/* Call counts since the last reset, by name (names are string literals). */
static struct {
  const char *name;
  long calls;
} counts[64];

static __thread CUcontext context_stack[16];
static __thread int context_depth;

static long *count_of(const char *call) {
  for (int i = 0; i < 64; ++i) {
    if (!counts[i].name)
      counts[i].name = call;
    if (strcmp(counts[i].name, call) == 0)
      return &counts[i].calls;
  }
  abort(); /* more entry points than slots: a fake's bug */
}

static void record(const char *call, CUresult result, const char *format, ...) {
  char details[512] = "";
  if (format) {
    va_list args;
    va_start(args, format);
    vsnprintf(details, sizeof(details), format, args);
    va_end(args);
  }
  char line[700];
  int length = snprintf(line, sizeof(line), "%s%s%s -> %d\n", call, *details ? " " : "", details,
                        result);
  if (length < 0)
    return;
  if ((size_t)length >= sizeof(line))
    length = sizeof(line) - 1;
  const char *keep = getenv("NNC_FAKE_CUDA_RECORD");
  if (!keep || strcmp(keep, "0") != 0) {
    if (log_size + length + 1 > log_capacity) {
      size_t capacity = (log_capacity + length + 1) * 2;
      char *grown = realloc(log_text, capacity);
      if (!grown)
        abort();
      log_text = grown;
      log_capacity = capacity;
    }
    memcpy(log_text + log_size, line, length + 1);
    log_size += length;
  }
  const char *file = getenv("NNC_FAKE_CUDA_LOG");
  if (file && *file) {
    FILE *out = fopen(file, "a");
    if (out) {
      fputs(line, out);
      fclose(out);
    }
  }
}

/* The result NNC_FAKE_CUDA_FAIL injects into this call of `call`, or 0. */
static CUresult injected(const char *call, long number) {
  const char *spec = getenv("NNC_FAKE_CUDA_FAIL");
  size_t length = strlen(call);
  while (spec && *spec) {
    const char *end = strchr(spec, ',');
    if (!end)
      end = spec + strlen(spec);
    if (strncmp(spec, call, length) == 0 &&
        (spec + length == end || spec[length] == ':' || spec[length] == '@')) {
      const char *rest = spec + length;
      CUresult code = CUDA_ERROR_UNKNOWN;
      long nth = 0;
      if (*rest == ':')
        code = (CUresult)strtol(rest + 1, (char **)&rest, 10);
      if (*rest == '@')
        nth = strtol(rest + 1, NULL, 10);
      if (nth == 0 || nth == number)
        return code;
    }
    spec = *end ? end + 1 : end;
  }
  return CUDA_SUCCESS;
}

/* Every entry point starts here: counts the call and returns the injected
 * failure or the driver's state errors. The lock is held until finish. */
static CUresult begin(const char *call) {
  pthread_mutex_lock(&lock);
  long number = ++*count_of(call);
  CUresult failure = injected(call, number);
  if (failure)
    return failure;
  if (!initialized && strcmp(call, "cuInit") != 0 && strcmp(call, "cuDriverGetVersion") != 0 &&
      strcmp(call, "cuGetErrorName") != 0 && strcmp(call, "cuGetErrorString") != 0)
    return CUDA_ERROR_NOT_INITIALIZED;
  return CUDA_SUCCESS;
}

static CUresult finish(const char *call, CUresult result, const char *format, ...) {
  char details[512] = "";
  if (format) {
    va_list args;
    va_start(args, format);
    vsnprintf(details, sizeof(details), format, args);
    va_end(args);
  }
  record(call, result, format ? "%s" : NULL, details);
  pthread_mutex_unlock(&lock);
  return result;
}

static int device_count(void) {
  const char *text = getenv("NNC_FAKE_CUDA_DEVICES");
  int count = text && *text ? atoi(text) : 1;
  return count < 0 ? 0 : count > MAX_DEVICES ? MAX_DEVICES : count;
}

/* 10 * major + minor. */
static int capability(void) {
  const char *text = getenv("NNC_FAKE_CUDA_CC");
  int major = 9, minor = 0;
  if (text && *text)
    sscanf(text, "%d.%d", &major, &minor);
  return major * 10 + minor;
}

static CUresult require_context(void) {
  if (context_depth == 0 || context_stack[context_depth - 1]->references == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

/* The allocation holding [address, address + size), or NULL. */
static Allocation *find_range(CUdeviceptr address, size_t size) {
  for (Allocation *a = allocations; a; a = a->next) {
    uintptr_t start = (uintptr_t)a->data;
    if (address >= start && address + size <= start + a->size && address + size >= address)
      return a;
  }
  return NULL;
}

/*===- the control API (fake_cuda.h) -------------------------------------===*/

EXPORT void nnc_fake_cuda_reset(void) {
  pthread_mutex_lock(&lock);
  log_size = 0;
  if (log_text)
    log_text[0] = '\0';
  for (int i = 0; i < 64; ++i)
    counts[i].calls = 0;
  pthread_mutex_unlock(&lock);
}

EXPORT const char *nnc_fake_cuda_log(void) { return log_text ? log_text : ""; }

EXPORT long nnc_fake_cuda_calls(const char *call) {
  pthread_mutex_lock(&lock);
  long calls = 0;
  for (int i = 0; i < 64 && counts[i].name; ++i)
    if (strcmp(counts[i].name, call) == 0)
      calls = counts[i].calls;
  pthread_mutex_unlock(&lock);
  return calls;
}

EXPORT long nnc_fake_cuda_live(const char *kind) {
  pthread_mutex_lock(&lock);
  long contexts_alive = 0;
  for (int i = 0; i < MAX_DEVICES; ++i)
    contexts_alive += contexts[i].references;
  long value = strcmp(kind, "allocations") == 0   ? live_allocations
               : strcmp(kind, "streams") == 0     ? live_streams
               : strcmp(kind, "modules") == 0     ? live_modules
               : strcmp(kind, "contexts") == 0    ? contexts_alive
               : strcmp(kind, "graphs") == 0      ? live_graphs
               : strcmp(kind, "graph_execs") == 0 ? live_graph_execs
               : strcmp(kind, "events") == 0      ? live_events
                                                  : -1;
  pthread_mutex_unlock(&lock);
  return value;
}

/*===- initialization and errors -----------------------------------------===*/

EXPORT CUresult cuInit(unsigned flags) {
  CUresult result = begin("cuInit");
  if (!result && flags != 0)
    result = CUDA_ERROR_INVALID_VALUE;
  if (!result)
    initialized = 1;
  return finish("cuInit", result, NULL);
}

EXPORT CUresult cuDriverGetVersion(int *version) {
  CUresult result = begin("cuDriverGetVersion");
  if (!result && !version)
    result = CUDA_ERROR_INVALID_VALUE;
  if (!result)
    *version = 13000;
  return finish("cuDriverGetVersion", result, NULL);
}

static const struct {
  CUresult code;
  const char *name, *text;
} kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
     "the operation cannot be performed in the present state"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

/* Like the driver, an unknown code leaves the string NULL. Not recorded:
 * they describe errors rather than act. */
static CUresult error_text(CUresult error, const char **out, int name) {
  if (!out)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < sizeof(kErrors) / sizeof(kErrors[0]); ++i) {
    if (kErrors[i].code == error) {
      *out = name ? kErrors[i].name : kErrors[i].text;
      return CUDA_SUCCESS;
    }
  }
  *out = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **name) {
  return error_text(error, name, 1);
}

EXPORT CUresult cuGetErrorString(CUresult error, const char **text) {
  return error_text(error, text, 0);
}

/*===- devices and contexts ----------------------------------------------===*/

EXPORT CUresult cuDeviceGetCount(int *count) {
  CUresult result = begin("cuDeviceGetCount");
  if (!result && !count)
    result = CUDA_ERROR_INVALID_VALUE;
  if (!result)
    *count = device_count();
  return finish("cuDeviceGetCount", result, NULL);
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  CUresult result = begin("cuDeviceGet");
  if (!result && (ordinal < 0 || ordinal >= device_count()))
    result = CUDA_ERROR_INVALID_DEVICE;
  if (!result)
    *device = ordinal;
  return finish("cuDeviceGet", result, "%d", ordinal);
}

EXPORT CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device) {
  CUresult result = begin("cuDeviceGetAttribute");
  if (!result && (device < 0 || device >= device_count()))
    result = CUDA_ERROR_INVALID_DEVICE;
  if (!result && attribute == ATTRIBUTE_CC_MAJOR)
    *value = capability() / 10;
  else if (!result && attribute == ATTRIBUTE_CC_MINOR)
    *value = capability() % 10;
  else if (!result)
    result = CUDA_ERROR_INVALID_VALUE;
  return finish("cuDeviceGetAttribute", result, "%d", attribute);
}

EXPORT CUresult cuDeviceGetName(char *name, int length, CUdevice device) {
  CUresult result = begin("cuDeviceGetName");
  if (!result && (device < 0 || device >= device_count()))
    result = CUDA_ERROR_INVALID_DEVICE;
  if (!result && (!name || length <= 0))
    result = CUDA_ERROR_INVALID_VALUE;
  if (!result)
    snprintf(name, (size_t)length, "Fake CUDA Device");
  return finish("cuDeviceGetName", result, NULL);
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  CUresult result = begin("cuDevicePrimaryCtxRetain");
  if (!result && (device < 0 || device >= device_count()))
    result = CUDA_ERROR_INVALID_DEVICE;
  if (!result) {
    contexts[device].device = device;
    ++contexts[device].references;
    *context = &contexts[device];
  }
  return finish("cuDevicePrimaryCtxRetain", result, "%d", device);
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  CUresult result = begin("cuDevicePrimaryCtxRelease_v2");
  if (!result && (device < 0 || device >= MAX_DEVICES))
    result = CUDA_ERROR_INVALID_DEVICE;
  if (!result && contexts[device].references == 0)
    result = CUDA_ERROR_INVALID_CONTEXT;
  if (!result)
    --contexts[device].references;
  return finish("cuDevicePrimaryCtxRelease_v2", result, "%d", device);
}

EXPORT CUresult cuCtxPushCurrent_v2(CUcontext context) {
  CUresult result = begin("cuCtxPushCurrent_v2");
  if (!result && (!context || context->references == 0))
    result = CUDA_ERROR_INVALID_CONTEXT;
  if (!result && context_depth == 16)
    result = CUDA_ERROR_ILLEGAL_STATE;
  if (!result)
    context_stack[context_depth++] = context;
  return finish("cuCtxPushCurrent_v2", result, NULL);
}

EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *context) {
  CUresult result = begin("cuCtxPopCurrent_v2");
  if (!result && context_depth == 0)
    result = CUDA_ERROR_INVALID_CONTEXT;
  if (!result) {
    CUcontext popped = context_stack[--context_depth];
    if (context)
      *context = popped;
  }
  return finish("cuCtxPopCurrent_v2", result, NULL);
}

/*===- streams and memory ------------------------------------------------===*/

EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned flags) {
  CUresult result = begin("cuStreamCreate");
  if (!result)
    result = require_context();
  if (!result && !stream)
    result = CUDA_ERROR_INVALID_VALUE;
  if (!result) {
    *stream = calloc(1, sizeof(**stream));
    ++live_streams;
  }
  return finish("cuStreamCreate", result, "flags=%u", flags);
}

EXPORT CUresult cuStreamDestroy_v2(CUstream stream) {
  CUresult result = begin("cuStreamDestroy_v2");
  if (!result)
    result = require_context();
  if (!result && !stream)
    result = CUDA_ERROR_INVALID_HANDLE;
  if (!result) {
    free(stream);
    --live_streams;
  }
  return finish("cuStreamDestroy_v2", result, NULL);
}

EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  CUresult result = begin("cuStreamSynchronize");
  if (!result)
    result = require_context();
  if (!result && stream && stream->capture)
    result = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return finish("cuStreamSynchronize", result, NULL);
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *address, size_t bytes) {
  CUresult result = begin("cuMemAlloc_v2");
  if (!result)
    result = require_context();
  if (!result && (!address || bytes == 0))
    result = CUDA_ERROR_INVALID_VALUE;
  Allocation *allocation = NULL;
  if (!result) {
    allocation = malloc(sizeof(*allocation));
    allocation->data = aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (!allocation->data) {
      free(allocation);
      result = CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  if (!result) {
    memset(allocation->data, 0xcd, bytes); /* uninitialized device memory is not zero */
    allocation->size = bytes;
    allocation->next = allocations;
    allocations = allocation;
    ++live_allocations;
    live_bytes += bytes;
    *address = (uintptr_t)allocation->data;
  }
  return finish("cuMemAlloc_v2", result, "%zu", bytes);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr address) {
  CUresult result = begin("cuMemFree_v2");
  if (!result)
    result = require_context();
  Allocation **link = &allocations;
  while (!result && *link && (uintptr_t)(*link)->data != address)
    link = &(*link)->next;
  if (!result && !*link)
    result = CUDA_ERROR_INVALID_VALUE;
  if (!result) {
    Allocation *freed = *link;
    *link = freed->next;
    live_bytes -= freed->size;
    free(freed->data);
    free(freed);
    --live_allocations;
  }
  return finish("cuMemFree_v2", result, NULL);
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes) {
  CUresult result = begin("cuMemGetInfo_v2");
  if (!result)
    result = require_context();
  if (!result && (!free_bytes || !total_bytes))
    result = CUDA_ERROR_INVALID_VALUE;
  if (!result) {
    /* Streams, events, modules and graphs take device memory on a GPU too:
     * a nominal 64 KiB each, so that leaking them shows. */
    long objects = live_streams + live_events + live_modules + live_graphs + live_graph_execs;
    *total_bytes = FAKE_DEVICE_BYTES;
    *free_bytes = FAKE_DEVICE_BYTES - live_bytes - (size_t)objects * (64 << 10);
  }
  return finish("cuMemGetInfo_v2", result, NULL);
}

static CUresult check_copy(CUdeviceptr device, const void *host, size_t bytes, CUstream stream) {
  CUresult result = require_context();
  if (!result && (!host || !find_range(device, bytes)))
    result = CUDA_ERROR_INVALID_VALUE;
  if (!result && stream && stream->capture)
    result = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* pageable host memory */
  return result;
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr device, const void *host, size_t bytes,
                                     CUstream stream) {
  CUresult result = begin("cuMemcpyHtoDAsync_v2");
  if (!result)
    result = check_copy(device, host, bytes, stream);
  if (!result)
    memcpy((void *)(uintptr_t)device, host, bytes);
  return finish("cuMemcpyHtoDAsync_v2", result, "%zu", bytes);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *host, CUdeviceptr device, size_t bytes,
                                     CUstream stream) {
  CUresult result = begin("cuMemcpyDtoHAsync_v2");
  if (!result)
    result = check_copy(device, host, bytes, stream);
  if (!result)
    memcpy(host, (const void *)(uintptr_t)device, bytes);
  return finish("cuMemcpyDtoHAsync_v2", result, "%zu", bytes);
}

/*===- modules: a little PTX reading -------------------------------------===*/

/* Bytes of one ".param" declaration: ".param .u64 name", ".param .align 8
 * .b8 name[24]". 0 when it is not one. */
static int param_size(const char *begin, const char *end) {
  const char *p = begin;
  int bits = 0, elements = 1;
  while (p < end) {
    if (*p == '.' && p + 2 < end && strchr("usbf", p[1]) && p[2] >= '1' && p[2] <= '9') {
      bits = atoi(p + 2);
      p += 2;
    } else if (*p == '[') {
      elements = atoi(p + 1);
    }
    ++p;
  }
  return bits / 8 * elements;
}

/* Reads the .target and each .entry with its parameter sizes. */
static int read_ptx(const char *ptx, CUmodule module, char *log, size_t log_size) {
  const char *target = strstr(ptx, ".target");
  if (!target || sscanf(target, ".target %15[a-z0-9_]", module->target) != 1) {
    snprintf(log, log_size, "ptxas application ptx input, line 1; fatal   : missing .target");
    return 0;
  }
  int chip = 0;
  char suffix = 0;
  sscanf(module->target, "sm_%d%c", &chip, &suffix);
  if (chip > capability() || (suffix == 'a' && chip != capability())) {
    snprintf(log, log_size,
             "ptxas application ptx input, line 1; fatal   : SM version specified by .target "
             "(%s) is higher than default SM version assumed (sm_%d)",
             module->target, capability());
    return 0;
  }
  for (const char *entry = strstr(ptx, ".entry"); entry; entry = strstr(entry + 1, ".entry")) {
    module->functions = realloc(module->functions, (module->count + 1) * sizeof(struct CUfunc_st));
    struct CUfunc_st *function = &module->functions[module->count++];
    memset(function, 0, sizeof(*function));
    sscanf(entry, ".entry %127[A-Za-z0-9_$]", function->name);
    function->max_dynamic_shared = DEFAULT_SHARED_LIMIT;
    const char *open = strchr(entry, '('), *close = open ? strchr(open, ')') : NULL;
    for (const char *p = open ? open + 1 : NULL; p && p < close;) {
      const char *comma = memchr(p, ',', (size_t)(close - p));
      const char *end = comma ? comma : close;
      if (function->num_params < MAX_PARAMS && memmem(p, (size_t)(end - p), ".param", 6))
        function->param_sizes[function->num_params++] = param_size(p, end);
      p = end + 1;
    }
  }
  return 1;
}

EXPORT CUresult cuModuleLoadDataEx(CUmodule *out, const void *image, unsigned num_options,
                                   int *options, void **values) {
  CUresult result = begin("cuModuleLoadDataEx");
  char *log = NULL;
  size_t log_size = 0;
  int log_option = -1;
  for (unsigned i = 0; i < num_options && options && values; ++i) {
    if (options[i] == JIT_ERROR_LOG_BUFFER)
      log = values[i];
    if (options[i] == JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
      log_size = (size_t)(uintptr_t)values[i];
      log_option = (int)i;
    }
  }
  char message[512] = "";
  if (result)
    snprintf(message, sizeof(message),
             "ptxas application ptx input, line 1; fatal   : simulated failure "
             "(NNC_FAKE_CUDA_FAIL)");
  if (!result)
    result = require_context();
  if (!result && (!out || !image))
    result = CUDA_ERROR_INVALID_VALUE;
  CUmodule module = NULL;
  if (!result) {
    module = calloc(1, sizeof(*module));
    if (!read_ptx(image, module, message, sizeof(message)))
      result = CUDA_ERROR_INVALID_PTX;
  }
  if (*message && log && log_size) {
    snprintf(log, log_size, "%s\n", message);
    values[log_option] = (void *)(uintptr_t)(strlen(log) + 1);
  }
  if (!result) {
    const char *kernels = getenv("NNC_FAKE_CUDA_KERNELS");
    if (kernels && *kernels)
      module->kernels = dlopen(kernels, RTLD_NOW | RTLD_LOCAL);
    *out = module;
    ++live_modules;
  } else if (module) {
    free(module->functions);
    free(module);
  }
  return finish("cuModuleLoadDataEx", result, "target=%s",
                module && !result ? module->target : "?");
}

EXPORT CUresult cuModuleGetFunction(CUfunction *out, CUmodule module, const char *name) {
  CUresult result = begin("cuModuleGetFunction");
  if (!result)
    result = require_context();
  if (!result && (!out || !module || !name))
    result = CUDA_ERROR_INVALID_VALUE;
  CUfunction found = NULL;
  for (int i = 0; !result && i < module->count && !found; ++i)
    if (strcmp(module->functions[i].name, name) == 0)
      found = &module->functions[i];
  if (!result && !found)
    result = CUDA_ERROR_NOT_FOUND;
  if (!result) {
    char symbol[160];
    snprintf(symbol, sizeof(symbol), "nnc_fake_kernel_%s", name);
    if (module->kernels)
      found->host = (nnc_fake_cuda_kernel_fn)dlsym(module->kernels, symbol);
    *out = found;
  }
  return finish("cuModuleGetFunction", result, "%s", name ? name : "(null)");
}

EXPORT CUresult cuModuleUnload(CUmodule module) {
  CUresult result = begin("cuModuleUnload");
  if (!result)
    result = require_context();
  if (!result && !module)
    result = CUDA_ERROR_INVALID_HANDLE;
  if (!result) {
    if (module->kernels)
      dlclose(module->kernels);
    free(module->functions);
    free(module);
    --live_modules;
  }
  return finish("cuModuleUnload", result, NULL);
}

EXPORT CUresult cuFuncSetAttribute(CUfunction function, int attribute, int value) {
  CUresult result = begin("cuFuncSetAttribute");
  if (!result && !function)
    result = CUDA_ERROR_INVALID_HANDLE;
  if (!result && (attribute != FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || value < 0 ||
                  value > MAX_SHARED_OPT_IN))
    result = CUDA_ERROR_INVALID_VALUE;
  if (!result)
    function->max_dynamic_shared = (unsigned)value;
  return finish("cuFuncSetAttribute", result, "%s %d=%d", function ? function->name : "?",
                attribute, value);
}

/*===- events ------------------------------------------------------------===*/

/* Left out with the graphs too: that build stands for a driver missing its
 * optional calls. */
#ifndef NNC_FAKE_CUDA_NO_GRAPHS

typedef struct CUevent_st {
  int recorded;
  double time_ms; /* the fake GPU's clock when recorded */
} *CUevent;

EXPORT CUresult cuEventCreate(CUevent *event, unsigned flags) {
  CUresult result = begin("cuEventCreate");
  if (!result)
    result = require_context();
  if (!result && (!event || flags != 0))
    result = CUDA_ERROR_INVALID_VALUE; /* only timing events are expected */
  if (!result) {
    *event = calloc(1, sizeof(**event));
    ++live_events;
  }
  return finish("cuEventCreate", result, "flags=%u", flags);
}

EXPORT CUresult cuEventDestroy_v2(CUevent event) {
  CUresult result = begin("cuEventDestroy_v2");
  if (!result && !event)
    result = CUDA_ERROR_INVALID_HANDLE;
  if (!result) {
    free(event);
    --live_events;
  }
  return finish("cuEventDestroy_v2", result, NULL);
}

EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  CUresult result = begin("cuEventRecord");
  if (!result)
    result = require_context();
  if (!result && !event)
    result = CUDA_ERROR_INVALID_HANDLE;
  if (!result && stream && stream->capture)
    result = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* not expected while capturing */
  if (!result) {
    event->recorded = 1;
    event->time_ms = gpu_clock_ms; /* the stream runs launches as they come */
  }
  return finish("cuEventRecord", result, NULL);
}

/* Only the _v2 name, as CUDA 13's driver maps it. */
EXPORT CUresult cuEventElapsedTime_v2(float *milliseconds, CUevent start, CUevent end) {
  CUresult result = begin("cuEventElapsedTime_v2");
  if (!result)
    result = require_context();
  if (!result && (!start || !end || !start->recorded || !end->recorded))
    result = CUDA_ERROR_INVALID_HANDLE;
  if (!result && !milliseconds)
    result = CUDA_ERROR_INVALID_VALUE;
  if (!result)
    *milliseconds = (float)(end->time_ms - start->time_ms);
  return finish("cuEventElapsedTime_v2", result, NULL);
}
#endif

/*===- launches and graphs -----------------------------------------------===*/

static void run(Launch *launch) {
  void *params[MAX_PARAMS];
  for (int i = 0; i < launch->function->num_params; ++i)
    params[i] = launch->values[i];
  if (launch->function->host)
    launch->function->host(&launch->shape, params);
  const unsigned *grid = launch->shape.grid;
  gpu_clock_ms += 1e-3 * (double)grid[0] * grid[1] * grid[2];
}

EXPORT CUresult cuLaunchKernel(CUfunction function, unsigned grid_x, unsigned grid_y,
                               unsigned grid_z, unsigned block_x, unsigned block_y,
                               unsigned block_z, unsigned shared_bytes, CUstream stream,
                               void **params, void **extra) {
  CUresult result = begin("cuLaunchKernel");
  if (!result)
    result = require_context();
  if (!result && !function)
    result = CUDA_ERROR_INVALID_HANDLE;
  unsigned long long threads = (unsigned long long)block_x * block_y * block_z;
  if (!result && (grid_x == 0 || grid_y == 0 || grid_z == 0 || threads == 0 || threads > 1024 ||
                  extra || (function->num_params > 0 && !params)))
    result = CUDA_ERROR_INVALID_VALUE;
  if (!result && shared_bytes > function->max_dynamic_shared)
    result = CUDA_ERROR_INVALID_VALUE;
  Launch launch = {function,
                   {{grid_x, grid_y, grid_z}, {block_x, block_y, block_z}, shared_bytes},
                   {{0}}};
  for (int i = 0; !result && i < function->num_params; ++i) {
    int size = function->param_sizes[i];
    if (size <= 0 || size > (int)sizeof(launch.values[i]) || !params[i]) {
      result = CUDA_ERROR_INVALID_VALUE;
      break;
    }
    memcpy(launch.values[i], params[i], (size_t)size); /* as the driver copies them */
  }
  if (!result && stream && stream->capture) {
    CUgraph graph = stream->capture;
    graph->launches = realloc(graph->launches, (graph->count + 1) * sizeof(Launch));
    graph->launches[graph->count++] = launch;
  } else if (!result) {
    run(&launch);
  }
  return finish("cuLaunchKernel", result, "%s grid=%u,%u,%u block=%u,%u,%u shared=%u%s",
                function ? function->name : "?", grid_x, grid_y, grid_z, block_x, block_y,
                block_z, shared_bytes, stream && stream->capture ? " captured" : "");
}

#ifndef NNC_FAKE_CUDA_NO_GRAPHS
static void copy_graph(struct CUgraph_st *to, const struct CUgraph_st *from) {
  to->count = from->count;
  to->launches = malloc((size_t)(from->count ? from->count : 1) * sizeof(Launch));
  memcpy(to->launches, from->launches, (size_t)from->count * sizeof(Launch));
}

EXPORT CUresult cuStreamBeginCapture_v2(CUstream stream, int mode) {
  CUresult result = begin("cuStreamBeginCapture_v2");
  if (!result)
    result = require_context();
  if (!result && (!stream || mode < 0 || mode > 2))
    result = CUDA_ERROR_INVALID_VALUE; /* the legacy stream cannot be captured */
  if (!result && stream->capture)
    result = CUDA_ERROR_ILLEGAL_STATE;
  if (!result) {
    stream->capture = calloc(1, sizeof(struct CUgraph_st));
    ++live_graphs;
  }
  return finish("cuStreamBeginCapture_v2", result, "mode=%d", mode);
}

EXPORT CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  CUresult result = begin("cuStreamEndCapture");
  if (result && stream && stream->capture) {
    /* A failed end still ends the capture, as the driver's does. */
    free(stream->capture->launches);
    free(stream->capture);
    stream->capture = NULL;
    --live_graphs;
  }
  if (!result && (!stream || !graph))
    result = CUDA_ERROR_INVALID_VALUE;
  if (!result && !stream->capture)
    result = CUDA_ERROR_ILLEGAL_STATE;
  if (!result) {
    *graph = stream->capture;
    stream->capture = NULL;
  }
  return finish("cuStreamEndCapture", result, "%d launches",
                !result ? (*graph)->count : 0);
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph,
                                            unsigned long long flags) {
  CUresult result = begin("cuGraphInstantiateWithFlags");
  if (!result && (!exec || !graph || flags))
    result = CUDA_ERROR_INVALID_VALUE;
  if (!result) {
    *exec = calloc(1, sizeof(**exec));
    copy_graph(&(*exec)->graph, graph);
    ++live_graph_execs;
  }
  return finish("cuGraphInstantiateWithFlags", result, NULL);
}

EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  CUresult result = begin("cuGraphLaunch");
  if (!result)
    result = require_context();
  if (!result && !exec)
    result = CUDA_ERROR_INVALID_HANDLE;
  if (!result && stream && stream->capture)
    result = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  for (int i = 0; !result && i < exec->graph.count; ++i)
    run(&exec->graph.launches[i]);
  const char *leak = getenv("NNC_FAKE_CUDA_LEAK");
  if (!result && leak && *leak)
    live_bytes += (size_t)atol(leak);
  return finish("cuGraphLaunch", result, "%d launches", !result ? exec->graph.count : 0);
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) {
  CUresult result = begin("cuGraphExecDestroy");
  if (!result && !exec)
    result = CUDA_ERROR_INVALID_HANDLE;
  if (!result) {
    free(exec->graph.launches);
    free(exec);
    --live_graph_execs;
  }
  return finish("cuGraphExecDestroy", result, NULL);
}

EXPORT CUresult cuGraphDestroy(CUgraph graph) {
  CUresult result = begin("cuGraphDestroy");
  if (!result && !graph)
    result = CUDA_ERROR_INVALID_HANDLE;
  if (!result) {
    free(graph->launches);
    free(graph);
    --live_graphs;
  }
  return finish("cuGraphDestroy", result, NULL);
}
#endif
