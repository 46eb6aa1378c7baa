// Packing B for the bf16 GEMMs: both the AVX512-BF16 kernel (optimized.cpp) and the
// AMX one (amx.cpp) multiply k in PAIRS: one 32-bit lane holds B[k][j] and B[k+1][j]
// (vdpbf16ps and tdpbf16ps both add a[2p] b[2p] + a[2p+1] b[2p+1] into an fp32 sum). So B is
// copied, once per block, into slivers of `width` columns, pair by pair:
//   B[k0 : k0 + 2 kcp, j0 : j0 + nc]  ->  sliver s, pair p, column w, half h at
//   dst[(s kcp + p) 2 width + 2 w + h]
// and everything outside B (past k or past the block's nc columns) is zero, so the kernels
// never test an edge inside their loops.
#pragma once

#include <cstdint>

#include "kernels/ops/matmul_bf16/args.h"

namespace prism::kernels::cpu {

inline void pack_b_pairs(const MatmulBf16Args<float>& g, const BFloat16* B, int64_t k0, int64_t kcp,
                         int64_t j0, int64_t nc, int width, uint16_t* dst) {
  const int64_t slivers = (nc + width - 1) / width;
  for (int64_t s = 0; s < slivers; ++s) {
    for (int64_t p = 0; p < kcp; ++p) {
      uint16_t* d = dst + (s * kcp + p) * 2 * width;
      for (int h = 0; h < 2; ++h) {
        const int64_t kk = k0 + 2 * p + h;
        for (int w = 0; w < width; ++w) {
          const int64_t j = j0 + s * width + w;
          d[2 * w + h] = (kk < g.k && j < j0 + nc) ? B[kk * g.b_rs + j * g.b_cs].bits : 0;
        }
      }
    }
  }
}

}  // namespace prism::kernels::cpu
