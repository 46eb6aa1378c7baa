// sum and mean, optimized variant: the naive kernel's double accumulator, vectorized.
//
// Why. The naive loop keeps one double running sum: every add waits for the previous one
// (4 cycles of latency on this core), so a row of floats streams at ~1 element per 4 cycles,
// far below memory bandwidth. Eigen's reference over a Map with run-time strides does not
// vectorize either (docs/PERFORMANCE.md, "Open issues"). A convolution's bias gradient
// (sum of dy over N, H, W) was ~9 % of a LeNet training step.
//
// How. Three layouts, chosen per call from the strides of the [rows, cols] view:
//   rows contiguous (col_stride 1):  kLanes independent double accumulators per row, which
//     the compiler keeps in four zmm registers (8 doubles each), converting 8 floats at a
//     time; the lanes are added pairwise at the end;
//   reduce down columns (row_stride 1, e.g. sum over dim 0 of [N, C]): sweep the column index
//     in the outer loop and add a whole contiguous line of x into a line of double partial
//     sums (the output rows), which vectorizes across outputs;
//   anything else: the naive loop.
// Summation order differs from the naive kernel (lanes, then a pairwise fold), so results
// agree to rounding of the double sums, not bit for bit; the accuracy is the same or better
// (shorter dependent chains).
// Cost: the same as naive: (cols - 1) adds per output (+ 1 divide for mean).
#include <algorithm>
#include <vector>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/reduce_naive.h"

namespace prism::kernels::cpu {
namespace {

constexpr int kLanes = 32;  // 4 zmm registers of doubles: enough chains to hide add latency

template <class T>
double sum_contiguous(const T* x, int64_t n) {
  double lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) lane[k] += static_cast<double>(x[i + k]);
  }
  for (int64_t k = 0; i < n; ++i, ++k) lane[k] += static_cast<double>(x[i]);
  for (int width = kLanes / 2; width > 0; width /= 2) {  // pairwise fold of the lanes
    for (int k = 0; k < width; ++k) lane[k] += lane[k + width];
  }
  return lane[0];
}

template <class T>
void sum_optimized(const ReduceArgs<T>& a) {
  if (a.col_stride == 1 || a.cols <= 1) {
    for (int64_t o = 0; o < a.rows; ++o) {
      a.out[o] = static_cast<T>(sum_contiguous(a.x + o * a.row_stride, a.cols));
    }
    return;
  }
  if (a.row_stride == 1) {
    std::vector<double> acc(static_cast<size_t>(a.rows), 0.0);
    for (int64_t i = 0; i < a.cols; ++i) {
      const T* line = a.x + i * a.col_stride;  // x[o, i] for every o, contiguous in o
      for (int64_t o = 0; o < a.rows; ++o) acc[static_cast<size_t>(o)] += line[o];
    }
    for (int64_t o = 0; o < a.rows; ++o) a.out[o] = static_cast<T>(acc[static_cast<size_t>(o)]);
    return;
  }
  sum_naive(a);  // both strided: nothing to vectorize along
}

template <class T>
void mean_optimized(const ReduceArgs<T>& a) {
  sum_optimized(a);
  for (int64_t o = 0; o < a.rows; ++o) a.out[o] /= static_cast<T>(a.cols);
}

}  // namespace

void register_reduce_optimized(Registry& r) {
  r.op("sum", Device::cpu)
      .add<ReduceArgs>("optimized", VariantTag::optimized,
                       "32 double lanes per contiguous row; column sums vectorized across outputs",
                       &sum_optimized<float>, &sum_optimized<double>);
  r.op("mean", Device::cpu)
      .add<ReduceArgs>("optimized", VariantTag::optimized,
                       "32 double lanes per contiguous row; column sums vectorized across outputs",
                       &mean_optimized<float>, &mean_optimized<double>);
}
PRISM_CPU_KERNELS(50, register_reduce_optimized);

}  // namespace prism::kernels::cpu
