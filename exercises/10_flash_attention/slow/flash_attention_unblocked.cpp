// Exercise 10, correct but slow: the solution without its register tiles.
//
// The same tiles, online softmax, vectorised exp, row max and sum in 16 lanes as the solution,
// and both products in the i-k-j order, so their inner loops vectorise; but one query row at a
// time: each step of the score loop loads and stores the row's scores (and each step of the
// P V loop its accumulator), and each loaded key or value feeds one FMA instead of four. It
// beats naive severalfold and reaches about a third of flash's speed (README.md, Performance
// tiers): the step from tier 2 to tier 3 is exercise 04's register tile.
// checker-expects: performance: tier [012] of 3
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
constexpr int64_t kLanes = 16;                           // partial results of a row max or sum
constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// One thread's tiles, carved from its slice of the workspace (or of its own buffer).
struct Tiles {
  float *q, *kt, *v, *acc, *s, *m, *l;
  Tiles(float* w, int64_t d) {
    q = w, kt = q + kB * d, v = kt + d * kB, acc = v + kB * d;
    s = acc + kB * d, m = s + kB * kB, l = m + kB;
  }
};

// Row r of head (b, h) of a strided [batch, heads, rows, d] tensor.
inline const float* row_ptr(const float* p, const int64_t* st, int64_t b, int64_t h, int64_t r) {
  return p + b * st[0] + h * st[1] + r * st[2];
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
  const int64_t d = a.d, br = std::min(kB, a.lq - i0);
  const float scale = static_cast<float>(a.scale);
  for (int64_t i = 0; i < br; ++i) {
    const float* src = row_ptr(a.q, a.q_stride, b, h, i0 + i);
    for (int64_t c = 0; c < d; ++c) t.q[i * d + c] = scale * src[c * a.q_stride[3]];
  }
  std::fill(t.acc, t.acc + br * d, 0.0f);
  std::fill(t.m, t.m + br, kMinusInf);
  std::fill(t.l, t.l + br, 0.0f);
  const int64_t kend = a.causal ? std::min(a.lk, i0 + br) : a.lk;
  for (int64_t j0 = 0; j0 < kend; j0 += kB) {
    const int64_t bc = std::min(kB, kend - j0);
    // K^T tile [d x bc] and V tile [bc x d].
    for (int64_t j = 0; j < bc; ++j) {
      const float* kr = row_ptr(a.k, a.k_stride, b, h, j0 + j);
      const float* vr = row_ptr(a.v, a.v_stride, b, h, j0 + j);
      for (int64_t c = 0; c < d; ++c) t.kt[c * bc + j] = kr[c * a.k_stride[3]];
      for (int64_t c = 0; c < d; ++c) t.v[j * d + c] = vr[c * a.v_stride[3]];
    }
    for (int64_t i = 0; i < br; ++i) {
      const int64_t n = a.causal ? std::min(bc, i0 + i + 1 - j0) : bc;
      if (n <= 0) continue;  // the whole block is in this row's future
      float* s = t.s + i * kB;
      const float* qi = t.q + i * d;
      // s_j = q_i . k_j: one row of FMAs over the keys per c, vectorised, but s is loaded and
      // stored on every step of c (no register tile).
      std::fill(s, s + n, 0.0f);
      for (int64_t c = 0; c < d; ++c) {
        const float qc = qi[c];
        const float* ktc = t.kt + c * bc;
        for (int64_t j = 0; j < n; ++j) s[j] += qc * ktc[j];
      }
      const float m_new = row_max(s, n, t.m[i]);
      const float alpha = prism::kernels::cpu::fast_exp(t.m[i] - m_new);
      const float sum = exp_sum(s, n, m_new);
      t.l[i] = alpha * t.l[i] + sum;
      t.m[i] = m_new;
      // acc_i = alpha acc_i + sum_j p_j v_j, acc loaded and stored once per key.
      float* acc = t.acc + i * d;
      for (int64_t c = 0; c < d; ++c) acc[c] *= alpha;
      for (int64_t j = 0; j < n; ++j) {
        const float p = s[j];
        const float* vj = t.v + j * d;
        for (int64_t c = 0; c < d; ++c) acc[c] += p * vj[c];
      }
    }
  }
  const int64_t bh = b * a.heads + h;
  float* out = a.out + (bh * a.lq + i0) * d;
  float* lse = a.lse + bh * a.lq + i0;
  for (int64_t i = 0; i < br; ++i) {
    const float inv = 1.0f / t.l[i];
    for (int64_t c = 0; c < d; ++c) out[i * d + c] = t.acc[i * d + c] * inv;
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
