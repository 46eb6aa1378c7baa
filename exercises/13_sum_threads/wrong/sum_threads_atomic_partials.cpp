// Exercise 13, a typical mistake: fixed chunks, but their sums added with an atomic add as each
// chunk finishes.
//
// The chunks are right (their boundaries do not depend on the thread count), and the atomic add
// makes the update race-free. But the order of the additions is now the order in which the
// threads happen to finish their chunks, which changes from run to run: the same call on the
// same input gives other bits. Store each chunk's sum in its own slot instead, and add the slots
// in chunk order after the parallel loop.
// checker-expects: large terms that cancel +FAIL +(two runs|not the same bits)
#include <algorithm>

#include "kernels/ops/reduce/args.h"
#include "kernels/registry.h"

using prism::kernels::ReduceArgs;

namespace {
constexpr int64_t kChunk = 16384;
}  // namespace

void my_sum_threads(const ReduceArgs<float>& a) {
  const int64_t chunks = std::max<int64_t>(1, (a.cols + kChunk - 1) / kChunk);
  for (int64_t o = 0; o < a.rows; ++o) {
    const float* row = a.x + o * a.row_stride;
    double s = 0;
#pragma omp parallel for
    for (int64_t c = 0; c < chunks; ++c) {
      double part = 0;
      const int64_t end = std::min(a.cols, (c + 1) * kChunk);
      for (int64_t i = c * kChunk; i < end; ++i) part += static_cast<double>(row[i * a.col_stride]);
#pragma omp atomic
      s += part;
    }
    a.out[o] = static_cast<float>(s);
  }
}

PRISM_REGISTER_KERNEL(sum, my_sum_threads);
