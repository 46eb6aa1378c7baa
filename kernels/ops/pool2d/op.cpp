// Adds pool2d's definitions to the list every op table reads (kernels/op_def.h), and computes its
// costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/pool2d/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::max_pool2d, ops::max_pool2d_backward, ops::avg_pool2d, ops::avg_pool2d_backward);

}  // namespace prism::kernels

namespace prism::costs {

namespace {

Count pool2d_out_numel(const Dims& x, int64_t kernel, int64_t stride, int64_t padding) {
  return Count(x[0]) * x[1] * window_out_size(x[2], kernel, stride, padding) *
         window_out_size(x[3], kernel, stride, padding);
}

}  // namespace

Cost pool2d(const Dims& x, int64_t kernel, int64_t stride, int64_t padding, bool with_index,
            int64_t elem_size) {
  const Count out = pool2d_out_numel(x, kernel, stride, padding);
  return make_cost(out * kernel * kernel, 0,
                   Count(x.numel()) * elem_size + out * (elem_size + (with_index ? 8 : 0)));
}

Cost max_pool2d_backward(const Dims& x, int64_t kernel, int64_t stride, int64_t padding,
                         int64_t elem_size) {
  const Count dy = pool2d_out_numel(x, kernel, stride, padding);
  return make_cost(dy, 0, dy * (elem_size + 8) + Count(x.numel()) * elem_size);
}

Cost avg_pool2d_backward(const Dims& x, int64_t kernel, int64_t stride, int64_t padding,
                         int64_t elem_size) {
  const Count dy = pool2d_out_numel(x, kernel, stride, padding);
  return make_cost(dy * kernel * kernel, 0, (dy + x.numel()) * elem_size);
}

}  // namespace prism::costs
