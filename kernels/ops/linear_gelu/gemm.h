// The matrix product both linear_gelu variants share: a block of x w^T, by Eigen.
//
// dst[r, c] = sum_p x[r0 + r, p] w[c0 + c, p] for r < nrows, c < ncols, written row-major with
// leading dimension ld. x and w are mapped with their own strides (a unit column stride, the
// usual case, lets Eigen pack panels with vector loads; anything else runs through a fully
// strided map), so neither is copied here. The caller decides the threads (Eigen::setNbThreads).
#pragma once

#include <Eigen/Core>

#include "kernels/ops/linear_gelu/args.h"

namespace prism::kernels::cpu {

template <class T>
void linear_block(const LinearGeluArgs<T>& a, int64_t r0, int64_t nrows, int64_t c0, int64_t ncols,
                  T* dst, int64_t ld) {
  using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using DynStride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
  Eigen::Map<RowMajor, 0, Eigen::OuterStride<>> out(dst, nrows, ncols, Eigen::OuterStride<>(ld));
  const T* x = a.x + r0 * a.x_rs;
  const T* w = a.weight + c0 * a.w_rs;
  if (a.x_cs == 1 && a.w_cs == 1) {
    Eigen::Map<const RowMajor, 0, Eigen::OuterStride<>> X(x, nrows, a.in,
                                                          Eigen::OuterStride<>(a.x_rs));
    Eigen::Map<const RowMajor, 0, Eigen::OuterStride<>> W(w, ncols, a.in,
                                                          Eigen::OuterStride<>(a.w_rs));
    out.noalias() = X * W.transpose();
  } else {
    Eigen::Map<const RowMajor, 0, DynStride> X(x, nrows, a.in, DynStride(a.x_rs, a.x_cs));
    Eigen::Map<const RowMajor, 0, DynStride> W(w, ncols, a.in, DynStride(a.w_rs, a.w_cs));
    out.noalias() = X * W.transpose();
  }
}

}  // namespace prism::kernels::cpu
