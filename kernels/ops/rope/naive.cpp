// rope and rope_backward, "naive": the formula in kernels/ops/rope/op.h, pair by pair, each
// angle's theta, sine and cosine computed where it is used, in double, on one thread. Every row
// of every head recomputes the same t x d/2 sines and cosines: the work the optimized variant's
// table saves. The baseline the others are checked against.
#include <cmath>

#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/rope/op.h"

namespace prism::kernels::cpu {
namespace {

// kSign +1 turns by the angle (rope), -1 turns back (rope_backward: R^T = R(-angle)).
template <class T, int kSign>
void rope_naive(const RopeArgs<T>& a) {
  const int64_t h = a.d / 2;
  T* y = a.y;
  for (int64_t b = 0; b < a.outer0; ++b) {
    for (int64_t hd = 0; hd < a.outer1; ++hd) {
      for (int64_t s = 0; s < a.t; ++s, y += a.d) {
        const T* x = a.x + b * a.x_s0 + hd * a.x_s1 + s * a.x_st;
        const double p = static_cast<double>(a.pos0 + s);
        for (int64_t i = 0; i < h; ++i) {
          const double theta = std::pow(a.base, -2.0 * static_cast<double>(i) / a.d);
          const double c = std::cos(p * theta), sn = kSign * std::sin(p * theta);
          const double x0 = x[i], x1 = x[i + h];
          y[i] = static_cast<T>(x0 * c - x1 * sn);
          y[i + h] = static_cast<T>(x1 * c + x0 * sn);
        }
      }
    }
  }
}

}  // namespace

void register_rope_naive(Registry& r) {
  r.op(ops::rope.name, Device::cpu)
      .add<RopeArgs>("naive", VariantTag::naive,
                     "each pair's sin and cos computed in place, double", &rope_naive<float, 1>,
                     &rope_naive<double, 1>);
  r.op(ops::rope_backward.name, Device::cpu)
      .add<RopeArgs>("naive", VariantTag::naive, "each pair turned back, sin and cos in place",
                     &rope_naive<float, -1>, &rope_naive<double, -1>);
}
PRISM_CPU_KERNELS(160, register_rope_naive);

}  // namespace prism::kernels::cpu
