// Adds rope's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/rope/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::rope, ops::rope_backward);

}  // namespace prism::kernels
