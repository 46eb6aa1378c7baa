// Exercise 10, solution: attention forward in tiles with the online softmax, never the L x L
// score matrix.
//
// For one head, with S = scale Q K^T (S_ij = -inf where causal and j > i):
//   out_i = sum_j exp(S_ij - lse_i) v_j,    lse_i = log sum_j exp(S_ij)
// Take a block of up to kB query rows and walk the keys in blocks of up to kB. Per row i keep
// the running max m_i, the running sum l_i = sum_{j seen} exp(S_ij - m_i) and the unnormalised
// output acc_i = sum_{j seen} exp(S_ij - m_i) v_j. A new key block with scores s_j:
//   m_new = max(m_i, max_j s_j),   alpha = exp(m_i - m_new)   (exp(-inf) = 0 on the first block)
//   l_i   = alpha l_i + sum_j exp(s_j - m_new)
//   acc_i = alpha acc_i + sum_j exp(s_j - m_new) v_j
// Every term then carries the same factor exp(-m_i); at the end out_i = acc_i / l_i and
// lse_i = m_i + log l_i. No exponent is positive, so nothing overflows.
//
// Memory, per thread: a q tile [kB x d] (scale folded in), a K^T tile [d x kB], a V tile and the
// accumulator [kB x dp] (dp: d rounded up to kW), the score tile [kB x kB] and m, l [kB]. That
// fits in attention_tiled_workspace(lq, d, 1) (kernels/args.h), which has room for two score
// tiles: 64 KB a tile at d = 64, all of them inside L2.
//
// Speed. The two tile products, S = Q K^T and acc += P V, are nearly all the FLOPs (4 d per
// query-key pair against about 5 for the softmax). Each is computed kR rows at a time on a
// strip of kW = 32 columns: kR x kW = 128 sums that stay in registers for the whole inner loop
// (16 of the 32 vector registers: GCC picks 256-bit vectors for this CPU, -march=native), so
// every value loaded from the K^T or V tile feeds kR FMAs, and the sums are loaded and stored
// once per strip instead of once per step. The strips are plain loops of
// fixed length over contiguous floats, which GCC turns into vector FMAs (the i-k-j order of
// exercise 03, blocked as in exercise 04). Padding: the K^T tile's columns and the V tile's and
// accumulator's columns are padded with zeros to a multiple of kW, so every strip is full.
// The row max and the row sum keep kLanes = 16 partial results (SIMD lanes) instead of one
// scalar chain, and exp is prism's branch-free polynomial (kernels/cpu/fast_exp.h), which
// vectorises where a call to expf does not. Blocks of (batch, head, query block) are spread
// over OpenMP threads, each with its own tiles.
// Measured (2-vCPU Intel Xeon VM, AVX-512, 1 thread, the checker's full run): 74.6 GFLOP/s at
// B = 1, H = 8, L = 1024, d = 64, the time of prism's flash variant (Eigen's GEMM on the tiles)
// and 0.11x naive's; README.md has every size.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/ops/attention/args.h"
#include "kernels/cpu/fast_exp.h"
#include "kernels/registry.h"

using prism::kernels::AttentionArgs;

namespace {

constexpr int64_t kB = prism::kernels::kAttentionBlock;  // query rows and keys per block: 128
constexpr int64_t kR = 4;                                // rows per register tile
constexpr int64_t kW = 32;                               // columns per register tile
constexpr int64_t kLanes = 16;                           // partial results of a row max or sum
constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

int64_t round_up(int64_t n, int64_t m) {
  return (n + m - 1) / m * m;
}

// One thread's tiles, carved from its slice of the workspace (or of its own buffer).
struct Tiles {
  float *q, *kt, *v, *acc, *s, *m, *l;
  Tiles(float* w, int64_t d) {
    const int64_t dp = round_up(d, kW);
    q = w, kt = q + kB * d, v = kt + d * kB, acc = v + kB * dp;
    s = acc + kB * dp, m = s + kB * kB, l = m + kB;
  }
};

// Row r of head (b, h) of a strided [batch, heads, rows, d] tensor.
inline const float* row_ptr(const float* p, const int64_t* st, int64_t b, int64_t h, int64_t r) {
  return p + b * st[0] + h * st[1] + r * st[2];
}

// s[r][j0 .. j0 + kW) = sum_c q[r][c] kt[c][j0 ..] for R rows: R x kW sums in registers.
template <int64_t R>
void score_strip(const float* q, int64_t d, const float* kt, float* s) {
  float sum[R][kW] = {};
  for (int64_t c = 0; c < d; ++c) {
    const float* k = kt + c * kB;
    for (int64_t r = 0; r < R; ++r) {
      const float qc = q[r * d + c];
      for (int64_t w = 0; w < kW; ++w) sum[r][w] += qc * k[w];
    }
  }
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t w = 0; w < kW; ++w) s[r * kB + w] = sum[r][w];
  }
}

// acc[r][c0 .. c0 + kW) += sum_{j < n} p[r][j] v[j][c0 ..] for R rows (acc already rescaled).
template <int64_t R>
void pv_strip(const float* p, int64_t n, const float* v, int64_t dp, float* acc) {
  float sum[R][kW];
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t w = 0; w < kW; ++w) sum[r][w] = acc[r * dp + w];
  }
  for (int64_t j = 0; j < n; ++j) {
    const float* vj = v + j * dp;
    for (int64_t r = 0; r < R; ++r) {
      const float pj = p[r * kB + j];
      for (int64_t w = 0; w < kW; ++w) sum[r][w] += pj * vj[w];
    }
  }
  for (int64_t r = 0; r < R; ++r) {
    for (int64_t w = 0; w < kW; ++w) acc[r * dp + w] = sum[r][w];
  }
}

// Both products for R rows starting at row i of the block.
template <int64_t R>
void scores_rows(const Tiles& t, int64_t i, int64_t d, int64_t bcp) {
  for (int64_t j = 0; j < bcp; j += kW) score_strip<R>(t.q + i * d, d, t.kt + j, t.s + i * kB + j);
}
template <int64_t R>
void pv_rows(const Tiles& t, int64_t i, int64_t bc, int64_t dp) {
  for (int64_t c = 0; c < dp; c += kW)
    pv_strip<R>(t.s + i * kB, bc, t.v + c, dp, t.acc + i * dp + c);
}

// Rows [0, br) in groups of kR, then the last 1 to 3 rows.
template <class F4, class F1>
void by_rows(int64_t br, F4 four, F1 one) {
  int64_t i = 0;
  for (; i + kR <= br; i += kR) four(i);
  for (; i < br; ++i) one(i);
}

// max(init, x_0 .. x_{n-1}) in kLanes independent lanes (a vector max), then across them.
float row_max(const float* x, int64_t n, float init) {
  float lane[kLanes];
  for (float& v : lane) v = init;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t u = 0; u < kLanes; ++u) lane[u] = x[j + u] > lane[u] ? x[j + u] : lane[u];
  }
  float m = init;
  for (; j < n; ++j) m = x[j] > m ? x[j] : m;
  for (float v : lane) m = v > m ? v : m;
  return m;
}

// x_j = exp(x_j - m) in place; returns their sum (kLanes partial sums).
float exp_sum(float* x, int64_t n, float m) {
  float lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t u = 0; u < kLanes; ++u) {
      x[j + u] = prism::kernels::cpu::fast_exp(x[j + u] - m);
      lane[u] += x[j + u];
    }
  }
  float sum = 0;
  for (; j < n; ++j) {
    x[j] = prism::kernels::cpu::fast_exp(x[j] - m);
    sum += x[j];
  }
  for (float v : lane) sum += v;
  return sum;
}

// Query rows [i0, i0 + br) of head (b, h).
void query_block(const AttentionArgs<float>& a, int64_t b, int64_t h, int64_t i0, Tiles& t) {
  const int64_t d = a.d, dp = round_up(d, kW), br = std::min(kB, a.lq - i0);
  const float scale = static_cast<float>(a.scale);
  // Q tile, scaled once here instead of once per score.
  for (int64_t i = 0; i < br; ++i) {
    const float* src = row_ptr(a.q, a.q_stride, b, h, i0 + i);
    for (int64_t c = 0; c < d; ++c) t.q[i * d + c] = scale * src[c * a.q_stride[3]];
  }
  std::fill(t.acc, t.acc + br * dp, 0.0f);
  std::fill(t.m, t.m + br, kMinusInf);
  std::fill(t.l, t.l + br, 0.0f);
  // Causal: row i sees keys 0..i, so no row of this block sees a key past i0 + br - 1.
  const int64_t kend = a.causal ? std::min(a.lk, i0 + br) : a.lk;
  for (int64_t j0 = 0; j0 < kend; j0 += kB) {
    const int64_t bc = std::min(kB, kend - j0), bcp = round_up(bc, kW);
    // K^T tile [d x kB] (column j is key j0 + j; columns bc..bcp zero) and V tile [bc x dp].
    for (int64_t j = 0; j < bc; ++j) {
      const float* kr = row_ptr(a.k, a.k_stride, b, h, j0 + j);
      const float* vr = row_ptr(a.v, a.v_stride, b, h, j0 + j);
      for (int64_t c = 0; c < d; ++c) t.kt[c * kB + j] = kr[c * a.k_stride[3]];
      for (int64_t c = 0; c < d; ++c) t.v[j * dp + c] = vr[c * a.v_stride[3]];
      for (int64_t c = d; c < dp; ++c) t.v[j * dp + c] = 0.0f;
    }
    for (int64_t c = 0; c < d; ++c) std::fill(t.kt + c * kB + bc, t.kt + c * kB + bcp, 0.0f);
    by_rows(
        br, [&](int64_t i) { scores_rows<kR>(t, i, d, bcp); },
        [&](int64_t i) { scores_rows<1>(t, i, d, bcp); });
    // The online softmax step, row by row; s becomes p (0 where masked), acc is rescaled.
    for (int64_t i = 0; i < br; ++i) {
      float* s = t.s + i * kB;
      // Keys this row sees: all, or under the causal mask those with j0 + j <= i0 + i.
      const int64_t n = a.causal ? std::clamp<int64_t>(i0 + i + 1 - j0, 0, bc) : bc;
      std::fill(s + n, s + bc, 0.0f);
      if (n == 0) continue;  // the whole block is in this row's future: alpha = 1, p = 0
      const float m_new = row_max(s, n, t.m[i]);
      const float alpha = prism::kernels::cpu::fast_exp(t.m[i] - m_new);  // 0 the first time
      t.l[i] = alpha * t.l[i] + exp_sum(s, n, m_new);
      t.m[i] = m_new;
      for (int64_t c = 0; c < dp; ++c) t.acc[i * dp + c] *= alpha;
    }
    by_rows(
        br, [&](int64_t i) { pv_rows<kR>(t, i, bc, dp); },
        [&](int64_t i) { pv_rows<1>(t, i, bc, dp); });
  }
  const int64_t bh = b * a.heads + h;
  float* out = a.out + (bh * a.lq + i0) * d;
  float* lse = a.lse + bh * a.lq + i0;
  for (int64_t i = 0; i < br; ++i) {
    const float inv = 1.0f / t.l[i];
    for (int64_t c = 0; c < d; ++c) out[i * d + c] = t.acc[i * dp + c] * inv;
    lse[i] = t.m[i] + std::log(t.l[i]);
  }
}

}  // namespace

void my_flash_attention(const AttentionArgs<float>& a) {
  const int64_t qblocks = (a.lq + kB - 1) / kB;
  const int64_t items = a.batch * a.heads * qblocks;
  const int threads = static_cast<int>(std::min<int64_t>(omp_get_max_threads(), items));
  // Each thread needs `per` floats of tiles. The front end sizes a learner's workspace for the
  // whole score matrix (B H lq lk floats): at large L it holds every thread's tiles, at small L
  // fewer or none. Threads whose slice does not fit get one from the heap, a few hundred KB each.
  const int64_t per = prism::kernels::attention_tiled_workspace(a.lq, a.d, 1);
  const int64_t in_workspace = std::min<int64_t>(threads, a.workspace_size / per);
  std::vector<float> own(static_cast<size_t>((threads - in_workspace) * per));
#pragma omp parallel num_threads(threads)
  {
    const int64_t tid = omp_get_thread_num();
    Tiles t(tid < in_workspace ? a.workspace + tid * per : own.data() + (tid - in_workspace) * per,
            a.d);
#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < items; ++item) {
      // Causal: the last query blocks see the most keys, so they are handed out first.
      const int64_t qb = a.causal ? qblocks - 1 - item % qblocks : item % qblocks;
      const int64_t bh = item / qblocks;
      query_block(a, bh / a.heads, bh % a.heads, qb * kB, t);
    }
  }
}

PRISM_REGISTER_KERNEL(attention, my_flash_attention);
