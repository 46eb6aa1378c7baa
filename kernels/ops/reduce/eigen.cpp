// Reductions, reference variant: Eigen's rowwise reductions over a strided Map.
//
// The yardstick the naive kernels are checked against, and a taste of what a vectorised
// library does with the same [rows, cols] view.
#include <Eigen/Core>

#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/reduce/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using StridedMap = Eigen::Map<const RowMajor<T>, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

template <class T>
StridedMap<T> view(const ReduceArgs<T>& a) {
  return StridedMap<T>(a.x, a.rows, a.cols,
                       Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(a.row_stride, a.col_stride));
}

// Sums accumulate in double, as the naive kernel does: a float accumulator drifts (a row of
// 100003 x 0.1f summed in float is off by 1.4e-4 relative; tests/tensor/ops_reduce_test.cpp).
template <class T>
void sum_eigen(const ReduceArgs<T>& a) {
  Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>> out(a.out, a.rows);
  out = view(a).template cast<double>().rowwise().sum().template cast<T>();
}

template <class T>
void mean_eigen(const ReduceArgs<T>& a) {
  Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, 1>> out(a.out, a.rows);
  out = view(a).template cast<double>().rowwise().mean().template cast<T>();
}

// Eigen's plain maxCoeff leaves a NaN to the SIMD max instruction (PropagateFast), which can
// drop it and return a number. PropagateNaN makes the NaN win but points at the last NaN, so a
// row whose result is NaN is scanned for its first one: the rule of every max kernel (first NaN,
// else the first maximum), and extra work only for rows that hold a NaN.
template <class T>
void max_eigen(const ReduceArgs<T>& a) {
  auto m = view(a);
  for (int64_t o = 0; o < a.rows; ++o) {
    Eigen::Index at = 0;
    const T best = m.row(o).template maxCoeff<Eigen::PropagateNaN>(&at);
    if (best != best) {
      at = 0;
      while (!(m(o, at) != m(o, at))) ++at;
    }
    if (a.out) a.out[o] = best;
    if (a.index) a.index[o] = static_cast<int64_t>(at);
  }
}

}  // namespace

void register_reduce_eigen(Registry& r) {
  r.op("sum", Device::cpu)
      .add<ReduceArgs>("reference", VariantTag::reference, "Eigen rowwise().sum()",
                       &sum_eigen<float>, &sum_eigen<double>);
  r.op("mean", Device::cpu)
      .add<ReduceArgs>("reference", VariantTag::reference, "Eigen rowwise().mean()",
                       &mean_eigen<float>, &mean_eigen<double>);
  r.op("max", Device::cpu)
      .add<ReduceArgs>("reference", VariantTag::reference, "Eigen maxCoeff per row",
                       &max_eigen<float>, &max_eigen<double>);
  r.op("argmax", Device::cpu)
      .add<ReduceArgs>("reference", VariantTag::reference, "Eigen maxCoeff per row",
                       &max_eigen<float>, &max_eigen<double>);
}
PRISM_CPU_KERNELS(40, register_reduce_eigen);

}  // namespace prism::kernels::cpu
