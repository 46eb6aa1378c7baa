// Scaled dot-product attention, naive variant: the whole score matrix of every head.
//
// Idea: the definition, one step at a time, per (batch, head):
//   S_ij = scale q_i . k_j            (-inf where causal and j > i)          [lq x lk]
//   P_ij = exp(S_ij - m_i) / l_i,     m_i = max_j S_ij,  l_i = sum_j exp(S_ij - m_i)
//   lse_i = m_i + log l_i             (saved: backward rebuilds P_ij = exp(S_ij - lse_i))
//   o_i = sum_j P_ij v_j
// S is written to the workspace, the lq x lk scores of every head (attention_scores_workspace,
// allocated by the tensor layer so the profile shows it): 4 lq lk bytes per head in float32,
// 32 MB for 8 heads at L = 1024, 512 MB at L = 4096. That is the memory flash attention
// (flash.cpp) never allocates. Heads run in parallel (OpenMP), each on its own slice.
//
// Backward, per head, with D_i = dout_i . o_i (= sum_j P_ij dP_ij, the softmax's own term):
//   P_ij  = exp(S_ij - lse_i)         recomputed from q, k and the saved lse, into the workspace
//   dv_j  = sum_i P_ij dout_i
//   dS_ij = P_ij (dout_i . v_j - D_i) the softmax gradient, written over P
//   dq_i  = scale sum_j dS_ij k_j,    dk_j = scale sum_i dS_ij q_i
// (dS = P * (dP - D) because d softmax_j / d S_k = P_j (delta_jk - P_k).)
//
// Cost: forward 4 lq lk d FLOPs for the two products + 5 lq lk for the softmax per head
// (causal: about half of each, the pairs j <= i); backward 10 lq lk d + 5 lq lk.
// The dot products are scalar chains (a float sum cannot be reordered into SIMD lanes without
// -ffast-math), so it runs at a small fraction of the FMA peak (measured: docs/PERFORMANCE.md,
// "Attention and linear+GELU (CPU)").
#include <cmath>
#include <limits>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/attention/args.h"

namespace prism::kernels::cpu {
namespace {

// Element (b, h, row, col) of a strided [batch, heads, rows, d] tensor.
template <class T>
const T& at(const T* p, const int64_t* s, int64_t b, int64_t h, int64_t row, int64_t col) {
  return p[b * s[0] + h * s[1] + row * s[2] + col * s[3]];
}

// S_ij = scale q_i . k_j, or -inf where the causal mask hides key j from query i.
template <class T, class Args>
void scores(const Args& a, int64_t b, int64_t h, T* s) {
  const T scale = static_cast<T>(a.scale);
  for (int64_t i = 0; i < a.lq; ++i) {
    for (int64_t j = 0; j < a.lk; ++j) {
      if (a.causal && j > i) {
        s[i * a.lk + j] = -std::numeric_limits<T>::infinity();
        continue;
      }
      T dot = 0;
      for (int64_t c = 0; c < a.d; ++c)
        dot += at(a.q, a.q_stride, b, h, i, c) * at(a.k, a.k_stride, b, h, j, c);
      s[i * a.lk + j] = scale * dot;
    }
  }
}

template <class T>
void attention_naive(const AttentionArgs<T>& a) {
  const int64_t heads = a.batch * a.heads;
  note_threads(threads_for(heads));  // one (batch, head) pair per iteration
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t bh = 0; bh < heads; ++bh) {
    const int64_t b = bh / a.heads, h = bh % a.heads;
    T* s = a.workspace + bh * a.lq * a.lk;
    T* out = a.out + bh * a.lq * a.d;
    T* lse = a.lse + bh * a.lq;
    scores<T>(a, b, h, s);
    // Softmax of each row, in place: S becomes P.
    for (int64_t i = 0; i < a.lq; ++i) {
      T* row = s + i * a.lk;
      T m = row[0];
      for (int64_t j = 1; j < a.lk; ++j) m = std::max(m, row[j]);
      T l = 0;
      for (int64_t j = 0; j < a.lk; ++j) {
        row[j] = std::exp(row[j] - m);
        l += row[j];
      }
      for (int64_t j = 0; j < a.lk; ++j) row[j] /= l;
      lse[i] = m + std::log(l);
    }
    // o_i = sum_j P_ij v_j.
    for (int64_t i = 0; i < a.lq; ++i) {
      for (int64_t c = 0; c < a.d; ++c) out[i * a.d + c] = 0;
      for (int64_t j = 0; j < a.lk; ++j) {
        const T p = s[i * a.lk + j];
        for (int64_t c = 0; c < a.d; ++c) out[i * a.d + c] += p * at(a.v, a.v_stride, b, h, j, c);
      }
    }
  }
}

template <class T>
void attention_backward_naive(const AttentionBackwardArgs<T>& a) {
  const int64_t heads = a.batch * a.heads;
  const T scale = static_cast<T>(a.scale);
  note_threads(threads_for(heads));  // one (batch, head) pair per iteration
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t bh = 0; bh < heads; ++bh) {
    const int64_t b = bh / a.heads, h = bh % a.heads;
    T* s = a.workspace + bh * a.lq * a.lk;
    const T* out = a.out + bh * a.lq * a.d;
    const T* dout = a.dout + bh * a.lq * a.d;
    const T* lse = a.lse + bh * a.lq;
    T* dq = a.dq + bh * a.lq * a.d;
    T* dk = a.dk + bh * a.lk * a.d;
    T* dv = a.dv + bh * a.lk * a.d;
    // P_ij = exp(S_ij - lse_i); a masked entry is exp(-inf) = 0.
    scores<T>(a, b, h, s);
    for (int64_t i = 0; i < a.lq; ++i) {
      for (int64_t j = 0; j < a.lk; ++j) s[i * a.lk + j] = std::exp(s[i * a.lk + j] - lse[i]);
    }
    // dv_j = sum_i P_ij dout_i.
    for (int64_t j = 0; j < a.lk; ++j) {
      for (int64_t c = 0; c < a.d; ++c) dv[j * a.d + c] = 0;
    }
    for (int64_t i = 0; i < a.lq; ++i) {
      for (int64_t j = 0; j < a.lk; ++j) {
        const T p = s[i * a.lk + j];
        for (int64_t c = 0; c < a.d; ++c) dv[j * a.d + c] += p * dout[i * a.d + c];
      }
    }
    // dS_ij = P_ij (dout_i . v_j - D_i), over P.
    for (int64_t i = 0; i < a.lq; ++i) {
      T d_i = 0;
      for (int64_t c = 0; c < a.d; ++c) d_i += dout[i * a.d + c] * out[i * a.d + c];
      for (int64_t j = 0; j < a.lk; ++j) {
        T dp = 0;
        for (int64_t c = 0; c < a.d; ++c) dp += dout[i * a.d + c] * at(a.v, a.v_stride, b, h, j, c);
        s[i * a.lk + j] *= dp - d_i;
      }
    }
    // dq_i = scale sum_j dS_ij k_j;  dk_j = scale sum_i dS_ij q_i.
    for (int64_t i = 0; i < a.lq; ++i) {
      for (int64_t c = 0; c < a.d; ++c) dq[i * a.d + c] = 0;
    }
    for (int64_t j = 0; j < a.lk; ++j) {
      for (int64_t c = 0; c < a.d; ++c) dk[j * a.d + c] = 0;
    }
    for (int64_t i = 0; i < a.lq; ++i) {
      for (int64_t j = 0; j < a.lk; ++j) {
        const T ds = scale * s[i * a.lk + j];
        for (int64_t c = 0; c < a.d; ++c) {
          dq[i * a.d + c] += ds * at(a.k, a.k_stride, b, h, j, c);
          dk[j * a.d + c] += ds * at(a.q, a.q_stride, b, h, i, c);
        }
      }
    }
  }
}

}  // namespace

void register_attention_naive(Registry& r) {
  r.op("attention", Device::cpu)
      .add<AttentionArgs>("naive", VariantTag::naive,
                          "whole lq x lk score matrix per head (O(L^2) workspace)",
                          &attention_naive<float>, &attention_naive<double>);
  r.op("attention_backward", Device::cpu)
      .add<AttentionBackwardArgs>(
          "naive", VariantTag::naive, "P rebuilt in an lq x lk matrix per head (O(L^2) workspace)",
          &attention_backward_naive<float>, &attention_backward_naive<double>);
}
PRISM_CPU_KERNELS(250, register_attention_naive);

}  // namespace prism::kernels::cpu
