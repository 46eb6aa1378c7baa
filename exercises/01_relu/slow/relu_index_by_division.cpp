// Exercise 01, a correct but slow answer: each element's input offset is recomputed from its
// flat index with a division and a remainder per dim, instead of being carried like an
// odometer. Every output is right; each element costs a few integer divisions (tens of cycles)
// where the naive loop pays an add, and the loop cannot vectorise. The checker must pass it and
// grade it below the first tier, never fail it.
// checker-expects: performance: tier 0 of 1
#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"

using prism::kernels::Layout;
using prism::kernels::UnaryArgs;

void my_relu(const UnaryArgs<float>& a) {
  const Layout& L = a.layout;
  for (int64_t i = 0; i < a.numel; ++i) {
    int64_t rest = i, offset = 0;
    for (int d = L.ndim - 1; d >= 0; --d) {
      offset += (rest % L.shape[d]) * L.stride[d];
      rest /= L.shape[d];
    }
    const float x = a.x[offset];
    a.out[i] = !(x <= 0.0f) ? x : 0.0f;
  }
}

PRISM_REGISTER_KERNEL(relu, my_relu);
