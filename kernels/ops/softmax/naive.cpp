// Softmax and log_softmax over rows, naive variant: three passes per row.
//
//   softmax(x)_j = exp(x_j - m) / sum_k exp(x_k - m),  m = max_k x_k
// Subtracting the row max first keeps exp() from overflowing (exp(89) is inf in float32) and
// changes nothing mathematically. Pass 1 finds m, pass 2 sums the exponentials, pass 3 writes.
// (The fused "online" variant of the kernel-lab finds m and the sum in one pass.)
// Cost per row of n: softmax 4n FLOPs (max, sub+exp, add, div); log_softmax 4n.
//
// Backward, with y the forward output and g the output gradient, per row:
//   softmax:     dx = y * (g - sum(g * y))
//   log_softmax: dx = g - exp(y) * sum(g)
#include <cmath>

#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/softmax/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
void softmax_rows(const SoftmaxArgs<T>& a, bool log) {
  for (int64_t r = 0; r < a.rows; ++r) {
    const T* x = a.x + r * a.row_stride;
    T* y = a.out + r * a.cols;
    T m = x[0];
    for (int64_t j = 1; j < a.cols; ++j) m = std::max(m, x[j * a.col_stride]);
    double sum = 0;
    for (int64_t j = 0; j < a.cols; ++j)
      sum += std::exp(static_cast<double>(x[j * a.col_stride] - m));
    if (log) {
      T lse = static_cast<T>(std::log(sum));
      for (int64_t j = 0; j < a.cols; ++j) y[j] = x[j * a.col_stride] - m - lse;
    } else {
      for (int64_t j = 0; j < a.cols; ++j)
        y[j] = static_cast<T>(std::exp(static_cast<double>(x[j * a.col_stride] - m)) / sum);
    }
  }
}

template <class T>
void softmax_naive(const SoftmaxArgs<T>& a) {
  softmax_rows(a, false);
}
template <class T>
void log_softmax_naive(const SoftmaxArgs<T>& a) {
  softmax_rows(a, true);
}

template <class T>
void softmax_backward_naive(const SoftmaxBackwardArgs<T>& a) {
  for (int64_t r = 0; r < a.rows; ++r) {
    const T* y = a.y + r * a.cols;
    const T* g = a.g + r * a.cols;
    T* dx = a.dx + r * a.cols;
    double dot = 0;
    for (int64_t j = 0; j < a.cols; ++j) dot += static_cast<double>(g[j]) * y[j];
    for (int64_t j = 0; j < a.cols; ++j) dx[j] = y[j] * (g[j] - static_cast<T>(dot));
  }
}

template <class T>
void log_softmax_backward_naive(const SoftmaxBackwardArgs<T>& a) {
  for (int64_t r = 0; r < a.rows; ++r) {
    const T* y = a.y + r * a.cols;
    const T* g = a.g + r * a.cols;
    T* dx = a.dx + r * a.cols;
    double gsum = 0;
    for (int64_t j = 0; j < a.cols; ++j) gsum += g[j];
    for (int64_t j = 0; j < a.cols; ++j) dx[j] = g[j] - std::exp(y[j]) * static_cast<T>(gsum);
  }
}

}  // namespace

void register_softmax_naive(Registry& r) {
  r.op("softmax", Device::cpu)
      .add<SoftmaxArgs>("naive", VariantTag::naive, "three passes per row", &softmax_naive<float>,
                        &softmax_naive<double>);
  r.op("log_softmax", Device::cpu)
      .add<SoftmaxArgs>("naive", VariantTag::naive, "three passes per row",
                        &log_softmax_naive<float>, &log_softmax_naive<double>);
  r.op("softmax_backward", Device::cpu)
      .add<SoftmaxBackwardArgs>("naive", VariantTag::naive, "dot, then one pass per row",
                                &softmax_backward_naive<float>, &softmax_backward_naive<double>);
  r.op("log_softmax_backward", Device::cpu)
      .add<SoftmaxBackwardArgs>("naive", VariantTag::naive, "sum, then one pass per row",
                                &log_softmax_backward_naive<float>,
                                &log_softmax_backward_naive<double>);
}
PRISM_CPU_KERNELS(110, register_softmax_naive);

}  // namespace prism::kernels::cpu
