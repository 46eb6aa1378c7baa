// Adds optim's definitions to the list every op table reads (kernels/op_def.h), and computes its
// costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/optim/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::sgd_update, ops::adam_update);

}  // namespace prism::kernels

namespace prism::costs {

Cost sgd_update(int64_t numel, int64_t elem_size, bool weight_decay, bool momentum, bool nesterov) {
  const int64_t flops = 2 + (weight_decay ? 2 : 0) + (momentum ? 2 : 0) + (nesterov ? 2 : 0);
  const int64_t accesses = momentum ? 5 : 3;
  return make_cost(flops * Count(numel), 0, accesses * Count(numel) * elem_size);
}

Cost adam_update(int64_t numel, int64_t elem_size, bool weight_decay, bool decoupled) {
  const int64_t flops = 13 + (weight_decay ? (decoupled ? 1 : 2) : 0);
  return make_cost(flops * Count(numel), 0, 7 * Count(numel) * elem_size);
}

}  // namespace prism::costs
