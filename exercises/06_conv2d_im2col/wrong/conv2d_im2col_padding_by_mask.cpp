// Exercise 06, a typical mistake: the padding written as a clamped pixel times 0.
//
// To keep the unfold's inner loop free of branches (so it vectorises), this kernel reads every
// patch position from inside the image, its row and column clamped to [0, h) and [0, w), and
// multiplies by 1 inside and 0 in the padding. For every finite pixel that writes the same
// patch matrix as the solution: the padding gets pixel * 0 = 0. But the padding next to an
// infinite pixel gets inf * 0 = NaN, and every output whose window hangs over that padding is
// NaN where it should be +-inf. A select, inside ? x[...] : 0.0f, has no such case and is
// branch-free too (the compiler turns it into a blend).
// checker-expects: with .inf and -inf in corners.* +FAIL +error inf
#include <algorithm>

#include "kernels/ops/conv2d/args.h"
#include "kernels/registry.h"

using prism::kernels::Conv2dArgs;

namespace {

// cols [K, P] <- the patches of one image x [C, H, W].
void im2col(const Conv2dArgs<float>& a, const float* x, float* cols) {
  const int64_t P = a.ho * a.wo;
  for (int64_t c = 0; c < a.c; ++c) {
    for (int64_t p = 0; p < a.kh; ++p) {
      for (int64_t q = 0; q < a.kw; ++q) {
        float* row = cols + ((c * a.kh + p) * a.kw + q) * P;
        for (int64_t i = 0; i < a.ho; ++i) {
          const int64_t hi = i * a.stride - a.padding + p;
          const int64_t hc = std::clamp<int64_t>(hi, 0, a.h - 1);
          for (int64_t j = 0; j < a.wo; ++j) {
            const int64_t wi = j * a.stride - a.padding + q;
            const int64_t wc = std::clamp<int64_t>(wi, 0, a.w - 1);
            const float inside = hi >= 0 && hi < a.h && wi >= 0 && wi < a.w ? 1.0f : 0.0f;
            row[i * a.wo + j] = x[(c * a.h + hc) * a.w + wc] * inside;  // the mistake: inf * 0
          }
        }
      }
    }
  }
}

}  // namespace

void my_conv2d_im2col(const Conv2dArgs<float>& a) {
  const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo;
  float* cols = a.workspace;
  for (int64_t n = 0; n < a.n; ++n) {
    im2col(a, a.x + n * a.c * a.h * a.w, cols);
    float* out = a.out + n * a.o * P;
    for (int64_t o = 0; o < a.o; ++o) {
      float* y = out + o * P;
      std::fill(y, y + P, a.bias ? a.bias[o] : 0.0f);
      const float* w = a.weight + o * K;
      for (int64_t k = 0; k < K; ++k) {
        const float wk = w[k];
        const float* crow = cols + k * P;
        for (int64_t j = 0; j < P; ++j) y[j] += wk * crow[j];
      }
    }
  }
}

PRISM_REGISTER_KERNEL(conv2d, my_conv2d_im2col);
