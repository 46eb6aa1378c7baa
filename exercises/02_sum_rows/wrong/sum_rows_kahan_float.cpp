// Exercise 02, a typical mistake: a compensated (Kahan) sum in float32 instead of a double one.
//
// Kahan's summation carries the rounding error of each add in c and feeds it back into the next
// term, so on finite data it is as accurate as a double running sum: the row of 100003 values of
// 0.1 comes out exact. But its correction c = (t - s) - y assumes t - s is a number. Once the
// sum reaches inf (a row holding +inf, or float partials past FLT_MAX), t - s = inf - inf = NaN,
// and the NaN spreads to the result where the right sum is inf (or 3e38). A double accumulator
// is simpler, as fast, and holds every partial sum of float32 inputs.
// checker-expects: .inf and -inf entries +FAIL +error inf
#include "kernels/ops/reduce/args.h"
#include "kernels/registry.h"

using prism::kernels::ReduceArgs;

void my_sum_rows(const ReduceArgs<float>& a) {
  for (int64_t o = 0; o < a.rows; ++o) {
    const float* row = a.x + o * a.row_stride;
    float s = 0.0f, c = 0.0f;  // the running sum and its lost low part
    for (int64_t i = 0; i < a.cols; ++i) {
      const float y = row[i * a.col_stride] - c;
      const float t = s + y;
      c = (t - s) - y;  // the mistake: inf - inf = NaN once t is inf
      s = t;
    }
    a.out[o] = s;
  }
}

PRISM_REGISTER_KERNEL(sum, my_sum_rows);
