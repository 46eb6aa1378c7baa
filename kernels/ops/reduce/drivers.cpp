// reduce's drivers for the variants and determinism tests (tests/ops/drivers.h; compiled into
// the per-op test suite only): sum and mean over every dim, several dims and none; max and argmax
// along each dim and over the whole tensor.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

Driver reduction(Tensor (*op)(const Tensor&, const std::vector<int>&, bool),
                 std::vector<int> dims) {
  return {[](DType dt, ref::Rng& rng, bool strided) {
            return std::vector<Tensor>{input({7, 37, 29}, strided, dt, rng)};
          },
          [op, dims](const std::vector<Tensor>& in) { return op(in[0], dims, false); }};
}

const DriverFile kDrivers([](DriverTable& d) {
  auto sum_fn = [](const Tensor& x, const std::vector<int>& dims, bool k) {
    return sum(x, dims, k);
  };
  auto mean_fn = [](const Tensor& x, const std::vector<int>& dims, bool k) {
    return mean(x, dims, k);
  };
  d["sum"] = {reduction(sum_fn, {}), reduction(sum_fn, {1}), reduction(sum_fn, {0, 2}),
              reduction(sum_fn, {-1})};
  d["mean"] = {reduction(mean_fn, {}), reduction(mean_fn, {1}), reduction(mean_fn, {0, 2}),
               reduction(mean_fn, {-1})};
  for (int dim : {0, 1, 2}) {
    auto make = [](DType dt, ref::Rng& rng, bool strided) {
      return std::vector<Tensor>{input({7, 37, 29}, strided, dt, rng)};
    };
    d["max"].push_back({make, [dim](const std::vector<Tensor>& in) { return max(in[0], dim); }});
    d["argmax"].push_back(
        {make, [dim](const std::vector<Tensor>& in) { return argmax(in[0], dim); }});
  }
  d["max"].push_back({[](DType dt, ref::Rng& rng, bool strided) {
                        return std::vector<Tensor>{input({37, 29}, strided, dt, rng)};
                      },
                      [](const std::vector<Tensor>& in) { return max(in[0]); }});
  d["argmax"].push_back({[](DType dt, ref::Rng& rng, bool strided) {
                           return std::vector<Tensor>{input({37, 29}, strided, dt, rng)};
                         },
                         [](const std::vector<Tensor>& in) { return argmax(in[0]); }});
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("reduce", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  // Reductions: short rows, one long row (split into pieces), and down columns.
  c.push_back(
      {"sum rows", {"sum"}, [] {
         seeded(3);
         return forward_backward({randn({4099, 67})}, [](const V& in) { return sum(in[0], {1}); });
       }});
  c.push_back(
      {"sum, one long row", {"sum"}, [] {
         seeded(4);
         return forward_backward({randn({3, 200003})}, [](const V& in) { return sum(in[0], {1}); });
       }});
  c.push_back(
      {"sum down columns", {"sum"}, [] {
         seeded(5);
         return forward_backward({randn({131, 1031})}, [](const V& in) { return sum(in[0], {0}); });
       }});
});

}  // namespace
}  // namespace prism::kernels
