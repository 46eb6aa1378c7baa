// rope's drivers for the variants and determinism tests (tests/ops/drivers.h; compiled into
// the per-op test suite only): each variant through the front end against the naive one, on a
// head's q inside a fused qkv projection and on a transposed view, from position 0 and deep into a
// decode.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

Driver rope_driver(int64_t pos0, bool backward) {
  return {[](DType dt, ref::Rng& rng, bool strided) {
            // strided: q of a [B 2, T 37, 3, H 3, d 8] projection; else a [T, D] transpose view.
            if (!strided) return std::vector<Tensor>{input({37, 30}, true, dt, rng, -3, 3)};
            Tensor qkv = input({2, 37, 3, 3, 8}, false, dt, rng, -3, 3);
            return std::vector<Tensor>{qkv.permute({2, 0, 3, 1, 4}).select(0, 0)};
          },
          [pos0, backward](const std::vector<Tensor>& in) {
            if (!backward) return rope(in[0], pos0);
            const Tensor g = ones_like(in[0]) * 0.5 + rope(in[0]);  // any fixed gradient
            return grad_of_input(
                in[0], [pos0](const Tensor& x) { return rope(x, pos0); }, g.detach().contiguous());
          }};
}

const DriverFile kDrivers([](DriverTable& d) {
  d["rope"] = {rope_driver(0, false), rope_driver(1000, false)};
  d["rope_backward"] = {rope_driver(0, true), rope_driver(1000, true)};
});

// The determinism test's case (tests/ops/determinism_test.cpp): the heads of a fused qkv
// projection, 2 x 4 x 257 rows of 64, many chunks of rows, from position 7.
const ThreadCaseFile kThreadCases("rope", [](std::vector<ThreadCase>& c) {
  c.push_back({"rope, q inside a qkv projection", {"rope", "rope_backward"}, [] {
                 seeded(30);
                 return forward_backward(
                     {randn({2, 257, 3, 4, 64})}, [](const std::vector<Tensor>& in) {
                       return rope(in[0].permute({2, 0, 3, 1, 4}).select(0, 0), 7);
                     });
               }});
});

}  // namespace
}  // namespace prism::kernels
