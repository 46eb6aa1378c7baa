// Exercise 04, a typical mistake: tile loops that skip the partial tiles at the edges.
//
// for (i0 = 0; i0 + MR <= m; i0 += MR) visits only whole tiles, which is every tile when m
// and n are multiples of MR and NR (the sizes one benchmarks). Otherwise the last rows and
// columns of C are never written: C arrives uninitialised, so they hold whatever was there.
// checker-expects: .1,1. @ .1,1. +FAIL +1 of 1 elements of C never written
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
    for (int64_t j0 = 0; j0 + kTileN <= a.n; j0 += kTileN) {    // the mistake: whole tiles only
      for (int64_t i0 = 0; i0 + kTileM <= a.m; i0 += kTileM) {  // (and here)
        float acc[kTileM][kTileN] = {};
        for (int64_t p = 0; p < a.k; ++p) {
          for (int r = 0; r < kTileM; ++r) {
            const float arp = A[(i0 + r) * a.a_rs + p * a.a_cs];
            for (int c = 0; c < kTileN; ++c) acc[r][c] += arp * B[p * a.b_rs + (j0 + c) * a.b_cs];
          }
        }
        for (int r = 0; r < kTileM; ++r) {
          for (int c = 0; c < kTileN; ++c) C[(i0 + r) * a.n + j0 + c] = acc[r][c];
        }
      }
    }
  }
}

PRISM_REGISTER_KERNEL(matmul, my_matmul_tiled);
