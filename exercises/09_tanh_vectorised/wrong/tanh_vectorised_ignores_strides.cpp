// Exercise 09, a typical mistake: reading x as if it were contiguous.
//
// The formula is right (the solution's), and the loop vectorises, but x[i] is element i of the
// input only when the input is contiguous. A transposed view arrives with strides [1, 17]:
// element (i, j) is x[i + 17 j]. The checker's views catch it.
// checker-expects: transposed view +FAIL +error
#include <cmath>

#include "kernels/ops/elementwise/args.h"
#include "kernels/cpu/fast_exp.h"
#include "kernels/registry.h"

using prism::kernels::UnaryArgs;

namespace {

inline float tanh_approx(float x) {
  const float a = std::fabs(x);
  const float s = a * a;
  float h = -0.006096714166f;
  h = h * s + 0.020997179f;
  h = h * s + -0.05385090958f;
  h = h * s + 0.1333276974f;
  h = h * s + -0.3333332894f;
  const float small = a + a * s * h;
  const float e = prism::kernels::cpu::fast_exp(2.0f * a);
  const float large = 1.0f - 2.0f / (e + 1.0f);
  return std::copysign(a < 0.625f ? small : large, x);
}

}  // namespace

void my_tanh_vectorised(const UnaryArgs<float>& a) {
  for (int64_t i = 0; i < a.numel; ++i) a.out[i] = tanh_approx(a.x[i]);  // the mistake
}

PRISM_REGISTER_KERNEL(tanh, my_tanh_vectorised);
