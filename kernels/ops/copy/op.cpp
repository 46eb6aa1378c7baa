// Adds copy's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/copy/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::copy, ops::to_cuda, ops::to_cpu);

}  // namespace prism::kernels
