// Matmul, reordered variant: the naive triple loop with its two inner loops swapped (i, p, j).
//
// Idea. The sum C[i][j] = sum_p A[i][p] B[p][j] can be done in any loop order. The naive i, j, p
// order walks B down a column in its inner loop: stride n, a new cache line for every
// multiply-add once B outgrows the cache. In i, p, j order the inner loop is
//   C[i][0:n] += A[i][p] * B[p][0:n]
// a scaled row of B added to a row of C: both walk memory with unit stride, so every cache line
// brought in is used whole, the hardware prefetcher sees two plain streams, and the compiler
// vectorizes the loop (16 floats per AVX-512 FMA). The row of C (n elements) is reused for all
// k values of p and stays in L1 (n = 2048 floats is 8 KiB of the 32 KiB L1d).
//
// What it still lacks: each multiply-add loads B, loads C and stores C, three memory operations
// for one FMA, so it is bound by L1 load/store bandwidth, not by the FMA units; and each row of
// C reads all of B again, from L2 while B fits there (n <= 512), from L3 after that. Blocking
// (blocked.cpp) fixes the second problem, the register tile of
// kernels/ops/matmul/optimized.cpp the first.
//
// Layouts. The argument is "make the inner loop walk memory with unit stride", and which loop
// that is depends on the layout. For a B whose rows are contiguous (column stride 1, the common
// case) it is the i, p, j loop above. For a transposed B (A @ B^T, as backward computes it) the
// rows of B are strided and its columns contiguous, so the i, p, j loop would jump k elements
// per step: there each C[i][j] is computed as a dot product of a row of A and a column of B,
// both contiguous, with four vector accumulators (rows.h; the compiler will not vectorize
// a floating-point sum by itself). A B with neither stride 1 runs the i, p, j loop through its
// strides: correct, and as slow as the naive loop's column walk. Packing
// (optimized.cpp) is what makes every layout cost the same.
//
// Cost: 2 m n k FLOPs per batch; bytes = A + B + C (B is re-read m times from the caches).
// Measured (docs/PERFORMANCE.md, "Matmul ladder"): an order of magnitude faster than the naive
// loop, until n = 2048, where B (16 MiB) no longer stays in the caches between rows of C and the
// speed about halves; A @ B^T in the dot-product order is as fast.
#include <algorithm>
#include <vector>

#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/matmul/rows.h"
#include "kernels/ops/matmul/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
void matmul_reordered(const MatmulArgs<T>& a) {
  // B's columns contiguous but not its rows (a transposed view): the dot-product order.
  const bool dot_form = a.b_rs == 1 && a.b_cs != 1 && a.n > 1;
  std::vector<T> a_row(dot_form && a.a_cs != 1 ? a.k : 0);
  for (int64_t b = 0; b < a.batch; ++b) {
    const T* A = a.a + b * a.a_bs;
    const T* B = a.b + b * a.b_bs;
    T* C = a.c + b * a.m * a.n;
    for (int64_t i = 0; i < a.m; ++i) {
      T* c = C + i * a.n;
      if (dot_form) {
        const T* ai = A + i * a.a_rs;
        if (a.a_cs != 1) {
          for (int64_t p = 0; p < a.k; ++p) a_row[p] = ai[p * a.a_cs];
          ai = a_row.data();
        }
        for (int64_t j = 0; j < a.n; ++j) c[j] = dot_contiguous(a.k, ai, B + j * a.b_cs);
        continue;
      }
      std::fill(c, c + a.n, T(0));
      for (int64_t p = 0; p < a.k; ++p) {
        const T s = A[i * a.a_rs + p * a.a_cs];
        const T* row = B + p * a.b_rs;
        if (a.b_cs == 1) {
          axpy_row(a.n, s, row, c);
        } else {
          axpy_row_strided(a.n, s, row, a.b_cs, c);
        }
      }
    }
  }
}

}  // namespace

void register_matmul_reordered(Registry& r) {
  r.op("matmul", Device::cpu)
      .add<MatmulArgs>("reordered", VariantTag::optimized,
                       "i,p,j loop order: the inner loop streams rows of B and C",
                       &matmul_reordered<float>, &matmul_reordered<double>);
}
PRISM_CPU_KERNELS(80, register_matmul_reordered);

}  // namespace prism::kernels::cpu
