// conv2d and its two gradients, naive variant: the definition written as loops.
//
//   y[n,o,i,j] = bias[o] + sum_{c,p,q} x[n, c, i*s - pad + p, j*s - pad + q] * w[o, c, p, q]
//
// Reading the same sum the other way round gives the gradients (kernels/args.h, Conv2dArgs):
//   dx[n, c, i*s - pad + p, j*s - pad + q] += dy[n,o,i,j] * w[o,c,p,q]   (scatter back)
//   dw[o, c, p, q]                          += dy[n,o,i,j] * x[n, c, i*s - pad + p, ...]
// so each of the three is N O Ho Wo C kh kw multiply-adds: a forward plus backward step costs
// 3x the forward's FLOPs, as for matmul.
//
// Idea: the clearest correct loops, the lesson's starting point. The innermost (p, q) loops
// are short (kh kw = 9 for a 3x3 kernel) and every read is a bounds check and a strided load,
// so this runs at a few GFLOP/s on one core at most; the im2col variant (im2col_gemm.cpp) turns
// the same arithmetic into one GEMM per image and is over an order of magnitude faster
// (measured: docs/PERFORMANCE.md, "Convolution and pooling kernels").
#include <algorithm>

#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/conv2d/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
void conv2d_naive(const Conv2dArgs<T>& a) {
  for (int64_t n = 0; n < a.n; ++n) {
    for (int64_t o = 0; o < a.o; ++o) {
      for (int64_t i = 0; i < a.ho; ++i) {
        for (int64_t j = 0; j < a.wo; ++j) {
          T acc = a.bias ? a.bias[o] : T(0);
          for (int64_t c = 0; c < a.c; ++c) {
            const T* x = a.x + (n * a.c + c) * a.h * a.w;
            const T* w = a.weight + (o * a.c + c) * a.kh * a.kw;
            for (int64_t p = 0; p < a.kh; ++p) {
              const int64_t hi = i * a.stride - a.padding + p;
              if (hi < 0 || hi >= a.h) continue;  // a padding row: contributes 0
              for (int64_t q = 0; q < a.kw; ++q) {
                const int64_t wi = j * a.stride - a.padding + q;
                if (wi < 0 || wi >= a.w) continue;
                acc += x[hi * a.w + wi] * w[p * a.kw + q];
              }
            }
          }
          a.out[((n * a.o + o) * a.ho + i) * a.wo + j] = acc;
        }
      }
    }
  }
}

// dx: every output gradient is sent back to the input elements its window read.
template <class T>
void conv2d_backward_input_naive(const Conv2dArgs<T>& a) {
  std::fill(a.out, a.out + a.n * a.c * a.h * a.w, T(0));
  for (int64_t n = 0; n < a.n; ++n) {
    for (int64_t o = 0; o < a.o; ++o) {
      for (int64_t i = 0; i < a.ho; ++i) {
        for (int64_t j = 0; j < a.wo; ++j) {
          const T g = a.dy[((n * a.o + o) * a.ho + i) * a.wo + j];
          for (int64_t c = 0; c < a.c; ++c) {
            T* dx = a.out + (n * a.c + c) * a.h * a.w;
            const T* w = a.weight + (o * a.c + c) * a.kh * a.kw;
            for (int64_t p = 0; p < a.kh; ++p) {
              const int64_t hi = i * a.stride - a.padding + p;
              if (hi < 0 || hi >= a.h) continue;
              for (int64_t q = 0; q < a.kw; ++q) {
                const int64_t wi = j * a.stride - a.padding + q;
                if (wi < 0 || wi >= a.w) continue;
                dx[hi * a.w + wi] += g * w[p * a.kw + q];
              }
            }
          }
        }
      }
    }
  }
}

// dw: for each weight, the sum over every place it was used of (output gradient x input).
template <class T>
void conv2d_backward_weight_naive(const Conv2dArgs<T>& a) {
  for (int64_t o = 0; o < a.o; ++o) {
    for (int64_t c = 0; c < a.c; ++c) {
      for (int64_t p = 0; p < a.kh; ++p) {
        for (int64_t q = 0; q < a.kw; ++q) {
          T acc = 0;
          for (int64_t n = 0; n < a.n; ++n) {
            const T* x = a.x + (n * a.c + c) * a.h * a.w;
            const T* dy = a.dy + (n * a.o + o) * a.ho * a.wo;
            for (int64_t i = 0; i < a.ho; ++i) {
              const int64_t hi = i * a.stride - a.padding + p;
              if (hi < 0 || hi >= a.h) continue;
              for (int64_t j = 0; j < a.wo; ++j) {
                const int64_t wi = j * a.stride - a.padding + q;
                if (wi < 0 || wi >= a.w) continue;
                acc += dy[i * a.wo + j] * x[hi * a.w + wi];
              }
            }
          }
          a.out[((o * a.c + c) * a.kh + p) * a.kw + q] = acc;
        }
      }
    }
  }
}

}  // namespace

void register_conv_naive(Registry& r) {
  r.op("conv2d", Device::cpu)
      .add<Conv2dArgs>("naive", VariantTag::naive, "direct loops over the definition",
                       &conv2d_naive<float>, &conv2d_naive<double>);
  r.op("conv2d_backward_input", Device::cpu)
      .add<Conv2dArgs>("naive", VariantTag::naive, "scatter each dy back over its window",
                       &conv2d_backward_input_naive<float>, &conv2d_backward_input_naive<double>);
  r.op("conv2d_backward_weight", Device::cpu)
      .add<Conv2dArgs>("naive", VariantTag::naive, "one dot product per weight",
                       &conv2d_backward_weight_naive<float>, &conv2d_backward_weight_naive<double>);
}
PRISM_CPU_KERNELS(190, register_conv_naive);

}  // namespace prism::kernels::cpu
