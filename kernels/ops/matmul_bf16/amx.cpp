// matmul_bf16, amx variant: C (float32) = A @ B on Intel AMX tiles (tdpbf16ps).
//
// Idea. AMX adds eight tile registers of up to 16 rows x 64 bytes and a unit that multiplies
// whole tiles: tdpbf16ps C += A B takes A as 16 rows x 32 bf16, B as 16 rows of 16 column
// pairs (the same pair-interleaved layout vdpbf16ps wants: row p holds (B[2p][j], B[2p+1][j])
// for 16 columns j) and C as 16 x 16 float32: 16 x 16 x 32 = 8192 multiply-adds in one
// instruction, with products exact and sums in float32, as in the other variants. The
// microkernel keeps a 32 x 32 block of C in four tiles (tmm0-3), loads two A tiles (tmm4-5: rows
// 0-15 and 16-31) and two B tiles (tmm6-7: columns 0-15 and 16-31) per 32 values of k, and
// issues four tdpbf16ps: 2 x 32 x 32 x 32 = 65536 FLOPs for 4 tile loads.
// Packing: B as for the optimized variant (kernels/ops/matmul_bf16/optimized.cpp: 32 columns'
// pairs side by side, 128 bytes a pair row, so the two B tiles are the two 64-byte halves of
// each row, loaded with stride 128); A as 32-row slivers, each 32 k values a tile of 32 rows x 64
// bytes. k is padded with zeros to a multiple of 32, m and n to multiples of 32. The loop nest,
// threading and batching are the optimized variant's.
//
// Portability: AMX exists on Sapphire Rapids and later Xeons only, and Linux hands a process
// the tile state only after it asks (arch_prctl ARCH_REQ_XCOMP_PERM). Both are checked once at
// run time; where either fails this variant runs the optimized variant's path (vdpbf16ps or
// portable), so it is correct everywhere and the tests check it on any machine. The intrinsics
// sit in functions compiled for the AMX target alone.
//
// Cost: 2 m n k FLOPs per batch; bytes = 2 (A + B) + 4 C; packing k n + m k copies per block.
// The fastest bf16 variant where AMX exists, faster than float32 matmul at every size measured
// (`prism lab matmul_bf16`; docs/PERFORMANCE.md, "bf16 mixed precision"); less so at 2048,
// where the packed B panel (2 MiB) leaves L2.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/matmul_bf16/pack.h"
#include "kernels/ops/matmul_bf16/args.h"

namespace prism::kernels::cpu {

// The optimized variant, for machines without AMX (kernels/ops/matmul_bf16/optimized.cpp).
void matmul_bf16_optimized_entry(const MatmulBf16Args<float>& a);

namespace {

constexpr int kT = 32;         // rows and columns of the C block; k step
constexpr int64_t kKCP = 256;  // pairs per k block (multiple of 16)
constexpr int64_t kMC = 128;   // rows of A packed at once (4 slivers)
constexpr int64_t kNC = 2048;  // columns of B packed at once

// Whether AMX runs here, and if not, why: what the lab and `prism ops` say of this variant.
enum class Amx { usable, no_cpu_support, os_refused };

#if defined(__x86_64__)
Amx amx_status() {
  static const Amx status = [] {
    // CPUID leaf 7: EDX bit 22 is AMX-BF16, bit 24 AMX-TILE (read directly: older compilers'
    // __builtin_cpu_supports does not know the AMX names).
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return Amx::no_cpu_support;
    if (!(edx & (1u << 22)) || !(edx & (1u << 24))) return Amx::no_cpu_support;
    // Linux hands out the 8 KB of tile state only on request (arch_prctl).
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0 ? Amx::usable
                                                                           : Amx::os_refused;
  }();
  return status;
}

// The tile shapes: tmm0-3 C (16 rows x 64 bytes), tmm4-5 A, tmm6-7 B, all 16 x 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

__attribute__((target("amx-tile"))) void load_tile_config() {
  TileConfig cfg;
  for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  _tile_loadconfig(&cfg);
}

__attribute__((target("amx-tile"))) void release_tiles() {
  _tile_release();
}

// tile[32 x 32] = A sliver (nq k32 steps) @ B sliver; ap: nq x [32 rows x 32 bf16],
// bp: pair rows of 128 bytes (32 columns' pairs), 16 per k32 step.
__attribute__((target("amx-tile,amx-bf16"))) void micro_amx(int64_t nq, const uint16_t* ap,
                                                            const uint16_t* bp, float* tile) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t q = 0; q < nq; ++q) {
    const uint16_t* a = ap + q * kT * kT;
    const uint16_t* b = bp + q * 16 * 2 * kT;
    _tile_loadd(4, a, 64);
    _tile_loadd(5, a + 16 * kT, 64);
    _tile_loadd(6, b, 128);
    _tile_loadd(7, b + 32, 128);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, tile, 128);
  _tile_stored(1, tile + 16, 128);
  _tile_stored(2, tile + 16 * kT, 128);
  _tile_stored(3, tile + 16 * kT + 16, 128);
}
#else
Amx amx_status() {
  return Amx::no_cpu_support;
}
void load_tile_config() {}
void release_tiles() {}
void micro_amx(int64_t, const uint16_t*, const uint16_t*, float*) {}
#endif

// A[i0 : i0 + mc, k0 : k0 + 32 nq] into slivers of 32 rows, each k32 step a 32 x 32 tile pair:
// sliver s, step q, row r, element e at dst[((s nq + q) 32 + r) 32 + e]; outside A is zero.
void pack_a(const MatmulBf16Args<float>& g, const BFloat16* A, int64_t i0, int64_t mc, int64_t k0,
            int64_t nq, uint16_t* dst) {
  const int64_t slivers = (mc + kT - 1) / kT;
  for (int64_t s = 0; s < slivers; ++s) {
    for (int r = 0; r < kT; ++r) {
      const int64_t i = i0 + s * kT + r;
      const bool row = i < i0 + mc;
      for (int64_t q = 0; q < nq; ++q) {
        uint16_t* d = dst + ((s * nq + q) * kT + r) * kT;
        for (int e = 0; e < kT; ++e) {
          const int64_t kk = k0 + q * kT + e;
          d[e] = row && kk < g.k ? A[i * g.a_rs + kk * g.a_cs].bits : 0;
        }
      }
    }
  }
}

void gemm(const MatmulBf16Args<float>& g, const BFloat16* A, const BFloat16* B, float* C,
          bool threads) {
  const int64_t pairs = (g.k + 1) / 2;
  const int max_threads =
      threads ? threads_for_macs(g.m * g.n * g.k, kParallelGemmMacs, kGemmMacsPerThread) : 1;
  const int64_t share = (g.m + max_threads - 1) / max_threads;
  const int64_t rows = std::min(kMC, std::max<int64_t>(kT, (share + kT - 1) / kT * kT));
  thread_local std::vector<uint16_t> bpack;
  for (int64_t j0 = 0; j0 < g.n; j0 += kNC) {
    const int64_t nc = std::min(kNC, g.n - j0);
    const int64_t slivers = (nc + kT - 1) / kT;
    for (int64_t q0 = 0; q0 < pairs; q0 += kKCP) {
      const int64_t nq = (std::min(kKCP, pairs - q0) + 15) / 16;  // k32 steps, zero-padded
      const int64_t kcp = nq * 16;
      const bool first = q0 == 0;
      bpack.resize(static_cast<size_t>(slivers * kcp * 2 * kT));
      pack_b_pairs(g, B, 2 * q0, kcp, j0, nc, kT, bpack.data());
      const uint16_t* bp = bpack.data();
      parallel_chunks(
          g.m, rows,
          [&](int64_t, int64_t i0, int64_t i1) {
            thread_local std::vector<uint16_t> apack;
            const int64_t mc = i1 - i0;
            apack.resize(static_cast<size_t>((mc + kT - 1) / kT * nq * kT * kT));
            pack_a(g, A, i0, mc, 2 * q0, nq, apack.data());
            alignas(64) float tile[kT * kT];
            load_tile_config();  // per thread: the tile configuration is thread state
            for (int64_t s = 0; s < slivers; ++s) {
              const int64_t jt = j0 + s * kT, nw = std::min<int64_t>(kT, j0 + nc - jt);
              for (int64_t t = 0; t * kT < mc; ++t) {
                micro_amx(nq, apack.data() + t * nq * kT * kT, bp + s * kcp * 2 * kT, tile);
                const int64_t it = i0 + t * kT, nr = std::min<int64_t>(kT, i1 - it);
                for (int64_t r = 0; r < nr; ++r) {
                  float* c = C + (it + r) * g.n + jt;
                  const float* src = tile + r * kT;
                  if (first) {
                    std::memcpy(c, src, static_cast<size_t>(nw) * sizeof(float));
                  } else {
                    for (int64_t w = 0; w < nw; ++w) c[w] += src[w];
                  }
                }
              }
            }
            release_tiles();
          },
          max_threads);
    }
  }
}

bool amx_usable() {
  return amx_status() == Amx::usable;
}

// KernelEntry::runs_instead: "" where AMX runs, else what each call runs and why.
std::string amx_runs_instead() {
  switch (amx_status()) {
    case Amx::usable:
      return "";
    case Amx::no_cpu_support:
      return "this CPU has no AMX (CPUID: AMX-TILE and AMX-BF16 absent): each call runs "
             "'optimized'";
    case Amx::os_refused:
      return "the OS refused the AMX tile state (arch_prctl): each call runs 'optimized'";
  }
  return "";
}

void matmul_bf16_amx(const MatmulBf16Args<float>& a0) {
  if (!amx_usable()) return matmul_bf16_optimized_entry(a0);
  MatmulBf16Args<float> a = a0;
  if (a.batch > 1 && a.b_bs == 0 && a.a_bs == a.m * a.a_rs) {  // many A's over one B
    a.m *= a.batch;
    a.batch = 1;
  }
  auto one = [&](int64_t b, bool threads) {
    gemm(a, a.a + b * a.a_bs, a.b + b * a.b_bs, a.c + b * a.m * a.n, threads);
  };
  if (a.batch > 1 &&
      a.m * a.n * a.k < kParallelGemmMacs * 8) {  // small products: whole ones a thread
    const int64_t per =
        std::max<int64_t>(1, kParallelGemmMacs / std::max<int64_t>(1, a.m * a.n * a.k));
    parallel_chunks(a.batch, per, [&](int64_t, int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) one(b, false);
    });
    return;
  }
  for (int64_t b = 0; b < a.batch; ++b) one(b, true);
}

}  // namespace

void register_matmul_bf16_amx(Registry& r) {
  auto& op = r.op("matmul_bf16", Device::cpu);
  op.add<MatmulBf16Args>("amx", VariantTag::optimized,
                         "AMX tiles (tdpbf16ps), 32x32 blocks of C; the optimized variant where "
                         "the CPU or the OS offers no AMX",
                         &matmul_bf16_amx)
      .runs_instead = &amx_runs_instead;
}
PRISM_CPU_KERNELS(102, register_matmul_bf16_amx);

}  // namespace prism::kernels::cpu
