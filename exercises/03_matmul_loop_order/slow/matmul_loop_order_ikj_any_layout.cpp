// Exercise 03, correct but slow on one layout: the i-k-j loop on every layout of B.
//
// Where B is row-major it beats naive many times over; where B is transposed (b_cs != 1) its
// inner loop walks B down a column, while naive's i-j-k dot product runs along B's rows. The
// tier is missed there only, so the hint must be the transposed-B one, never "order the loops
// i-k-j" (which this kernel does). The quick sizes time B transposed at 128 (128:nt), where the
// gap is about 10%: on a busy machine 9 samples may leave it undecided, which the expectation
// accepts; the general hint it never does.
// checker-expects: performance: tier 0 of 2.*(next: your kernel holds where B is row-major and loses where B is transposed|inconclusive for tier 1)
#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"

using prism::kernels::MatmulArgs;

void my_matmul_loop_order(const MatmulArgs<float>& a) {
  for (int64_t b = 0; b < a.batch; ++b) {
    const float* A = a.a + b * a.a_bs;
    const float* B = a.b + b * a.b_bs;
    float* C = a.c + b * a.m * a.n;
    for (int64_t i = 0; i < a.m; ++i) {
      float* c = C + i * a.n;
      for (int64_t j = 0; j < a.n; ++j) c[j] = 0.0f;
      for (int64_t p = 0; p < a.k; ++p) {
        const float aip = A[i * a.a_rs + p * a.a_cs];
        const float* brow = B + p * a.b_rs;
        for (int64_t j = 0; j < a.n; ++j) c[j] += aip * brow[j * a.b_cs];
      }
    }
  }
}

PRISM_REGISTER_KERNEL(matmul, my_matmul_loop_order);
