// Adds attention's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/attention/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::attention, ops::attention_backward);

}  // namespace prism::kernels
