// Adds matmul_int8's definitions to the list every op table reads (kernels/op_def.h), and computes
// its costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/matmul_int8/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::matmul_int8, ops::quantize_int8);

}  // namespace prism::kernels

namespace prism::costs {

Cost matmul_int8(int64_t m, int64_t n, int64_t k, bool has_bias) {
  const Count macs = Count(m) * n * k, outs = Count(m) * n;
  const Count bytes = Count(m) * k + Count(n) * k + 4 * outs + 4 * Count(n) + 4 +
                      (has_bias ? 4 * Count(n) : Count(0));
  return make_cost(2 * macs + 3 * outs, macs, bytes);
}

Cost quantize(int64_t numel, int64_t in_elem_size) {
  return make_cost(numel, 0, Count(numel) * (in_elem_size + 1));
}

}  // namespace prism::costs
