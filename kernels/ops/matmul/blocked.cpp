// Matmul, blocked variant: the reordered (i, p, j) loop run tile by tile, so the part of B it
// is working on stays in L2 instead of being re-read from L3 for every row of C.
//
// Idea. In kernels/ops/matmul/reordered.cpp every row i of C streams all of B (k x n): once B
// outgrows the 1 MiB L2 (n > 512 for square floats) each multiply-add pulls 4 bytes of B from L3.
// Cut the product into tiles:
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
// (optimized.cpp) is the next step.
//
// Layouts: as in kernels/ops/matmul/reordered.cpp, a transposed B (contiguous columns) turns the
// inner loop into dot products of a row segment of A and a column segment of B. Its tiles are
// shaped for that: KB = 1024 (a 4 KiB A row segment in L1, dots long enough to amortise summing the
// four vector accumulators) by NB = 128 columns, the same 512 KiB of B in L2. (With the row form's
// 256 x 512 tiles the dots were 256 long and the variant ran measurably slower on A @ B^T:
// docs/PERFORMANCE.md, "Matmul ladder".) A B with neither stride 1 runs the strided i, p, j loop
// (correct, slow).
//
// Cost: 2 m n k FLOPs per batch; bytes = A + B + C.
// Measured (docs/PERFORMANCE.md, "Matmul ladder"): about as fast as reordered while B stays in
// the caches, and it keeps that speed at n = 2048, where the unblocked reordered loop falls to
// about half. Both stop well short of the FMA peak: each multiply-add loads B, loads C and
// stores C, so L1 traffic, not the FMA units, sets the pace.
#include <algorithm>
#include <vector>

#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/matmul/rows.h"
#include "kernels/ops/matmul/args.h"

namespace prism::kernels::cpu {
namespace {

constexpr int64_t kRowSegmentBytes = 2048;           // NB elements of a C row
constexpr int64_t kBTileBytes = int64_t{512} << 10;  // KB x NB elements of B
constexpr int64_t kDotSegmentBytes = 4096;           // dot form: KB elements of an A row

// B with contiguous rows: the tiled i, p, j loop of the comment at the top.
template <class T>
void blocked_rows(const MatmulArgs<T>& a, const T* A, const T* B, T* C) {
  constexpr int64_t NB = kRowSegmentBytes / sizeof(T);
  constexpr int64_t KB = kBTileBytes / (NB * sizeof(T));
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

// B with contiguous columns (a transposed view): the same tiles, each C[i][j] accumulating dot
// products of a row segment of A and a column segment of B (both contiguous: A's row is copied
// when A is transposed too).
template <class T>
void blocked_columns(const MatmulArgs<T>& a, const T* A, const T* B, T* C, T* a_segment) {
  constexpr int64_t KB = kDotSegmentBytes / sizeof(T);
  constexpr int64_t NB = kBTileBytes / (KB * sizeof(T));
  std::fill(C, C + a.m * a.n, T(0));
  for (int64_t j0 = 0; j0 < a.n; j0 += NB) {
    const int64_t j1 = std::min(a.n, j0 + NB);
    for (int64_t p0 = 0; p0 < a.k; p0 += KB) {
      const int64_t kb = std::min(KB, a.k - p0);
      for (int64_t i = 0; i < a.m; ++i) {
        const T* ai = A + i * a.a_rs + p0 * a.a_cs;
        if (a.a_cs != 1) {
          for (int64_t p = 0; p < kb; ++p) a_segment[p] = ai[p * a.a_cs];
          ai = a_segment;
        }
        T* c = C + i * a.n;
        for (int64_t j = j0; j < j1; ++j) c[j] += dot_contiguous(kb, ai, B + j * a.b_cs + p0);
      }
    }
  }
}

template <class T>
void matmul_blocked(const MatmulArgs<T>& a) {
  const bool dot_form = a.b_rs == 1 && a.b_cs != 1 && a.n > 1;
  std::vector<T> a_segment(dot_form && a.a_cs != 1 ? a.k : 0);
  for (int64_t b = 0; b < a.batch; ++b) {
    const T* A = a.a + b * a.a_bs;
    const T* B = a.b + b * a.b_bs;
    T* C = a.c + b * a.m * a.n;
    if (dot_form) {
      blocked_columns(a, A, B, C, a_segment.data());
    } else {
      blocked_rows(a, A, B, C);
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
PRISM_CPU_KERNELS(90, register_matmul_blocked);

}  // namespace prism::kernels::cpu
