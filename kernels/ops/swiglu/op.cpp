// Adds swiglu's definitions to the list every op table reads (kernels/op_def.h), and computes its
// costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/swiglu/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::swiglu, ops::swiglu_backward);

}  // namespace prism::kernels

namespace prism::costs {

Cost swiglu(int64_t numel, int64_t elem_size) {
  const Count n = numel;
  return make_cost(5 * n, 0, 3 * n * elem_size);  // silu 4 + the multiply; gate, up, out
}

Cost swiglu_backward(int64_t numel, bool dgate, bool dup, int64_t elem_size) {
  const Count n = numel;
  // s = sigmoid(gate) once (3), then dgate 6 and dup 2 (costs.h has the count).
  const int64_t per_elem = (dgate || dup ? 3 : 0) + (dgate ? 6 : 0) + (dup ? 2 : 0);
  // Read gate and g, and up only for dgate; write what is asked for.
  const int64_t streams = 2 + (dgate ? 2 : 0) + (dup ? 1 : 0);
  return make_cost(per_elem * n, 0, streams * n * elem_size);
}

}  // namespace prism::costs
