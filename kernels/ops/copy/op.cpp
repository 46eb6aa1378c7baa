// Adds copy's definitions to the list every op table reads (kernels/op_def.h), and computes its
// costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/copy/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::copy, ops::to_cuda, ops::to_cpu);

}  // namespace prism::kernels

namespace prism::costs {

Cost cast(int64_t numel, int64_t in_elem_size, int64_t out_elem_size) {
  return make_cost(0, 0, Count(numel) * (in_elem_size + out_elem_size));
}

Cost copy(int64_t numel, int64_t elem_size) {
  return make_cost(0, 0, 2 * Count(numel) * elem_size);
}

}  // namespace prism::costs
