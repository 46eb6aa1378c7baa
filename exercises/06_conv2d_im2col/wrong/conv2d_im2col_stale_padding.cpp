// Exercise 06, a typical mistake: not writing the zeros of the padding into the patch matrix.
//
// Copying only the patch positions that fall inside the image leaves the padding positions of
// the workspace as they were: whatever the allocator handed over, or the previous image's
// patches. Without padding every position is inside and the kernel is right; with padding it
// adds garbage. (The checker's guarded run fills the workspace with NaN, so the garbage shows.)
// checker-expects: padding 1 +FAIL +error
#include <algorithm>

#include "kernels/ops/conv2d/args.h"
#include "kernels/registry.h"

using prism::kernels::Conv2dArgs;

void my_conv2d_im2col(const Conv2dArgs<float>& a) {
  const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo;
  float* cols = a.workspace;
  for (int64_t n = 0; n < a.n; ++n) {
    const float* x = a.x + n * a.c * a.h * a.w;
    for (int64_t c = 0; c < a.c; ++c) {
      for (int64_t p = 0; p < a.kh; ++p) {
        for (int64_t q = 0; q < a.kw; ++q) {
          float* row = cols + ((c * a.kh + p) * a.kw + q) * P;
          for (int64_t i = 0; i < a.ho; ++i) {
            const int64_t hi = i * a.stride - a.padding + p;
            for (int64_t j = 0; j < a.wo; ++j) {
              const int64_t wi = j * a.stride - a.padding + q;
              if (hi >= 0 && hi < a.h && wi >= 0 && wi < a.w) {  // the mistake: no else row = 0
                row[i * a.wo + j] = x[(c * a.h + hi) * a.w + wi];
              }
            }
          }
        }
      }
    }
    float* out = a.out + n * a.o * P;
    for (int64_t o = 0; o < a.o; ++o) {
      float* y = out + o * P;
      std::fill(y, y + P, a.bias ? a.bias[o] : 0.0f);
      for (int64_t k = 0; k < K; ++k) {
        const float wk = a.weight[o * K + k];
        for (int64_t j = 0; j < P; ++j) y[j] += wk * cols[k * P + j];
      }
    }
  }
}

PRISM_REGISTER_KERNEL(conv2d, my_conv2d_im2col);
