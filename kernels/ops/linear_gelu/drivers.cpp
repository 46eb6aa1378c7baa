// linear_gelu's drivers for the variants test (tests/ops/drivers.h; compiled into the kernels
// test suite only): linear_gelu.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  // linear_gelu over 2 x 2 output tiles with ragged edges, with and without bias.
  for (bool with_bias : {true, false}) {
    d["linear_gelu"].push_back({[](DType dt, ref::Rng& rng, bool strided) {
                                  return std::vector<Tensor>{input({67, 29}, strided, dt, rng),
                                                             input({300, 29}, strided, dt, rng),
                                                             input({300}, false, dt, rng)};
                                },
                                [with_bias](const std::vector<Tensor>& in) {
                                  return linear_gelu(in[0], in[1], with_bias ? in[2] : Tensor());
                                }});
  }
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("linear_gelu", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  c.push_back({"linear_gelu, one row", {"linear_gelu"}, [] {
                 seeded(29);
                 NoGrad no_grad;
                 return std::vector<Tensor>{
                     linear_gelu(randn({1, 769}), randn({1031, 769}), randn({1031}))};
               }});
  c.push_back({"linear_gelu, two row tiles", {"linear_gelu"}, [] {
                 seeded(21);
                 return forward_backward(
                     {randn({300, 263}), randn({131, 263}), randn({131})},
                     [](const V& in) { return linear_gelu(in[0], in[1], in[2]); });
               }});
});

}  // namespace
}  // namespace prism::kernels
