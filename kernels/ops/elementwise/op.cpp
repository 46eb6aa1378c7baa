// Adds elementwise's definitions to the list every op table reads (kernels/op_def.h).
#include "kernels/ops/elementwise/op.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::neg, ops::exp, ops::log, ops::sqrt, ops::tanh, ops::relu, ops::sigmoid,
              ops::gelu, ops::silu, ops::add, ops::sub, ops::mul, ops::div, ops::pow,
              ops::relu_backward, ops::sigmoid_backward, ops::tanh_backward, ops::gelu_backward,
              ops::silu_backward);

}  // namespace prism::kernels
