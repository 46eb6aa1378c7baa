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
// (matmul_blocked.cpp) fixes the second problem, the register tile of matmul_optimized.cpp the
// first.
//
// Layouts. The unit-stride argument needs B's rows to be contiguous (column stride 1), which is
// the common case; it is specialised so the compiler can vectorize it. Any other stride (a
// transposed B, as in A @ B^T during backward) runs the same loop with a strided B: correct, but
// as slow as the naive loop's column walk. Packing (matmul_optimized.cpp) is what removes that.
//
// Cost: 2 m n k FLOPs per batch; bytes = A + B + C (B is re-read m times from the caches).
// Measured: see docs/PERFORMANCE.md, "Matmul ladder".
#include <algorithm>

#include "kernels/cpu/kernel_list.h"

namespace prism::kernels::cpu {
namespace {

// c[0:n] += s * b[0:n]; unit stride, vectorized (the restrict says c and b do not overlap).
template <class T>
void axpy_row(int64_t n, T s, const T* __restrict b, T* __restrict c) {
  for (int64_t j = 0; j < n; ++j) c[j] += s * b[j];
}

// The same with B's elements `stride` apart.
template <class T>
void axpy_row_strided(int64_t n, T s, const T* __restrict b, int64_t stride, T* __restrict c) {
  for (int64_t j = 0; j < n; ++j) c[j] += s * b[j * stride];
}

template <class T>
void matmul_reordered(const MatmulArgs<T>& a) {
  for (int64_t b = 0; b < a.batch; ++b) {
    const T* A = a.a + b * a.a_bs;
    const T* B = a.b + b * a.b_bs;
    T* C = a.c + b * a.m * a.n;
    for (int64_t i = 0; i < a.m; ++i) {
      T* c = C + i * a.n;
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

}  // namespace prism::kernels::cpu
