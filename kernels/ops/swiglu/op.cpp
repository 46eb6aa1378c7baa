// Adds swiglu's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/swiglu/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::swiglu, ops::swiglu_backward);

}  // namespace prism::kernels
