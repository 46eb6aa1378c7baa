// Reductions, naive variant: each output is one row of a 2-D strided view [rows, cols].
//
// Idea: the tensor layer moves the reduced dims to the end and merges them, so every reduction
// (over one dim, several, or all) is "reduce each row". Sums accumulate in double for float32
// input, which keeps the error of a long sum near float32 rounding (a float accumulator drifts
// by ~sqrt(n) ulps).
// Cost: sum/mean: cols - 1 adds per row (+1 divide for mean); max/argmax: cols - 1 compares.
#include <limits>

#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/reduce/naive.h"
#include "kernels/ops/reduce/args.h"

namespace prism::kernels::cpu {

// sum_naive is shared with the optimized variant (optimized.cpp), which falls back to it
// for views whose rows and columns are both strided.
template <class T>
void sum_naive(const ReduceArgs<T>& a) {
  for (int64_t o = 0; o < a.rows; ++o) {
    const T* row = a.x + o * a.row_stride;
    double acc = 0;
    for (int64_t i = 0; i < a.cols; ++i) acc += static_cast<double>(row[i * a.col_stride]);
    a.out[o] = static_cast<T>(acc);
  }
}
template void sum_naive<float>(const ReduceArgs<float>&);
template void sum_naive<double>(const ReduceArgs<double>&);

namespace {

template <class T>
void mean_naive(const ReduceArgs<T>& a) {
  sum_naive(a);
  for (int64_t o = 0; o < a.rows; ++o) a.out[o] /= static_cast<T>(a.cols);
}

// Max of each row, with the position of its first occurrence; NaN wins (it propagates, as in
// NumPy), so a NaN in the input is never silently dropped.
template <class T>
void max_naive(const ReduceArgs<T>& a) {
  for (int64_t o = 0; o < a.rows; ++o) {
    const T* row = a.x + o * a.row_stride;
    T best = row[0];
    int64_t at = 0;
    for (int64_t i = 1; i < a.cols && best == best; ++i) {
      T v = row[i * a.col_stride];
      if (v > best || v != v) {
        best = v;
        at = i;
      }
    }
    if (a.out) a.out[o] = best;
    if (a.index) a.index[o] = at;
  }
}

}  // namespace

void register_reduce_naive(Registry& r) {
  r.op("sum", Device::cpu)
      .add<ReduceArgs>("naive", VariantTag::naive, "row loop, double accumulator",
                       &sum_naive<float>, &sum_naive<double>);
  r.op("mean", Device::cpu)
      .add<ReduceArgs>("naive", VariantTag::naive, "row loop, double accumulator",
                       &mean_naive<float>, &mean_naive<double>);
  r.op("max", Device::cpu)
      .add<ReduceArgs>("naive", VariantTag::naive, "row loop", &max_naive<float>,
                       &max_naive<double>);
  r.op("argmax", Device::cpu)
      .add<ReduceArgs>("naive", VariantTag::naive, "row loop", &max_naive<float>,
                       &max_naive<double>);
}
PRISM_CPU_KERNELS(30, register_reduce_naive);

}  // namespace prism::kernels::cpu
