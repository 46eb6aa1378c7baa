// softmax's drivers for the variants and determinism tests (tests/ops/drivers.h; compiled into
// the per-op test suite only): softmax and log_softmax along each dim, and their gradients.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  for (int dim : {0, 1, 2}) {
    d["softmax"].push_back(
        {[](DType dt, ref::Rng& rng, bool strided) {
           return std::vector<Tensor>{input({7, 37, 29}, strided, dt, rng, -8, 8)};
         },
         [dim](const std::vector<Tensor>& in) { return softmax(in[0], dim); }});
    d["log_softmax"].push_back(
        {[](DType dt, ref::Rng& rng, bool strided) {
           return std::vector<Tensor>{input({7, 37, 29}, strided, dt, rng, -8, 8)};
         },
         [dim](const std::vector<Tensor>& in) { return log_softmax(in[0], dim); }});
    auto bw = [dim](Tensor (*f)(const Tensor&, int)) -> Driver {
      return {[](DType dt, ref::Rng& rng, bool strided) {
                return std::vector<Tensor>{input({7, 37, 29}, strided, dt, rng, -4, 4),
                                           input({7, 37, 29}, false, dt, rng)};
              },
              [f, dim](const std::vector<Tensor>& in) {
                return grad_of_input(
                    in[0], [f, dim](const Tensor& x) { return f(x, dim); }, in[1]);
              }};
    };
    d["softmax_backward"].push_back(bw([](const Tensor& x, int dm) { return softmax(x, dm); }));
    d["log_softmax_backward"].push_back(
        bw([](const Tensor& x, int dm) { return log_softmax(x, dm); }));
  }
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("softmax", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  // Row-wise ops.
  c.push_back({"softmax", {"softmax"}, [] {
                 seeded(6);
                 return forward_backward({randn({1031, 97})},
                                         [](const V& in) { return softmax(in[0], 1); });
               }});
});

}  // namespace
}  // namespace prism::kernels
