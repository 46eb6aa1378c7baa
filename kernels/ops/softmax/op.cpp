// Adds softmax's definitions to the list every op table reads (kernels/op_def.h), and computes its
// costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/softmax/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::softmax, ops::softmax_backward, ops::log_softmax, ops::log_softmax_backward);

}  // namespace prism::kernels

namespace prism::costs {

Cost softmax(int64_t numel, int64_t elem_size) {
  return make_cost(4 * Count(numel), 0, 2 * Count(numel) * elem_size);
}

Cost softmax_backward(int64_t numel, int64_t elem_size) {
  return make_cost(4 * Count(numel), 0, 3 * Count(numel) * elem_size);
}

}  // namespace prism::costs
