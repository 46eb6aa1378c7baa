// Adds softmax's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/softmax/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::softmax, ops::softmax_backward, ops::log_softmax, ops::log_softmax_backward);

}  // namespace prism::kernels
