// The online max and sum of exponentials of one row: the first pass of the fused softmax,
// log_softmax and cross-entropy kernels (kernels/ops/softmax/online.cpp,
// kernels/ops/cross_entropy/cross_entropy.cpp).
//
// A softmax needs m = max_j x_j and s = sum_j exp(x_j - m) before it can write anything. The
// textbook way reads the row twice for them (once for m, once for s). The online way
// (Milakov & Gimelshein, 2018) reads it once, keeping the sum relative to the largest value
// seen so far and rescaling it when a larger one arrives:
//   m_new = max(m_old, x),  s = s * exp(m_old - m_new) + exp(x - m_new)
// At the end s is exactly sum_j exp(x_j - m) for the row's true max m. This is the idea that
// flash attention is built on: a row of attention scores is never held in full, blocks of it
// stream through, and each block rescales the running sum (and the running output).
//
// Done per element, the rescale costs a second exp per element. Done per chunk of kChunk
// elements it costs one exp per chunk: find the chunk's max (a cheap vectorised pass over data
// already in L1), rescale s once if the max grew, then add the chunk's exponentials (a
// vectorised pass with fast_exp). Memory sees the row once; the second touch of each 2 KB
// chunk is an L1 hit. Measured for this first pass over [4096, 1024] float32: per element with
// 16 lanes is much slower (its second exp per element makes it compute-bound), and a separate
// max pass then sum pass is as fast as chunked, since a 4 KB row stays in L1 between the two
// (docs/PERFORMANCE.md, "Fused vs unfused (CPU)").
//
// Special values, the same as the three-pass kernels give: -inf entries add exp(-inf) = 0; a
// row that is all -inf has m = -inf and s = 0 (its softmax is then NaN, as in every
// framework); a +inf or NaN entry makes s NaN.
#pragma once

#include <cstdint>
#include <limits>

#include "kernels/cpu/fast_exp.h"

namespace prism::kernels::cpu {

// Elements per chunk: 2 KB of float32, a small slice of the 32 KB L1.
constexpr int64_t kOnlineChunk = 512;

template <class T>
struct RowMaxSum {
  T max;       // max_j x_j (-inf for an empty or all -inf row)
  double sum;  // sum_j exp(x_j - max), in double across chunks
};

// x[j * stride] for j < n. kUnit promises stride == 1 so the compiler emits plain vector loads.
template <class T, bool kUnit>
RowMaxSum<T> online_max_sum(const T* x, int64_t n, int64_t stride) {
  const int64_t st = kUnit ? 1 : stride;
  T m = -std::numeric_limits<T>::infinity();
  double s = 0;
  for (int64_t c0 = 0; c0 < n; c0 += kOnlineChunk) {
    const int64_t len = n - c0 < kOnlineChunk ? n - c0 : kOnlineChunk;
    const T* xc = x + c0 * st;
    T cm = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : cm)
    for (int64_t j = 0; j < len; ++j) cm = xc[j * st] > cm ? xc[j * st] : cm;
    if (cm > m) {
      s *= std::exp(static_cast<double>(m) - static_cast<double>(cm));  // 0 while m is -inf
      m = cm;
    }
    if (m == -std::numeric_limits<T>::infinity()) continue;  // only -inf so far: adds 0
    T cs = 0;
#pragma omp simd reduction(+ : cs)
    for (int64_t j = 0; j < len; ++j) cs += kernel_exp(xc[j * st] - m);
    s += cs;
  }
  return {m, s};
}

}  // namespace prism::kernels::cpu
