// Adds rms_norm's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/rms_norm/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::rms_norm, ops::rms_norm_backward);

}  // namespace prism::kernels
