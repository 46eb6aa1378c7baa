// Exercise 02, solution: the sum of each row of a strided [rows, cols] view.
//
// Idea: one running sum per row, kept in double. A float32 running sum s + x rounds the
// result to 24 significant bits, so once s is large each added x loses its low bits; over n
// terms the error grows with n (a row of 100003 values of 0.1 summed in float is off by about
// 1e-4 relative, because 0.1 is rounded the same way at every step). Each float32 input is
// exact in double, and double has 29 more bits, so the same sum in double is off by well under
// one float32 ulp until n is in the billions; the one rounding left is the final cast.
// (Pairwise summation in float, which adds neighbours and then the partial sums in a tree,
// bounds the error by log2(n) roundings instead of n, without a wider type.)
// Cost: cols - 1 adds per row; bytes = 4 per input element + 4 per output. One dependent
// chain of double adds per row, so the speed is one add per add latency, like the naive and
// reference variants. Measured (2-core AMD EPYC Zen 4 VM, 1 thread, `exercise_sum_rows_solution
// --runs 9`): 1.23 GFLOP/s (4.9 GB/s) over the rows of [4096,1024], 0.18 GFLOP/s over dim 0 of
// [1024,4096]; README.md has the comparison and how to beat it.
#include "kernels/ops/reduce/args.h"
#include "kernels/registry.h"

using prism::kernels::ReduceArgs;

void my_sum_rows(const ReduceArgs<float>& a) {
  for (int64_t o = 0; o < a.rows; ++o) {
    const float* row = a.x + o * a.row_stride;
    double s = 0.0;
    for (int64_t i = 0; i < a.cols; ++i) s += static_cast<double>(row[i * a.col_stride]);
    a.out[o] = static_cast<float>(s);
  }
}

PRISM_REGISTER_KERNEL(sum, my_sum_rows);
