// matmul_bf16, blocked and optimized variants: C (float32) = A @ B, A and B bfloat16.
//
// Idea. AVX512-BF16's vdpbf16ps (_mm512_dpbf16_ps) takes 32 bfloat16 pairs from each of two
// registers and, in each of 16 float32 lanes j, adds a[2j] b[2j] + a[2j+1] b[2j+1] to the lane:
// a dot product of length 2 per lane, products exact, sums in float32 (with denormals flushed to
// zero, which bfloat16 values of a trained network never are). So the k loop walks k two at a
// time, and the operands are packed so that each step's pairs sit where the instruction wants
// them:
//   B sliver (NR = 32 columns): for each pair step p, the 32 columns' pairs (B[2p][j], B[2p+1][j])
//     side by side: 64 bfloat16 = two zmm registers, loaded with unit stride;
//   A sliver (MR = 12 rows): for each pair step p, each row's pair (A[i][2p], A[i][2p+1]) as one
//     32-bit word, broadcast to all 16 lanes.
// An odd k is padded with a zero partner. The microkernel keeps a 12 x 32 float tile of C in 24
// zmm accumulators (+ 2 for B, 1 broadcast = 27 of 32 registers) and issues 24 vdpbf16ps per
// pair step: 2 x 12 x 32 x 2 = 1536 FLOPs for 2 loads of B and 12 broadcasts.
// Around it the loop nest of kernels/ops/matmul/optimized.cpp, simplified: k in blocks of KC pairs,
// B packed once per (k block, NC columns), A packed per MC rows by the thread that owns those rows.
// Rows of C are cut among threads (parallel.h), whole MR tiles each; every element of C is summed
// by the same code in the same order whatever the thread count, so results are bit-identical at 1
// and 2 threads. A batch of A's over one shared B (a Linear layer on [B, T, C]) is one taller
// product.
//
// Portability: the instruction exists on Cooper Lake / Sapphire Rapids and later Xeons and on
// Zen 4; CI may lack it. The microkernel using it is compiled for that target alone
// (__attribute__((target))) and chosen at run time with __builtin_cpu_supports("avx512bf16");
// everywhere else "optimized" runs the same packing with a portable float32 microkernel, which
// is also registered on its own as "blocked" so that both paths are validated on a machine that
// has the instruction.
//
// Cost: 2 m n k FLOPs per batch; bytes = 2 (A + B) + 4 C; packing k n + m k copies per k block.
// On the Intel Xeon measured, vdpbf16ps issues at half an FMA's rate (a register-tile
// microbenchmark), so the kernel runs near its instruction's ceiling and still below float32
// matmul, and blocked below it; AMX is this CPU's bf16 engine (amx.cpp). `prism lab matmul_bf16`
// prints the figures (measured: docs/PERFORMANCE.md, "bf16 mixed precision").
#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/matmul_bf16/pack.h"
#include "kernels/ops/matmul_bf16/args.h"

namespace prism::kernels::cpu {
namespace {

constexpr int kMR = 12;        // rows of the C tile
constexpr int kNR = 32;        // columns of the C tile: two registers of 16 float lanes
constexpr int64_t kKCP = 256;  // pair steps per k block (512 values of k)
constexpr int64_t kMC = 96;    // rows of A packed at once (8 tiles)
constexpr int64_t kNC = 2048;  // columns of B packed at once

using Microkernel = void (*)(int64_t kcp, const uint32_t* ap, const uint16_t* bp, float* tile);

// tile[r * kNR + w] = sum over the block's pairs of A[r] . B[w] (the tile is overwritten).
__attribute__((target("avx512f,avx512bf16"))) void micro_dpbf16(int64_t kcp, const uint32_t* ap,
                                                                const uint16_t* bp, float* tile) {
  __m512 acc[kMR][2];
  for (int r = 0; r < kMR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kcp; ++p) {
    const __m512i b0 = _mm512_loadu_si512(bp + p * 2 * kNR);
    const __m512i b1 = _mm512_loadu_si512(bp + p * 2 * kNR + kNR);
    const uint32_t* a = ap + p * kMR;
#pragma GCC unroll 12
    for (int r = 0; r < kMR; ++r) {
      const __m512i ar = _mm512_set1_epi32(static_cast<int>(a[r]));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], (__m512bh)ar, (__m512bh)b0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], (__m512bh)ar, (__m512bh)b1);
    }
  }
  for (int r = 0; r < kMR; ++r) {
    _mm512_storeu_ps(tile + r * kNR, acc[r][0]);
    _mm512_storeu_ps(tile + r * kNR + 16, acc[r][1]);
  }
}

float widen(uint16_t bits) {
  return to_float(BFloat16{bits});
}

// The same sums with plain float32 arithmetic: each pair's two exact products added in turn.
void micro_portable(int64_t kcp, const uint32_t* ap, const uint16_t* bp, float* tile) {
  float acc[kMR][kNR] = {};
  float b0[kNR], b1[kNR];
  for (int64_t p = 0; p < kcp; ++p) {
    for (int w = 0; w < kNR; ++w) {
      b0[w] = widen(bp[p * 2 * kNR + 2 * w]);
      b1[w] = widen(bp[p * 2 * kNR + 2 * w + 1]);
    }
    for (int r = 0; r < kMR; ++r) {
      const uint32_t pair = ap[p * kMR + r];
      const float a0 = widen(static_cast<uint16_t>(pair & 0xFFFFu));
      const float a1 = widen(static_cast<uint16_t>(pair >> 16));
      for (int w = 0; w < kNR; ++w) acc[r][w] += a0 * b0[w] + a1 * b1[w];
    }
  }
  std::memcpy(tile, acc, sizeof acc);
}

// A[i0 : i0 + mc, k0 : k0 + 2 kcp] into slivers of kMR rows: sliver s, pair p, row r at
// dst[(s kcp + p) kMR + r], the pair's first element in the low half; outside A is zero.
void pack_a(const MatmulBf16Args<float>& g, const BFloat16* A, int64_t i0, int64_t mc, int64_t k0,
            int64_t kcp, uint32_t* dst) {
  const int64_t slivers = (mc + kMR - 1) / kMR;
  for (int64_t s = 0; s < slivers; ++s) {
    for (int r = 0; r < kMR; ++r) {
      const int64_t i = i0 + s * kMR + r;
      const bool row = i < i0 + mc;
      for (int64_t p = 0; p < kcp; ++p) {
        const int64_t k_lo = k0 + 2 * p, k_hi = k_lo + 1;
        const uint32_t lo = row && k_lo < g.k ? A[i * g.a_rs + k_lo * g.a_cs].bits : 0;
        const uint32_t hi = row && k_hi < g.k ? A[i * g.a_rs + k_hi * g.a_cs].bits : 0;
        dst[(s * kcp + p) * kMR + r] = lo | (hi << 16);
      }
    }
  }
}

// One product (batch entry) with the given microkernel.
void gemm(const MatmulBf16Args<float>& g, const BFloat16* A, const BFloat16* B, float* C,
          Microkernel micro, bool threads) {
  const int64_t pairs = (g.k + 1) / 2;
  const int max_threads =
      threads ? threads_for_macs(g.m * g.n * g.k, kParallelGemmMacs, kGemmMacsPerThread) : 1;
  // Rows per chunk: whole tiles, at most kMC, and enough chunks for every thread.
  const int64_t share = (g.m + max_threads - 1) / max_threads;
  const int64_t rows = std::min(kMC, std::max<int64_t>(kMR, (share + kMR - 1) / kMR * kMR));
  thread_local std::vector<uint16_t> bpack;
  for (int64_t j0 = 0; j0 < g.n; j0 += kNC) {
    const int64_t nc = std::min(kNC, g.n - j0);
    for (int64_t q0 = 0; q0 < pairs; q0 += kKCP) {
      const int64_t kcp = std::min(kKCP, pairs - q0);
      const bool first = q0 == 0;
      const int64_t slivers = (nc + kNR - 1) / kNR;
      bpack.resize(static_cast<size_t>(slivers * kcp * 2 * kNR));
      pack_b_pairs(g, B, 2 * q0, kcp, j0, nc, kNR, bpack.data());
      const uint16_t* bp = bpack.data();
      parallel_chunks(
          g.m, rows,
          [&](int64_t, int64_t i0, int64_t i1) {
            thread_local std::vector<uint32_t> apack;
            const int64_t mc = i1 - i0;
            apack.resize(static_cast<size_t>((mc + kMR - 1) / kMR * kMR * kcp));
            pack_a(g, A, i0, mc, 2 * q0, kcp, apack.data());
            alignas(64) float tile[kMR * kNR];
            for (int64_t s = 0; s < slivers; ++s) {
              const int64_t jt = j0 + s * kNR, nw = std::min<int64_t>(kNR, j0 + nc - jt);
              for (int64_t t = 0; t * kMR < mc; ++t) {
                micro(kcp, apack.data() + t * kMR * kcp, bp + s * kcp * 2 * kNR, tile);
                const int64_t it = i0 + t * kMR, nr = std::min<int64_t>(kMR, i1 - it);
                for (int64_t r = 0; r < nr; ++r) {
                  float* c = C + (it + r) * g.n + jt;
                  const float* src = tile + r * kNR;
                  if (first) {
                    std::memcpy(c, src, static_cast<size_t>(nw) * sizeof(float));
                  } else {
                    for (int64_t w = 0; w < nw; ++w) c[w] += src[w];
                  }
                }
              }
            }
          },
          max_threads);
    }
  }
}

void run(const MatmulBf16Args<float>& a0, Microkernel micro) {
  MatmulBf16Args<float> a = a0;
  // Many A's over one B whose rows follow each other: one product of batch m rows.
  if (a.batch > 1 && a.b_bs == 0 && a.a_bs == a.m * a.a_rs) {
    a.m *= a.batch;
    a.batch = 1;
  }
  auto one = [&](int64_t b, bool threads) {
    gemm(a, a.a + b * a.a_bs, a.b + b * a.b_bs, a.c + b * a.m * a.n, micro, threads);
  };
  // Many small products (a convolution's images: [O, K] @ [K, Ho Wo] each): one thread per
  // group of whole products, each serial, instead of a fork and join inside every product.
  if (a.batch > 1 && a.m * a.n * a.k < kParallelGemmMacs * 8) {
    const int64_t per =
        std::max<int64_t>(1, kParallelGemmMacs / std::max<int64_t>(1, a.m * a.n * a.k));
    parallel_chunks(a.batch, per, [&](int64_t, int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) one(b, false);
    });
    return;
  }
  for (int64_t b = 0; b < a.batch; ++b) one(b, true);
}

bool has_avx512_bf16() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool yes = __builtin_cpu_supports("avx512bf16");
  return yes;
#else
  return false;
#endif
}

void matmul_bf16_blocked(const MatmulBf16Args<float>& a) {
  run(a, &micro_portable);
}
void matmul_bf16_optimized(const MatmulBf16Args<float>& a) {
  run(a, has_avx512_bf16() ? &micro_dpbf16 : &micro_portable);
}

}  // namespace

// For the amx variant on machines without AMX (kernels/ops/matmul_bf16/amx.cpp).
void matmul_bf16_optimized_entry(const MatmulBf16Args<float>& a) {
  matmul_bf16_optimized(a);
}

void register_matmul_bf16_optimized(Registry& r) {
  auto& op = r.op("matmul_bf16", Device::cpu);
  op.add<MatmulBf16Args>("blocked", VariantTag::optimized,
                         "packed pair-interleaved panels, portable float32 microkernel",
                         &matmul_bf16_blocked);
  op.add<MatmulBf16Args>("optimized", VariantTag::optimized,
                         "packed panels, AVX512-BF16 vdpbf16ps 12x32 microkernel, threads over "
                         "rows (portable microkernel where the CPU lacks it)",
                         &matmul_bf16_optimized);
}
PRISM_CPU_KERNELS(101, register_matmul_bf16_optimized);

}  // namespace prism::kernels::cpu
