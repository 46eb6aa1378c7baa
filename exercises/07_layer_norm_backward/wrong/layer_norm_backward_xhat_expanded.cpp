// Exercise 07, a typical mistake: xhat as x * rstd - mean * rstd.
//
// Written as a * x + b with a = rstd, b = -mean rstd, xhat is one fused multiply-add per element,
// and forward kernels do normalise that way. But for x near 10000 with a spread of 1, x * rstd and
// mean * rstd are both near 10000: each is rounded to float32's 24 bits at that size (steps of
// 1e-3), and their difference, the small xhat, keeps those roundings instead of its own digits.
// (x - mean) rstd subtracts first, and that difference of two nearby floats is exact. With one
// column (x - mean = 0, rstd = 316) the expanded form leaves a residue there too.
// checker-expects: \[64,256\] x near 10000 \(mean 1e4, std 1\) +FAIL
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
    double s_gw = 0, s_gwx = 0;
    for (int64_t j = 0; j < n; ++j) {
      // The mistake: (x - mean) * rstd, expanded.
      xhat[j] = x[j * a.col_stride] * a.rstd[r] - a.mean[r] * a.rstd[r];
      gw[j] = a.weight ? g[j] * a.weight[j] : g[j];
      s_gw += gw[j];
      s_gwx += gw[j] * xhat[j];
      sum_gx[j] += g[j] * xhat[j];
      sum_g[j] += g[j];
    }
    if (!a.dx) continue;
    const double mean_gw = s_gw / static_cast<double>(n);
    const double mean_gwx = s_gwx / static_cast<double>(n);
    for (int64_t j = 0; j < n; ++j) {
      a.dx[r * n + j] = static_cast<float>(a.rstd[r] * (gw[j] - mean_gw - xhat[j] * mean_gwx));
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    if (a.dweight) a.dweight[j] = static_cast<float>(sum_gx[j]);
    if (a.dbias) a.dbias[j] = static_cast<float>(sum_g[j]);
  }
}

PRISM_REGISTER_KERNEL(layer_norm_backward, my_layer_norm_backward);
