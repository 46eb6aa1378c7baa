// Adds index's definitions to the list every op table reads (kernels/op_def.h), and computes its
// costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/index/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::gather, ops::scatter_add, ops::index_select, ops::index_add);

}  // namespace prism::kernels

namespace prism::costs {

Cost gather(int64_t index_numel, int64_t out_numel, int64_t elem_size) {
  return make_cost(0, 0, 8 * Count(index_numel) + 2 * Count(out_numel) * elem_size);
}

Cost scatter_add(int64_t index_numel, int64_t src_numel, int64_t elem_size) {
  return make_cost(src_numel, 0, 8 * Count(index_numel) + 3 * Count(src_numel) * elem_size);
}

}  // namespace prism::costs
