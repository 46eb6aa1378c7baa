// pool2d's drivers for the variants and determinism tests (tests/ops/drivers.h; compiled into
// the per-op test suite only): max and average pooling and their gradients.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

using ref::Shape;

const DriverFile kDrivers([](DriverTable& d) {
  // max_pool2d: the tiling 2x2 / stride 2 case (the optimized path, with an odd size so a
  // row and a column are left over), 3x3 windows that tile, and overlapping padded windows (the
  // optimized variant's fallback).
  struct PoolShape {
    Shape x;
    int kernel, stride, padding;
  };
  for (const PoolShape& ps : {PoolShape{{2, 3, 13, 11}, 2, 2, 0}, PoolShape{{1, 2, 9, 12}, 3, 3, 0},
                              PoolShape{{2, 2, 9, 7}, 3, 2, 1}}) {
    auto make = [ps](DType dt, ref::Rng& rng, bool strided) {
      return std::vector<Tensor>{input(ps.x, strided, dt, rng)};
    };
    using PoolFn = Tensor (*)(const Tensor&, int, int, int);
    for (const auto& [name, pool] : {std::pair<std::string, PoolFn>{"max_pool2d", &max_pool2d},
                                     std::pair<std::string, PoolFn>{"avg_pool2d", &avg_pool2d}}) {
      auto run = [ps, pool = pool](const Tensor& x) {
        return pool(x, ps.kernel, ps.stride, ps.padding);
      };
      d[name].push_back({make, [run](const std::vector<Tensor>& in) { return run(in[0]); }});
      // The gradient, driven by backward() with a fixed random output gradient.
      d[name + "_backward"].push_back(
          {make, [run](const std::vector<Tensor>& in) { return grad_of_input(in[0], run, 78); }});
    }
  }
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("pool2d", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  c.push_back({"max_pool2d", {"max_pool2d", "max_pool2d_backward"}, [] {
                 seeded(11);
                 return forward_backward({randn({64, 16, 26, 26})},
                                         [](const V& in) { return max_pool2d(in[0], 2); });
               }});
  c.push_back({"avg_pool2d, overlapping", {"avg_pool2d", "avg_pool2d_backward"}, [] {
                 seeded(12);
                 return forward_backward({randn({64, 16, 26, 26})},
                                         [](const V& in) { return avg_pool2d(in[0], 3, 2, 1); });
               }});
});

}  // namespace
}  // namespace prism::kernels
