// Adds matmul_bf16's definitions to the list every op table reads (kernels/op_def.h), and computes
// its costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/matmul_bf16/op.h"
#include "kernels/ops/matmul/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::matmul_bf16);

}  // namespace prism::kernels

namespace prism::costs {

Cost matmul_bf16(const Dims& a, const Dims& b) {
  Cost c = matmul(a, b, 2);                                      // every element at 2 bytes
  const Count out = Count(c.bytes) / 2 - a.numel() - b.numel();  // C's elements
  c.bytes = (Count(c.bytes) + out * 2).value();                  // C's at 4 bytes
  return c;
}

}  // namespace prism::costs
