// im2col and col2im as ops of their own: the unfolding a convolution under the bf16 autocast
// policy runs before its GEMMs (tensor/ops/conv_bf16.cpp), which the fused conv2d kernels
// (im2col_gemm.cpp) keep inside themselves.
//
// Idea. A convolution is a matrix product once every output position's input window is laid out
// as a column: patches[n] is [K, P] with K = C kh kw rows (channel, kernel row, kernel column)
// and P = Ho Wo columns (output positions), element ((c, p, q), (i, j)) =
// x[n, c, i s - pad + p, j s - pad + q], or 0 where that falls in the padding. Then
// y[n] = W [O, K] @ patches[n], and the gradients are dW = sum_n dy[n] @ patches[n]^T and
// dpatches[n] = W^T @ dy[n], folded back by col2im: each patch element's gradient added to the
// input element it was copied from (inputs under several windows collect several).
// im2col only moves elements, so it runs in any dtype (float32, and bfloat16: the patches a
// bf16 GEMM reads); col2im adds, in float32.
//
// Cost: im2col 0 FLOPs, bytes = x + patches; col2im N K P adds, bytes = dpatches + dx.
// The "naive" variants are element-by-element loops with a bounds check, the lesson's clear
// version, and run far below the memory's speed. The "optimized" variants (the default) run the
// fused convolution's own per-image routines (im2col_image.h: each window row one run, the
// padding found once per row instead of tested per element), an order of magnitude faster in
// the CNN's step, which made the bf16 CNN step markedly less slow against the fp32 one
// (measured: docs/PERFORMANCE.md, "Convolution and pooling kernels" and "bf16 mixed precision").
// Threads: whole images (parallel.h), each image's work written by one thread, so results do not
// depend on the thread count.
#include <algorithm>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/conv2d/im2col_image.h"
#include "kernels/ops/conv2d/args.h"

namespace prism::kernels::cpu {
namespace {

// Images per chunk: about 2^16 patch elements of work each (a copy: elementwise grain).
int64_t images_per_chunk(const Conv2dArgs<float>& a) {
  const int64_t per = std::max<int64_t>(1, a.c * a.kh * a.kw * a.ho * a.wo);
  return std::max<int64_t>(1, kChunkElementwise / per);
}

template <class T>
void im2col(const Conv2dArgs<T>& a) {
  const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo;
  Conv2dArgs<float> sizes{};
  sizes.c = a.c, sizes.kh = a.kh, sizes.kw = a.kw, sizes.ho = a.ho, sizes.wo = a.wo;
  parallel_for(a.n, images_per_chunk(sizes), [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      const T* x = a.x + n * a.c * a.h * a.w;
      T* out = a.out + n * K * P;
      for (int64_t c = 0; c < a.c; ++c) {
        for (int64_t p = 0; p < a.kh; ++p) {
          for (int64_t q = 0; q < a.kw; ++q) {
            T* row = out + ((c * a.kh + p) * a.kw + q) * P;
            for (int64_t i = 0; i < a.ho; ++i) {
              const int64_t r = i * a.stride - a.padding + p;
              for (int64_t j = 0; j < a.wo; ++j) {
                const int64_t col = j * a.stride - a.padding + q;
                const bool inside = r >= 0 && r < a.h && col >= 0 && col < a.w;
                row[i * a.wo + j] = inside ? x[(c * a.h + r) * a.w + col] : T{};
              }
            }
          }
        }
      }
    }
  });
}

// dx = col2im(dpatches): dpatches arrives in `dy` ([N, K, P]), dx is `out` ([N, C, H, W]).
void col2im(const Conv2dArgs<float>& a) {
  const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo, image = a.c * a.h * a.w;
  parallel_for(a.n, images_per_chunk(a), [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      float* dx = a.out + n * image;
      const float* cols = a.dy + n * K * P;
      for (int64_t e = 0; e < image; ++e) dx[e] = 0;
      for (int64_t c = 0; c < a.c; ++c) {
        for (int64_t p = 0; p < a.kh; ++p) {
          for (int64_t q = 0; q < a.kw; ++q) {
            const float* row = cols + ((c * a.kh + p) * a.kw + q) * P;
            for (int64_t i = 0; i < a.ho; ++i) {
              const int64_t r = i * a.stride - a.padding + p;
              if (r < 0 || r >= a.h) continue;
              for (int64_t j = 0; j < a.wo; ++j) {
                const int64_t col = j * a.stride - a.padding + q;
                if (col >= 0 && col < a.w) dx[(c * a.h + r) * a.w + col] += row[i * a.wo + j];
              }
            }
          }
        }
      }
    }
  });
}

// The same, image by image through kernels/ops/conv2d/im2col_image.h.
template <class T>
void im2col_runs(const Conv2dArgs<T>& a) {
  const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo, image = a.c * a.h * a.w;
  Conv2dArgs<float> sizes{};
  sizes.c = a.c, sizes.kh = a.kh, sizes.kw = a.kw, sizes.ho = a.ho, sizes.wo = a.wo;
  parallel_for(a.n, images_per_chunk(sizes), [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) im2col_image(a, a.x + n * image, a.out + n * K * P);
  });
}

void col2im_runs(const Conv2dArgs<float>& a) {
  const int64_t K = a.c * a.kh * a.kw, P = a.ho * a.wo, image = a.c * a.h * a.w;
  parallel_for(a.n, images_per_chunk(a), [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      float* dx = a.out + n * image;
      std::fill(dx, dx + image, 0.0f);
      col2im_image_add(a, a.dy + n * K * P, dx);
    }
  });
}

}  // namespace

void register_im2col(Registry& r) {
  r.op("im2col", Device::cpu)
      .add<Conv2dArgs>("naive", VariantTag::naive,
                       "each window element copied with a bounds check (0 in the padding)",
                       &im2col<float>)
      .also<Conv2dArgs, BFloat16>(&im2col<BFloat16>);
  r.op("im2col", Device::cpu)
      .add<Conv2dArgs>("optimized", VariantTag::optimized,
                       "each window row one run, the padding found once per row",
                       &im2col_runs<float>)
      .also<Conv2dArgs, BFloat16>(&im2col_runs<BFloat16>);
  r.op("col2im", Device::cpu)
      .add<Conv2dArgs>("naive", VariantTag::naive,
                       "each patch gradient added to the input element it came from", &col2im);
  r.op("col2im", Device::cpu)
      .add<Conv2dArgs>("optimized", VariantTag::optimized,
                       "each window row added as one run, the padding found once per row",
                       &col2im_runs);
}
PRISM_CPU_KERNELS(125, register_im2col);

}  // namespace prism::kernels::cpu
