// Adds linear_gelu's definitions to the list every op table reads (kernels/op_def.h), and computes
// its costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/linear_gelu/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::linear_gelu);

}  // namespace prism::kernels

namespace prism::costs {

Cost linear_gelu(int64_t rows, int64_t in, int64_t out, bool has_bias, bool keeps_z,
                 int64_t elem_size) {
  const Count macs = Count(rows) * out * in, outputs = Count(rows) * out;
  const Count elems =
      Count(rows) * in + Count(out) * in + (has_bias ? out : 0) + outputs * (keeps_z ? 2 : 1);
  return make_cost(2 * macs + (has_bias ? 9 : 8) * outputs, macs, elems * elem_size);
}

}  // namespace prism::costs
