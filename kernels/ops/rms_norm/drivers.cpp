// rms_norm's drivers for the variants and determinism tests (tests/ops/drivers.h; compiled into
// the per-op test suite only): rms_norm and its gradient.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  // rms_norm and its backward (dx and dweight side by side), with and without a weight.
  for (bool with_weight : {true, false}) {
    auto make = [](DType dt, ref::Rng& rng, bool strided) {
      return std::vector<Tensor>{input({5, 37, 131}, strided, dt, rng, -3, 5),
                                 input({131}, false, dt, rng), input({5, 37, 131}, false, dt, rng)};
    };
    d["rms_norm"].push_back({make, [with_weight](const std::vector<Tensor>& in) {
                               return rms_norm(in[0], with_weight ? in[1] : Tensor());
                             }});
    d["rms_norm_backward"].push_back({make, [with_weight](const std::vector<Tensor>& in) {
                                        Tensor x = in[0].detach().set_requires_grad();
                                        Tensor w = in[1].detach().set_requires_grad();
                                        rms_norm(x, with_weight ? w : Tensor()).backward(in[2]);
                                        if (!with_weight) return x.grad();
                                        return concat({x.grad().flatten(), w.grad()});
                                      }});
  }
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("rms_norm", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  c.push_back({"rms_norm", {"rms_norm", "rms_norm_backward"}, [] {
                 seeded(8);
                 return forward_backward({randn({2053, 131}), randn({131})},
                                         [](const V& in) { return rms_norm(in[0], in[1]); });
               }});
});

}  // namespace
}  // namespace prism::kernels
