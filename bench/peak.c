// nnc-peak: the machine's peak FP32 FMA rate, the anchor for the benchmark's
// "share of peak" column (ARCHITECTURE.md section 7).
//
//   nnc-peak [THREADS...]      default: 1 and the number of usable CPUs
//   nnc-peak --round-trip      the core-to-core round trip between two CPUs
//   nnc-peak --bandwidth       one thread's read bandwidth from memory
//
// Each thread, pinned to its own CPU, runs independent chains of vector FMAs
// on registers only: enough chains to cover the FMA latency on every FMA port,
// so the rate is bound by FMA throughput alone, never by memory or by a
// dependency. The widest ISA the CPU has is chosen at run time (AVX-512 or
// AVX2), so the binary needs no -march flag. Each thread count is measured as
// the best of several trials, since a shared machine can only slow it down.
// Output, one line per thread count (bench/bench.py parses it):
//
//   threads 2: 201.3 GFLOP/s (100.6 per core)
//
// --round-trip times a cache line passed back and forth between threads
// pinned to the first two usable CPUs: what every hand-off between cores
// costs, and a sign of how far apart the cores are. On the 2-vCPU machines
// this project runs on it has been 200 ns at some times and 500 ns at others
// (the host moved the vCPUs), and two-thread runs were slower in the second
// state. Output (bench/bench.py parses it):
//
//   round trip: 201.5 ns
//
// --bandwidth sums a buffer far larger than any cache with one thread, the
// rate nnc --report's estimates take for a CPU's memory. Output:
//
//   bandwidth: 14.2 GB/s

#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kTrials = 5 };
static const double kTrialSeconds = 0.2;

// FMA latency is 4 cycles with up to 2 ports: 8 chains keep them busy; more
// hide scheduling noise. 24 of the 32 zmm and 12 of the 16 ymm registers.
enum { kChains512 = 24, kChains256 = 12 };

// acc = acc * a + b with a just below 1 converges to b / (1 - a): no overflow
// and no denormals, whatever the iteration count.
#define KERNEL(NAME, TARGET, VEC, CHAINS, SET1, FMADD, ADD, STORE, LANES)      \
  __attribute__((target(TARGET))) static float NAME(long iterations) {        \
    VEC a = SET1(0.999f), b = SET1(0.001f), acc[CHAINS];                        \
    for (int c = 0; c < CHAINS; ++c)                                            \
      acc[c] = SET1((float)c);                                                  \
    for (long i = 0; i < iterations; ++i) {                                     \
      _Pragma("GCC unroll 32") for (int c = 0; c < CHAINS; ++c)                 \
          acc[c] = FMADD(acc[c], a, b);                                         \
    }                                                                           \
    for (int c = 1; c < CHAINS; ++c) /* consumed, so not optimized away */      \
      acc[0] = ADD(acc[0], acc[c]);                                             \
    float lanes[LANES];                                                         \
    STORE(lanes, acc[0]);                                                       \
    return lanes[0];                                                            \
  }

KERNEL(fma512, "avx512f", __m512, kChains512, _mm512_set1_ps, _mm512_fmadd_ps,
       _mm512_add_ps, _mm512_storeu_ps, 16)
KERNEL(fma256, "avx2,fma", __m256, kChains256, _mm256_set1_ps, _mm256_fmadd_ps,
       _mm256_add_ps, _mm256_storeu_ps, 8)

typedef float (*Kernel)(long iterations);

struct Isa {
  const char *name;
  Kernel kernel;
  int lanes, chains;
};

struct Worker {
  pthread_t thread;
  int cpu;
  long iterations;
  const struct Isa *isa;
  pthread_barrier_t *start;
  struct timespec begin, end;
  float sink;
};

static double seconds(struct timespec t) { return t.tv_sec + t.tv_nsec * 1e-9; }

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *work(void *arg) {
  struct Worker *w = arg;
  pin(w->cpu);
  pthread_barrier_wait(w->start);
  clock_gettime(CLOCK_MONOTONIC, &w->begin);
  w->sink = w->isa->kernel(w->iterations);
  clock_gettime(CLOCK_MONOTONIC, &w->end);
  return NULL;
}

// One trial: all threads start together; the rate is the total work over the
// wall time from the first start to the last end. Returns FLOP/s.
static double trial(const struct Isa *isa, const int *cpus, int threads, long iterations) {
  struct Worker workers[threads];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, threads);
  for (int t = 0; t < threads; ++t) {
    workers[t] = (struct Worker){.cpu = cpus[t], .iterations = iterations, .isa = isa,
                                 .start = &start};
    if (pthread_create(&workers[t].thread, NULL, work, &workers[t]) != 0) {
      fprintf(stderr, "nnc-peak: cannot create a thread\n");
      exit(2);
    }
  }
  double first = 1e300, last = 0;
  for (int t = 0; t < threads; ++t) {
    pthread_join(workers[t].thread, NULL);
    if (seconds(workers[t].begin) < first)
      first = seconds(workers[t].begin);
    if (seconds(workers[t].end) > last)
      last = seconds(workers[t].end);
  }
  pthread_barrier_destroy(&start);
  return 2.0 * isa->lanes * isa->chains * (double)iterations * threads / (last - first);
}

enum { kRoundTrips = 20000 };

struct PingPong {
  _Alignas(64) atomic_long turn; // odd: the partner's move, even: the caller's
  int cpu;
};

static void *partner(void *arg) {
  struct PingPong *p = arg;
  pin(p->cpu);
  for (long i = 0; i < kRoundTrips; ++i) {
    while (atomic_load_explicit(&p->turn, memory_order_acquire) != 2 * i + 1)
      ;
    atomic_store_explicit(&p->turn, 2 * i + 2, memory_order_release);
  }
  return NULL;
}

// Median of several trials of kRoundTrips round trips, in ns.
static double roundTrip(const int *cpus) {
  double trials[kTrials];
  for (int k = 0; k < kTrials; ++k) {
    struct PingPong p = {.cpu = cpus[1]};
    atomic_init(&p.turn, 0);
    pthread_t thread;
    if (pthread_create(&thread, NULL, partner, &p) != 0) {
      fprintf(stderr, "nnc-peak: cannot create a thread\n");
      exit(2);
    }
    pin(cpus[0]);
    struct timespec begin, end;
    clock_gettime(CLOCK_MONOTONIC, &begin);
    for (long i = 0; i < kRoundTrips; ++i) {
      atomic_store_explicit(&p.turn, 2 * i + 1, memory_order_release);
      while (atomic_load_explicit(&p.turn, memory_order_acquire) != 2 * i + 2)
        ;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    pthread_join(thread, NULL);
    double t = (seconds(end) - seconds(begin)) * 1e9 / kRoundTrips;
    int j = k;
    for (; j > 0 && trials[j - 1] > t; --j) // insertion sort
      trials[j] = trials[j - 1];
    trials[j] = t;
  }
  return trials[kTrials / 2];
}

// One thread's read rate over a 256 MiB buffer, the best of kTrials passes.
static double bandwidth(void) {
  size_t count = (256u << 20) / sizeof(double);
  double *data = malloc(count * sizeof(double));
  if (!data)
    return 0;
  for (size_t i = 0; i < count; ++i)
    data[i] = (double)(i & 7);
  double best = 0, sink = 0;
  for (int k = 0; k < kTrials; ++k) {
    struct timespec begin, end;
    clock_gettime(CLOCK_MONOTONIC, &begin);
    // Four independent sums, so the adds' latency does not bound the loop
    // (two loads a cycle outrun one core's share of memory anyway).
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i < count; i += 4) {
      s0 += data[i];
      s1 += data[i + 1];
      s2 += data[i + 2];
      s3 += data[i + 3];
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    sink += s0 + s1 + s2 + s3;
    double rate = count * sizeof(double) / (seconds(end) - seconds(begin));
    if (rate > best)
      best = rate;
  }
  free(data);
  // Consumed, so the sums are not optimized away.
  return sink == -1 ? 0 : best;
}

int main(int argc, char **argv) {
  __builtin_cpu_init();
  struct Isa isa;
  if (__builtin_cpu_supports("avx512f"))
    isa = (struct Isa){"avx512f", fma512, 16, kChains512};
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    isa = (struct Isa){"avx2+fma", fma256, 8, kChains256};
  else {
    fprintf(stderr, "nnc-peak: the CPU has neither AVX-512F nor AVX2 with FMA\n");
    return 2;
  }

  // Threads go to distinct CPUs of those this process may use.
  cpu_set_t allowed;
  sched_getaffinity(0, sizeof(allowed), &allowed);
  int ncpus = CPU_COUNT(&allowed);
  int cpus[CPU_SETSIZE], n = 0;
  for (int c = 0; c < CPU_SETSIZE && n < ncpus; ++c)
    if (CPU_ISSET(c, &allowed))
      cpus[n++] = c;

  if (argc == 2 && strcmp(argv[1], "--bandwidth") == 0) {
    double rate = bandwidth();
    if (rate <= 0) {
      fprintf(stderr, "nnc-peak: cannot allocate the 256 MiB buffer\n");
      return 1;
    }
    printf("bandwidth: %.1f GB/s\n", rate * 1e-9);
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "--round-trip") == 0) {
    if (ncpus < 2) {
      fprintf(stderr, "nnc-peak: --round-trip needs two usable CPUs\n");
      return 2;
    }
    printf("round trip: %.1f ns\n", roundTrip(cpus));
    return 0;
  }

  int counts[64], ncounts = 0;
  for (int i = 1; i < argc; ++i) {
    char *end;
    long t = strtol(argv[i], &end, 10);
    if (*end || t < 1 || t > ncpus || ncounts == 64) {
      fprintf(stderr,
              "usage: nnc-peak [THREADS...], each between 1 and %d (usable CPUs)\n"
              "       nnc-peak --round-trip\n"
              "       nnc-peak --bandwidth\n",
              ncpus);
      return 2;
    }
    counts[ncounts++] = (int)t;
  }
  if (ncounts == 0) {
    counts[ncounts++] = 1;
    if (ncpus > 1)
      counts[ncounts++] = ncpus;
  }

  // Size a trial to kTrialSeconds from a short single-thread run.
  long probe = 100000;
  long iterations = (long)(kTrialSeconds * trial(&isa, cpus, 1, probe) /
                           (2.0 * isa.lanes * isa.chains));
  printf("nnc-peak: %s FP32 FMA, %d lanes x %d chains per thread, best of %d trials of "
         "%.1f s\n", isa.name, isa.lanes, isa.chains, kTrials, kTrialSeconds);
  for (int i = 0; i < ncounts; ++i) {
    double best = 0;
    for (int k = 0; k < kTrials; ++k) {
      double rate = trial(&isa, cpus, counts[i], iterations);
      if (rate > best)
        best = rate;
    }
    printf("threads %d: %.1f GFLOP/s (%.1f per core)\n", counts[i], best * 1e-9,
           best * 1e-9 / counts[i]);
  }
  return 0;
}
