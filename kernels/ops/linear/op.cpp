// Adds linear's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/linear/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::linear);

}  // namespace prism::kernels
