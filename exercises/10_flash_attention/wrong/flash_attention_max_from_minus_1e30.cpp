// Exercise 10, a typical mistake: the running max starts at -1e30 instead of -inf.
//
// The solution, with one constant changed. A "very negative number" for the running max's start
// is a common guard against exp(-inf - -inf) = NaN, and it looks safe: the first block's alpha
// is exp(-1e30 - m_new) = 0, as with -inf, for every score above -1e30, so scores of thousands,
// either sign, and rows whose scores are all below -1000 pass. But a score can be below -1e30
// (float32 reaches -3.4e38): on a row whose scores are all near -1e32, -1e30 stays the max,
// every exp(S_ij - m) underflows to 0, l = 0 and out = 0 / 0 = NaN. -inf is below every score;
// the first block's alpha = exp(-inf - m_new) = 0 needs no guard, since m_new is a real score.
// checker-expects: every score near -1e32 .scale 1e31. +FAIL +error inf
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
// The mistake: a large negative number for minus infinity (to keep -inf - -inf = NaN away).
constexpr float kMinusInf = -1e30f;

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
