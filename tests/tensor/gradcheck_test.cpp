// Every differentiable op's backward against finite differences (tensor/autograd/gradcheck.h),
// in float64: broadcasting (the gradient summed back to the input's shape), strided inputs,
// vector and batched matmul, reductions over several dims, max, softmax over a middle dim,
// indexing, views and composite expressions. And the checker itself is shown able to fail.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tensor/autograd/gradcheck.h"
#include "tensor/autograd/node.h"
#include "tests/tensor/reference.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using ref::Array;
using ref::Shape;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// A float64 leaf with requires_grad, values in [lo, hi).
Tensor leaf(const Shape& s, ref::Rng& rng, double lo = -1, double hi = 1) {
  Tensor t = ref::to_tensor(ref::random(s, rng, lo, hi), DType::f64);
  t.set_requires_grad();
  return t;
}

// Values at least `gap` away from zero (for relu, div and the like: no kink inside +-eps).
Tensor leaf_away_from_zero(const Shape& s, ref::Rng& rng, double gap = 0.2) {
  Array a = ref::map(ref::random(s, rng), [gap](double x) { return x < 0 ? x - gap : x + gap; });
  Tensor t = ref::to_tensor(a, DType::f64);
  t.set_requires_grad();
  return t;
}

// Pairwise distinct values (for max: no ties within +-eps).
Tensor leaf_distinct(const Shape& s, ref::Rng& rng) {
  Tensor t = ref::to_tensor(ref::distinct(s, rng), DType::f64);
  t.set_requires_grad();
  return t;
}

Tensor index_tensor(const std::vector<int64_t>& v, const Dims& shape) {
  return from_vector(v, shape);
}

TEST_CASE("gradcheck: unary ops, contiguous and strided") {
  ref::Rng rng(61);
  struct U {
    const char* name;
    Tensor (*op)(const Tensor&);
    double lo, hi;
    bool away_from_zero;
  };
  const U ops[] = {
      {"neg", [](const Tensor& x) { return neg(x); }, -2, 2, false},
      {"exp", [](const Tensor& x) { return prism::exp(x); }, -2, 2, false},
      {"log", [](const Tensor& x) { return prism::log(x); }, 0.3, 3, false},
      {"sqrt", [](const Tensor& x) { return prism::sqrt(x); }, 0.3, 3, false},
      {"relu", [](const Tensor& x) { return relu(x); }, -1, 1, true},
      {"gelu", [](const Tensor& x) { return gelu(x); }, -3, 3, false},
      {"tanh", [](const Tensor& x) { return prism::tanh(x); }, -2, 2, false},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, -4, 4, false},
      {"silu", [](const Tensor& x) { return silu(x); }, -4, 4, false},
  };
  for (const U& u : ops) {
    INFO(std::string(u.name));
    auto make = [&](const Shape& s) {
      return u.away_from_zero ? leaf_away_from_zero(s, rng) : leaf(s, rng, u.lo, u.hi);
    };
    auto op = u.op;
    CHECK_GRAD([op](const std::vector<Tensor>& in) { return op(in[0]); }, make({3, 5}));
    CHECK_GRAD([op](const std::vector<Tensor>& in) { return op(in[0]); }, make({}));
    CHECK_GRAD([op](const std::vector<Tensor>& in) { return op(in[0].t()); }, make({3, 5}));
    CHECK_GRAD([op](const std::vector<Tensor>& in) { return op(in[0].slice(1, 1, 7, 2)); },
               make({2, 7}));
    CHECK_GRAD([op](const std::vector<Tensor>& in) { return op(in[0].expand({4, 3})); }, make({3}));
  }
}

TEST_CASE("gradcheck: binary ops with broadcasting and strided operands") {
  ref::Rng rng(62);
  struct B {
    const char* name;
    Tensor (*op)(const Tensor&, const Tensor&);
  };
  const B ops[] = {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); }},
      {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }},
      {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }},
      {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); }},
      {"pow", [](const Tensor& a, const Tensor& b) { return prism::pow(a, b); }},
  };
  const std::pair<Shape, Shape> shapes[] = {
      {{2, 3}, {2, 3}}, {{3, 1, 5}, {4, 1}}, {{4, 1}, {3, 1, 5}}, {{}, {2, 3}},
      {{2, 3}, {}},     {{3}, {2, 3}},       {{2, 1}, {1, 3}},    {{1}, {}},
  };
  for (const B& b : ops) {
    const bool is_pow = std::string(b.name) == "pow";
    const bool is_div = std::string(b.name) == "div";
    auto op = b.op;
    for (const auto& [sa, sb] : shapes) {
      INFO((std::string(b.name) + " " + ref::shape_str(sa) + " " + ref::shape_str(sb)));
      // pow needs a positive base; div a divisor away from zero.
      Tensor x = is_pow ? leaf(sa, rng, 0.5, 2) : leaf(sa, rng);
      Tensor y = is_div ? leaf_away_from_zero(sb, rng, 0.5) : leaf(sb, rng, -1.5, 1.5);
      CHECK_GRAD([op](const std::vector<Tensor>& in) { return op(in[0], in[1]); }, x, y);
    }
    // Strided operands: a transposed left and a stepped right.
    Tensor x = is_pow ? leaf({5, 3}, rng, 0.5, 2) : leaf({5, 3}, rng);
    Tensor y = is_div ? leaf_away_from_zero({3, 9}, rng, 0.5) : leaf({3, 9}, rng);
    CHECK_GRAD(
        [op](const std::vector<Tensor>& in) { return op(in[0].t(), in[1].slice(1, 0, 9, 2)); }, x,
        y);
    // The same tensor on both sides: both contributions accumulate.
    Tensor z = is_pow ? leaf({2, 3}, rng, 0.5, 2) : leaf_away_from_zero({2, 3}, rng, 0.5);
    CHECK_GRAD([op](const std::vector<Tensor>& in) { return op(in[0], in[0]); }, z);
  }
}

TEST_CASE("gradcheck: scalar overloads and pow with a double exponent") {
  ref::Rng rng(63);
  Tensor x = leaf({2, 3}, rng, 0.5, 2);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return in[0] * 3.0 + 1.0; }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return 2.0 / in[0] - in[0] / 4.0; }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return 1.0 - 2.0 * in[0]; }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return prism::pow(in[0], 3.0); }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return prism::pow(in[0], -0.5); }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return -in[0]; }, x);
}

TEST_CASE("gradcheck: sum, mean, max and sum_to") {
  ref::Rng rng(64);
  Tensor x = leaf({3, 4, 5}, rng);
  const std::vector<std::vector<int>> dim_lists = {{}, {0}, {1}, {-1}, {0, 2}, {1, 2}, {2, 0, 1}};
  for (const auto& dims : dim_lists) {
    for (bool keepdim : {false, true}) {
      INFO((std::to_string(dims.size()) + " dims, keepdim " + std::to_string(keepdim)));
      CHECK_GRAD(
          [dims, keepdim](const std::vector<Tensor>& in) { return sum(in[0], dims, keepdim); }, x);
      CHECK_GRAD(
          [dims, keepdim](const std::vector<Tensor>& in) { return mean(in[0], dims, keepdim); }, x);
    }
  }
  // Strided input, 0-d input.
  CHECK_GRAD([](const std::vector<Tensor>& in) { return sum(in[0].t(), {1}); }, leaf({4, 3}, rng));
  CHECK_GRAD(
      [](const std::vector<Tensor>& in) {
        return mean(in[0].permute({2, 0, 1}), {0, 2}, true);
      },
      x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return sum(in[0]); }, leaf({}, rng));

  Tensor d = leaf_distinct({3, 4, 5}, rng);
  for (int dim : {0, 1, 2, -1}) {
    for (bool keepdim : {false, true}) {
      INFO(("max dim " + std::to_string(dim) + " keepdim " + std::to_string(keepdim)));
      CHECK_GRAD([dim, keepdim](const std::vector<Tensor>& in) { return max(in[0], dim, keepdim); },
                 d);
    }
  }
  CHECK_GRAD([](const std::vector<Tensor>& in) { return max(in[0]); }, d);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return max(in[0].t(), 0); },
             leaf_distinct({4, 3}, rng));
  CHECK_GRAD([](const std::vector<Tensor>& in) { return max(in[0], 0); }, leaf({}, rng));

  CHECK_GRAD([](const std::vector<Tensor>& in) { return sum_to(in[0], {4, 1}); }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return sum_to(in[0], {}); }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return sum_to(in[0], {3, 1, 5}); }, x);
}

TEST_CASE("gradcheck: matmul, vectors, batches and broadcast batches") {
  ref::Rng rng(65);
  const std::pair<Shape, Shape> shapes[] = {
      {{4, 5}, {5, 3}},       {{5}, {5}},          {{5}, {5, 3}},       {{4, 5}, {5}},
      {{2, 4, 5}, {2, 5, 3}}, {{3, 4, 5}, {5, 2}}, {{4, 5}, {3, 5, 2}}, {{2, 1, 3, 4}, {5, 4, 2}},
      {{5}, {2, 5, 3}},       {{2, 3, 5}, {5}},    {{1, 1}, {1, 1}},
  };
  for (const auto& [sa, sb] : shapes) {
    INFO((ref::shape_str(sa) + " @ " + ref::shape_str(sb)));
    CHECK_GRAD([](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); }, leaf(sa, rng),
               leaf(sb, rng));
  }
  // Transposed operands; only one operand requiring grad.
  CHECK_GRAD([](const std::vector<Tensor>& in) { return matmul(in[0].t(), in[1].t()); },
             leaf({5, 4}, rng), leaf({3, 5}, rng));
  Tensor w = ref::to_tensor(ref::random({5, 3}, rng), DType::f64);  // a constant
  CHECK_GRAD([w](const std::vector<Tensor>& in) { return matmul(in[0], w); }, leaf({4, 5}, rng));
  CHECK_GRAD([w](const std::vector<Tensor>& in) { return matmul(w.t(), in[0]); },
             leaf({5, 2}, rng));
}

TEST_CASE("gradcheck: softmax and log_softmax over first, middle and last dims") {
  ref::Rng rng(66);
  Tensor x = leaf({3, 4, 5}, rng, -2, 2);
  for (int dim : {0, 1, 2, -1, -2}) {
    INFO(("dim " + std::to_string(dim)));
    CHECK_GRAD([dim](const std::vector<Tensor>& in) { return softmax(in[0], dim); }, x);
    CHECK_GRAD([dim](const std::vector<Tensor>& in) { return log_softmax(in[0], dim); }, x);
    CHECK_GRAD(
        [dim](const std::vector<Tensor>& in) {
          return softmax(in[0].permute({2, 0, 1}), dim);
        },
        x);
    CHECK_GRAD(
        [dim](const std::vector<Tensor>& in) { return log_softmax(in[0].transpose(0, 2), dim); },
        x);
  }
  CHECK_GRAD([](const std::vector<Tensor>& in) { return softmax(in[0]); }, leaf({7}, rng));
  CHECK_GRAD([](const std::vector<Tensor>& in) { return log_softmax(in[0]); }, leaf({}, rng));
  // Large logits: the gradient is still finite and right.
  Tensor big = ref::to_tensor(
      ref::map(ref::random({2, 5}, rng), [](double v) { return 1000 + 3 * v; }), DType::f64);
  big.set_requires_grad();
  CHECK_GRAD([](const std::vector<Tensor>& in) { return log_softmax(in[0], 1); }, big);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return softmax(in[0], 0); }, big);
}

TEST_CASE("gradcheck: gather, index_select and concat") {
  ref::Rng rng(67);
  Tensor x = leaf({3, 4}, rng);
  // Repeated positions in a row: their gradients add up.
  Tensor idx1 = index_tensor({0, 0, 3, 2, 2, 2, 1, 3, 1}, {3, 3});
  CHECK_GRAD([idx1](const std::vector<Tensor>& in) { return gather(in[0], 1, idx1); }, x);
  Tensor idx0 = index_tensor({2, 0, 2, 1, 1, 1, 0, 2}, {2, 4});
  CHECK_GRAD([idx0](const std::vector<Tensor>& in) { return gather(in[0], 0, idx0); }, x);
  CHECK_GRAD([idx0](const std::vector<Tensor>& in) { return gather(in[0].t().t(), -2, idx0); }, x);
  Tensor x3 = leaf({2, 3, 4}, rng);
  Tensor idx3 = index_tensor({0, 2, 2, 1, 0, 0, 1, 1}, {2, 2, 2});
  CHECK_GRAD([idx3](const std::vector<Tensor>& in) { return gather(in[0], 1, idx3); }, x3);

  Tensor rep = index_tensor({2, 0, 2, 2, 3}, {5});
  CHECK_GRAD([rep](const std::vector<Tensor>& in) { return index_select(in[0], 1, rep); }, x);
  Tensor rep0 = index_tensor({1, 1, 0}, {3});
  CHECK_GRAD([rep0](const std::vector<Tensor>& in) { return index_select(in[0], 0, rep0); }, x);
  CHECK_GRAD([rep0](const std::vector<Tensor>& in) { return index_select(in[0].t(), 1, rep0); }, x);
  CHECK_GRAD([rep0](const std::vector<Tensor>& in) { return index_select(in[0], -2, rep0); }, x3);

  for (int dim : {0, 1, -1}) {
    INFO(("concat dim " + std::to_string(dim)));
    Shape sa = {2, 3}, sb = {2, 3}, sc = {2, 3};
    const size_t d = dim < 0 ? 1 : static_cast<size_t>(dim);
    sb[d] = 1;
    sc[d] = 4;
    CHECK_GRAD(
        [dim](const std::vector<Tensor>& in) {
          return concat({in[0], in[1], in[2]}, dim);
        },
        leaf(sa, rng), leaf(sb, rng), leaf(sc, rng));
  }
  // The same input twice, and a strided part.
  CHECK_GRAD(
      [](const std::vector<Tensor>& in) {
        return concat({in[0], in[0].t().t(), in[1].t()}, 0);
      },
      leaf({2, 3}, rng), leaf({3, 2}, rng));
}

TEST_CASE("gradcheck: views and copies") {
  ref::Rng rng(68);
  Tensor x = leaf({2, 3, 4}, rng);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return in[0].permute({2, 0, 1}); }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return in[0].transpose(0, 2); }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return in[0].slice(2, 1, 4, 2); }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return in[0].slice(1, -2, 3); }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return in[0].narrow(0, 1, 1); }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return in[0].select(1, 2); }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return in[0].select(-1, -1); }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return in[0].reshape({4, 6}); }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return in[0].view({6, -1}); }, x);
  CHECK_GRAD([](const std::vector<Tensor>& in) { return in[0].flatten(1); }, x);
  // reshape of a transposed view has to copy; its gradient must still land in the right places.
  CHECK_GRAD([](const std::vector<Tensor>& in) { return in[0].transpose(0, 2).reshape({-1}); }, x);
  CHECK_GRAD(
      [](const std::vector<Tensor>& in) { return in[0].unsqueeze(1).squeeze(1).unsqueeze(-1); }, x);
  CHECK_GRAD(
      [](const std::vector<Tensor>& in) {
        return in[0].expand({5, 3, 4});
      },
      leaf({1, 3, 4}, rng));
  CHECK_GRAD(
      [](const std::vector<Tensor>& in) {
        return in[0].expand({2, 3, 4});
      },
      leaf({3, 1}, rng));
  CHECK_GRAD([](const std::vector<Tensor>& in) { return in[0].expand({3}); }, leaf({}, rng));
  CHECK_GRAD([](const std::vector<Tensor>& in) { return contiguous(in[0].t()); },
             leaf({3, 4}, rng));
  CHECK_GRAD([](const std::vector<Tensor>& in) { return clone(in[0]) * in[0]; }, leaf({3, 4}, rng));
  // A slice of a slice, and overlapping windows of the same input.
  CHECK_GRAD(
      [](const std::vector<Tensor>& in) {
        return in[0].slice(2, 0, 4, 2).slice(1, 1, 3) * in[0].narrow(2, 1, 2).narrow(1, 0, 2);
      },
      x);
  // Through float32 and back: the gradient is cast back too (float32 rounding needs a bigger eps).
  GradcheckOptions loose;
  loose.eps = 1e-3;
  loose.atol = 1e-4;
  loose.rtol = 1e-3;
  GradcheckResult r = gradcheck(
      [](const std::vector<Tensor>& in) { return cast(cast(in[0], DType::f32), DType::f64) * 2.0; },
      {leaf({2, 3}, rng)}, loose);
  CHECK_MESSAGE(r.ok, r.message);
}

TEST_CASE("gradcheck: a leaf that is itself a strided view") {
  ref::Rng rng(69);
  Tensor base = ref::to_tensor(ref::random({4, 6}, rng), DType::f64);
  Tensor x = base.t().detach();  // [6, 4], strides [1, 6]: a non-contiguous leaf
  x.set_requires_grad();
  REQUIRE_FALSE(x.is_contiguous());
  CHECK_GRAD([](const std::vector<Tensor>& in) { return prism::tanh(matmul(in[0], in[0].t())); },
             x);
  Tensor y = base.slice(1, 0, 6, 2).detach();  // [4, 3], strides [6, 2]
  y.set_requires_grad();
  CHECK_GRAD([](const std::vector<Tensor>& in) { return softmax(in[0], 0) * in[0]; }, y);
}

TEST_CASE("gradcheck: composite expressions") {
  ref::Rng rng(70);
  // A two-layer MLP with cross-entropy: gather the log-probabilities of the labels.
  Tensor xs = leaf({5, 4}, rng), w1 = leaf({4, 6}, rng), b1 = leaf({6}, rng);
  Tensor w2 = leaf({6, 3}, rng), b2 = leaf({3}, rng);
  Tensor labels = index_tensor({0, 2, 1, 1, 0}, {5, 1});
  CHECK_GRAD(
      [labels](const std::vector<Tensor>& in) {
        Tensor h = gelu(add(matmul(in[0], in[1]), in[2]));
        Tensor logits = add(matmul(h, in[3]), in[4]);
        return neg(mean(gather(log_softmax(logits, 1), 1, labels)));
      },
      xs, w1, b1, w2, b2);
  // Layer norm over the last dim.
  CHECK_GRAD(
      [](const std::vector<Tensor>& in) {
        Tensor m = mean(in[0], {-1}, true);
        Tensor c = in[0] - m;
        Tensor var = mean(c * c, {-1}, true);
        return c / prism::sqrt(var + 1e-5) * in[1] + in[2];
      },
      leaf({3, 5}, rng), leaf({5}, rng), leaf({5}, rng));
  // Scaled dot-product attention over a batch, with an embedding lookup in front.
  Tensor tokens = index_tensor({3, 1, 1, 0}, {4});
  CHECK_GRAD(
      [tokens](const std::vector<Tensor>& in) {
        Tensor e = index_select(in[0], 0, tokens).reshape({2, 2, 3});  // [batch, seq, dim]
        Tensor q = matmul(e, in[1]), k = matmul(e, in[2]), v = matmul(e, in[3]);
        Tensor att = softmax(matmul(q, k.transpose(-1, -2)) / std::sqrt(3.0), -1);
        return sum(matmul(att, v), {1});
      },
      leaf({4, 3}, rng), leaf({3, 3}, rng), leaf({3, 3}, rng), leaf({3, 3}, rng));
  // An input used many times, through views and reductions (gradient accumulation).
  CHECK_GRAD(
      [](const std::vector<Tensor>& in) {
        Tensor x = in[0];
        return sigmoid(x * x.t().t()) + sum(prism::exp(x), {0}, true) - max(x, 1, true) * x;
      },
      leaf_distinct({3, 4}, rng));
}

// ---- the checker can fail
// ------------------------------------------------------------------------

// x * x with a deliberately wrong backward: g * x instead of 2 g x.
Tensor square_with_wrong_grad(const Tensor& x) {
  Tensor out = mul(x.detach(), x.detach());
  autograd::record(out, "square_wrong", {&x}, [x](const Tensor& g, autograd::Grads& gr) {
    gr.set(0, "square_wrong.dx", [&] { return mul(g, x.detach()); });
  });
  return out;
}

// The same op with the right backward, to show the custom-op plumbing itself is sound.
Tensor square_with_right_grad(const Tensor& x) {
  Tensor out = mul(x.detach(), x.detach());
  autograd::record(out, "square_right", {&x}, [x](const Tensor& g, autograd::Grads& gr) {
    gr.set(0, "square_right.dx", [&] { return mul(g, mul(x.detach(), scalar(2.0, DType::f64))); });
  });
  return out;
}

// a * b whose backward gives b the right gradient but a a transposed-order one.
Tensor mul_with_wrong_grad_for_a(const Tensor& a, const Tensor& b) {
  Tensor out = mul(a.detach(), b.detach());
  autograd::record(out, "mul_wrong_a", {&a, &b}, [a, b](const Tensor& g, autograd::Grads& gr) {
    gr.set(0, "mul_wrong_a.da", [&] {
      return mul(g, b.detach()).reshape({3, 2}).t().contiguous().reshape({2, 3});
    });
    gr.set(1, "mul_wrong_a.db", [&] { return mul(g, a.detach()); });
  });
  return out;
}

TEST_CASE("gradcheck fails on a wrong gradient and says where") {
  ref::Rng rng(71);
  Tensor x = leaf({2, 3}, rng, 0.5, 1.5);
  GradcheckResult right =
      gradcheck([](const std::vector<Tensor>& in) { return square_with_right_grad(in[0]); }, {x});
  CHECK_MESSAGE(right.ok, right.message);

  GradcheckResult wrong =
      gradcheck([](const std::vector<Tensor>& in) { return square_with_wrong_grad(in[0]); }, {x});
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.max_abs_error > 0.1);
  CHECK(wrong.message.find("input 0") != std::string::npos);
  CHECK(wrong.message.find("analytic") != std::string::npos);

  // Only the second input's gradient is wrong here (a's is fine): the message names input 1.
  Tensor a = leaf({2, 3}, rng), b = leaf({2, 3}, rng);
  GradcheckResult r = gradcheck(
      [](const std::vector<Tensor>& in) { return mul_with_wrong_grad_for_a(in[1], in[0]); },
      {a, b});
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("input 1") != std::string::npos);

  // A gradient that is off by a small relative amount is caught too.
  GradcheckResult slightly = gradcheck(
      [](const std::vector<Tensor>& in) {
        Tensor out = prism::exp(in[0].detach());
        Tensor xin = in[0];
        autograd::record(out, "exp_slightly_off", {&xin},
                         [y = out.detach()](const Tensor& g, autograd::Grads& gr) {
                           gr.set(0, "exp_slightly_off.dx", [&] { return mul(g, y) * 1.001; });
                         });
        return out;
      },
      {leaf({4}, rng)});
  CHECK_FALSE(slightly.ok);
}

TEST_CASE("gradcheck in random directions: passes the right gradient, fails the wrong ones") {
  ref::Rng rng(73);
  GradcheckOptions fast;
  fast.directions = 3;
  // A [300, 263] input: 157,800 evaluations of f element by element, 6 in three directions.
  Tensor big = leaf({300, 263}, rng);
  GradcheckResult tanh_ok =
      gradcheck([](const std::vector<Tensor>& in) { return prism::tanh(in[0]); }, {big}, fast);
  CHECK_MESSAGE(tanh_ok.ok, tanh_ok.message);

  Tensor x = leaf({7, 5}, rng, 0.5, 1.5);
  GradcheckResult wrong = gradcheck(
      [](const std::vector<Tensor>& in) { return square_with_wrong_grad(in[0]); }, {x}, fast);
  CHECK_FALSE(wrong.ok);
  CHECK(wrong.message.find("input 0 [7,5], direction 0") != std::string::npos);

  // A gradient wrong only in its layout (the right numbers, transposed) is caught, and the
  // message names the input it belongs to.
  Tensor a = leaf({2, 3}, rng), b = leaf({2, 3}, rng);
  GradcheckResult r = gradcheck(
      [](const std::vector<Tensor>& in) { return mul_with_wrong_grad_for_a(in[1], in[0]); }, {a, b},
      fast);
  CHECK_FALSE(r.ok);
  CHECK(r.message.find("input 1") != std::string::npos);

  // The values are put back: the inputs are unchanged after the check.
  const std::vector<double> before = big.to_vector<double>();
  (void)gradcheck([](const std::vector<Tensor>& in) { return in[0] * in[0]; }, {big}, fast);
  CHECK(big.to_vector<double>() == before);
}

TEST_CASE("gradcheck refuses inputs it cannot check") {
  ref::Rng rng(72);
  Tensor f32 = ref::to_tensor(ref::random({2}, rng), DType::f32);
  f32.set_requires_grad();
  Fn id = [](const std::vector<Tensor>& in) { return in[0] * 2.0; };
  CHECK_THROWS_AS(gradcheck(id, {f32}), Error);
  Tensor no_grad = ref::to_tensor(ref::random({2}, rng), DType::f64);
  CHECK_THROWS_AS(gradcheck(id, {no_grad}), Error);
  Tensor non_leaf = leaf({2}, rng) * 2.0;
  CHECK_THROWS_AS(gradcheck(id, {non_leaf}), Error);
}

}  // namespace
}  // namespace prism
