// Adds matmul_bf16's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/matmul_bf16/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::matmul_bf16);

}  // namespace prism::kernels
