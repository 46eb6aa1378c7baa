// Adds optim's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/optim/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::sgd_update, ops::adam_update);

}  // namespace prism::kernels
