// Adds layer_norm's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/layer_norm/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::layer_norm, ops::layer_norm_backward);

}  // namespace prism::kernels
