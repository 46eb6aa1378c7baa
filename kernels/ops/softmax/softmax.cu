// Softmax and log_softmax over the rows of a 2-D strided view [rows, cols], and their backward,
// on the GPU. One row group per row: a warp for rows up to 1024 elements, a block of 256
// threads beyond (kernels/cuda/row_reduce.cuh), thread t taking elements t, t + 32 (or 256), ...
//
//   softmax(x)_j = exp(x_j - m) / s,  log_softmax(x)_j = (x_j - m) - log(s),
//   m = max_k x_k,  s = sum_k exp(x_k - m)
//
// "naive" (tag naive): the CPU's three passes, each a full read of the row from global memory:
// the row max (a tree over the group), the sum of exp(x - m) in double, then the output. Reads
// the row three times and writes it once.
//
// "online" (tag fused): m and s in one read with the running rescale of Milakov & Gimelshein
// (kernels/cuda/online_softmax.cuh), then the output: two reads and one write. On a GPU every
// pass is a trip to global memory (or L2, for rows that stay there), so for a memory-bound
// kernel the time should follow the 4 : 3 ratio of row-sized transfers.
//
// Backward (naive, the only variant), with y the forward output and g the output gradient:
//   softmax:     dx = y (g - sum_k g_k y_k)       log_softmax: dx = g - exp(y) sum_k g_k
// one reduction (in double, as on the CPU) and one write pass per row.
//
// Cost: 4 FLOPs per element forward and backward (docs/COSTS.md). `prism lab softmax --device
// cuda` prints the figures: at 4096 x 1024 online's lead over naive is close to the 4 : 3
// above, and log_softmax's two variants tie there (measured: docs/PERFORMANCE.md, "GPU (CUDA)").
#include <cstdint>
#include <limits>

#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/cuda/online_softmax.cuh"
#include "kernels/cuda/row_reduce.cuh"
#include "kernels/ops/elementwise/math.cuh"
#include "kernels/ops/softmax/args.h"

namespace prism::kernels::cuda {
namespace {

// The CPU's std::max(m, x): keeps m unless m < x.
struct MaxOp {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};

// ---- naive: three passes ---------------------------------------------------------------------

template <class T, int kThreads, bool kLog>
__global__ void softmax_three_pass(SoftmaxArgs<T> a) {
  using Spread = RowSpread<kThreads>;
  const int64_t n = a.cols, cs = a.col_stride;
  for (int64_t r = Spread::first_row(); r < a.rows; r += Spread::row_step()) {
    const T* x = a.x + r * a.row_stride;
    T* y = a.out + r * n;
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t j = threadIdx.x; j < n; j += kThreads) m = MaxOp{}(m, x[j * cs]);
    m = group_reduce<kThreads>(m, MaxOp{});
    double sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      sum += math::dexp(static_cast<double>(x[j * cs] - m));
    }
    sum = group_reduce<kThreads>(sum, SumOp{});
    if constexpr (kLog) {
      const T lse = static_cast<T>(math::dlog(sum));
      for (int64_t j = threadIdx.x; j < n; j += kThreads) y[j] = x[j * cs] - m - lse;
    } else {
      for (int64_t j = threadIdx.x; j < n; j += kThreads) {
        y[j] = static_cast<T>(math::dexp(static_cast<double>(x[j * cs] - m)) / sum);
      }
    }
  }
}

// ---- online: statistics in one pass, then the output -----------------------------------------

template <class T, int kThreads, bool kLog>
__global__ void softmax_online_rows(SoftmaxArgs<T> a) {
  using Spread = RowSpread<kThreads>;
  const int64_t n = a.cols, cs = a.col_stride;
  for (int64_t r = Spread::first_row(); r < a.rows; r += Spread::row_step()) {
    const T* x = a.x + r * a.row_stride;
    T* y = a.out + r * n;
    const MaxSum<T> ms = row_max_sum<kThreads>(x, n, cs);
    const T m = ms.m;
    if (m == -std::numeric_limits<T>::infinity()) {
      // Every entry is -inf: 0/0 for softmax, -inf - (-inf) for log_softmax. NaN, as the CPU.
      for (int64_t j = threadIdx.x; j < n; j += kThreads) {
        y[j] = std::numeric_limits<T>::quiet_NaN();
      }
    } else if constexpr (kLog) {
      // (x - m) - log(s), not x - (m + log(s)): near x = 1000 the sum m + log(s) would be
      // rounded to float's 6e-5 spacing there, while x - m is exact and small.
      const T log_s = static_cast<T>(math::dlog(static_cast<double>(ms.s)));
      for (int64_t j = threadIdx.x; j < n; j += kThreads) y[j] = (x[j * cs] - m) - log_s;
    } else {
      const T inv = static_cast<T>(1.0 / static_cast<double>(ms.s));
      for (int64_t j = threadIdx.x; j < n; j += kThreads) y[j] = math::dexp(x[j * cs] - m) * inv;
    }
  }
}

// ---- backward --------------------------------------------------------------------------------

template <class T, int kThreads, bool kLog>
__global__ void softmax_backward_rows(SoftmaxBackwardArgs<T> a) {
  using Spread = RowSpread<kThreads>;
  const int64_t n = a.cols;
  for (int64_t r = Spread::first_row(); r < a.rows; r += Spread::row_step()) {
    const T* y = a.y + r * n;
    const T* g = a.g + r * n;
    T* dx = a.dx + r * n;
    // softmax: sum g y; log_softmax: sum g
    double acc = 0;
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      acc += kLog ? static_cast<double>(g[j]) : static_cast<double>(g[j]) * y[j];
    }
    const T total = static_cast<T>(group_reduce<kThreads>(acc, SumOp{}));
    for (int64_t j = threadIdx.x; j < n; j += kThreads) {
      dx[j] = kLog ? g[j] - math::dexp(y[j]) * total : y[j] * (g[j] - total);
    }
  }
}

// ---- launchers: a warp per row for short rows, a block per row for long ones ----------------

template <class T, bool kLog>
void softmax_naive(const SoftmaxArgs<T>& a) {
  if (warp_per_row(a.cols)) {
    launch_rows<32>(&softmax_three_pass<T, 32, kLog>, a.rows, a);
  } else {
    launch_rows<kRowBlockThreads>(&softmax_three_pass<T, kRowBlockThreads, kLog>, a.rows, a);
  }
  PRISM_CUDA_CHECK_LAUNCH(kLog ? "log_softmax (naive)" : "softmax (naive)");
}

template <class T, bool kLog>
void softmax_online(const SoftmaxArgs<T>& a) {
  if (warp_per_row(a.cols)) {
    launch_rows<32>(&softmax_online_rows<T, 32, kLog>, a.rows, a);
  } else {
    launch_rows<kRowBlockThreads>(&softmax_online_rows<T, kRowBlockThreads, kLog>, a.rows, a);
  }
  PRISM_CUDA_CHECK_LAUNCH(kLog ? "log_softmax (online)" : "softmax (online)");
}

template <class T, bool kLog>
void softmax_backward(const SoftmaxBackwardArgs<T>& a) {
  if (a.rows == 0 || a.cols == 0) return;
  if (warp_per_row(a.cols)) {
    launch_rows<32>(&softmax_backward_rows<T, 32, kLog>, a.rows, a);
  } else {
    launch_rows<kRowBlockThreads>(&softmax_backward_rows<T, kRowBlockThreads, kLog>, a.rows, a);
  }
  PRISM_CUDA_CHECK_LAUNCH(kLog ? "log_softmax_backward (naive)" : "softmax_backward (naive)");
}

}  // namespace

void register_softmax(Registry& r) {
  r.op("softmax", Device::cuda)
      .add<SoftmaxArgs>("naive", VariantTag::naive,
                        "three passes per row (max, sum, write), a warp or block per row",
                        &softmax_naive<float, false>, &softmax_naive<double, false>);
  r.op("softmax", Device::cuda)
      .add<SoftmaxArgs>("online", VariantTag::fused,
                        "online max+sum in one read, then write; a warp or block per row",
                        &softmax_online<float, false>, &softmax_online<double, false>);
  r.op("log_softmax", Device::cuda)
      .add<SoftmaxArgs>("naive", VariantTag::naive,
                        "three passes per row (max, sum, write), a warp or block per row",
                        &softmax_naive<float, true>, &softmax_naive<double, true>);
  r.op("log_softmax", Device::cuda)
      .add<SoftmaxArgs>("online", VariantTag::fused,
                        "online max+sum in one read, then write; a warp or block per row",
                        &softmax_online<float, true>, &softmax_online<double, true>);
  r.op("softmax_backward", Device::cuda)
      .add<SoftmaxBackwardArgs>("naive", VariantTag::naive, "dot, then one pass; a group per row",
                                &softmax_backward<float, false>, &softmax_backward<double, false>);
  r.op("log_softmax_backward", Device::cuda)
      .add<SoftmaxBackwardArgs>("naive", VariantTag::naive, "sum, then one pass; a group per row",
                                &softmax_backward<float, true>, &softmax_backward<double, true>);
}
PRISM_CUDA_KERNELS(40, register_softmax);

}  // namespace prism::kernels::cuda
