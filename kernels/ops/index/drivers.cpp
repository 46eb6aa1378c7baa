// index's drivers for the variants and determinism tests (tests/ops/drivers.h; compiled into
// the per-op test suite only): gather, index_select and their accumulating reverses.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  auto gather_make = [](DType dt, ref::Rng& rng, bool strided) {
    return std::vector<Tensor>{input({37, 29}, strided, dt, rng), index_input({37, 41}, rng, 29)};
  };
  d["gather"] = {
      {gather_make, [](const std::vector<Tensor>& in) { return gather(in[0], 1, in[1]); }}};
  d["scatter_add"] = {{gather_make, [](const std::vector<Tensor>& in) {
                         return grad_of_input(
                             in[0], [&](const Tensor& x) { return gather(x, 1, in[1]); }, 79);
                       }}};
  auto select_make = [](DType dt, ref::Rng& rng, bool strided) {
    return std::vector<Tensor>{input({7, 37, 29}, strided, dt, rng), index_input({53}, rng, 37)};
  };
  d["index_select"] = {
      {select_make, [](const std::vector<Tensor>& in) { return index_select(in[0], 1, in[1]); }}};
  d["index_add"] = {{select_make, [](const std::vector<Tensor>& in) {
                       return grad_of_input(
                           in[0], [&](const Tensor& x) { return index_select(x, 1, in[1]); }, 80);
                     }}};
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("index", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  // Index ops: an embedding (index_select, backward index_add with repeated rows), gather.
  c.push_back({"embedding", {"index_select", "index_add"}, [] {
                 seeded(13);
                 Tensor rows = ids(50, {4001});
                 return forward_backward({randn({50, 256}), rows},
                                         [](const V& in) { return index_select(in[0], 0, in[1]); });
               }});
  c.push_back({"gather", {"gather", "scatter_add"}, [] {
                 seeded(14);
                 Tensor idx = ids(97, {4001, 61});
                 return forward_backward({randn({4001, 97}), idx},
                                         [](const V& in) { return gather(in[0], 1, in[1]); });
               }});
});

}  // namespace
}  // namespace prism::kernels
