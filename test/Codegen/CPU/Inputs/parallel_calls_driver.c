/* Drives @kernel of parallel-calls-run.mlir: plays the entry wrapper (sets the
 * thread-local context the compiled code reads) and the runtime (parallel_for
 * on pthreads, one static range per thread, the caller taking the first). */

#include "nnc/abi.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 7
#define COLS 12
#define N 11 /* columns written: 1 .. N */

/* Defined by the compiled module; the artifact's entry wrapper sets it. */
extern __thread const nnc_abi_context_t *nnc_context;

/* @kernel with its memrefs expanded (allocated, aligned, offset, sizes, strides). */
void kernel(float *, float *, int64_t, int64_t, int64_t, int64_t, int64_t, float *, float *,
            int64_t, int64_t, int64_t, int64_t, int64_t, float scale, int64_t n);

typedef void (*body_fn)(void *, int64_t, int64_t);

static int calls, failures, threads_with_work;
static int64_t last_count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct range {
  body_fn body;
  void *arg;
  int64_t begin, end;
};

static void run_range(struct range *r) {
  if (r->begin >= r->end)
    return;
  /* A body never sees a context: nested loops must not re-enter the pool. */
  if (nnc_context) {
    printf("FAIL: a body ran with the context set\n");
    ++failures;
  }
  r->body(r->arg, r->begin, r->end);
  pthread_mutex_lock(&lock);
  ++threads_with_work;
  pthread_mutex_unlock(&lock);
}

static void *thread_main(void *r) {
  run_range(r);
  return NULL;
}

static void parallel_for(void *runtime, int64_t count, body_fn body, void *arg) {
  int threads = *(int *)runtime;
  ++calls;
  last_count = count;
  struct range ranges[64];
  pthread_t ids[64];
  int64_t base = count / threads, extra = count % threads, begin = 0;
  for (int t = 0; t < threads; ++t) {
    int64_t size = base + (t < extra);
    ranges[t] = (struct range){body, arg, begin, begin + size};
    begin += size;
  }
  for (int t = 1; t < threads; ++t)
    pthread_create(&ids[t], NULL, thread_main, &ranges[t]);
  run_range(&ranges[0]);
  for (int t = 1; t < threads; ++t)
    pthread_join(ids[t], NULL);
}

/* Runs the kernel once and checks every element; returns 0 when all match. */
static int run(const nnc_abi_context_t *context) {
  static float in[ROWS][COLS], out[ROWS][COLS];
  for (int i = 0; i < ROWS; ++i)
    for (int j = 0; j < COLS; ++j) {
      in[i][j] = (float)(i * COLS + j);
      out[i][j] = (float)(1000 + i * COLS + j);
    }
  calls = 0;
  threads_with_work = 0;
  nnc_context = context;
  kernel(&in[0][0], &in[0][0], 0, ROWS, COLS, COLS, 1, &out[0][0], &out[0][0], 0, ROWS, COLS,
         COLS, 1, 2.0f, N);
  int bad = 0;
  if (nnc_context != context) {
    printf("FAIL: the context was not restored after the parallel loop\n");
    ++bad;
  }
  nnc_context = NULL;
  for (int i = 0; i < ROWS; ++i)
    for (int j = 0; j < COLS; ++j) {
      float expected = (float)(1000 + i * COLS + j);
      if (i % 2 == 1 && j >= 1 && j <= N)
        expected += 2.0f * in[i][j - 1];
      if (out[i][j] != expected) {
        if (bad++ < 5)
          printf("FAIL: out[%d][%d] = %g, expected %g\n", i, j, out[i][j], expected);
      }
    }
  return bad;
}

int main(void) {
  int counts[] = {2, 3, 5, 16};
  for (unsigned c = 0; c < sizeof(counts) / sizeof(counts[0]); ++c) {
    int threads = counts[c];
    nnc_abi_context_t context = {&threads, threads, parallel_for};
    int bad = run(&context);
    failures += bad;
    printf("threads %d: %d parallel_for of %lld iterations, %d threads ran bodies, %s\n", threads,
           calls, (long long)last_count, threads_with_work, bad ? "FAIL" : "ok");
  }
  int one = 1;
  nnc_abi_context_t single = {&one, 1, parallel_for};
  int bad = run(&single);
  failures += bad;
  printf("threads 1: %d parallel_for, %s\n", calls, calls || bad ? "FAIL" : "serial, ok");
  failures += calls;
  bad = run(NULL);
  failures += bad;
  printf("no context: %d parallel_for, %s\n", calls, calls || bad ? "FAIL" : "serial, ok");
  failures += calls;
  printf(failures ? "%d failures\n" : "all passed\n", failures);
  return failures != 0;
}
