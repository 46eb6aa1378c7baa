// Exercise 03, correct but slow: the textbook i-j-k loop, the same order as the naive variant.
//
// It is as fast as naive within a few percent, so "beats naive" can be neither reached nor
// missed by a clear margin. With the 5% margin around every bound (checker/grade.h) the checker
// still decides it once the interval lies within 5% of the bound: "at the bound", the tier
// missed. It must never be credited with beating naive.
// checker-expects: performance: tier 0 of 2
#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"

using prism::kernels::MatmulArgs;

void my_matmul_loop_order(const MatmulArgs<float>& a) {
  for (int64_t b = 0; b < a.batch; ++b) {
    const float* A = a.a + b * a.a_bs;
    const float* B = a.b + b * a.b_bs;
    float* C = a.c + b * a.m * a.n;
    for (int64_t i = 0; i < a.m; ++i) {
      for (int64_t j = 0; j < a.n; ++j) {
        float acc = 0;
        for (int64_t p = 0; p < a.k; ++p) {
          acc += A[i * a.a_rs + p * a.a_cs] * B[p * a.b_rs + j * a.b_cs];
        }
        C[i * a.n + j] = acc;
      }
    }
  }
}

PRISM_REGISTER_KERNEL(matmul, my_matmul_loop_order);
