// Adds index's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/index/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::gather, ops::scatter_add, ops::index_select, ops::index_add);

}  // namespace prism::kernels
