// Exercise 03, a typical mistake: the wrong row length for C.
//
// C is m x n, so row i starts at C + i * n. Writing C + i * k (A's row length) is right only
// when k == n, the square matrices one tests first. With k < n rows overlap and some elements
// are never written; with k > n the last rows land past the end of C, which in the real op
// overwrites other memory. The checker's guard zones catch that write.
// checker-expects: FAIL +wrote [0-9]+ element.s. past the end of C
#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"

using prism::kernels::MatmulArgs;

void my_matmul_loop_order(const MatmulArgs<float>& a) {
  for (int64_t b = 0; b < a.batch; ++b) {
    const float* A = a.a + b * a.a_bs;
    const float* B = a.b + b * a.b_bs;
    float* C = a.c + b * a.m * a.n;
    for (int64_t i = 0; i < a.m; ++i) {
      float* c = C + i * a.k;  // the mistake: C's row length is n, not k
      for (int64_t j = 0; j < a.n; ++j) c[j] = 0.0f;
      for (int64_t p = 0; p < a.k; ++p) {
        const float aip = A[i * a.a_rs + p * a.a_cs];
        for (int64_t j = 0; j < a.n; ++j) c[j] += aip * B[p * a.b_rs + j * a.b_cs];
      }
    }
  }
}

PRISM_REGISTER_KERNEL(matmul, my_matmul_loop_order);
