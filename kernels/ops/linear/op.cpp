// Adds linear's definitions to the list every op table reads (kernels/op_def.h), and computes its
// costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/linear/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::linear);

}  // namespace prism::kernels

namespace prism::costs {

Cost linear(int64_t m, int64_t n, int64_t k, int64_t relu_elems, bool has_bias, bool has_mask,
            bool has_row_sums, int64_t elem_size) {
  const Count macs = Count(m) * n * k, outputs = Count(m) * n;
  const Count elems = Count(m) * k + Count(k) * n + outputs + (has_bias ? n : 0) +
                      (has_mask ? outputs : 0) + (has_row_sums ? m : 0);
  const Count sums = has_row_sums ? Count(m) * std::max<int64_t>(k - 1, 0) : Count(0);
  return make_cost(2 * macs + relu_elems + (Count(has_bias) + Count(has_mask)) * outputs + sums,
                   macs, elems * elem_size);
}

}  // namespace prism::costs
