// Exercise 07, a typical mistake: dx without the mean term.
//
// The mean depends on every x_k of the row, so x_j also reaches the output through the mean: that
// path contributes -rstd mean_k(gw_k) to dx_j. Dropping it leaves dx_j = rstd (gw_j - xhat_j
// mean(gw xhat)), off by rstd mean(gw) in every element (the gradient of a row's constant shift,
// which the output cannot see).
// checker-expects: \[1,7\] one row, no weight or bias +FAIL
#include <cstdint>
#include <vector>

#include "kernels/ops/layer_norm/args.h"
#include "kernels/registry.h"

using prism::kernels::LayerNormBackwardArgs;

void my_layer_norm_backward(const LayerNormBackwardArgs<float>& a) {
  const int64_t n = a.cols;
  std::vector<double> sum_gx(static_cast<size_t>(n), 0), sum_g(static_cast<size_t>(n), 0);
  std::vector<float> xhat(static_cast<size_t>(n)), gw(static_cast<size_t>(n));
  for (int64_t r = 0; r < a.rows; ++r) {
    const float* x = a.x + r * a.row_stride;
    const float* g = a.g + r * n;
    double s_gwx = 0;  // the mistake: no sum of gw, for mean(gw)
    for (int64_t j = 0; j < n; ++j) {
      xhat[j] = (x[j * a.col_stride] - a.mean[r]) * a.rstd[r];
      gw[j] = a.weight ? g[j] * a.weight[j] : g[j];
      s_gwx += gw[j] * xhat[j];
      sum_gx[j] += g[j] * xhat[j];
      sum_g[j] += g[j];
    }
    if (!a.dx) continue;
    const double mean_gwx = s_gwx / static_cast<double>(n);
    for (int64_t j = 0; j < n; ++j) {
      a.dx[r * n + j] = static_cast<float>(a.rstd[r] * (gw[j] - xhat[j] * mean_gwx));
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    if (a.dweight) a.dweight[j] = static_cast<float>(sum_gx[j]);
    if (a.dbias) a.dbias[j] = static_cast<float>(sum_g[j]);
  }
}

PRISM_REGISTER_KERNEL(layer_norm_backward, my_layer_norm_backward);
