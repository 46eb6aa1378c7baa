// Exercise 13, correct but slow: the solution's threads and chunks, but each chunk summed in one
// chain of dependent adds.
//
// Same bits at every thread count (fixed chunks, partials added in order), and two threads are
// about twice as fast as one: tier 1. But each thread's loop waits for its previous add (a few
// cycles of latency for a double add) on every element, where the single-threaded `optimized`
// built-in keeps 32 chains in flight, and two such threads stay behind one fast one: tier 2 is
// missed (README.md: 1.47x to 1.52x `optimized`'s time at 2 threads, 2026-11-25).
// checker-expects: performance: tier [01] of 2
#include <algorithm>
#include <vector>

#include "kernels/ops/reduce/args.h"
#include "kernels/registry.h"

using prism::kernels::ReduceArgs;

namespace {

constexpr int64_t kChunk = 16384;

double chunk_sum(const float* x, int64_t n, int64_t s) {
  double acc = 0;
  for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(x[i * s]);
  return acc;
}

}  // namespace

void my_sum_threads(const ReduceArgs<float>& a) {
  const int64_t chunks = std::max<int64_t>(1, (a.cols + kChunk - 1) / kChunk);
  const int64_t items = a.rows * chunks;
  std::vector<double> partial(static_cast<size_t>(items));
#pragma omp parallel for schedule(static) if (a.rows * a.cols >= 32768)
  for (int64_t t = 0; t < items; ++t) {
    const int64_t o = t / chunks, start = (t % chunks) * kChunk;
    partial[static_cast<size_t>(t)] = chunk_sum(a.x + o * a.row_stride + start * a.col_stride,
                                                std::min(kChunk, a.cols - start), a.col_stride);
  }
  for (int64_t o = 0; o < a.rows; ++o) {
    double s = 0;
    for (int64_t c = 0; c < chunks; ++c) s += partial[static_cast<size_t>(o * chunks + c)];
    a.out[o] = static_cast<float>(s);
  }
}

PRISM_REGISTER_KERNEL(sum, my_sum_threads);
