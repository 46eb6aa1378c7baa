// Exercise 13, a typical mistake: the chunks of a strided row start at the wrong place.
//
// The solution's design (fixed chunks, partial sums in slots, added in order), with one slip:
// chunk c of a row starts c * kChunk elements into the row, which is c * kChunk * col_stride
// floats after the row's first, and this kernel adds c * kChunk. Rows shorter than one chunk
// (every small case) are right; so are long contiguous rows, where col_stride is 1. Only a long
// row read through a stride, the sum over dim 0 of a [200003, 3] tensor, shows it.
// checker-expects: \[3,200003\] over dim 0 \(col_stride 3, long rows\) +FAIL +error
#include <algorithm>
#include <vector>

#include "kernels/ops/reduce/args.h"
#include "kernels/registry.h"

using prism::kernels::ReduceArgs;

namespace {

// 16384 floats = 64 KB per chunk: long enough that a chunk's fold and its partial sum cost
// nothing next to its adds, short enough that one row of 10^6 has 62 chunks to share out.
constexpr int64_t kChunk = 16384;
// 32 independent chains of double adds: four AVX-512 registers of 8, enough to hide the add's
// latency (exercise 02's tier 2; kernels/ops/reduce/optimized.cpp).
constexpr int kLanes = 32;

// The sum of n elements x[0], x[s], x[2s], ... in kLanes lanes and a pairwise fold.
double chunk_sum(const float* x, int64_t n, int64_t s) {
  double lane[kLanes] = {};
  int64_t i = 0;
  if (s == 1) {  // the common case, written apart so that the compiler vectorises it
    for (; i + kLanes <= n; i += kLanes) {
      for (int k = 0; k < kLanes; ++k) lane[k] += static_cast<double>(x[i + k]);
    }
  } else {
    for (; i + kLanes <= n; i += kLanes) {
      for (int k = 0; k < kLanes; ++k) lane[k] += static_cast<double>(x[(i + k) * s]);
    }
  }
  for (int k = 0; i < n; ++i, ++k) lane[k] += static_cast<double>(x[i * s]);
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int k = 0; k < width; ++k) lane[k] += lane[k + width];
  }
  return lane[0];
}

}  // namespace

void my_sum_threads(const ReduceArgs<float>& a) {
  const int64_t chunks = std::max<int64_t>(1, (a.cols + kChunk - 1) / kChunk);
  const int64_t items = a.rows * chunks;
  // Below ~32K elements a parallel region's start (a few microseconds) costs more than it saves.
  const bool parallel = a.rows * a.cols >= 32768;
  if (chunks == 1) {  // each row is one chunk: its sum is the output, no partials needed
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < a.rows; ++o) {
      a.out[o] = static_cast<float>(chunk_sum(a.x + o * a.row_stride, a.cols, a.col_stride));
    }
    return;
  }
  std::vector<double> partial(static_cast<size_t>(items));
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t t = 0; t < items; ++t) {
    const int64_t o = t / chunks, start = (t % chunks) * kChunk;
    const int64_t n = std::min(kChunk, a.cols - start);
    partial[static_cast<size_t>(t)] =
        chunk_sum(a.x + o * a.row_stride + start, n, a.col_stride);  // start * col_stride
  }
  // Each row's chunks in order: the fixed order that makes the bits independent of the threads.
  for (int64_t o = 0; o < a.rows; ++o) {
    double s = 0;
    for (int64_t c = 0; c < chunks; ++c) s += partial[static_cast<size_t>(o * chunks + c)];
    a.out[o] = static_cast<float>(s);
  }
}

PRISM_REGISTER_KERNEL(sum, my_sum_threads);
