// matmul_int8, optimized and portable variants: packed operands, blocked loops, threads.
//
// Idea (optimized, AVX512-VNNI): `vpdpbusd` multiplies 64 unsigned bytes by 64 signed bytes and
// adds each group of four products into one of 16 int32 lanes: 64 MACs per instruction, four
// times the float32 FMA's 16. Its first operand must be UNSIGNED, so the activations are
// shifted into uint8 on packing: a_u = a + 128 (in [1, 255], as our symmetric a is in
// [-127, 127]). Then
//   sum_p a_u[p] w[p] = sum_p a[p] w[p] + 128 * sum_p w[p]
// and the exact int8 product is recovered by subtracting 128 * colsum[j], the column sum of the
// weights, computed once per call while packing them. No product overflows (255 * 128 < 2^15,
// four of them < 2^17) and the int32 accumulator is exact, so this variant equals the naive one
// bit for bit (the requantization is shared: kernels/ops/matmul_int8/epilogue.h).
// Packing: w into blocks of 32 output channels laid out [k/4][32][4] (four consecutive k of one
// channel form the int32 lane `vpdpbusd` reads), k padded to a multiple of 4 with zeros; a into
// contiguous rows of kp bytes. The micro-kernel keeps 4 rows x 32 channels in 8 zmm
// accumulators: per 4 k it loads 2 weight vectors, broadcasts 4 activation words and issues 8
// `vpdpbusd` (512 MACs).
// Fewer than 16 rows with contiguous weight rows: no packing at all (rows_vnni below).
// Portable (and the optimized variant where the CPU lacks AVX512-VNNI, checked at run time
// with __builtin_cpu_supports): w packed as contiguous rows, a contiguous, and a plain int32
// dot product that compilers vectorize (pmaddwd on SSE2/AVX2).
// Cost: m n k MACs; bytes = a + w (1 each) + out (4) + scales and bias (4 each). The packing
// reads a and w once more (m k + n k bytes), small next to the m n k MACs past batch 1.
// Speed, 1 thread (`prism lab matmul_int8`; measured: docs/PERFORMANCE.md, "int8 post-training
// quantization"): faster than the packed fp32 matmul from a batch of 64 up, slower at batch 1
// (a GEMV: both read the weights once) and at the cnn's conv1 (k = 9, n = 16: most lanes idle);
// portable is no slower than naive.
#include <immintrin.h>

#include <cstring>
#include <vector>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/matmul_int8/epilogue.h"
#include "kernels/ops/matmul_int8/args.h"

namespace prism::kernels::cpu {
namespace {

constexpr int64_t kRows = 4;         // rows of a per micro-kernel call
constexpr int64_t kCols = 32;        // output channels per packed weight block (two zmm)
constexpr int64_t kGrain = 1 << 18;  // MACs per parallel chunk (about 5 us), as conv's chunks

int64_t round_up(int64_t x, int64_t to) {
  return (x + to - 1) / to * to;
}

// Copies a strided int8 matrix [rows, cols] into rows of dst_rs bytes, adding `shift` (0, or
// 128 for vpdpbusd's unsigned operand). Everything by value on purpose: a store through a byte
// pointer may alias anything, so a struct field read in the loop would be reloaded from memory
// at every element (measured: an order of magnitude slower packing; docs/PERFORMANCE.md, "int8
// post-training quantization").
void pack_rows(const int8_t* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int32_t shift,
               uint8_t* dst, int64_t dst_rs) {
  for (int64_t i = 0; i < rows; ++i) {
    const int8_t* s = src + i * rs;
    uint8_t* d = dst + i * dst_rs;
    if (cs == 1) {
      for (int64_t p = 0; p < cols; ++p) d[p] = static_cast<uint8_t>(s[p] + shift);
    } else {
      for (int64_t p = 0; p < cols; ++p) d[p] = static_cast<uint8_t>(s[p * cs] + shift);
    }
  }
}

// ---- AVX512-VNNI path ---------------------------------------------------------------------
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void micro_vnni(const uint8_t* a, int64_t kp,
                                                                       const int8_t* wblock,
                                                                       int32_t (*acc)[kCols]) {
  __m512i c[kRows][2];
  for (auto& r : c) r[0] = r[1] = _mm512_setzero_si512();
  for (int64_t p = 0; p < kp; p += 4) {
    const __m512i w0 = _mm512_loadu_si512(wblock + p * kCols);
    const __m512i w1 = _mm512_loadu_si512(wblock + p * kCols + 64);
    for (int64_t r = 0; r < kRows; ++r) {
      int32_t word;
      std::memcpy(&word, a + r * kp + p, 4);  // a_u[p .. p+3] of row r
      const __m512i av = _mm512_set1_epi32(word);
      c[r][0] = _mm512_dpbusd_epi32(c[r][0], av, w0);
      c[r][1] = _mm512_dpbusd_epi32(c[r][1], av, w1);
    }
  }
  for (int64_t r = 0; r < kRows; ++r) {
    _mm512_storeu_si512(acc[r], c[r][0]);
    _mm512_storeu_si512(acc[r] + 16, c[r][1]);
  }
}

// Few rows (batch 1 to 15: a GEMV-like call): packing w would cost more than the product, so
// each output is a dot product of a's shifted row with w's row read in place (64 bytes per
// vpdpbusd, the tail by a masked load), and the column sum of the correction comes from a
// second vpdpbusd of the same w bytes against all-ones.
constexpr int64_t kFewRows = 16;

__attribute__((target("avx512f,avx512bw,avx512vnni"))) void rows_vnni(
    const MatmulInt8Args<float>& a, const uint8_t* arow, int64_t i, int64_t j0, int64_t j1,
    int32_t* acc) {
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t j = j0; j < j1; ++j) {
    const int8_t* w = a.w + j * a.w_rs;
    __m512i dot = _mm512_setzero_si512(), sum = _mm512_setzero_si512();
    int64_t p = 0;
    for (; p + 64 <= a.k; p += 64) {
      const __m512i wv = _mm512_loadu_si512(w + p);
      dot = _mm512_dpbusd_epi32(dot, _mm512_loadu_si512(arow + p), wv);
      sum = _mm512_dpbusd_epi32(sum, ones, wv);
    }
    if (p < a.k) {
      const __mmask64 tail = _cvtu64_mask64(~0ull >> (64 - (a.k - p)));
      const __m512i wv = _mm512_maskz_loadu_epi8(tail, w + p);
      dot = _mm512_dpbusd_epi32(dot, _mm512_maskz_loadu_epi8(tail, arow + p), wv);
      sum = _mm512_dpbusd_epi32(sum, ones, wv);
    }
    // sum over lanes of dot - 128 sum. Not _mm512_reduce_add_epi32 or a vector shift: GCC 12
    // warns (falsely) of an uninitialised value inside them (_mm512_undefined_epi32).
    alignas(64) int32_t dots[16], sums[16];
    _mm512_store_si512(dots, dot);
    _mm512_store_si512(sums, sum);
    int32_t total = 0;
    for (int l = 0; l < 16; ++l) total += dots[l] - 128 * sums[l];
    acc[j - j0] = total;
  }
  requantize_row(a, i, j0, j1, acc);
}

void matmul_int8_vnni_few_rows(const MatmulInt8Args<float>& a) {
  std::vector<uint8_t> ap(static_cast<size_t>(a.m * a.k));
  pack_rows(a.a, a.m, a.k, a.a_rs, a.a_cs, 128, ap.data(), a.k);
  const int64_t per_chunk = std::max<int64_t>(kCols, kGrain / a.k);
  parallel_for(a.n, per_chunk, [&](int64_t j0, int64_t j1) {
    std::vector<int32_t> acc(static_cast<size_t>(j1 - j0));
    for (int64_t i = 0; i < a.m; ++i) rows_vnni(a, ap.data() + i * a.k, i, j0, j1, acc.data());
  });
}

void matmul_int8_vnni(const MatmulInt8Args<float>& a) {
  if (a.m < kFewRows && a.w_cs == 1) {
    matmul_int8_vnni_few_rows(a);
    return;
  }
  const int64_t kp = round_up(a.k, 4);
  const int64_t mp = round_up(a.m, kRows);
  const int64_t blocks = (a.n + kCols - 1) / kCols;
  // Weights: [block][k/4][32][4], zero padded; their column sums for the +128 correction.
  std::vector<int8_t> wp(static_cast<size_t>(blocks * kCols * kp), 0);
  std::vector<int32_t> colsum(static_cast<size_t>(blocks * kCols), 0);
  const int8_t* w = a.w;  // locals: see pack_rows
  const int64_t n = a.n, k = a.k, w_rs = a.w_rs, w_cs = a.w_cs;
  for (int64_t j = 0; j < n; ++j) {
    int8_t* dst = wp.data() + (j / kCols) * kCols * kp + (j % kCols) * 4;
    const int8_t* src = w + j * w_rs;
    int32_t s = 0;
    int64_t p = 0;
    if (w_cs == 1) {  // whole 4-byte words of a contiguous row, one store each
      for (; p + 4 <= k; p += 4) {
        std::memcpy(dst + p * kCols, src + p, 4);
        s += src[p] + src[p + 1] + src[p + 2] + src[p + 3];
      }
    }
    for (; p < k; ++p) {
      const int8_t v = src[p * w_cs];
      dst[(p / 4) * kCols * 4 + p % 4] = v;
      s += v;
    }
    colsum[static_cast<size_t>(j)] = s;
  }
  // Activations: rows of kp unsigned bytes, a + 128; padding rows and columns hold 0 (they
  // meet zero weights or are never written out).
  std::vector<uint8_t> ap(static_cast<size_t>(mp * kp), 0);
  pack_rows(a.a, a.m, a.k, a.a_rs, a.a_cs, 128, ap.data(), kp);
  const int64_t row_blocks = mp / kRows, tasks = row_blocks * blocks;
  const int64_t per_chunk = std::max<int64_t>(1, kGrain / (kRows * kCols * kp));
  parallel_for(tasks, per_chunk, [&](int64_t t0, int64_t t1) {
    alignas(64) int32_t acc[kRows][kCols];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t ib = t / blocks, jb = t % blocks;
      micro_vnni(ap.data() + ib * kRows * kp, kp, wp.data() + jb * kCols * kp, acc);
      const int64_t j0 = jb * kCols, j1 = std::min(a.n, j0 + kCols);
      for (int64_t r = 0; r < kRows && ib * kRows + r < a.m; ++r) {
        for (int64_t j = j0; j < j1; ++j) acc[r][j - j0] -= 128 * colsum[static_cast<size_t>(j)];
        requantize_row(a, ib * kRows + r, j0, j1, acc[r]);
      }
    }
  });
}

// ---- portable path ------------------------------------------------------------------------
void matmul_int8_portable(const MatmulInt8Args<float>& a) {
  std::vector<int8_t> wp(static_cast<size_t>(a.n * a.k)), ap(static_cast<size_t>(a.m * a.k));
  pack_rows(a.w, a.n, a.k, a.w_rs, a.w_cs, 0, reinterpret_cast<uint8_t*>(wp.data()), a.k);
  pack_rows(a.a, a.m, a.k, a.a_rs, a.a_cs, 0, reinterpret_cast<uint8_t*>(ap.data()), a.k);
  const int64_t per_chunk = std::max<int64_t>(1, kGrain / (a.n * a.k));
  parallel_for(a.m, per_chunk, [&](int64_t i0, int64_t i1) {
    std::vector<int32_t> acc(static_cast<size_t>(a.n));
    for (int64_t i = i0; i < i1; ++i) {
      const int8_t* x = ap.data() + i * a.k;
      const int64_t n = a.n, k = a.k;
      int64_t j = 0;
      // Four output channels at a time: each widened x[p] serves four products.
      for (; j + 4 <= n; j += 4) {
        const int8_t* w0 = wp.data() + j * k;
        const int8_t *w1 = w0 + k, *w2 = w1 + k, *w3 = w2 + k;
        int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (int64_t p = 0; p < k; ++p) {
          const int32_t xv = x[p];
          s0 += xv * w0[p];
          s1 += xv * w1[p];
          s2 += xv * w2[p];
          s3 += xv * w3[p];
        }
        acc[static_cast<size_t>(j)] = s0, acc[static_cast<size_t>(j + 1)] = s1;
        acc[static_cast<size_t>(j + 2)] = s2, acc[static_cast<size_t>(j + 3)] = s3;
      }
      for (; j < n; ++j) {
        const int8_t* w = wp.data() + j * k;
        int32_t s = 0;
        for (int64_t p = 0; p < k; ++p) s += static_cast<int32_t>(x[p]) * w[p];
        acc[static_cast<size_t>(j)] = s;
      }
      requantize_row(a, i, 0, a.n, acc.data());
    }
  });
}

bool cpu_has_vnni() {
  static const bool has = __builtin_cpu_supports("avx512vnni") &&
                          __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512f");
  return has;
}

void matmul_int8_optimized(const MatmulInt8Args<float>& a) {
  if (cpu_has_vnni())
    matmul_int8_vnni(a);
  else
    matmul_int8_portable(a);
}

}  // namespace

void register_matmul_int8_optimized(Registry& r) {
  auto& op = r.op("matmul_int8", Device::cpu);
  op.add<MatmulInt8Args>("portable", VariantTag::optimized,
                         "packed contiguous rows, int32 dot products the compiler vectorizes",
                         &matmul_int8_portable);
  op.add<MatmulInt8Args>("optimized", VariantTag::optimized,
                         "AVX512-VNNI vpdpbusd on u8 (a + 128) x s8 with a column-sum "
                         "correction, 4x32 register blocks; portable path without VNNI",
                         &matmul_int8_optimized);
}
PRISM_CPU_KERNELS(103, register_matmul_int8_optimized);

}  // namespace prism::kernels::cpu
