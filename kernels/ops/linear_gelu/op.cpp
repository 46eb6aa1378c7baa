// Adds linear_gelu's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/linear_gelu/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::linear_gelu);

}  // namespace prism::kernels
