// rope's drivers for the variants test (tests/kernels/drivers.h; compiled into the kernels test
// suite only): each variant through the front end against the naive one, on a head's q inside
// a fused qkv projection and on a transposed view, from position 0 and deep into a decode.
#include "tests/kernels/drivers.h"
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

const DriverFile kRope("rope", [] {
  return std::vector<Driver>{rope_driver(0, false), rope_driver(1000, false)};
});
const DriverFile kRopeBackward("rope_backward", [] {
  return std::vector<Driver>{rope_driver(0, true), rope_driver(1000, true)};
});

}  // namespace
}  // namespace prism::kernels
