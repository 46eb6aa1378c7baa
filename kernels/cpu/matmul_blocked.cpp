// Matmul, blocked variant: the reordered (i, p, j) loop run tile by tile, so the part of B it
// is working on stays in L2 instead of being re-read from L3 for every row of C.
//
// Idea. In matmul_reordered.cpp every row i of C streams all of B (k x n): once B outgrows the
// 1 MiB L2 (n > 512 for square floats) each multiply-add pulls 4 bytes of B from L3. Cut the
// product into tiles:
//
//   for j0 < n step NB                 a column band of C and B
//     for p0 < k step KB               B tile  B[p0:p0+KB, j0:j0+NB]   (KB x NB, in L2)
//       for i < m                      C row segment C[i, j0:j0+NB]    (NB, in L1)
//         for p in [p0, p0+KB)         A row segment A[i, p0:p0+KB]    (KB, in L1)
//           C[i, j0:j0+NB] += A[i][p] * B[p, j0:j0+NB]                 (unit stride, vectorized)
//
// Tile sizes from this machine's caches (Zen 4: 32 KiB L1d, 1 MiB L2 per core, 32 MiB L3):
//   NB = 2 KiB of C row (512 floats): one C row segment plus one A row segment (KB elements)
//        stay in L1 with most of it left over for the B rows streaming through;
//   KB = 256: the B tile is KB x NB = 512 KiB, half of L2, so it survives the whole i loop
//        (every row of C reuses it) next to A and C lines passing through L2.
// B is now read from L3 once per tile instead of once per row of C. C is read and written once
// per B tile (k / KB times in all) instead of once per product, a small price.
//
// What it still lacks: like the reordered loop, each multiply-add loads B, loads C and stores C,
// so the FMA units idle while L1 moves data. Keeping a tile of C in registers across many p
// (matmul_optimized.cpp) is the next step. A B with a column stride other than 1 (a transposed
// view) runs the strided loop: correct, but slow; packing fixes that in the optimized variant.
//
// Cost: 2 m n k FLOPs per batch; bytes = A + B + C.
// Measured: see docs/PERFORMANCE.md, "Matmul ladder".
#include <algorithm>

#include "kernels/cpu/kernel_list.h"

namespace prism::kernels::cpu {
namespace {

constexpr int64_t kRowSegmentBytes = 2048;           // NB elements of a C row
constexpr int64_t kBTileBytes = int64_t{512} << 10;  // KB x NB elements of B

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
void matmul_blocked(const MatmulArgs<T>& a) {
  constexpr int64_t NB = kRowSegmentBytes / sizeof(T);
  constexpr int64_t KB = kBTileBytes / (NB * sizeof(T));
  for (int64_t b = 0; b < a.batch; ++b) {
    const T* A = a.a + b * a.a_bs;
    const T* B = a.b + b * a.b_bs;
    T* C = a.c + b * a.m * a.n;
    std::fill(C, C + a.m * a.n, T(0));
    for (int64_t j0 = 0; j0 < a.n; j0 += NB) {
      const int64_t nb = std::min(NB, a.n - j0);
      for (int64_t p0 = 0; p0 < a.k; p0 += KB) {
        const int64_t p1 = std::min(a.k, p0 + KB);
        for (int64_t i = 0; i < a.m; ++i) {
          T* c = C + i * a.n + j0;
          for (int64_t p = p0; p < p1; ++p) {
            const T s = A[i * a.a_rs + p * a.a_cs];
            const T* row = B + p * a.b_rs + j0 * a.b_cs;
            if (a.b_cs == 1) {
              axpy_row(nb, s, row, c);
            } else {
              axpy_row_strided(nb, s, row, a.b_cs, c);
            }
          }
        }
      }
    }
  }
}

}  // namespace

void register_matmul_blocked(Registry& r) {
  r.op("matmul", Device::cpu)
      .add<MatmulArgs>("blocked", VariantTag::optimized,
                       "i,p,j loops over L2-sized tiles of B and L1-sized row segments of C",
                       &matmul_blocked<float>, &matmul_blocked<double>);
}

}  // namespace prism::kernels::cpu
