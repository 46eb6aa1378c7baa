// Exercise 07: the backward pass of layer_norm, by hand. The task and the derivation are in
// README.md, next to this file.
//
// Forward, for each row x of length n = a.cols (prism's layer_norm, kernels/args.h):
//   mean = sum_j x_j / n,   var = sum_j (x_j - mean)^2 / n,   rstd = 1 / sqrt(var + eps)
//   xhat_j = (x_j - mean) rstd,   y_j = xhat_j w_j + b_j
// Backward, from g = dloss/dy, with gw_j = g_j w_j:
//   dx_j      = rstd (gw_j - mean_k(gw_k) - xhat_j mean_k(gw_k xhat_k))    each row
//   dweight_j = sum over rows of g_j xhat_j                                 each column
//   dbias_j   = sum over rows of g_j                                        each column
//
// Your kernel receives a LayerNormBackwardArgs<float> (kernels/args.h):
//   x[r][j] = a.x[r * a.row_stride + j * a.col_stride]   the forward's input, a strided view
//   g[r][j] = a.g[r * a.cols + j]                         contiguous
//   a.mean[r], a.rstd[r]                                  the forward's saved row statistics
//   a.weight[j]                                           or null: no weight (w_j = 1)
//   a.dx[r * a.cols + j]                                  contiguous, or null: not needed
//   a.dweight[j], a.dbias[j]                              or null: not needed
// for r < a.rows, j < a.cols. The outputs arrive uninitialised: write every element of each
// one that is not null (set dweight and dbias to 0 before you add rows into them).
//
// Check it:  build/prism check layer_norm_backward
#include "kernels/ops/layer_norm/args.h"
#include "kernels/registry.h"

using prism::kernels::LayerNormBackwardArgs;

// [[maybe_unused]]: the empty body does not read `a` yet, and -Wextra warns about unused
// parameters. Delete the attribute once your code uses `a`.
void my_layer_norm_backward([[maybe_unused]] const LayerNormBackwardArgs<float>& a) {
  // TODO(exercise): for each row, compute xhat_j and gw_j, the row means mean(gw) and
  // mean(gw xhat), then dx_j; add g_j xhat_j into dweight_j and g_j into dbias_j. Skip each
  // null output. When the checker passes, delete this TODO comment: ctest then checks your
  // kernel instead of expecting this empty one to fail.
}

PRISM_REGISTER_KERNEL(layer_norm_backward, my_layer_norm_backward);
