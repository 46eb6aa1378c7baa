// Exercise 09, a typical mistake: tanh as (e - 1) / (e + 1) with e = exp(2x).
//
// Right on paper, and accurate enough for moderate x. But exp(2x) overflows float32 to inf once
// x > 44.4 (the largest float is about exp(88.7)), and then (e - 1) / (e + 1) = inf / inf = NaN
// where tanh x is 1. 1 - 2 / (e + 1) has no such problem: 2 / (inf + 1) = 0.
// checker-expects: up to .-100 .saturation. +FAIL +error inf
#include <cmath>

#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"

using prism::kernels::kMaxDims;
using prism::kernels::Layout;
using prism::kernels::UnaryArgs;

namespace {

inline float tanh_approx(float x) {
  const float e = std::exp(2.0f * x);
  return (e - 1.0f) / (e + 1.0f);  // the mistake: NaN for x > 44.4
}

}  // namespace

void my_tanh_vectorised(const UnaryArgs<float>& a) {
  const Layout& L = a.layout;
  const int last = L.ndim - 1;
  const int64_t inner = L.shape[last], inner_stride = L.stride[last];
  int64_t index[kMaxDims] = {};
  int64_t offset = 0;
  for (int64_t i = 0; i < a.numel; i += inner) {
    const float* row = a.x + offset;
    for (int64_t j = 0; j < inner; ++j) a.out[i + j] = tanh_approx(row[j * inner_stride]);
    for (int d = last - 1; d >= 0; --d) {
      offset += L.stride[d];
      if (++index[d] < L.shape[d]) break;
      offset -= L.stride[d] * L.shape[d];
      index[d] = 0;
    }
  }
}

PRISM_REGISTER_KERNEL(tanh, my_tanh_vectorised);
