// Adds elementwise's definitions to the list every op table reads (kernels/op_def.h), and computes
// its costs (the formulas are declared, with their words, in op.h).
#include "kernels/ops/elementwise/op.h"

#include <string>

#include "kernels/ops/elementwise/list.h"

namespace prism::kernels {

PRISM_OP_DEFS(ops::neg, ops::exp, ops::log, ops::sqrt, ops::tanh, ops::relu, ops::sigmoid,
              ops::gelu, ops::silu, ops::add, ops::sub, ops::mul, ops::div, ops::pow,
              ops::relu_backward, ops::sigmoid_backward, ops::tanh_backward, ops::gelu_backward,
              ops::silu_backward);

}  // namespace prism::kernels

namespace prism::costs {

Cost elementwise(const Dims& out, int flops_per_elem, int64_t in_bytes, int64_t elem_size) {
  const Count n = out.numel();
  return make_cost(n * flops_per_elem, 0, in_bytes + n * elem_size);
}

int elementwise_steps(std::string_view op) {
  struct Steps {
    std::string_view op;
    int steps;
  };
  // The elementwise list holds each op's FLOPs per element, and the reasons.
#define PRISM_STEPS(Functor, op, flops) {op, flops},
  static constexpr Steps kSteps[] = {PRISM_UNARY_OPS(PRISM_STEPS) PRISM_BINARY_OPS(PRISM_STEPS)};
#undef PRISM_STEPS
  for (const Steps& s : kSteps) {
    if (s.op == op) return s.steps;
  }
  throw Error("costs: '" + std::string(op) + "' is not an elementwise op");
}

}  // namespace prism::costs
