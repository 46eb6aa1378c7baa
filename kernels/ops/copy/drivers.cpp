// copy's drivers for the variants and determinism tests (tests/ops/drivers.h; compiled into
// the per-op test suite only): a copy of a permuted view (contiguous).
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  d["copy"] = {{[](DType dt, ref::Rng& rng, bool) {
                  return std::vector<Tensor>{input({7, 37, 29}, false, dt, rng).permute({2, 0, 1})};
                },
                [](const std::vector<Tensor>& in) { return contiguous(in[0]); }}};
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("copy", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  c.push_back({"copy of a permuted view", {"contiguous"}, [] {
                 seeded(15);
                 return forward_backward({randn({61, 67, 71})}, [](const V& in) {
                   return contiguous(in[0].permute({2, 0, 1}));
                 });
               }});
});

}  // namespace
}  // namespace prism::kernels
