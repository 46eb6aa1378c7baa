// Softmax and log_softmax, reference variant: the same three-pass math as Eigen array
// expressions on a strided Map, vectorised by Eigen.
#include <Eigen/Core>

#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/softmax/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
using RowMajorArray = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using DynStride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;

template <class T>
void softmax_eigen_impl(const SoftmaxArgs<T>& a, bool log) {
  Eigen::Map<const RowMajorArray<T>, 0, DynStride> x(a.x, a.rows, a.cols,
                                                     DynStride(a.row_stride, a.col_stride));
  Eigen::Map<RowMajorArray<T>> y(a.out, a.rows, a.cols);
  auto m = x.rowwise().maxCoeff().eval();
  y = x.colwise() - m;  // shifted logits
  if (log) {
    auto lse = y.exp().rowwise().sum().log().eval();
    y.colwise() -= lse;
  } else {
    y = y.exp();
    auto s = y.rowwise().sum().eval();
    y.colwise() /= s;
  }
}

template <class T>
void softmax_eigen(const SoftmaxArgs<T>& a) {
  softmax_eigen_impl(a, false);
}
template <class T>
void log_softmax_eigen(const SoftmaxArgs<T>& a) {
  softmax_eigen_impl(a, true);
}

}  // namespace

void register_softmax_eigen(Registry& r) {
  r.op("softmax", Device::cpu)
      .add<SoftmaxArgs>("reference", VariantTag::reference, "Eigen array expressions",
                        &softmax_eigen<float>, &softmax_eigen<double>);
  r.op("log_softmax", Device::cpu)
      .add<SoftmaxArgs>("reference", VariantTag::reference, "Eigen array expressions",
                        &log_softmax_eigen<float>, &log_softmax_eigen<double>);
}
PRISM_CPU_KERNELS(120, register_softmax_eigen);

}  // namespace prism::kernels::cpu
