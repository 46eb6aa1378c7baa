// Adds cross_entropy's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/cross_entropy/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::cross_entropy, ops::cross_entropy_backward);

}  // namespace prism::kernels
