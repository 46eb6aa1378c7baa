// Exercise 04: matmul in tiles, a tile of C in registers and a panel of B in cache. The task
// is in README.md, next to this file.
//
// The argument struct is the one of exercise 03 (kernels/args.h, MatmulArgs<float>): for every
// batch entry b < a.batch, C = A @ B with A m x k, B k x n, C m x n:
//   A[i][p] = a.a[b * a.a_bs + i * a.a_rs + p * a.a_cs]
//   B[p][j] = a.b[b * a.b_bs + p * a.b_rs + j * a.b_cs]
//   C[i][j] = a.c[(b * a.m + i) * a.n + j]          C is contiguous and arrives uninitialised
//
// Check it:  build/prism check matmul_tiled
#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"

using prism::kernels::MatmulArgs;

// [[maybe_unused]]: the empty body does not read `a` yet, and -Wextra warns about unused
// parameters. Delete the attribute once your code uses `a`.
void my_matmul_tiled([[maybe_unused]] const MatmulArgs<float>& a) {
  // TODO(exercise): compute C one MR x NR tile at a time: a local float acc[MR][NR] summed
  // over all of k, then stored. Loop over column panels of B outside and row tiles of A
  // inside. Handle the partial tiles at the right and bottom edges. When the checker passes,
  // delete this TODO comment: ctest then checks your kernel instead of expecting this empty
  // one to fail.
}

PRISM_REGISTER_KERNEL(matmul, my_matmul_tiled);
