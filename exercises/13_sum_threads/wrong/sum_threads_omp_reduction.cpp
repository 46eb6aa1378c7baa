// Exercise 13, a typical mistake: reduction(+:s), correct to rounding but not the same bits at
// every thread count.
//
// OpenMP gives each thread a private s, shares the row out in one contiguous piece per thread
// (the static schedule), and adds the private sums at the end. There is no race, and the
// result passes every tolerance. But where the pieces end depends on the thread count: 1 thread
// adds x_0, x_1, ... in one chain, 2 threads add the two halves and then the halves, 3 threads
// three thirds. Floating-point addition is not associative, so each thread count rounds
// differently, and on rows whose double sum rounds a lot (large terms that cancel) the float32
// result differs in its last bits, or more. A model trained on a 2-core laptop and on a 64-core
// server would then diverge from the first step.
// checker-expects: large terms that cancel +FAIL +not the same bits at 1 and [23] threads
#include "kernels/ops/reduce/args.h"
#include "kernels/registry.h"

using prism::kernels::ReduceArgs;

void my_sum_threads(const ReduceArgs<float>& a) {
  for (int64_t o = 0; o < a.rows; ++o) {
    const float* row = a.x + o * a.row_stride;
    double s = 0;
#pragma omp parallel for reduction(+ : s)
    for (int64_t i = 0; i < a.cols; ++i) s += static_cast<double>(row[i * a.col_stride]);
    a.out[o] = static_cast<float>(s);
  }
}

PRISM_REGISTER_KERNEL(sum, my_sum_threads);
