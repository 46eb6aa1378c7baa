// cross_entropy's drivers for the variants test (tests/ops/drivers.h; compiled into the kernels
// test suite only): cross_entropy over several online chunks and its gradient, both reductions.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

const DriverFile kDrivers([](DriverTable& d) {
  // cross_entropy_backward: the logits' gradient, both reductions.
  for (Reduction red : {Reduction::mean, Reduction::sum}) {
    d["cross_entropy_backward"].push_back({[](DType dt, ref::Rng& rng, bool strided) {
                                             std::vector<int64_t> t(67);
                                             for (int64_t& v : t) v = rng.integer(0, 1031);
                                             return std::vector<Tensor>{
                                                 input({67, 1031}, strided, dt, rng, -6, 6),
                                                 from_vector(t, {67})};
                                           },
                                           [red](const std::vector<Tensor>& in) {
                                             Tensor leaf = in[0].detach();
                                             leaf.set_requires_grad();
                                             cross_entropy(leaf, in[1], red).backward();
                                             return leaf.grad();
                                           }});
  }
  for (Reduction red : {Reduction::mean, Reduction::sum}) {
    d["cross_entropy"].push_back(
        {[](DType dt, ref::Rng& rng, bool strided) {
           std::vector<int64_t> t(67);
           for (int64_t& v : t) v = rng.integer(0, 1031);
           return std::vector<Tensor>{input({67, 1031}, strided, dt, rng, -6, 6),
                                      from_vector(t, {67})};
         },
         [red](const std::vector<Tensor>& in) { return cross_entropy(in[0], in[1], red); }});
  }
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("cross_entropy", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  c.push_back({"cross_entropy", {"cross_entropy", "cross_entropy_backward"}, [] {
                 seeded(9);
                 Tensor target = ids(101, {2053});
                 return forward_backward({randn({2053, 101}), target},
                                         [](const V& in) { return cross_entropy(in[0], in[1]); });
               }});
});

}  // namespace
}  // namespace prism::kernels
