// Exercise 04, a correct but slow answer: the plain i-j-k loop submitted as the tiled kernel.
// Every output is right, so the checker must pass it; it is the naive variant's own loop, so it
// cannot beat naive by a margin, let alone blocking or the best built-in: the checker must grade
// it below the top tier (tier 0, or 1 if noise makes it look faster than naive), never fail it.
// checker-expects: performance: tier [01] of 3
#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"

using prism::kernels::MatmulArgs;

void my_matmul_tiled(const MatmulArgs<float>& a) {
  for (int64_t bi = 0; bi < a.batch; ++bi) {
    const float* A = a.a + bi * a.a_bs;
    const float* B = a.b + bi * a.b_bs;
    float* C = a.c + bi * a.m * a.n;
    for (int64_t i = 0; i < a.m; ++i) {
      for (int64_t j = 0; j < a.n; ++j) {
        float acc = 0;
        for (int64_t p = 0; p < a.k; ++p)
          acc += A[i * a.a_rs + p * a.a_cs] * B[p * a.b_rs + j * a.b_cs];
        C[i * a.n + j] = acc;
      }
    }
  }
}

PRISM_REGISTER_KERNEL(matmul, my_matmul_tiled);
