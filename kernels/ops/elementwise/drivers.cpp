// elementwise's drivers for the variants test (tests/ops/drivers.h; compiled into the kernels
// test suite only): every unary and binary op, and the unary ops' gradients.
#include "tests/ops/drivers.h"
#include "tensor/ops.h"

namespace prism::kernels {
namespace {

Driver unary(Tensor (*op)(const Tensor&), double lo, double hi) {
  return {[lo, hi](DType dt, ref::Rng& rng, bool strided) {
            return std::vector<Tensor>{input({37, 29}, strided, dt, rng, lo, hi)};
          },
          [op](const std::vector<Tensor>& in) { return op(in[0]); }};
}

Driver binary(Tensor (*op)(const Tensor&, const Tensor&), double lo, double hi) {
  return {[lo, hi](DType dt, ref::Rng& rng, bool strided) {
            // [3,1,29] with [37,1]: both operands broadcast.
            return std::vector<Tensor>{input({3, 1, 29}, strided, dt, rng, lo, hi),
                                       input({37, 1}, strided, dt, rng, lo, hi)};
          },
          [op](const std::vector<Tensor>& in) { return op(in[0], in[1]); }};
}

// The backward kernel of a unary op, driven by backward() of the op.
Driver unary_backward(Tensor (*op)(const Tensor&)) {
  return {[](DType dt, ref::Rng& rng, bool strided) {
            return std::vector<Tensor>{input({37, 29}, strided, dt, rng, -3, 3),
                                       input({37, 29}, false, dt, rng)};
          },
          [op](const std::vector<Tensor>& in) {
            return grad_of_input(
                in[0], [op](const Tensor& x) { return op(x); }, in[1]);
          }};
}

const DriverFile kDrivers([](DriverTable& d) {
  d["neg"] = {unary([](const Tensor& x) { return neg(x); }, -3, 3)};
  d["exp"] = {unary([](const Tensor& x) { return prism::exp(x); }, -3, 3)};
  d["log"] = {unary([](const Tensor& x) { return prism::log(x); }, 0.1, 5)};
  d["sqrt"] = {unary([](const Tensor& x) { return prism::sqrt(x); }, 0, 5)};
  d["tanh"] = {unary([](const Tensor& x) { return prism::tanh(x); }, -3, 3)};
  d["relu"] = {unary([](const Tensor& x) { return relu(x); }, -3, 3)};
  d["sigmoid"] = {unary([](const Tensor& x) { return sigmoid(x); }, -6, 6)};
  d["gelu"] = {unary([](const Tensor& x) { return gelu(x); }, -4, 4)};
  d["silu"] = {unary([](const Tensor& x) { return silu(x); }, -6, 6)};
  d["add"] = {binary([](const Tensor& a, const Tensor& b) { return add(a, b); }, -2, 2)};
  d["sub"] = {binary([](const Tensor& a, const Tensor& b) { return sub(a, b); }, -2, 2)};
  d["mul"] = {binary([](const Tensor& a, const Tensor& b) { return mul(a, b); }, -2, 2)};
  d["div"] = {binary([](const Tensor& a, const Tensor& b) { return div(a, b); }, 0.5, 2)};
  d["pow"] = {binary([](const Tensor& a, const Tensor& b) { return prism::pow(a, b); }, 0.5, 2)};
  d["relu_backward"] = {unary_backward([](const Tensor& x) { return relu(x); })};
  d["gelu_backward"] = {unary_backward([](const Tensor& x) { return gelu(x); })};
  d["tanh_backward"] = {unary_backward([](const Tensor& x) { return prism::tanh(x); })};
  d["sigmoid_backward"] = {unary_backward([](const Tensor& x) { return sigmoid(x); })};
  d["silu_backward"] = {unary_backward([](const Tensor& x) { return silu(x); })};
});

// The determinism test's cases (tests/ops/determinism_test.cpp): sizes past the kernels'
// grains, so the work really splits over the threads.
const ThreadCaseFile kThreadCases("elementwise", [](std::vector<ThreadCase>& c) {
  using V = std::vector<Tensor>;
  // Elementwise: transcendental unary on a transposed (strided) view, and a broadcast binary.
  c.push_back({"gelu, strided", {"gelu", "gelu_backward"}, [] {
                 seeded(1);
                 return forward_backward({randn({301, 257})},
                                         [](const V& in) { return gelu(in[0].transpose(0, 1)); });
               }});
  c.push_back({"mul, broadcast", {"mul"}, [] {
                 seeded(2);
                 return forward_backward({randn({97, 1, 1031}), randn({53, 1})},
                                         [](const V& in) { return mul(in[0], in[1]); });
               }});
});

}  // namespace
}  // namespace prism::kernels
