// conv2d's drivers for the variants and determinism tests (tests/ops/drivers.h; compiled into
// the per-op test suite only): im2col and col2im, and conv2d with its two gradients.
#include "tests/ops/drivers.h"
#include "tensor/autocast.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

using ref::Shape;

const DriverFile kDrivers([](DriverTable& d) {
  // im2col and col2im are the unfolding steps of a convolution under the bf16 policy: each is
  // checked through conv2d there (its output depends on im2col's patches exactly, its input
  // gradient on col2im's sums), stride 2 and padding 1 on odd sizes.
  auto conv_inputs = [](DType, ref::Rng& rng, bool strided) {
    return std::vector<Tensor>{input({2, 3, 9, 11}, strided, DType::f32, rng),
                               input({4, 3, 3, 3}, false, DType::f32, rng)};
  };
  d["im2col"] = {{conv_inputs, [](const std::vector<Tensor>& in) {
                    Autocast bf16(DType::bf16);
                    return conv2d(in[0], in[1], Tensor(), 2, 1);
                  }}};
  d["col2im"] = {{conv_inputs, [](const std::vector<Tensor>& in) {
                    Autocast bf16(DType::bf16);
                    Tensor leaf = in[0].detach();
                    leaf.set_requires_grad();
                    sum(conv2d(leaf, in[1], Tensor(), 2, 1)).backward();
                    return leaf.grad();
                  }}};
  // conv2d and its gradients: odd sizes, padding and stride 2, a 1x1 kernel (im2col's
  // no-unfold path), a strided input (copied by the front end).
  struct ConvShape {
    Shape x, w;
    int stride, padding;
  };
  for (const ConvShape& cs : {ConvShape{{2, 3, 13, 11}, {5, 3, 3, 3}, 1, 1},
                              ConvShape{{3, 2, 11, 13}, {4, 2, 5, 3}, 2, 2},
                              ConvShape{{2, 5, 7, 9}, {3, 5, 1, 1}, 1, 0}}) {
    auto make = [cs](DType dt, ref::Rng& rng, bool strided) {
      return std::vector<Tensor>{input(cs.x, strided, dt, rng), input(cs.w, false, dt, rng),
                                 input({cs.w[0]}, false, dt, rng)};
    };
    const int s = cs.stride, p = cs.padding;
    auto conv = [s, p](const Tensor& x, const Tensor& w, const Tensor& b) {
      return conv2d(x, w, b, s, p);
    };
    d["conv2d"].push_back(
        {make, [conv](const std::vector<Tensor>& in) { return conv(in[0], in[1], in[2]); }});
    // The gradients, driven by backward() with the same random output gradient each time.
    d["conv2d_backward_input"].push_back(
        {make, [conv](const std::vector<Tensor>& in) {
           return grad_of_input(
               in[0], [&](const Tensor& x) { return conv(x, in[1], in[2]); }, 77);
         }});
    d["conv2d_backward_weight"].push_back(
        {make, [conv](const std::vector<Tensor>& in) {
           return grad_of_input(
               in[1], [&](const Tensor& w) { return conv(in[0], w, in[2]); }, 77);
         }});
  }
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("conv2d", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  // Convolution (batch past several chunks, so dw adds partials) and pooling.
  c.push_back({"conv2d", {"conv2d", "conv2d_backward_input", "conv2d_backward_weight"}, [] {
                 seeded(10);
                 return forward_backward(
                     {randn({37, 16, 13, 13}), randn({32, 16, 3, 3}), randn({32})},
                     [](const V& in) { return conv2d(in[0], in[1], in[2], 1, 1); });
               }});
});

}  // namespace
}  // namespace prism::kernels
