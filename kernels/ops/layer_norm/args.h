// layer_norm's argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// Layer normalisation of each row of a 2-D strided view [rows, cols] (x's last dim is cols):
//   mean = sum_j x_j / cols,  var = sum_j (x_j - mean)^2 / cols  (biased),
//   rstd = 1 / sqrt(var + eps),  out_j = (x_j - mean) * rstd * weight_j + bias_j
// weight and bias are contiguous [cols], or null (weight 1, bias 0). out is contiguous
// [rows, cols]. mean and rstd, when not null, receive each row's statistics (contiguous
// [rows]): what backward needs, so the front end asks for them only when autograd records.
template <class T>
struct LayerNormArgs {
  const T* x;
  const T* weight;
  const T* bias;
  T* out;
  T* mean;
  T* rstd;
  int64_t rows, cols;
  int64_t row_stride, col_stride;
  double eps;
};

// Its gradient, one kernel for all three: from g = dloss/dout (contiguous [rows, cols]), x as
// in forward (strided) and the saved mean and rstd, with xhat = (x - mean) rstd, gw = g weight:
//   dx_j = rstd (gw_j - mean_k(gw_k) - xhat_j mean_k(gw_k xhat_k))       each row
//   dweight_j = sum_rows g_j xhat_j,  dbias_j = sum_rows g_j             each column
// dx (contiguous [rows, cols]), dweight and dbias ([cols]) are overwritten; a null one is not
// needed and not computed.
template <class T>
struct LayerNormBackwardArgs {
  const T* x;
  const T* g;
  const T* weight;
  const T* mean;
  const T* rstd;
  T* dx;
  T* dweight;
  T* dbias;
  int64_t rows, cols;
  int64_t row_stride, col_stride;  // x's; g and dx are contiguous
};

}  // namespace prism::kernels
