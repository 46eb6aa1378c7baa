// Adds conv2d's definitions to the list every op table reads (kernels/op_def.h), and computes its
// costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/conv2d/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::conv2d, ops::conv2d_backward_input, ops::conv2d_backward_weight, ops::im2col,
              ops::col2im);

}  // namespace prism::kernels

namespace prism::costs {

namespace {

// N O Ho Wo C kh kw: the multiply-adds of one conv2d (and of each of its gradients).
Count conv2d_macs(const Dims& x, const Dims& weight, int64_t stride, int64_t padding) {
  const int64_t ho = window_out_size(x[2], weight[2], stride, padding);
  const int64_t wo = window_out_size(x[3], weight[3], stride, padding);
  return Count(x[0]) * weight[0] * ho * wo * weight[1] * weight[2] * weight[3];
}

Count conv2d_out_numel(const Dims& x, const Dims& weight, int64_t stride, int64_t padding) {
  return Count(x[0]) * weight[0] * window_out_size(x[2], weight[2], stride, padding) *
         window_out_size(x[3], weight[3], stride, padding);
}

}  // namespace

Cost im2col(int64_t n, int64_t k, int64_t p, int64_t x_numel, int64_t elem_size) {
  return make_cost(0, 0, (Count(x_numel) + n * k * p) * elem_size);
}

Cost col2im(int64_t n, int64_t k, int64_t p, int64_t dx_numel, int64_t elem_size) {
  const Count patches = Count(n) * k * p;
  return make_cost(patches, 0, (patches + dx_numel) * elem_size);
}

Cost conv2d(const Dims& x, const Dims& weight, bool has_bias, int64_t stride, int64_t padding,
            int64_t elem_size) {
  const Count macs = conv2d_macs(x, weight, stride, padding);
  const Count out = conv2d_out_numel(x, weight, stride, padding);
  const int64_t bias = has_bias ? weight[0] : 0;
  return make_cost(2 * macs + (has_bias ? out : 0), macs,
                   (Count(x.numel()) + weight.numel() + bias + out) * elem_size);
}

Cost conv2d_backward_input(const Dims& x, const Dims& weight, int64_t stride, int64_t padding,
                           int64_t elem_size) {
  const Count macs = conv2d_macs(x, weight, stride, padding);
  const Count dy = conv2d_out_numel(x, weight, stride, padding);
  return make_cost(2 * macs, macs, (dy + weight.numel() + x.numel()) * elem_size);
}

Cost conv2d_backward_weight(const Dims& x, const Dims& weight, int64_t stride, int64_t padding,
                            int64_t elem_size) {
  const Count macs = conv2d_macs(x, weight, stride, padding);
  const Count dy = conv2d_out_numel(x, weight, stride, padding);
  return make_cost(2 * macs, macs, (dy + x.numel() + weight.numel()) * elem_size);
}

}  // namespace prism::costs
