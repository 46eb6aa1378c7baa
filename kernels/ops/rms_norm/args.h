// rms_norm's argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// RMS normalisation of each row of a 2-D strided view [rows, cols] (Zhang & Sennrich, 2019; the
// normalisation of LLaMA and most transformers since): layer_norm without the mean and the bias,
//   rstd = 1 / sqrt(sum_j x_j^2 / cols + eps),  out_j = x_j * rstd * weight_j
// weight is contiguous [cols], or null (1). out is contiguous [rows, cols]; rstd, when not null,
// receives each row's rstd (contiguous [rows]), what backward needs.
template <class T>
struct RmsNormArgs {
  const T* x;
  const T* weight;
  T* out;
  T* rstd;
  int64_t rows, cols;
  int64_t row_stride, col_stride;
  double eps;
};

// Its gradient, one kernel for both: from g = dloss/dout (contiguous [rows, cols]), x as in
// forward (strided) and the saved rstd, with xhat = x rstd and gw = g weight (rstd depends on
// every x_k of the row: d rstd / d x_k = -rstd^3 x_k / cols):
//   dx_j = rstd (gw_j - xhat_j mean_k(gw_k xhat_k))       each row
//   dweight_j = sum_rows g_j xhat_j                        each column
// dx (contiguous [rows, cols]) and dweight ([cols]) are overwritten; a null one is not needed.
template <class T>
struct RmsNormBackwardArgs {
  const T* x;
  const T* g;
  const T* weight;
  const T* rstd;
  T* dx;
  T* dweight;
  int64_t rows, cols;
  int64_t row_stride, col_stride;  // x's; g and dx are contiguous
};

}  // namespace prism::kernels
