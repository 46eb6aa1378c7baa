// Exercise 02, a typical mistake: a float32 running sum.
//
// Correct on short rows and on random data whose errors cancel; on a long row of a constant,
// every addition rounds the same way and the sum drifts (1e-4 relative after 100003 terms of
// 0.1), which is past the checker's tolerance of 1e-5.
// checker-expects: all 0.1, over dim 1 +FAIL +error
#include "kernels/ops/reduce/args.h"
#include "kernels/registry.h"

using prism::kernels::ReduceArgs;

void my_sum_rows(const ReduceArgs<float>& a) {
  for (int64_t o = 0; o < a.rows; ++o) {
    const float* row = a.x + o * a.row_stride;
    float s = 0.0f;  // the mistake: float32 accumulator
    for (int64_t i = 0; i < a.cols; ++i) s += row[i * a.col_stride];
    a.out[o] = s;
  }
}

PRISM_REGISTER_KERNEL(sum, my_sum_rows);
