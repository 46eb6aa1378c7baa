// Adds cross_entropy's definitions to the list every op table reads (kernels/op_def.h), and
// computes its costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/cross_entropy/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::cross_entropy, ops::cross_entropy_backward);

}  // namespace prism::kernels

namespace prism::costs {

Cost cross_entropy(int64_t rows, int64_t cols, bool saves_lse, int64_t elem_size) {
  const Count logits = Count(rows) * cols;
  const Count bytes =
      (logits + 1) * elem_size + 8 * Count(rows) + (saves_lse ? 8 * Count(rows) : 0);
  return make_cost(4 * logits + 3 * Count(rows) + 1, 0, bytes);
}

Cost cross_entropy_backward(int64_t rows, int64_t cols, int64_t elem_size) {
  const Count logits = Count(rows) * cols;
  return make_cost(3 * logits + rows, 0,
                   2 * logits * elem_size + 8 * Count(rows) + 8 * Count(rows));
}

}  // namespace prism::costs
