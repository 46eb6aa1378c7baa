// Exercise 10, a typical mistake: the causal mask off by one, hiding the diagonal.
//
// Query i may see keys 0..i: only j > i is masked. Masking j >= i as well (walking the keys up
// to i - 1) hides each token from itself, and row 0 then sees no key at all: m stays -inf,
// l stays 0 and out = 0 / 0 = NaN. Every causal case catches it.
// checker-expects: 1,2,7,8. causal +FAIL
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
        const int64_t kend = a.causal ? i : a.lk;  // the mistake: key i is hidden too
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
          const float alpha = std::exp(m - m_new);  // 0 on the first block
          l *= alpha;
          for (int64_t c = 0; c < a.d; ++c) o[c] *= alpha;
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
