// Exercise 03, a typical mistake: accumulating into C without setting it first.
//
// C arrives uninitialised (a fresh buffer from the allocator), so C[i][j] += ... adds to
// whatever was there. A freshly mapped page often holds zeros, which makes this pass by
// luck; the checker's guarded run fills C with a NaN that marks "never set" and sees it read.
// checker-expects: .1,1. @ .1,1. +FAIL +1 of 1 elements of C read before written
#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"

using prism::kernels::MatmulArgs;

void my_matmul_loop_order(const MatmulArgs<float>& a) {
  for (int64_t b = 0; b < a.batch; ++b) {
    const float* A = a.a + b * a.a_bs;
    const float* B = a.b + b * a.b_bs;
    float* C = a.c + b * a.m * a.n;
    for (int64_t i = 0; i < a.m; ++i) {
      float* c = C + i * a.n;  // the mistake: no c[j] = 0 before the p loop
      for (int64_t p = 0; p < a.k; ++p) {
        const float aip = A[i * a.a_rs + p * a.a_cs];
        for (int64_t j = 0; j < a.n; ++j) c[j] += aip * B[p * a.b_rs + j * a.b_cs];
      }
    }
  }
}

PRISM_REGISTER_KERNEL(matmul, my_matmul_loop_order);
