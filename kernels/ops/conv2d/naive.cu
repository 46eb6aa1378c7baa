// conv2d and its two gradients on the GPU, naive variant: the definition written as one thread
// per output element (kernels/ops/conv2d/naive.cpp has the math).
//
//   conv2d                  thread (n, o, i, j) of y sums its C kh kw window products
//   conv2d_backward_input   thread (n, c, r, s) of dx gathers dy[n, o, i, j] w[o, c, p, q] over
//                           the windows that read it: r = i stride - pad + p, so p = r + pad -
//                           i stride must lie in [0, kh) (and q likewise); a gather, so no two
//                           threads write one element and no atomics are needed
//   conv2d_backward_weight  thread (o, c, p, q) of dw sums dy x over every image and position
//
// Idea: the clearest correct kernels, the baseline the im2col variant (cuBLAS GEMMs,
// kernels/ops/conv2d/im2col_gemm.cu) is checked against and measured from. Every thread reads its
// operands from global memory with no reuse through shared memory, and backward_weight has only O C
// kh kw threads (a few thousand; 144 for LeNet's first layer) each summing N Ho Wo products.
// `prism lab conv2d --device cuda` (and its two gradients) prints the figures: slower than im2col
// everywhere but the forward at LeNet's small first layer (measured: docs/PERFORMANCE.md, "GPU
// (CUDA)").
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/ops/conv2d/args.h"

namespace prism::kernels::cuda {
namespace {

template <class T>
__global__ void conv2d_naive_kernel(const Conv2dArgs<T> a) {
  PRISM_GRID_STRIDE(e, a.n * a.o * a.ho * a.wo) {
    const int64_t j = e % a.wo, i = (e / a.wo) % a.ho, o = (e / (a.wo * a.ho)) % a.o;
    const int64_t n = e / (a.wo * a.ho * a.o);
    T acc = a.bias ? a.bias[o] : T(0);
    for (int64_t c = 0; c < a.c; ++c) {
      const T* x = a.x + (n * a.c + c) * a.h * a.w;
      const T* w = a.weight + (o * a.c + c) * a.kh * a.kw;
      for (int64_t p = 0; p < a.kh; ++p) {
        const int64_t hi = i * a.stride - a.padding + p;
        if (hi < 0 || hi >= a.h) continue;  // a padding row: contributes 0
        for (int64_t q = 0; q < a.kw; ++q) {
          const int64_t wi = j * a.stride - a.padding + q;
          if (wi >= 0 && wi < a.w) acc += x[hi * a.w + wi] * w[p * a.kw + q];
        }
      }
    }
    a.out[e] = acc;
  }
}

template <class T>
__global__ void conv2d_backward_input_naive_kernel(const Conv2dArgs<T> a) {
  PRISM_GRID_STRIDE(e, a.n * a.c * a.h * a.w) {
    const int64_t s = e % a.w, r = (e / a.w) % a.h, c = (e / (a.w * a.h)) % a.c;
    const int64_t n = e / (a.w * a.h * a.c);
    T acc = 0;
    for (int64_t o = 0; o < a.o; ++o) {
      const T* dy = a.dy + (n * a.o + o) * a.ho * a.wo;
      const T* w = a.weight + (o * a.c + c) * a.kh * a.kw;
      for (int64_t i = 0; i < a.ho; ++i) {
        const int64_t p = r + a.padding - i * a.stride;
        if (p < 0 || p >= a.kh) continue;
        for (int64_t j = 0; j < a.wo; ++j) {
          const int64_t q = s + a.padding - j * a.stride;
          if (q >= 0 && q < a.kw) acc += dy[i * a.wo + j] * w[p * a.kw + q];
        }
      }
    }
    a.out[e] = acc;
  }
}

template <class T>
__global__ void conv2d_backward_weight_naive_kernel(const Conv2dArgs<T> a) {
  PRISM_GRID_STRIDE(e, a.o * a.c * a.kh * a.kw) {
    const int64_t q = e % a.kw, p = (e / a.kw) % a.kh, c = (e / (a.kw * a.kh)) % a.c;
    const int64_t o = e / (a.kw * a.kh * a.c);
    T acc = 0;
    for (int64_t n = 0; n < a.n; ++n) {
      const T* dy = a.dy + (n * a.o + o) * a.ho * a.wo;
      const T* x = a.x + (n * a.c + c) * a.h * a.w;
      for (int64_t i = 0; i < a.ho; ++i) {
        const int64_t hi = i * a.stride - a.padding + p;
        if (hi < 0 || hi >= a.h) continue;
        for (int64_t j = 0; j < a.wo; ++j) {
          const int64_t wi = j * a.stride - a.padding + q;
          if (wi >= 0 && wi < a.w) acc += dy[i * a.wo + j] * x[hi * a.w + wi];
        }
      }
    }
    a.out[e] = acc;
  }
}

template <class T>
void conv2d_naive(const Conv2dArgs<T>& a) {
  const int64_t n = a.n * a.o * a.ho * a.wo;
  if (n == 0) return;
  conv2d_naive_kernel<T><<<grid_for(n), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("conv2d_naive_kernel");
}

template <class T>
void conv2d_backward_input_naive(const Conv2dArgs<T>& a) {
  const int64_t n = a.n * a.c * a.h * a.w;
  if (n == 0) return;
  conv2d_backward_input_naive_kernel<T><<<grid_for(n), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("conv2d_backward_input_naive_kernel");
}

template <class T>
void conv2d_backward_weight_naive(const Conv2dArgs<T>& a) {
  const int64_t n = a.o * a.c * a.kh * a.kw;
  if (n == 0) return;
  conv2d_backward_weight_naive_kernel<T><<<grid_for(n), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("conv2d_backward_weight_naive_kernel");
}

}  // namespace

void register_conv_naive(Registry& r) {
  r.op("conv2d", Device::cuda)
      .add<Conv2dArgs>("naive", VariantTag::naive, "one thread per output sums its window",
                       &conv2d_naive<float>, &conv2d_naive<double>);
  r.op("conv2d_backward_input", Device::cuda)
      .add<Conv2dArgs>("naive", VariantTag::naive,
                       "one thread per dx element gathers dy w over the windows that read it",
                       &conv2d_backward_input_naive<float>, &conv2d_backward_input_naive<double>);
  r.op("conv2d_backward_weight", Device::cuda)
      .add<Conv2dArgs>("naive", VariantTag::naive,
                       "one thread per dw element sums dy x over every image and position",
                       &conv2d_backward_weight_naive<float>, &conv2d_backward_weight_naive<double>);
}
PRISM_CUDA_KERNELS(160, register_conv_naive);

}  // namespace prism::kernels::cuda
