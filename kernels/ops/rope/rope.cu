// rope and rope_backward on the GPU (the math is in kernels/ops/rope/op.h; the CPU's naive
// variant is the baseline this is checked against).
//
// "naive": one thread per pair (i, i + d/2) of one row, its angle, sine and cosine computed in
// double, as the CPU's naive loop does: a pair's two outputs need the same two inputs, so the
// thread reads both and writes both. Consecutive threads take consecutive pairs of a row, so
// reads of x and writes of y are coalesced in each half of the row.
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/ops/rope/args.h"

namespace prism::kernels::cuda {
namespace {

template <class T, int kSign>
__global__ void rope_pairs(RopeArgs<T> a, int64_t pairs) {
  const int64_t h = a.d / 2;
  PRISM_GRID_STRIDE(k, pairs) {
    const int64_t i = k % h, r = k / h;
    const int64_t s = r % a.t, hd = (r / a.t) % a.outer1, b = r / (a.t * a.outer1);
    const T* x = a.x + b * a.x_s0 + hd * a.x_s1 + s * a.x_st;
    T* y = a.y + r * a.d;
    const double theta = pow(a.base, -2.0 * static_cast<double>(i) / static_cast<double>(a.d));
    double sn, c;
    sincos(static_cast<double>(a.pos0 + s) * theta, &sn, &c);
    sn *= kSign;
    const double x0 = x[i], x1 = x[i + h];
    y[i] = static_cast<T>(x0 * c - x1 * sn);
    y[i + h] = static_cast<T>(x1 * c + x0 * sn);
  }
}

template <class T, int kSign>
void rope_naive(const RopeArgs<T>& a) {
  const int64_t pairs = a.outer0 * a.outer1 * a.t * (a.d / 2);
  if (pairs == 0) return;
  rope_pairs<T, kSign><<<grid_for(pairs), kBlock, 0, stream()>>>(a, pairs);
  PRISM_CUDA_CHECK_LAUNCH(kSign > 0 ? "rope (naive)" : "rope_backward (naive)");
}

}  // namespace

void register_rope(Registry& r) {
  r.op("rope", Device::cuda)
      .add<RopeArgs>("naive", VariantTag::naive, "one thread per pair, sin and cos in double",
                     &rope_naive<float, 1>, &rope_naive<double, 1>);
  r.op("rope_backward", Device::cuda)
      .add<RopeArgs>("naive", VariantTag::naive, "one thread per pair, turned back",
                     &rope_naive<float, -1>, &rope_naive<double, -1>);
}
PRISM_CUDA_KERNELS(62, register_rope);

}  // namespace prism::kernels::cuda
