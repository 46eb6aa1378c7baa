// Adds matmul's definitions to the list every op table reads (kernels/op_def.h), and computes its
// costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/matmul/op.h"

#include <algorithm>

namespace prism::kernels {

PRISM_OP_DEFS(ops::matmul);

}  // namespace prism::kernels

namespace prism::costs {

Cost matmul(const Dims& a, const Dims& b, int64_t elem_size) {
  // a: [..., m, k], b: [..., k, n]; the batch is the product of the broadcast batch dims.
  const int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  Count batch = 1;
  const int na = a.size() - 2, nb = b.size() - 2, nbatch = std::max(na, nb);
  for (int i = 0; i < nbatch; ++i) {
    int ia = na - nbatch + i, ib = nb - nbatch + i;
    batch = batch * std::max(ia >= 0 ? a[ia] : 1, ib >= 0 ? b[ib] : 1);
  }
  const Count macs = batch * m * n * k;
  return make_cost(2 * macs, macs, (Count(a.numel()) + b.numel() + batch * m * n) * elem_size);
}

}  // namespace prism::costs
