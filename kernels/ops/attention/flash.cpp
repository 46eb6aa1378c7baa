// Scaled dot-product attention, flash variant: tiles and an online softmax, never the L x L
// matrix (Dao et al., FlashAttention-2, 2023, written for a CPU's caches instead of a GPU's
// shared memory).
//
// Forward. For one block of Br = 128 query rows (q-tile [Br x d]), walk the keys in blocks of
// Bc = 128 (kAttentionBlock) and keep, per row i, the running max m_i, the running sum l_i of
// exp(S_ij - m_i) and an unnormalised output row acc_i. With a new score tile S = scale Q K_j^T [Br
// x Bc]:
//   m_new = max(m_i, max_j S_ij)
//   alpha = exp(m_i - m_new)                 what the old terms shrink by under the new max
//   P_ij  = exp(S_ij - m_new)
//   l_i   = alpha l_i + sum_j P_ij
//   acc_i = alpha acc_i + sum_j P_ij v_j     (the tile product P V_j)
// and at the end o_i = acc_i / l_i, lse_i = m_i + log l_i. Every term ends up multiplied by
// exp(-m_final), exactly as in the three-pass softmax, so the result is the same up to
// rounding. Causal: key blocks entirely above the diagonal (j0 > last row) are skipped, and
// the one block that straddles it gets -inf above the diagonal.
// The score tile and the packed q, k, v tiles (32-64 KB each in float32 at d = 64) stay in L2;
// the two tile products are Eigen GEMMs on them. Work items are (batch, head, query block),
// spread over OpenMP threads; each thread has its own tiles in the workspace.
//
// Backward (FlashAttention-2's, per (batch, head) on one thread so that nothing needs an
// atomic add): D_i = dout_i . out_i first, then for each key block j (K_j, V_j packed once)
// and each query block i that sees it:
//   P   = exp(scale Q_i K_j^T - lse_i)   rebuilt from the saved lse, no max pass needed
//   dV_j += P^T dO_i;   dP = dO_i V_j^T;   dS = P * (dP - D_i)
//   dQ_i += scale dS K_j;   dK_j += scale dS^T Q_i
// dV_j and dK_j accumulate straight into this head's rows of dv and dk, dQ_i into dq; five
// tile products per tile pair, where the forward has two.
//
// Extra memory: attention_tiled_workspace() (kernels/args.h): per thread 4 Bc d + 2 Bc^2 +
// 2 Bc + lq elements, 267 KB at d = 64 and L = 1024 in float32, against the naive variant's
// 32 MB of scores for 8 heads.
// Cost: the same FLOPs as the naive variant (4 lq lk d + 5 lq lk forward; 10 lq lk d + 5 lq lk
// backward, per head; causal skips above-diagonal blocks, so it does about half).
// Measured, forward and backward, the fastest CPU variant: an order of magnitude ahead of the
// naive variant and ahead of the unfused matmul-softmax-matmul chain on Eigen's GEMM, by more
// as L grows (docs/PERFORMANCE.md, "Attention and linear+GELU (CPU)").
#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/fast_exp.h"
#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/attention/args.h"

namespace prism::kernels::cpu {
namespace {

constexpr int64_t kB = kAttentionBlock;

template <class T>
using Tile = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

// Rows [r0, r0 + n) of head (b, h) of a strided [batch, heads, rows, d] tensor, copied into a
// dense [n x d] tile and multiplied by `factor`.
template <class T>
void pack(const T* p, const int64_t* s, int64_t b, int64_t h, int64_t r0, int64_t n, int64_t d,
          T factor, T* tile) {
  const T* base = p + b * s[0] + h * s[1] + r0 * s[2];
  for (int64_t r = 0; r < n; ++r) {
    const T* row = base + r * s[2];
    T* dst = tile + r * d;
    if (s[3] == 1) {
      for (int64_t c = 0; c < d; ++c) dst[c] = factor * row[c];
    } else {
      for (int64_t c = 0; c < d; ++c) dst[c] = factor * row[c * s[3]];
    }
  }
}

// The workspace of one thread, carved from the kernel's workspace (layout of
// attention_tiled_workspace).
template <class T>
struct Tiles {
  T *q, *k, *v, *o, *s, *dp, *m, *l, *rows;
  Tiles(T* w, int64_t d) {
    q = w, k = q + kB * d, v = k + kB * d, o = v + kB * d;  // o: the forward's accumulator
    s = o + kB * d, dp = s + kB * kB, m = dp + kB * kB, l = m + kB, rows = l + kB;
  }
};

// How many threads a kernel may use: what OpenMP offers, capped by the work items (each counted
// as one chunk of the split rule, parallel.h: it is at least one) and by the per-thread tiles
// the workspace holds.
template <class Args>
int workers(const Args& a, int64_t items) {
  const int64_t per = attention_tiled_workspace(a.lq, a.d, 1);
  const int64_t fit = a.workspace_size / per;
  return threads_for(items, static_cast<int>(std::clamp<int64_t>(fit, 1, omp_get_max_threads())));
}

// Row reductions written as kLanes independent partial results, so the compiler can keep them
// in one SIMD register: a plain `m = max(m, x[j])` or `sum += x[j]` loop is a chain through one
// scalar that it may not reorder (float addition is not associative), and runs at one element
// per add latency.
constexpr int64_t kLanes = 16;

template <class T>
T row_max(const T* x, int64_t n, T init) {
  T lane[kLanes];
  for (T& l : lane) l = init;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = x[j + l] > lane[l] ? x[j + l] : lane[l];
  }
  T m = init;
  for (; j < n; ++j) m = x[j] > m ? x[j] : m;
  for (T l : lane) m = l > m ? l : m;
  return m;
}

// x_j = exp(x_j - m) in place; returns the sum of the new x_j.
template <class T>
T exp_shift_sum(T* x, int64_t n, T m) {
  T lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) {
      x[j + l] = kernel_exp(x[j + l] - m);
      lane[l] += x[j + l];
    }
  }
  T sum = 0;
  for (; j < n; ++j) {
    x[j] = kernel_exp(x[j] - m);
    sum += x[j];
  }
  for (T l : lane) sum += l;
  return sum;
}

// Sets S_ij = -inf above the causal diagonal: key j0 + jj is hidden from query i0 + i.
template <class T>
void mask_tile(T* s, int64_t br, int64_t bc, int64_t i0, int64_t j0) {
  for (int64_t i = 0; i < br; ++i) {
    for (int64_t jj = std::max<int64_t>(0, i0 + i + 1 - j0); jj < bc; ++jj)
      s[i * bc + jj] = -std::numeric_limits<T>::infinity();
  }
}

// One block of query rows [i0, i0 + br) of head (b, h): the online softmax over key blocks.
template <class T>
void forward_block(const AttentionArgs<T>& a, int64_t b, int64_t h, int64_t i0, Tiles<T>& t) {
  const int64_t d = a.d, br = std::min(kB, a.lq - i0);
  const int64_t bh = b * a.heads + h;
  pack(a.q, a.q_stride, b, h, i0, br, d, static_cast<T>(a.scale), t.q);  // scale folded in Q
  Tile<T> acc(t.o, br, d);
  acc.setZero();
  for (int64_t i = 0; i < br; ++i) {
    t.m[i] = -std::numeric_limits<T>::infinity();
    t.l[i] = 0;
  }
  const int64_t kend = a.causal ? std::min(a.lk, i0 + br) : a.lk;  // keys past it are all masked
  for (int64_t j0 = 0; j0 < kend; j0 += kB) {
    const int64_t bc = std::min(kB, kend - j0);
    pack(a.k, a.k_stride, b, h, j0, bc, d, T(1), t.k);
    pack(a.v, a.v_stride, b, h, j0, bc, d, T(1), t.v);
    Tile<T> s(t.s, br, bc);
    s.noalias() = Tile<T>(t.q, br, d) * Tile<T>(t.k, bc, d).transpose();
    if (a.causal && j0 + bc - 1 > i0) mask_tile(t.s, br, bc, i0, j0);
    for (int64_t i = 0; i < br; ++i) {
      T* row = t.s + i * bc;
      const T mx = row_max(row, bc, t.m[i]);
      if (mx == -std::numeric_limits<T>::infinity()) {  // nothing visible yet in this row
        for (int64_t jj = 0; jj < bc; ++jj) row[jj] = 0;
        continue;
      }
      const T sum = exp_shift_sum(row, bc, mx);
      const T alpha = kernel_exp(t.m[i] - mx);  // exp(-inf) = 0 on the first visible block
      t.l[i] = alpha * t.l[i] + sum;
      t.m[i] = mx;
      if (alpha != T(1)) acc.row(i) *= alpha;
    }
    acc.noalias() += s * Tile<T>(t.v, bc, d);
  }
  T* out = a.out + (bh * a.lq + i0) * d;
  T* lse = a.lse + bh * a.lq + i0;
  for (int64_t i = 0; i < br; ++i) {
    const T inv = T(1) / t.l[i];
    for (int64_t c = 0; c < d; ++c) out[i * d + c] = acc(i, c) * inv;
    lse[i] = t.m[i] + std::log(t.l[i]);
  }
}

template <class T>
void attention_flash(const AttentionArgs<T>& a) {
  Eigen::setNbThreads(1);  // the tile products run on the thread that owns the tile
  const int64_t qblocks = (a.lq + kB - 1) / kB;
  const int64_t items = a.batch * a.heads * qblocks;
  const int64_t per = attention_tiled_workspace(a.lq, a.d, 1);
  const int nthreads = workers(a, items);
#pragma omp parallel num_threads(nthreads)
  {
    if (omp_get_thread_num() == 0) note_threads(omp_get_num_threads());  // the profiler's column
    Tiles<T> t(a.workspace + omp_get_thread_num() * per, a.d);
#pragma omp for schedule(dynamic, 1)
    for (int64_t item = 0; item < items; ++item) {
      // Causal query blocks near the end see the most keys: hand them out first.
      const int64_t qb = a.causal ? qblocks - 1 - item % qblocks : item % qblocks;
      const int64_t bh = item / qblocks;
      forward_block(a, bh / a.heads, bh % a.heads, qb * kB, t);
    }
  }
}

// The whole gradient of head (b, h), key block by key block.
template <class T>
void backward_head(const AttentionBackwardArgs<T>& a, int64_t b, int64_t h, Tiles<T>& t) {
  const int64_t d = a.d, bh = b * a.heads + h;
  const T scale = static_cast<T>(a.scale);
  const T* out = a.out + bh * a.lq * d;
  const T* dout = a.dout + bh * a.lq * d;
  const T* lse = a.lse + bh * a.lq;
  T* dq = a.dq + bh * a.lq * d;
  T* dk = a.dk + bh * a.lk * d;
  T* dv = a.dv + bh * a.lk * d;
  std::fill(dq, dq + a.lq * d, T(0));
  std::fill(dk, dk + a.lk * d, T(0));
  std::fill(dv, dv + a.lk * d, T(0));
  // D_i = dout_i . out_i: the softmax gradient's row term, one value per query row.
  T* big_d = t.rows;
  for (int64_t i = 0; i < a.lq; ++i) {
    T acc = 0;
    for (int64_t c = 0; c < d; ++c) acc += dout[i * d + c] * out[i * d + c];
    big_d[i] = acc;
  }
  for (int64_t j0 = 0; j0 < a.lk; j0 += kB) {
    const int64_t bc = std::min(kB, a.lk - j0);
    pack(a.k, a.k_stride, b, h, j0, bc, d, T(1), t.k);
    pack(a.v, a.v_stride, b, h, j0, bc, d, T(1), t.v);
    Tile<T> kj(t.k, bc, d), vj(t.v, bc, d);
    Tile<T> dkj(dk + j0 * d, bc, d), dvj(dv + j0 * d, bc, d);
    // Causal: query rows before j0 see none of these keys (blocks are aligned, so i0 = j0).
    for (int64_t i0 = a.causal ? j0 : 0; i0 < a.lq; i0 += kB) {
      const int64_t br = std::min(kB, a.lq - i0);
      pack(a.q, a.q_stride, b, h, i0, br, d, scale, t.q);  // scale Q: S and dK both want it
      Tile<T> qs(t.q, br, d), s(t.s, br, bc), dp(t.dp, br, bc);
      Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> doi(
          dout + i0 * d, br, d);
      s.noalias() = qs * kj.transpose();
      if (a.causal && j0 + bc - 1 > i0) mask_tile(t.s, br, bc, i0, j0);
      for (int64_t i = 0; i < br; ++i) {
        T* row = t.s + i * bc;
        for (int64_t jj = 0; jj < bc; ++jj) row[jj] = kernel_exp(row[jj] - lse[i0 + i]);
      }
      dvj.noalias() += s.transpose() * doi;
      dp.noalias() = doi * vj.transpose();
      for (int64_t i = 0; i < br; ++i) {
        const T di = big_d[i0 + i];
        for (int64_t jj = 0; jj < bc; ++jj)
          t.dp[i * bc + jj] = t.s[i * bc + jj] * (t.dp[i * bc + jj] - di);
      }
      Tile<T>(dq + i0 * d, br, d).noalias() += scale * (dp * kj);
      dkj.noalias() += dp.transpose() * qs;
    }
  }
}

template <class T>
void attention_backward_flash(const AttentionBackwardArgs<T>& a) {
  Eigen::setNbThreads(1);
  const int64_t items = a.batch * a.heads;
  const int64_t per = attention_tiled_workspace(a.lq, a.d, 1);
  const int nthreads = workers(a, items);
#pragma omp parallel num_threads(nthreads)
  {
    if (omp_get_thread_num() == 0) note_threads(omp_get_num_threads());  // the profiler's column
    Tiles<T> t(a.workspace + omp_get_thread_num() * per, a.d);
#pragma omp for schedule(dynamic, 1)
    for (int64_t bh = 0; bh < items; ++bh) backward_head(a, bh / a.heads, bh % a.heads, t);
  }
}

}  // namespace

void register_attention_flash(Registry& r) {
  r.op("attention", Device::cpu)
      .add<AttentionArgs>("flash", VariantTag::fused,
                          "128x128 tiles, online softmax, no L x L matrix (O(L) workspace)",
                          &attention_flash<float>, &attention_flash<double>);
  r.op("attention_backward", Device::cpu)
      .add<AttentionBackwardArgs>("flash", VariantTag::fused,
                                  "tiles rebuilt from lse, one head per thread (O(L) workspace)",
                                  &attention_backward_flash<float>,
                                  &attention_backward_flash<double>);
}
PRISM_CPU_KERNELS(260, register_attention_flash);

}  // namespace prism::kernels::cpu
