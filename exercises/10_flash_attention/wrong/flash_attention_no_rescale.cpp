// Exercise 10, a typical mistake: raising the running max without rescaling what was summed.
//
// When a key block raises the max of row i from m_old to m_new, the running sum l and the
// accumulator acc hold terms exp(S_ij - m_old); against the new max each must become
// exp(S_ij - m_new) = exp(S_ij - m_old) * alpha with alpha = exp(m_old - m_new). Without that
// factor the earlier blocks keep weights that are too large by 1 / alpha. Within one block of
// 64 keys nothing goes wrong (the block's own max is taken first), so short rows pass; rows of
// more than 64 keys whose max grows in a later block do not.
// checker-expects: rising along the keys +FAIL
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/ops/attention/args.h"
#include "kernels/registry.h"

using prism::kernels::AttentionArgs;

void my_flash_attention(const AttentionArgs<float>& a) {
  constexpr int64_t kBlock = 64;
  const float scale = static_cast<float>(a.scale);
  for (int64_t b = 0; b < a.batch; ++b) {
    for (int64_t h = 0; h < a.heads; ++h) {
      const float* q = a.q + b * a.q_stride[0] + h * a.q_stride[1];
      const float* k = a.k + b * a.k_stride[0] + h * a.k_stride[1];
      const float* v = a.v + b * a.v_stride[0] + h * a.v_stride[1];
      for (int64_t i = 0; i < a.lq; ++i) {
        float* o = a.out + ((b * a.heads + h) * a.lq + i) * a.d;
        for (int64_t c = 0; c < a.d; ++c) o[c] = 0;
        float m = -std::numeric_limits<float>::infinity(), l = 0;
        const int64_t kend = a.causal ? i + 1 : a.lk;
        for (int64_t j0 = 0; j0 < kend; j0 += kBlock) {
          const int64_t n = std::min(kBlock, kend - j0);
          float s[kBlock];
          float m_new = m;
          for (int64_t j = 0; j < n; ++j) {
            float dot = 0;
            for (int64_t c = 0; c < a.d; ++c)
              dot += q[i * a.q_stride[2] + c * a.q_stride[3]] *
                     k[(j0 + j) * a.k_stride[2] + c * a.k_stride[3]];
            s[j] = scale * dot;
            m_new = std::max(m_new, s[j]);
          }
          // The mistake: l and o should first be multiplied by exp(m - m_new).
          for (int64_t j = 0; j < n; ++j) {
            const float p = std::exp(s[j] - m_new);
            l += p;
            for (int64_t c = 0; c < a.d; ++c)
              o[c] += p * v[(j0 + j) * a.v_stride[2] + c * a.v_stride[3]];
          }
          m = m_new;
        }
        for (int64_t c = 0; c < a.d; ++c) o[c] /= l;
        a.lse[(b * a.heads + h) * a.lq + i] = m + std::log(l);
      }
    }
  }
}

PRISM_REGISTER_KERNEL(attention, my_flash_attention);
