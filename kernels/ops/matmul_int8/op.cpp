// Adds matmul_int8's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/matmul_int8/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::matmul_int8, ops::quantize_int8);

}  // namespace prism::kernels
