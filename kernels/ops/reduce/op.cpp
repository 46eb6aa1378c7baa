// Adds reduce's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/reduce/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::sum, ops::mean, ops::max, ops::argmax);

}  // namespace prism::kernels
