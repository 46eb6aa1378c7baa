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
// reaches about 115 GFLOP/s with 1 thread and 230 with 2 (see docs/PERFORMANCE.md).
//
// Bandwidth. STREAM's triad a[i] = b[i] + s c[i] and copy a[i] = b[i] on double arrays, each
// array counted once per pass: triad 24 bytes per element, copy 16. The write-allocate read of
// a is not counted (STREAM's convention). About 25 GB/s with 1 thread and 45 with 2 here.
#include <algorithm>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <string>

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
  volatile float mul = kMul, add = kAdd;
  double checksum = 0;
  int team = 1;  // OpenMP may grant fewer threads than asked; count the ones that ran
  const int64_t t0 = now_ns();
#pragma omp parallel num_threads(threads) reduction(+ : checksum)
  {
#pragma omp master
    team = team_size();
    checksum += fma_loop(iterations, 1.0f + static_cast<float>(thread_num()), mul, add);
  }
  const int64_t t1 = now_ns();
  KernelRun r;
  r.seconds = static_cast<double>(t1 - t0) * 1e-9;
  r.work = static_cast<double>(team) * static_cast<double>(iterations) *
           static_cast<double>(fma_flops_per_iteration());
  r.checksum = checksum;
  return r;
}

StreamArrays::StreamArrays(int64_t array_bytes, int max_threads) {
  require_threads(max_threads, "StreamArrays");
  n_ = std::max<int64_t>(array_bytes / static_cast<int64_t>(sizeof(double)), max_threads);
  a_ = allocate_array(n_);
  b_ = allocate_array(n_);
  c_ = allocate_array(n_);
  // First touch by the threads that will use the pages (the same static split as the kernels),
  // so on a multi-socket machine each thread's part sits in its own socket's memory.
  const int64_t n = n_;
  double *a = a_, *b = b_, *c = c_;
#pragma omp parallel for schedule(static) num_threads(max_threads)
  for (int64_t i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0;
    c[i] = 2.0;
  }
}

StreamArrays::~StreamArrays() {
  std::free(a_);
  std::free(b_);
  std::free(c_);
}

KernelRun StreamArrays::triad(int threads) {
  require_threads(threads, "StreamArrays::triad");
  volatile double scalar_v = 3.0;
  const double s = scalar_v;
  const int64_t n = n_;
  double* __restrict a = a_;
  const double* __restrict b = b_;
  const double* __restrict c = c_;
  const int64_t t0 = now_ns();
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
  const int64_t t1 = now_ns();
  KernelRun r;
  r.seconds = static_cast<double>(t1 - t0) * 1e-9;
  r.work = 3.0 * static_cast<double>(n) * sizeof(double);
  r.checksum = a[0] + a[n / 2] + a[n - 1];
  return r;
}

KernelRun StreamArrays::copy(int threads) {
  require_threads(threads, "StreamArrays::copy");
  const int64_t n = n_;
  double* __restrict a = a_;
  const double* __restrict b = b_;
  const int64_t t0 = now_ns();
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) a[i] = b[i];
  const int64_t t1 = now_ns();
  KernelRun r;
  r.seconds = static_cast<double>(t1 - t0) * 1e-9;
  r.work = 2.0 * static_cast<double>(n) * sizeof(double);
  r.checksum = a[0] + a[n / 2] + a[n - 1];
  return r;
}

}  // namespace prism::profiler
