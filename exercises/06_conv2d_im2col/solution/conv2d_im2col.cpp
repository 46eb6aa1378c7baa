// Exercise 06, solution: conv2d as im2col and one matrix product per image.
//
// For one image, write every patch the filter visits as a column of a matrix
//   cols[(c, p, q)][(i, j)] = x[c][i*s - pad + p][j*s - pad + q]     (0 in the padding)
// of K = C kh kw rows and P = ho wo columns. The filters, read as an [O, K] matrix W, then
// give the whole output image as one matrix product:
//   out[o][(i, j)] = bias[o] + sum_k W[o][k] cols[k][(i, j)]          out_n = W @ cols_n
// This is the naive loops' arithmetic, reordered so that the inner loop is the long,
// unit-stride P loop of a matmul instead of the kh kw = 9 steps of a 3x3 filter with a bounds
// check each. The price is memory: cols holds each input value up to kh kw times (the front
// end passes it as a.workspace, one image's worth, so the profile shows it).
// The product uses exercise 03's i-k-j order: W[o][k] in a register, rows of cols and out
// walked with stride 1.
// Cost: 2 N O ho wo C kh kw FLOPs (+ N O ho wo for the bias), the naive loops' count; plus
// K P copies per image for the unfold.
// Measured (2-core AMD EPYC Zen 4 VM, 1 thread, `exercise_conv2d_im2col_solution --runs 9`):
// 13.6 GFLOP/s on LeNet's second convolution at batch 64, against 1.52 for the direct loops
// and 52.1 for prism's im2col variant with Eigen's product.
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
          const int64_t hi = i * a.stride - a.padding + p;  // input row this output row reads
          for (int64_t j = 0; j < a.wo; ++j) {
            const int64_t wi = j * a.stride - a.padding + q;
            const bool inside = hi >= 0 && hi < a.h && wi >= 0 && wi < a.w;
            row[i * a.wo + j] = inside ? x[(c * a.h + hi) * a.w + wi] : 0.0f;
          }
        }
      }
    }
  }
}

}  // namespace

void my_conv2d_im2col(const Conv2dArgs<float>& a) {
  const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo;
  float* cols = a.workspace;  // K * P floats (the front end guarantees at least that many)
  for (int64_t n = 0; n < a.n; ++n) {
    im2col(a, a.x + n * a.c * a.h * a.w, cols);
    float* out = a.out + n * a.o * P;
    for (int64_t o = 0; o < a.o; ++o) {
      float* y = out + o * P;  // output channel o of image n, [ho * wo]
      std::fill(y, y + P, a.bias ? a.bias[o] : 0.0f);
      const float* w = a.weight + o * K;  // row o of W
      for (int64_t k = 0; k < K; ++k) {
        const float wk = w[k];
        const float* crow = cols + k * P;
        for (int64_t j = 0; j < P; ++j) y[j] += wk * crow[j];
      }
    }
  }
}

PRISM_REGISTER_KERNEL(conv2d, my_conv2d_im2col);
