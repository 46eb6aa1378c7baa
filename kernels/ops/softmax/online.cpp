// Softmax and log_softmax over rows, "online" variant (tag fused): two passes per row instead
// of three.
//
//   pass 1: m and s = sum_j exp(x_j - m) together, online (kernels/cpu/online_softmax.h:
//           the running sum is rescaled by exp(m_old - m_new) whenever the max grows)
//   pass 2: softmax y_j = exp(x_j - m) / s,  or log_softmax y_j = (x_j - m) - log(s)
//
// Why one pass fewer matters: softmax is memory-bound wherever its rows do not stay in cache
// between passes, and then the time is the bytes moved. Three passes read the input three times
// and write it once (4 row-sized transfers); two read it twice and write once (3). On a GPU,
// where every pass goes to global memory, that is the whole story, and it is the basis of flash
// attention: with the max and the sum kept online, a row of scores can stream through in
// blocks and never be stored. On this CPU a row of 1024 floats (4 KB) stays in L1 between
// passes, so there the pass count hardly matters; rows of 1M floats (4 MB, past the 1 MB L2)
// show it: log_softmax's cheap second pass then re-reads the row from L3, and the same elements
// take measurably longer than in short rows (docs/PERFORMANCE.md, "Fused vs unfused (CPU)").
//
// What makes this kernel fast on any row is vectorising exp (kernels/cpu/fast_exp.h): the naive
// variant calls libm's double exp twice per element, scalar.
//
// Cost: 4 FLOPs per element (docs/COSTS.md); traffic 2 reads + 1 write per element. The
// fastest CPU variant measured, for softmax and log_softmax, ahead of Eigen's reference and far
// ahead of naive (docs/PERFORMANCE.md, "Fused vs unfused (CPU)").
#include <cmath>
#include <limits>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/online_softmax.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/softmax/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T, bool kUnit>
void softmax_row(const T* x, int64_t n, int64_t stride, T* y, bool log) {
  const int64_t st = kUnit ? 1 : stride;
  const RowMaxSum<T> ms = online_max_sum<T, kUnit>(x, n, stride);
  const T m = ms.max;
  if (m == -std::numeric_limits<T>::infinity()) {
    // Every entry is -inf: 0/0 for softmax, -inf - (-inf) for log_softmax. NaN, like the
    // three-pass kernels and every framework.
    for (int64_t j = 0; j < n; ++j) y[j] = std::numeric_limits<T>::quiet_NaN();
    return;
  }
  if (log) {
    // (x - m) - log(s), not x - (m + log(s)): near x = 1000 the sum m + log(s) would be rounded
    // to float's 6e-5 spacing there, while x - m is exact and small.
    const T log_s = static_cast<T>(std::log(ms.sum));
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = (x[j * st] - m) - log_s;
  } else {
    const T inv = static_cast<T>(1.0 / ms.sum);
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) y[j] = kernel_exp(x[j * st] - m) * inv;
  }
}

template <class T>
void online_rows(const SoftmaxArgs<T>& a, bool log) {
  parallel_for(a.rows, rows_per_chunk(a.cols), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* x = a.x + r * a.row_stride;
      T* y = a.out + r * a.cols;
      if (a.col_stride == 1) {
        softmax_row<T, true>(x, a.cols, 1, y, log);
      } else {
        softmax_row<T, false>(x, a.cols, a.col_stride, y, log);
      }
    }
  });
}

template <class T>
void softmax_online(const SoftmaxArgs<T>& a) {
  online_rows(a, false);
}
template <class T>
void log_softmax_online(const SoftmaxArgs<T>& a) {
  online_rows(a, true);
}

}  // namespace

void register_softmax_online(Registry& r) {
  r.op("softmax", Device::cpu)
      .add<SoftmaxArgs>("online", VariantTag::fused,
                        "two passes per row: online max+sum, then write (vectorised exp)",
                        &softmax_online<float>, &softmax_online<double>);
  r.op("log_softmax", Device::cpu)
      .add<SoftmaxArgs>("online", VariantTag::fused,
                        "two passes per row: online max+sum, then write (vectorised exp)",
                        &log_softmax_online<float>, &log_softmax_online<double>);
}
PRISM_CPU_KERNELS(130, register_softmax_online);

}  // namespace prism::kernels::cpu
