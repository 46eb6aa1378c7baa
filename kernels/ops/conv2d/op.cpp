// Adds conv2d's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/conv2d/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::conv2d, ops::conv2d_backward_input, ops::conv2d_backward_weight, ops::im2col,
              ops::col2im);

}  // namespace prism::kernels
