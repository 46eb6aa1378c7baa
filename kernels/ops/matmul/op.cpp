// Adds matmul's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/matmul/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::matmul);

}  // namespace prism::kernels
