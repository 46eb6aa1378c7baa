// Adds reduce's definitions to the list every op table reads (kernels/op_def.h), and computes its
// costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/reduce/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::sum, ops::mean, ops::max, ops::argmax);

}  // namespace prism::kernels

namespace prism::costs {

Cost reduce(int64_t in_numel, int64_t out_numel, int64_t elem_size, int64_t out_elem_size) {
  return make_cost(std::max<int64_t>(in_numel - out_numel, 0), 0,
                   Count(in_numel) * elem_size + Count(out_numel) * out_elem_size);
}

Cost mean(int64_t in_numel, int64_t out_numel, int64_t elem_size) {
  Cost c = reduce(in_numel, out_numel, elem_size, elem_size);
  c.flops = (Count(c.flops) + out_numel).value();
  return c;
}

}  // namespace prism::costs
