// Row operations the matmul variants are built from: a scaled row added to a row (axpy) and a
// dot product of two contiguous runs.
#pragma once

#include <cstdint>

#include "kernels/ops/matmul/simd.h"

namespace prism::kernels::cpu {

// c[0:n] += s * b[0:n]; unit stride, vectorized (the restrict says c and b do not overlap).
template <class T>
void axpy_row(int64_t n, T s, const T* __restrict b, T* __restrict c) {
  for (int64_t j = 0; j < n; ++j) c[j] += s * b[j];
}

// The same with b's elements `stride` apart.
template <class T>
void axpy_row_strided(int64_t n, T s, const T* __restrict b, int64_t stride, T* __restrict c) {
  for (int64_t j = 0; j < n; ++j) c[j] += s * b[j * stride];
}

// sum_p a[p] * b[p] over contiguous a and b, with four independent vector accumulators. The
// compiler will not vectorize a floating-point sum by itself (that reorders the additions, which
// changes the rounding), and a single accumulator would wait on the FMA latency every step.
template <class T>
T dot_contiguous(int64_t k, const T* __restrict a, const T* __restrict b) {
  using S = simd::Vec<T>;
  constexpr int L = S::lanes;
  typename S::V acc[4] = {S::zero(), S::zero(), S::zero(), S::zero()};
  int64_t p = 0;
  for (; p + 4 * L <= k; p += 4 * L) {
    for (int q = 0; q < 4; ++q) {
      acc[q] = S::fma(S::load(a + p + q * L), S::load(b + p + q * L), acc[q]);
    }
  }
  for (; p + L <= k; p += L) acc[0] = S::fma(S::load(a + p), S::load(b + p), acc[0]);
  alignas(64) T lanes[L];
  S::store(lanes, S::add(S::add(acc[0], acc[1]), S::add(acc[2], acc[3])));
  T sum = 0;
  for (int l = 0; l < L; ++l) sum += lanes[l];
  for (; p < k; ++p) sum += a[p] * b[p];
  return sum;
}

}  // namespace prism::kernels::cpu
