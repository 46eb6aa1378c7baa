// Exercise 03: matmul with the i-k-j loop order. The task is in README.md, next to this file.
//
// Your kernel receives a MatmulArgs<float> (kernels/args.h) and computes, for every batch
// entry b < a.batch, C = A @ B with A m x k, B k x n, C m x n:
//   A[i][p] = a.a[b * a.a_bs + i * a.a_rs + p * a.a_cs]
//   B[p][j] = a.b[b * a.b_bs + p * a.b_rs + j * a.b_cs]
//   C[i][j] = a.c[(b * a.m + i) * a.n + j]          C is contiguous and arrives uninitialised
// A and B may be views (a transposed operand has a_rs = 1), and a batch stride may be 0 (one
// matrix shared by the whole batch).
//
// Check it:  build/prism check matmul_loop_order
#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"

using prism::kernels::MatmulArgs;

// [[maybe_unused]]: the empty body does not read `a` yet, and -Wextra warns about unused
// parameters. Delete the attribute once your code uses `a`.
void my_matmul_loop_order([[maybe_unused]] const MatmulArgs<float>& a) {
  // TODO(exercise): compute C[i][j] = sum_p A[i][p] * B[p][j] with the loops ordered i, p, j
  // (p is the k index), so that the innermost loop walks a row of B and a row of C. When the
  // checker passes, delete this TODO comment: ctest then checks your kernel instead of
  // expecting this empty one to fail.
}

PRISM_REGISTER_KERNEL(matmul, my_matmul_loop_order);
