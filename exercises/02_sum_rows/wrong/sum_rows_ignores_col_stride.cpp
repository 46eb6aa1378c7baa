// Exercise 02, a typical mistake: assuming the values of a row are adjacent.
//
// row[i] instead of row[i * col_stride] is right for a sum over the last dim of a
// contiguous tensor, the case one tries first, and wrong as soon as the summed dim is not
// the innermost one in memory (a sum over dim 0, a transposed view, a slice with a step).
// checker-expects: over dim 0 .col_stride 5. +FAIL +error
#include "kernels/ops/reduce/args.h"
#include "kernels/registry.h"

using prism::kernels::ReduceArgs;

void my_sum_rows(const ReduceArgs<float>& a) {
  for (int64_t o = 0; o < a.rows; ++o) {
    const float* row = a.x + o * a.row_stride;
    double s = 0.0;
    for (int64_t i = 0; i < a.cols; ++i) s += row[i];  // the mistake: ignores col_stride
    a.out[o] = static_cast<float>(s);
  }
}

PRISM_REGISTER_KERNEL(sum, my_sum_rows);
