// Adds layer_norm's definitions to the list every op table reads (kernels/op_def.h), and computes
// its costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/layer_norm/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::layer_norm, ops::layer_norm_backward);

}  // namespace prism::kernels

namespace prism::costs {

Cost layer_norm(int64_t rows, int64_t cols, bool has_weight, bool has_bias, bool saves_stats,
                int64_t elem_size) {
  const Count n = Count(rows) * cols;
  const Count flops = (6 + (has_weight ? 1 : 0) + (has_bias ? 1 : 0)) * n + 5 * Count(rows);
  const Count elems =
      2 * n + (has_weight ? cols : 0) + (has_bias ? cols : 0) + (saves_stats ? 2 * Count(rows) : 0);
  return make_cost(flops, 0, elems * elem_size);
}

Cost layer_norm_backward(int64_t rows, int64_t cols, bool has_weight, bool dx, bool dweight,
                         bool dbias, int64_t elem_size) {
  const Count n = Count(rows) * cols;
  const int64_t per_elem =
      (dx ? 9 + (has_weight ? 1 : 0) : 0) + (dweight ? 2 : 0) + (dbias ? 1 : 0);
  // Read x, g, mean, rstd (and weight); write what is asked for.
  const Count elems = 2 * n + 2 * Count(rows) + (has_weight ? cols : 0) + (dx ? n : 0) +
                      (dweight ? cols : 0) + (dbias ? cols : 0);
  return make_cost(per_elem * n, 0, elems * elem_size);
}

}  // namespace prism::costs
