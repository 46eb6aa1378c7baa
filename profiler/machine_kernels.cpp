// The two microkernels behind `prism machine`.
//
// Peak FLOP/s. A core retires a few FMAs per cycle, but each takes several cycles to finish
// (latency 4 on Zen 4 and Skylake-X): a single accumulator chain waits on itself and reaches a
// quarter of the peak or less. With k independent accumulators the core can keep
// latency x FMAs-per-cycle of them in flight; 16 zmm (AVX-512) or 12 ymm (AVX2, which has only
// 16 registers) accumulators cover every x86 core of the last decade. Each step is
// acc = acc * m + c with m just below 1: it converges to c / (1 - m), so the values stay finite
// and normal (a denormal would slow the FMA down on some cores). Cost per iteration and thread:
// accumulators x lanes FMAs = 2 x that many FLOPs. On this project's 2-core Zen 4 (AVX-512) it
// reaches 117 GFLOP/s with 1 thread and 234 with 2 (see docs/PERFORMANCE.md).
//
// Bandwidth. STREAM's triad a[i] = b[i] + s c[i] and copy a[i] = b[i] on double arrays, each
// array counted once per pass: triad 24 bytes per element, copy 16. The write-allocate read of
// a is not counted (STREAM's convention). About 22 GB/s with 1 thread and 43 with 2 here,
// measured while other processes kept both cores busy (load average 8).
//
// The cache levels use the same triad on smaller arrays, each thread running it `passes` times
// over its own share between two reads of its clock (machine.h says how the sets are sized).
//
// Every run is timed twice: the wall time of the whole parallel region, and each thread's CPU
// time for its own share (run_split). machine.h says why the second is the one reported.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#include "profiler/clock.h"
#include "profiler/machine.h"

namespace prism::profiler {

namespace {

// Multiplier and addend of every step (see the comment at the top). Passed in at run time so
// the compiler cannot fold the loop.
constexpr float kMul = 0.9999f;
constexpr float kAdd = 1e-3f;

#if defined(__AVX512F__)
constexpr int kAccumulators = 16;
constexpr int kLanes = 16;

float fma_loop(int64_t iterations, float start, float mul_s, float add_s) {
  const __m512 mul = _mm512_set1_ps(mul_s), add = _mm512_set1_ps(add_s);
  __m512 acc[kAccumulators];
  for (int k = 0; k < kAccumulators; ++k) acc[k] = _mm512_set1_ps(start + 0.01f * k);
  for (int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 16
    for (int k = 0; k < kAccumulators; ++k) acc[k] = _mm512_fmadd_ps(acc[k], mul, add);
  }
  __m512 sum = acc[0];
  for (int k = 1; k < kAccumulators; ++k) sum = _mm512_add_ps(sum, acc[k]);
  // Summed through memory: GCC 12's _mm512_reduce_add_ps trips a false -Wuninitialized.
  alignas(64) float lanes[kLanes];
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float x : lanes) total += x;
  return total;
}

#elif defined(__AVX2__) && defined(__FMA__)
constexpr int kAccumulators = 12;
constexpr int kLanes = 8;

float fma_loop(int64_t iterations, float start, float mul_s, float add_s) {
  const __m256 mul = _mm256_set1_ps(mul_s), add = _mm256_set1_ps(add_s);
  __m256 acc[kAccumulators];
  for (int k = 0; k < kAccumulators; ++k) acc[k] = _mm256_set1_ps(start + 0.01f * k);
  for (int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 12
    for (int k = 0; k < kAccumulators; ++k) acc[k] = _mm256_fmadd_ps(acc[k], mul, add);
  }
  __m256 sum = acc[0];
  for (int k = 1; k < kAccumulators; ++k) sum = _mm256_add_ps(sum, acc[k]);
  alignas(32) float lanes[kLanes];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float x : lanes) total += x;
  return total;
}

#else
// No known SIMD extension: 64 independent multiply-adds per iteration in a plain loop the
// compiler vectorizes for whatever the target has. Without an FMA instruction the multiply and
// the add are separate, still 2 FLOPs per element.
constexpr int kAccumulators = 64;
constexpr int kLanes = 1;

float fma_loop(int64_t iterations, float start, float mul, float add) {
  float acc[kAccumulators];
  for (int k = 0; k < kAccumulators; ++k) acc[k] = start + 0.01f * static_cast<float>(k);
  for (int64_t it = 0; it < iterations; ++it) {
    for (int k = 0; k < kAccumulators; ++k) acc[k] = acc[k] * mul + add;
  }
  float total = 0;
  for (float x : acc) total += x;
  return total;
}
#endif

int thread_num() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

int team_size() {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

void require_threads(int threads, const char* fn) {
  if (threads < 1) {
    throw std::invalid_argument(std::string(fn) + ": threads must be at least 1, got " +
                                std::to_string(threads));
  }
}

double* allocate_array(int64_t n) {
  // 64-byte alignment (a cache line, a zmm register); aligned_alloc wants a multiple of it.
  const size_t bytes = (static_cast<size_t>(n) * sizeof(double) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (!p) throw std::bad_alloc();
  return static_cast<double*>(p);
}

// CPU time this thread has run, in ns: advances only while the scheduler runs the thread.
int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Runs body(thread, first, last) on `threads` threads, each on its own contiguous share of
// [0, n), and times it both ways: the wall time of the whole region, and each thread's CPU time
// for its own share (work_per_element x its elements / its CPU time, summed over threads).
template <class Body>
KernelRun run_split(int threads, int64_t n, double work_per_element, Body body) {
  double thread_rate = 0, checksum = 0;
  const int64_t t0 = now_ns();
#pragma omp parallel num_threads(threads) reduction(+ : thread_rate, checksum)
  {
    const int id = thread_num(), team = team_size();
    const int64_t first = n * id / team, last = n * (id + 1) / team;
    const int64_t c0 = thread_cpu_ns();
    checksum += body(id, first, last);
    const int64_t cpu_ns = std::max<int64_t>(1, thread_cpu_ns() - c0);
    thread_rate +=
        work_per_element * static_cast<double>(last - first) / (static_cast<double>(cpu_ns) * 1e-9);
  }
  const int64_t t1 = now_ns();
  KernelRun r;
  r.seconds = static_cast<double>(t1 - t0) * 1e-9;
  r.work = work_per_element * static_cast<double>(n);
  r.thread_rate = thread_rate;
  r.checksum = checksum;
  return r;
}

}  // namespace

int64_t fma_flops_per_iteration() {
  return int64_t{2} * kAccumulators * kLanes;
}

KernelRun run_fma_kernel(int threads, int64_t iterations) {
  require_threads(threads, "run_fma_kernel");
  if (iterations < 1) {
    throw std::invalid_argument("run_fma_kernel: iterations must be at least 1, got " +
                                std::to_string(iterations));
  }
  // Volatile reads: the compiler must treat the constants as unknown.
  volatile float mul_v = kMul, add_v = kAdd;
  const float mul = mul_v, add = add_v;
  // One "element" per thread asked for, each one run of the loop. If OpenMP grants fewer
  // threads, some run the loop more than once and the counts stay exact.
  const double flops = static_cast<double>(iterations) * fma_flops_per_iteration();
  return run_split(threads, threads, flops, [=](int id, int64_t first, int64_t last) {
    double sum = 0;
    for (int64_t e = first; e < last; ++e) {
      sum += fma_loop(iterations, 1.0f + static_cast<float>(id), mul, add);
    }
    return sum;
  });
}

namespace {
// The body of a timed region: one store by each thread into a cache line of its own. GCC drops
// a region with an empty body altogether (it measured 10 picoseconds); this is the least work
// that keeps it.
volatile int g_region_slots[64 * 16];
void touch_slot() {
  const int t = omp_get_thread_num();
  if (t < 64) g_region_slots[t * 16] = t;
}
}  // namespace

double time_empty_regions(int threads, int64_t count, double idle_ms) {
  if (threads < 2 || count < 1 || !(idle_ms >= 0)) {
    throw std::invalid_argument(
        "time_empty_regions: need threads >= 2, count >= 1 and idle_ms >= 0");
  }
  using clock = std::chrono::steady_clock;
  auto us_since = [](clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(clock::now() - t0).count();
  };
  double total_us = 0;
  if (idle_ms == 0) {
    // Back to back: the loop is timed whole, so no clock read sits between two regions.
    const auto t0 = clock::now();
    for (int64_t i = 0; i < count; ++i) {
#pragma omp parallel num_threads(threads)
      touch_slot();
    }
    total_us = us_since(t0);
  } else {
    // After a sleep each region is timed alone (the sleep is not part of it).
    for (int64_t i = 0; i < count; ++i) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(idle_ms));
      const auto t0 = clock::now();
#pragma omp parallel num_threads(threads)
      touch_slot();
      total_us += us_since(t0);
    }
  }
  return total_us / static_cast<double>(count);
}

StreamArrays::StreamArrays(int64_t array_bytes, int max_threads) {
  require_threads(max_threads, "StreamArrays");
  n_ = std::max<int64_t>(array_bytes / static_cast<int64_t>(sizeof(double)), max_threads);
  a_ = allocate_array(n_);
  b_ = allocate_array(n_);
  c_ = allocate_array(n_);
  // First touch by the threads that will use the pages (the same split as the kernels), so on
  // a multi-socket machine each thread's share sits in its own socket's memory.
  double *a = a_, *b = b_, *c = c_;
  run_split(max_threads, n_, 0, [=](int, int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      a[i] = 0.0;
      b[i] = 1.0;
      c[i] = 2.0;
    }
    return 0.0;
  });
}

StreamArrays::~StreamArrays() {
  std::free(a_);
  std::free(b_);
  std::free(c_);
}

KernelRun StreamArrays::triad(int threads, int64_t passes) {
  require_threads(threads, "StreamArrays::triad");
  if (passes < 1) {
    throw std::invalid_argument("StreamArrays::triad: passes must be at least 1, got " +
                                std::to_string(passes));
  }
  volatile double scalar_v = 3.0;
  const double s = scalar_v;
  double* a = a_;
  const double *b = b_, *c = c_;
  const double bytes_per_element = 3.0 * sizeof(double) * static_cast<double>(passes);
  return run_split(threads, n_, bytes_per_element, [=](int, int64_t first, int64_t last) {
    const double scalar = s;  // a local, so the stores to a cannot make the compiler reload it
    for (int64_t p = 0; p < passes; ++p) {
#pragma omp simd
      for (int64_t i = first; i < last; ++i) a[i] = b[i] + scalar * c[i];
      // Every pass writes the same values; this barrier (memory may have changed) keeps the
      // compiler from proving the repeats redundant and dropping them.
      asm volatile("" : : : "memory");
    }
    return first < last ? a[first] + a[last - 1] : 0.0;
  });
}

KernelRun StreamArrays::copy(int threads) {
  require_threads(threads, "StreamArrays::copy");
  double* a = a_;
  const double* b = b_;
  return run_split(threads, n_, 2.0 * sizeof(double), [=](int, int64_t first, int64_t last) {
#pragma omp simd
    for (int64_t i = first; i < last; ++i) a[i] = b[i];
    return first < last ? a[first] + a[last - 1] : 0.0;
  });
}

}  // namespace prism::profiler
