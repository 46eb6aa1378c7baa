// Exercise 04, solution: matmul in tiles, a tile of C in registers and a panel of B in cache.
//
//   for each panel of NR columns j0 .. j0+NR of B and C:
//     for each tile of MR rows i0 .. i0+MR:
//       acc[MR][NR] = 0                                   (MR x NR floats: vector registers)
//       for p < k:  acc[r][c] += A[i0+r][p] * B[p][j0+c]   for all r < MR, c < NR
//       C[i0+r][j0+c] = acc[r][c]
//
// Why exercise 03's i-k-j loop stops near 25-30 GFLOP/s here: its inner loop
// c[j] += a * b[j] loads c, loads b and stores c for every multiply-add, so it is limited by
// how many loads and stores a core does per cycle, not by its multiply-add units; and B is
// streamed from L3 for every row of A. In a tile, each step p loads NR floats of B (2 AVX-512
// registers) and MR values of A, and does MR x NR multiply-adds (16 vector FMAs) into
// accumulators that never leave the registers; C is written once per tile. The panel
// B[:, j0:j0+NR] (k x NR floats, 128 KiB for k = 1024) stays in L2 while every tile of rows
// of A passes over it.
// MR = 8, NR = 32: 16 vector accumulators, enough independent FMAs in flight to cover the
// FMA latency (2 per cycle, ~4 cycles each, so 8 are needed), and 16 + 2 + 1 registers fit
// in AVX-512's 32. With MR = 4 there are 8, and the speed halves (README.md).
// Tiles at the right and bottom edges are partial; they take a slower loop with run-time
// bounds. A B whose rows are not contiguous (a transposed view, b_cs = k) would make every
// tile read B with stride k, so each panel of it is first copied into a contiguous k x NR
// buffer (packing, the idea the best kernels apply to both operands), and the tiles read that.
// Cost: 2 m n k FLOPs per batch entry; bytes (minimum) = A + B + C.
// Measured (1 thread, `exercise_matmul_tiled_solution`): on a 2-vCPU Intel Xeon VM (2026-11-25)
// 101 GFLOP/s at 512 x 512 x 512 and 97 with B transposed, against 28.6 for the i-k-j loop, 142
// for Eigen and 160 for prism's packed kernel; on the 2-core AMD EPYC Zen 4 VM (2026-11-21, the
// version without packing) 97.0, against 29.3 for i-k-j and 76.0 for Eigen.
#include <algorithm>
#include <vector>

#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"

using prism::kernels::MatmulArgs;

namespace {

constexpr int kTileM = 8;   // MR: rows of a C tile
constexpr int kTileN = 32;  // NR: columns of a C tile (two registers of 16 floats)

// C[i0:i0+mr, j0:j0+nr] = A[i0:i0+mr, :] @ B[:, j0:j0+nr] for one batch entry, where `panel`
// points at B[0][j0] and a row of the panel is `b_rs` floats further on, its columns `b_cs`
// apart. kFull: mr and nr are MR and NR and b_cs is 1, so every bound is a compile-time
// constant and the compiler unrolls the r and c loops and keeps acc in registers.
template <bool kFull>
void tile(const MatmulArgs<float>& a, const float* A, const float* panel, int64_t b_rs,
          int64_t b_cs_in, float* C, int64_t i0, int64_t j0, int mr, int nr) {
  const int rows = kFull ? kTileM : mr, cols = kFull ? kTileN : nr;
  const int64_t b_cs = kFull ? 1 : b_cs_in;
  float acc[kTileM][kTileN] = {};
  for (int64_t p = 0; p < a.k; ++p) {
    const float* b = panel + p * b_rs;  // B[p][j0]
    for (int r = 0; r < rows; ++r) {
      const float arp = A[(i0 + r) * a.a_rs + p * a.a_cs];
      for (int c = 0; c < cols; ++c) acc[r][c] += arp * b[c * b_cs];
    }
  }
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) C[(i0 + r) * a.n + j0 + c] = acc[r][c];
  }
}

}  // namespace

void my_matmul_tiled(const MatmulArgs<float>& a) {
  std::vector<float> packed;  // one k x NR panel of a B whose rows are strided
  if (a.b_cs != 1) packed.resize(static_cast<size_t>(a.k * kTileN));
  for (int64_t b = 0; b < a.batch; ++b) {
    const float* A = a.a + b * a.a_bs;
    const float* B = a.b + b * a.b_bs;
    float* C = a.c + b * a.m * a.n;
    for (int64_t j0 = 0; j0 < a.n; j0 += kTileN) {
      const int nr = static_cast<int>(std::min<int64_t>(kTileN, a.n - j0));  // last panel: partial
      const float* panel = B + j0 * a.b_cs;                                  // B[0][j0]
      int64_t b_rs = a.b_rs, b_cs = a.b_cs;
      if (a.b_cs != 1) {
        for (int64_t p = 0; p < a.k; ++p) {
          for (int c = 0; c < nr; ++c) packed[p * kTileN + c] = panel[p * a.b_rs + c * a.b_cs];
        }
        panel = packed.data();
        b_rs = kTileN;
        b_cs = 1;
      }
      for (int64_t i0 = 0; i0 < a.m; i0 += kTileM) {
        const int mr = static_cast<int>(std::min<int64_t>(kTileM, a.m - i0));
        if (mr == kTileM && nr == kTileN) {
          tile<true>(a, A, panel, b_rs, b_cs, C, i0, j0, mr, nr);
        } else {
          tile<false>(a, A, panel, b_rs, b_cs, C, i0, j0, mr, nr);
        }
      }
    }
  }
}

PRISM_REGISTER_KERNEL(matmul, my_matmul_tiled);
