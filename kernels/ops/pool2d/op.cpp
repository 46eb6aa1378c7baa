// Adds pool2d's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/pool2d/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::max_pool2d, ops::max_pool2d_backward, ops::avg_pool2d, ops::avg_pool2d_backward);

}  // namespace prism::kernels
