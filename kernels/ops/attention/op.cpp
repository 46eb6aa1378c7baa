// Adds attention's definitions to the list every op table reads (kernels/op_def.h), and computes
// its costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/attention/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::attention, ops::attention_backward);

}  // namespace prism::kernels

namespace prism::costs {

int64_t attention_pairs(const Dims& q, const Dims& k, bool causal) {
  const Count heads = Count(q[0]) * q[1];
  const int64_t lq = q[2], lk = k[2];
  return (causal ? heads * lq * (Count(lq) + 1) / 2 : heads * lq * lk).value();
}

Cost attention(const Dims& q, const Dims& k, bool causal, int64_t elem_size) {
  const Count pairs = attention_pairs(q, k, causal);
  const int64_t d = q[3];
  const Count lse = Count(q[0]) * q[1] * q[2];
  return make_cost(pairs * (4 * Count(d) + 5), 2 * pairs * d,
                   (2 * Count(q.numel()) + 2 * Count(k.numel()) + lse) * elem_size);
}

Cost attention_backward(const Dims& q, const Dims& k, bool causal, int64_t elem_size) {
  const Count pairs = attention_pairs(q, k, causal);
  const int64_t d = q[3];
  const Count rows = Count(q[0]) * q[1] * q[2];
  const Count macs = 5 * pairs * d + rows * d;
  // read q, k, v, out, dout, lse (3 q + 2 k + rows); write dq, dk, dv (q + 2 k)
  const Count elems = 4 * Count(q.numel()) + 4 * Count(k.numel()) + rows;
  return make_cost(2 * macs + 5 * pairs, macs, elems * elem_size);
}

}  // namespace prism::costs
