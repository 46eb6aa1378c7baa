// layer_norm's drivers for the variants test (tests/ops/drivers.h; compiled into the kernels
// test suite only): layer_norm and its gradient.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  // layer_norm (131 wide: two 64-lane blocks and a tail; transposed views are copied first),
  // with and without weight and bias.
  for (bool affine : {true, false}) {
    d["layer_norm"].push_back(
        {[](DType dt, ref::Rng& rng, bool strided) {
           return std::vector<Tensor>{input({5, 37, 131}, strided, dt, rng, -3, 5),
                                      input({131}, false, dt, rng), input({131}, false, dt, rng)};
         },
         [affine](const std::vector<Tensor>& in) {
           return layer_norm(in[0], affine ? in[1] : Tensor(), affine ? in[2] : Tensor());
         }});
  }
  // layer_norm_backward: dx, dweight and dbias side by side, with and without the affine part.
  for (bool affine : {true, false}) {
    d["layer_norm_backward"].push_back(
        {[](DType dt, ref::Rng& rng, bool strided) {
           return std::vector<Tensor>{input({5, 37, 131}, strided, dt, rng, -3, 5),
                                      input({131}, false, dt, rng), input({131}, false, dt, rng),
                                      input({5, 37, 131}, false, dt, rng)};
         },
         [affine](const std::vector<Tensor>& in) {
           std::vector<Tensor> leaves;
           for (int i = 0; i < 3; ++i) {
             leaves.push_back(in[static_cast<size_t>(i)].detach());
             leaves.back().set_requires_grad();
           }
           layer_norm(leaves[0], affine ? leaves[1] : Tensor(), affine ? leaves[2] : Tensor())
               .backward(in[3]);
           std::vector<Tensor> grads{leaves[0].grad().flatten()};
           if (affine) {
             grads.push_back(leaves[1].grad());
             grads.push_back(leaves[2].grad());
           }
           return concat(grads);
         }});
  }
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("layer_norm", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  c.push_back({"layer_norm", {"layer_norm", "layer_norm_backward"}, [] {
                 seeded(7);
                 return forward_backward(
                     {randn({2053, 131}), randn({131}), randn({131})},
                     [](const V& in) { return layer_norm(in[0], in[1], in[2]); });
               }});
});

}  // namespace
}  // namespace prism::kernels
