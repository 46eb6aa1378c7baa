// linear's drivers for the variants and determinism tests (tests/ops/drivers.h; compiled into
// the per-op test suite only): linear and its gradients.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  // linear, forward and both gradients (the driver runs backward through the op): with and
  // without the ReLU on its input and the bias; 67 x 263 -> 300 puts dx in split-k form.
  for (bool relu_input : {true, false}) {
    for (bool with_bias : {true, false}) {
      d["linear"].push_back(
          {[](DType dt, ref::Rng& rng, bool strided) {
             return std::vector<Tensor>{
                 input({67, 263}, strided, dt, rng), input({300, 263}, strided, dt, rng),
                 input({300}, false, dt, rng), input({67, 300}, false, dt, rng)};
           },
           [relu_input, with_bias](const std::vector<Tensor>& in) {
             std::vector<Tensor> leaves;
             for (int i = 0; i < 3; ++i) leaves.push_back(in[i].detach().set_requires_grad());
             Tensor y = linear(leaves[0], leaves[1], with_bias ? leaves[2] : Tensor(), relu_input);
             y.backward(in[3]);
             return concat({y.flatten(), leaves[0].grad().flatten(), leaves[1].grad().flatten()});
           }});
    }
  }
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("linear", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  // linear with the ReLU folded in: forward (ReLU as x is packed, bias on each block), dx
  // (split-k: 67 rows, k = 263 outputs, the mask applied to each thread's band of rows) and dW
  // (ReLU as x is packed), each past kParallelGemmMacs.
  c.push_back({"linear, relu input", {"linear"}, [] {
                 seeded(24);
                 return forward_backward(
                     {randn({67, 509}), randn({263, 509}), randn({263})},
                     [](const V& in) { return linear(in[0], in[1], in[2], true); });
               }});
});

}  // namespace
}  // namespace prism::kernels
