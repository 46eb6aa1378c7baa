// The SIMD vector the optimized matmul's microkernel is written in, for the widest instruction
// set the compiler targets (the build uses -march=native):
//   AVX-512F      16 floats / 8 doubles per register, 32 vector registers
//   AVX2 + FMA     8 floats / 4 doubles per register, 16 vector registers
//   otherwise      a plain array the compiler may auto-vectorize (SSE2 on any x86-64), 16
//   "registers"
// The microkernel only needs six operations: zero, load, store, broadcast, add, and the fused
// multiply-add acc + a * b (one rounding, as the hardware FMA does; the portable path uses
// std::fma only where the target has an FMA instruction, a plain a * b + acc otherwise).
// sum adds a vector's lanes (the dot-product form of kernels/ops/matmul/optimized.cpp). Two more,
// load_first and store_first, touch only the first n lanes (0 <= n <= lanes; the
// other lanes load as 0 and are not stored, and their memory is never accessed): one masked
// instruction moves a run shorter than a register, which conv's im2col is made of
// (simd_runs.h).
#pragma once

#include <cmath>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

namespace prism::kernels::cpu::simd {

// The sum of N lanes stored in x (N a power of two), added in a fixed tree: lanes N/2 apart,
// then N/4, ... (overwrites x).
template <class T, int N>
inline T tree_sum(T (&x)[N]) {
  for (int w = N / 2; w > 0; w /= 2) {
    for (int l = 0; l < w; ++l) x[l] += x[l + w];
  }
  return x[0];
}

template <class T>
struct Vec;

#if defined(__AVX512F__)

inline constexpr int kRegisters = 32;
inline constexpr const char* kIsa = "AVX-512";

template <>
struct Vec<float> {
  using V = __m512;
  static constexpr int lanes = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V broadcast(float x) { return _mm512_set1_ps(x); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V fma(V a, V b, V acc) { return _mm512_fmadd_ps(a, b, acc); }
  static __mmask16 first(int n) { return static_cast<__mmask16>((1u << n) - 1); }
  static V load_first(const float* p, int n) { return _mm512_maskz_loadu_ps(first(n), p); }
  static void store_first(float* p, int n, V v) { _mm512_mask_storeu_ps(p, first(n), v); }
  // Through memory, in a fixed tree: GCC 12's _mm512_reduce_add_ps warns
  // (-Wmaybe-uninitialized) inside its own header.
  static float sum(V v) {
    alignas(64) float x[16];
    _mm512_store_ps(x, v);
    return tree_sum(x);
  }
};

template <>
struct Vec<double> {
  using V = __m512d;
  static constexpr int lanes = 8;
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
  static V broadcast(double x) { return _mm512_set1_pd(x); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
  static V fma(V a, V b, V acc) { return _mm512_fmadd_pd(a, b, acc); }
  static __mmask8 first(int n) { return static_cast<__mmask8>((1u << n) - 1); }
  static V load_first(const double* p, int n) { return _mm512_maskz_loadu_pd(first(n), p); }
  static void store_first(double* p, int n, V v) { _mm512_mask_storeu_pd(p, first(n), v); }
  static double sum(V v) {
    alignas(64) double x[8];
    _mm512_store_pd(x, v);
    return tree_sum(x);
  }
};

#elif defined(__AVX2__) && defined(__FMA__)

inline constexpr int kRegisters = 16;
inline constexpr const char* kIsa = "AVX2";

template <>
struct Vec<float> {
  using V = __m256;
  static constexpr int lanes = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V broadcast(float x) { return _mm256_set1_ps(x); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V fma(V a, V b, V acc) { return _mm256_fmadd_ps(a, b, acc); }
  // Lane l is on when l < n: the sign bit of each 32-bit mask element.
  static __m256i first(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static V load_first(const float* p, int n) { return _mm256_maskload_ps(p, first(n)); }
  static void store_first(float* p, int n, V v) { _mm256_maskstore_ps(p, first(n), v); }
  static float sum(V v) {
    alignas(32) float x[8];
    _mm256_store_ps(x, v);
    return tree_sum(x);
  }
};

template <>
struct Vec<double> {
  using V = __m256d;
  static constexpr int lanes = 4;
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  static V broadcast(double x) { return _mm256_set1_pd(x); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
  static V fma(V a, V b, V acc) { return _mm256_fmadd_pd(a, b, acc); }
  static __m256i first(int n) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
  }
  static V load_first(const double* p, int n) { return _mm256_maskload_pd(p, first(n)); }
  static void store_first(double* p, int n, V v) { _mm256_maskstore_pd(p, first(n), v); }
  static double sum(V v) {
    alignas(32) double x[4];
    _mm256_store_pd(x, v);
    return tree_sum(x);
  }
};

#else

inline constexpr int kRegisters = 16;
inline constexpr const char* kIsa = "portable";

// 16 bytes per "register", like SSE2: small enough that GCC keeps a tile of them in registers.
template <class T>
struct Vec {
  static constexpr int lanes = 16 / sizeof(T);
  struct V {
    T x[lanes];
  };
  static V zero() { return V{}; }
  static V load(const T* p) {
    V v;
    for (int l = 0; l < lanes; ++l) v.x[l] = p[l];
    return v;
  }
  static void store(T* p, V v) {
    for (int l = 0; l < lanes; ++l) p[l] = v.x[l];
  }
  static V broadcast(T s) {
    V v;
    for (int l = 0; l < lanes; ++l) v.x[l] = s;
    return v;
  }
  static V add(V a, V b) {
    for (int l = 0; l < lanes; ++l) a.x[l] += b.x[l];
    return a;
  }
  static V fma(V a, V b, V acc) {
    for (int l = 0; l < lanes; ++l) {
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
      acc.x[l] = std::fma(a.x[l], b.x[l], acc.x[l]);
#else
      acc.x[l] += a.x[l] * b.x[l];
#endif
    }
    return acc;
  }
  static V load_first(const T* p, int n) {
    V v{};
    for (int l = 0; l < n; ++l) v.x[l] = p[l];
    return v;
  }
  static void store_first(T* p, int n, V v) {
    for (int l = 0; l < n; ++l) p[l] = v.x[l];
  }
  static T sum(V v) {
    return tree_sum(v.x);
  }
};

#endif

}  // namespace prism::kernels::cpu::simd
