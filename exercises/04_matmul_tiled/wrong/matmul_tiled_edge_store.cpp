// Exercise 04, a typical mistake: storing a whole tile at the right edge.
//
// The edge tile is computed for its nr < NR real columns, but stored with the full tile's
// loop (c < NR). The extra columns spill into the next row of C, and from the last row past
// the end of C: in the real op that overwrites other memory. The guard zones catch it.
// checker-expects: FAIL +wrote [0-9]+ element.s. past the end of C
#include <algorithm>

#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"

using prism::kernels::MatmulArgs;

namespace {

constexpr int kTileM = 8;
constexpr int kTileN = 32;

}  // namespace

void my_matmul_tiled(const MatmulArgs<float>& a) {
  for (int64_t b = 0; b < a.batch; ++b) {
    const float* A = a.a + b * a.a_bs;
    const float* B = a.b + b * a.b_bs;
    float* C = a.c + b * a.m * a.n;
    for (int64_t j0 = 0; j0 < a.n; j0 += kTileN) {
      const int nr = static_cast<int>(std::min<int64_t>(kTileN, a.n - j0));
      for (int64_t i0 = 0; i0 < a.m; i0 += kTileM) {
        const int mr = static_cast<int>(std::min<int64_t>(kTileM, a.m - i0));
        float acc[kTileM][kTileN] = {};
        for (int64_t p = 0; p < a.k; ++p) {
          for (int r = 0; r < mr; ++r) {
            const float arp = A[(i0 + r) * a.a_rs + p * a.a_cs];
            for (int c = 0; c < nr; ++c) acc[r][c] += arp * B[p * a.b_rs + (j0 + c) * a.b_cs];
          }
        }
        for (int r = 0; r < mr; ++r) {
          for (int c = 0; c < kTileN; ++c) C[(i0 + r) * a.n + j0 + c] = acc[r][c];  // the mistake
        }
      }
    }
  }
}

PRISM_REGISTER_KERNEL(matmul, my_matmul_tiled);
