// attention's drivers for the variants test (tests/ops/drivers.h; compiled into the kernels
// test suite only): attention and its gradient.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  // attention (q, k, v; Lq != Lk, or causal on a prime length past one 128-row tile) and its
  // gradient, all three of dq, dk, dv side by side.
  for (bool causal : {false, true}) {
    auto make = [causal](DType dt, ref::Rng& rng, bool strided) {
      const int64_t lq = causal ? 131 : 37, lk = causal ? 131 : 70, dh = causal ? 80 : 16;
      return std::vector<Tensor>{input({2, 3, lq, dh}, strided, dt, rng, -2, 2),
                                 input({2, 3, lk, dh}, strided, dt, rng, -2, 2),
                                 input({2, 3, lk, dh}, false, dt, rng),
                                 input({2, 3, lq, dh}, false, dt, rng)};
    };
    d["attention"].push_back({make, [causal](const std::vector<Tensor>& in) {
                                return attention(in[0], in[1], in[2], causal);
                              }});
    d["attention_backward"].push_back(
        {make, [causal](const std::vector<Tensor>& in) {
           std::vector<Tensor> leaves;
           for (int i = 0; i < 3; ++i) {
             leaves.push_back(in[static_cast<size_t>(i)].detach());
             leaves.back().set_requires_grad();
           }
           attention(leaves[0], leaves[1], leaves[2], causal).backward(in[3]);
           return concat({leaves[0].grad().flatten(), leaves[1].grad().flatten(),
                          leaves[2].grad().flatten()});
         }});
  }
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("attention", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  c.push_back({"attention, causal", {"attention", "attention_backward"}, [] {
                 seeded(22);
                 return forward_backward(
                     {randn({2, 3, 67, 16}), randn({2, 3, 67, 16}), randn({2, 3, 67, 16})},
                     [](const V& in) { return attention(in[0], in[1], in[2], true); });
               }});
});

}  // namespace
}  // namespace prism::kernels
