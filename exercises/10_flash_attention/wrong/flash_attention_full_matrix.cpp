// Exercise 10, a typical mistake: the whole score matrix, allocated by the kernel itself.
//
// The values are right: it is the naive algorithm (scores, row softmax, P V). But it keeps
// lq x lk floats, 16 MB per head at L = 2048 and 4 GB at L = 32768, where flash attention keeps a
// few tiles. The front end cannot see it (the buffer is the kernel's own std::vector, not a
// tensor), so every case through the op passes; the checker's memory check, which counts the
// kernel's heap through operator new, fails it.
// checker-expects: memory .1,1,2048,64.*FAIL +took O.L.2. memory: heap
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/ops/attention/args.h"
#include "kernels/registry.h"

using prism::kernels::AttentionArgs;

void my_flash_attention(const AttentionArgs<float>& a) {
  const float scale = static_cast<float>(a.scale);
  // The mistake: every score of the head at once, lq x lk floats (16 MB at L = 2048).
  std::vector<float> s(static_cast<size_t>(a.lq * a.lk));
  for (int64_t b = 0; b < a.batch; ++b) {
    for (int64_t h = 0; h < a.heads; ++h) {
      const float* q = a.q + b * a.q_stride[0] + h * a.q_stride[1];
      const float* k = a.k + b * a.k_stride[0] + h * a.k_stride[1];
      const float* v = a.v + b * a.v_stride[0] + h * a.v_stride[1];
      for (int64_t i = 0; i < a.lq; ++i) {
        float* row = s.data() + i * a.lk;
        const int64_t n = a.causal ? i + 1 : a.lk;  // keys row i sees
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < n; ++j) {
          float dot = 0;
          for (int64_t c = 0; c < a.d; ++c)
            dot +=
                q[i * a.q_stride[2] + c * a.q_stride[3]] * k[j * a.k_stride[2] + c * a.k_stride[3]];
          row[j] = scale * dot;
          m = std::max(m, row[j]);
        }
        float l = 0;
        for (int64_t j = 0; j < n; ++j) {
          row[j] = std::exp(row[j] - m);
          l += row[j];
        }
        float* o = a.out + ((b * a.heads + h) * a.lq + i) * a.d;
        for (int64_t c = 0; c < a.d; ++c) o[c] = 0;
        for (int64_t j = 0; j < n; ++j) {
          for (int64_t c = 0; c < a.d; ++c)
            o[c] += row[j] / l * v[j * a.v_stride[2] + c * a.v_stride[3]];
        }
        a.lse[(b * a.heads + h) * a.lq + i] = m + std::log(l);
      }
    }
  }
}

PRISM_REGISTER_KERNEL(attention, my_flash_attention);
