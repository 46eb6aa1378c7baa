// Autograd semantics: reuse of a value, accumulation, graph lifetime, the rules about which
// tensors can require grad, grad mode, detach, and gradients through every kind of view.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tensor/autograd/grad_mode.h"
#include "tensor/autograd/node.h"
#include "tensor/ops.h"
#include "tensor/tensor.h"
#include "tests/test_util.h"

using prism::testing::contains;
using prism::testing::error_of;

using prism::Dims;
using prism::DType;
using prism::Tensor;

namespace {

Tensor leaf(std::vector<float> v, const Dims& shape) {
  Tensor t = prism::from_vector(v, shape);
  t.set_requires_grad();
  return t;
}

Tensor iota(const Dims& shape) {
  return prism::arange(shape.numel()).reshape(shape);
}

}  // namespace

TEST_CASE("autograd: a leaf used twice by one op and a node used twice") {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor y = x * x;  // x reaches mul through both inputs
  Tensor z = y + y;  // y's node feeds add twice
  CHECK(z.requires_grad());
  CHECK_FALSE(z.is_leaf());
  REQUIRE(z.grad_fn() != nullptr);
  CHECK(std::string(z.grad_fn()->op()) == "add");
  prism::sum(z).backward();
  // d(2 x^2)/dx = 4x
  CHECK(x.grad().to_vector() == std::vector<double>{4, 8, 12});
  // Non-leaf tensors keep no .grad.
  CHECK_FALSE(y.grad().defined());
}

TEST_CASE("autograd: a node used by two different consumers") {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor y = x * x;
  Tensor z = y * y + y;  // x^4 + x^2: dz/dx = 4x^3 + 2x
  prism::sum(z).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{6, 36, 114});
}

TEST_CASE("autograd: gradients accumulate across backward calls on fresh graphs") {
  Tensor x = leaf({1, -2, 3}, {3});
  prism::sum(x * x).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{2, -4, 6});
  prism::sum(x * x).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{4, -8, 12});
  prism::sum(x * 3.0).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{7, -5, 15});
  x.zero_grad();
  CHECK_FALSE(x.grad().defined());
  prism::sum(x).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{1, 1, 1});
}

TEST_CASE("autograd: gradients summed in place, and never into a buffer someone else sees") {
  // The second contribution is added into the .grad that exists, in place, when prism alone
  // holds it: the same buffer before and after.
  Tensor x = leaf({1, 2, 3}, {3});
  prism::sum(x * x).backward();
  const void* first = x.grad().data<float>();
  prism::sum(x * 2.0).backward();
  CHECK(x.grad().data<float>() == first);
  CHECK(x.grad().to_vector() == std::vector<double>{4, 6, 8});
  // A .grad the caller still holds is not written: it keeps its values, .grad gets a new sum.
  Tensor held = x.grad();
  prism::sum(x).backward();
  CHECK(held.to_vector() == std::vector<double>{4, 6, 8});
  CHECK(x.grad().to_vector() == std::vector<double>{5, 7, 9});
  // The incoming gradient may be the leaf's own .grad (the caller passes it as the root
  // gradient): it still counts, once per path (found in review: an identity check skipped it).
  Tensor p = leaf({1, 2}, {2}), q = leaf({5, 5}, {2});
  prism::sum(p).backward();  // p.grad = [1, 1]
  (p + q).backward(p.grad());
  CHECK(p.grad().to_vector() == std::vector<double>{2, 2});
  CHECK(q.grad().to_vector() == std::vector<double>{1, 1});
  p.backward(p.grad());
  CHECK(p.grad().to_vector() == std::vector<double>{4, 4});
}

TEST_CASE("autograd: a tied embedding's row gradients go into the existing .grad, exactly") {
  // wte used twice, as index_select's table and as a matmul's transposed operand: the matmul's
  // gradient arrives first, then index_select adds its rows (repeated ids included) into it.
  Tensor w = leaf({1, 2, 3, 4, 5, 6}, {3, 2});
  const Tensor ids = prism::from_vector(std::vector<int64_t>{2, 0, 2}, {3});
  Tensor e = prism::index_select(w, 0, ids);            // [3, 2]
  Tensor logits = prism::matmul(e, w.transpose(0, 1));  // [3, 3]
  prism::sum(logits).backward();
  // d/dw of sum(E W^T): from the matmul, each row of w gets the sum of E's rows: [1+5+5,
  // 2+6+6] = [11, 14]; from index_select, row r gets (number of times r appears) x the sum of
  // W's rows, [9, 12]: rows 2 (twice) and 0 (once).
  CHECK(w.grad().to_vector() == std::vector<double>{11 + 9, 14 + 12, 11, 14, 11 + 18, 14 + 24});
}

TEST_CASE("autograd: backward twice through one graph needs retain_graph") {
  Tensor x = leaf({1, 2}, {2});
  Tensor loss = prism::sum(x * x);
  loss.backward();
  CHECK(x.grad().to_vector() == std::vector<double>{2, 4});
  std::string msg = error_of([&] { loss.backward(); });
  CHECK(contains(msg, "already freed"));
  CHECK(contains(msg, "retain_graph"));
  // The refused call changed nothing.
  CHECK(x.grad().to_vector() == std::vector<double>{2, 4});
  CHECK_THROWS_AS(loss.backward(), prism::Error);
}

TEST_CASE("autograd: a retained graph gives the same gradients every time") {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor w = leaf({0.5f, -1, 2}, {3});
  Tensor loss = prism::sum(prism::exp(x * w) + x * x * x);
  std::vector<double> gx, gw;
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    x.zero_grad();
    w.zero_grad();
    // The last round frees the graph.
    loss.backward(Tensor(), /*retain_graph=*/round < 2);
    if (round == 0) {
      gx = x.grad().to_vector();
      gw = w.grad().to_vector();
      for (int i = 0; i < 3; ++i) {
        const double xi = x.at({i}), wi = w.at({i});
        CHECK(gx[static_cast<size_t>(i)] ==
              doctest::Approx(wi * std::exp(xi * wi) + 3 * xi * xi).epsilon(1e-5));
        CHECK(gw[static_cast<size_t>(i)] == doctest::Approx(xi * std::exp(xi * wi)).epsilon(1e-5));
      }
    } else {
      CHECK(x.grad().to_vector() == gx);
      CHECK(w.grad().to_vector() == gw);
    }
  }
  CHECK_THROWS_AS(loss.backward(), prism::Error);
}

TEST_CASE("autograd: a shared subgraph freed by one backward cannot serve another") {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x * x;
  Tensor a = prism::sum(y);
  Tensor b = prism::sum(y * 2.0);
  a.backward();
  CHECK_THROWS_AS(b.backward(), prism::Error);

  // Retaining the first backward's graph keeps the shared part usable.
  Tensor x2 = leaf({1, 2}, {2});
  Tensor y2 = x2 * x2;
  Tensor a2 = prism::sum(y2);
  Tensor b2 = prism::sum(y2 * 2.0);
  a2.backward(Tensor(), true);
  b2.backward();
  CHECK(x2.grad().to_vector() == std::vector<double>{6, 12});  // 2x + 4x
}

TEST_CASE("autograd: backward argument errors") {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = x * 2.0;

  std::string msg = error_of([&] { y.backward(); });
  CHECK(contains(msg, "backward"));
  CHECK(contains(msg, "[2,3]"));
  CHECK(contains(msg, "one-element"));

  msg = error_of([&] { y.backward(prism::ones({3})); });
  CHECK(contains(msg, "backward: gradient shape [3] does not match output shape [2,3]"));
  msg = error_of([&] { y.backward(prism::ones({3, 2})); });
  CHECK(contains(msg, "[3,2]"));
  msg = error_of([&] { y.backward(prism::ones({2, 3}, DType::f64)); });
  CHECK(contains(msg, "float64"));
  CHECK(contains(msg, "float32"));
  {
    // A gradient on another device: a meta one for a cpu output (the cpu kernels would read
    // its absent data), and the other way round.
    Tensor meta_grad;
    {
      prism::DefaultDevice meta(prism::Device::meta);
      meta_grad = prism::ones({2, 3});
    }
    msg = error_of([&] { y.backward(meta_grad); });
    CHECK(contains(msg, "backward: gradient on meta for an output on cpu"));
    const Tensor cpu_grad = iota({2, 3});
    prism::DefaultDevice meta(prism::Device::meta);
    Tensor m = prism::ones({2, 3}).set_requires_grad();
    msg = error_of([&] { (m * 2.0).backward(cpu_grad); });
    CHECK(contains(msg, "backward: gradient on cpu for an output on meta"));
  }

  Tensor c = prism::ones({2, 3});
  msg = error_of([&] { prism::sum(c).backward(); });
  CHECK(contains(msg, "does not require grad"));
  CHECK_THROWS_AS(Tensor().backward(), prism::Error);

  // None of the refused calls touched the graph: it still runs, once.
  CHECK_FALSE(x.grad().defined());
  y.backward(iota({2, 3}));
  CHECK(x.grad().to_vector() == std::vector<double>{0, 2, 4, 6, 8, 10});
}

TEST_CASE("autograd: a one-element output of any shape needs no gradient argument") {
  Tensor x = leaf({3}, {1, 1});
  Tensor y = x * x;
  y.backward();
  CHECK(x.grad().shape() == Dims{1, 1});
  CHECK(x.grad().item() == 6);
}

TEST_CASE("autograd: backward from a leaf") {
  Tensor s = prism::scalar(2);
  s.set_requires_grad();
  s.backward();
  CHECK(s.grad().item() == 1);

  Tensor x = leaf({1, 2}, {2});
  Tensor g = prism::from_vector(std::vector<float>{5, 6}, {2});
  x.backward(g);
  CHECK(x.grad().to_vector() == std::vector<double>{5, 6});
  // The caller's tensor is not adopted as .grad: changing it later changes nothing.
  CHECK_FALSE(x.grad().shares_storage_with(g));
  g.data<float>()[0] = 100;
  CHECK(x.grad().at({0}) == 5);
}

TEST_CASE("autograd: leaf gradients are dense buffers of their own") {
  // sum's gradient is a stride-0 expand of one number, and add passes it to both inputs as is:
  // each leaf must still get a contiguous .grad that it alone owns.
  Tensor a = leaf({1, 2, 3}, {3});
  Tensor b = leaf({4, 5, 6}, {3});
  prism::sum(a + b).backward();
  for (Tensor* p : {&a, &b}) {
    Tensor g = p->grad();
    CHECK(g.is_contiguous());
    CHECK(g.storage()->nbytes() == 12);
    const float* d = g.data<float>();
    CHECK(d[0] == 1);
    CHECK(d[1] == 1);
    CHECK(d[2] == 1);
  }
  CHECK_FALSE(a.grad().shares_storage_with(b.grad()));
  a.grad().data<float>()[1] = 9;  // an in-place change (gradient clipping, say)
  CHECK(b.grad().at({1}) == 1);

  Tensor m = leaf({1, 2, 3, 4}, {2, 2});
  prism::mean(m).backward();
  CHECK(m.grad().is_contiguous());
  CHECK(m.grad().data<float>()[3] == 0.25f);
}

TEST_CASE("autograd: NoGrad records nothing") {
  Tensor x = leaf({1, 2}, {2});
  CHECK(prism::grad_enabled());
  Tensor y;
  {
    prism::NoGrad ng;
    CHECK_FALSE(prism::grad_enabled());
    y = x * x + 1.0;
    {
      prism::NoGrad inner;
      CHECK_FALSE(prism::grad_enabled());
    }
    CHECK_FALSE(prism::grad_enabled());
  }
  CHECK(prism::grad_enabled());
  CHECK(y.to_vector() == std::vector<double>{2, 5});
  CHECK_FALSE(y.requires_grad());
  CHECK(y.grad_fn() == nullptr);
  CHECK(y.is_leaf());
  CHECK_THROWS_AS(prism::sum(y).backward(), prism::Error);
  // A view made under NoGrad is not tracked either.
  {
    prism::NoGrad ng;
    CHECK(x.unsqueeze(0).t().grad_fn() == nullptr);
    CHECK(x.reshape({2, 1}).grad_fn() == nullptr);
  }
  // Back on: tracked again.
  CHECK((x * x).grad_fn() != nullptr);
}

TEST_CASE("autograd: detach shares storage and cuts the graph") {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor y = x * 2.0;
  Tensor d = y.detach();
  CHECK(d.shares_storage_with(y));
  CHECK_FALSE(d.requires_grad());
  CHECK(d.is_leaf());
  CHECK(d.grad_fn() == nullptr);
  CHECK(d.shape() == y.shape());
  CHECK(d.to_vector() == y.to_vector());
  // A detached value is a constant: the gradient flows only through the tracked factor.
  prism::sum(y * d).backward();  // d/dx (2x * const) = 2 * const
  CHECK(x.grad().to_vector() == std::vector<double>{4, 8, 12});
  // A detached view keeps the view's geometry.
  Tensor t = prism::ones({2, 3}).t().detach();
  CHECK(t.strides() == Dims{1, 3});
  // Writing through the detached tensor is seen by the original.
  d.data<float>()[0] = -1;
  CHECK(y.at({0}) == -1);
  // A detached tensor can become a new leaf.
  d.set_requires_grad();
  CHECK(d.requires_grad());
  CHECK_FALSE(y.grad_fn() == nullptr);
}

TEST_CASE("autograd: which tensors can require grad") {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x * x;
  std::string msg = error_of([&] { y.set_requires_grad(); });
  CHECK(contains(msg, "set_requires_grad"));
  CHECK(contains(msg, "leaf"));
  CHECK(contains(msg, "mul"));
  CHECK_THROWS_AS(y.set_requires_grad(false), prism::Error);
  CHECK(y.requires_grad());  // unchanged

  Tensor i = prism::arange(0, 3, 1, DType::i64);
  msg = error_of([&] { i.set_requires_grad(); });
  CHECK(contains(msg, "int64"));
  CHECK_FALSE(i.requires_grad());
  i.set_requires_grad(false);  // turning it off is fine
  CHECK_FALSE(i.requires_grad());

  Tensor d = prism::ones({2}, DType::f64);
  CHECK(d.set_requires_grad().requires_grad());
  d.set_requires_grad(false);
  CHECK_FALSE(d.requires_grad());
  CHECK_FALSE((d * d).requires_grad());
}

TEST_CASE("autograd: gradients through slice, narrow and select") {
  Tensor x = leaf({1, 2, 3, 4, 5}, {5});
  Tensor s = x.slice(0, 1, 5, 2);  // x[1], x[3]
  prism::sum(s * prism::from_vector(std::vector<float>{10, 20}, {2})).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{0, 10, 0, 20, 0});

  Tensor m = prism::arange(12).reshape({3, 4}).detach();
  m.set_requires_grad();
  Tensor col = m.select(1, -1);  // column 3
  prism::sum(col * prism::from_vector(std::vector<float>{1, 2, 3}, {3})).backward();
  CHECK(m.grad().to_vector() == std::vector<double>{0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3});

  m.zero_grad();
  Tensor win = m.narrow(0, 1, 2).narrow(1, 1, 2);  // rows 1-2, cols 1-2
  prism::sum(win * win).backward();                // 2 * m on the window
  CHECK(m.grad().to_vector() == std::vector<double>{0, 0, 0, 0, 0, 10, 12, 0, 0, 18, 20, 0});
}

TEST_CASE("autograd: gradients through expand sum over the stretched dims") {
  Tensor x = leaf({1, 2, 3}, {3, 1});
  Tensor e = x.expand({2, 3, 4});
  Tensor w = iota({2, 3, 4});
  prism::sum(e * w).backward();
  // dL/dx[b] = sum over a, c of w[a][b][c]
  std::vector<double> want(3, 0);
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 3; ++b) {
      for (int c = 0; c < 4; ++c) want[static_cast<size_t>(b)] += a * 12 + b * 4 + c;
    }
  }
  CHECK(x.grad().shape() == Dims{3, 1});
  CHECK(x.grad().to_vector() == want);

  // Broadcasting in an op does the same.
  Tensor bias = leaf({1, 1, 1, 1}, {4});
  prism::sum(w + bias).backward();
  CHECK(bias.grad().to_vector() == std::vector<double>{6, 6, 6, 6});
}

TEST_CASE("autograd: gradients through permute, transpose, reshape and view") {
  Tensor x = prism::arange(24).reshape({2, 3, 4}).detach();
  x.set_requires_grad();
  Tensor w = iota({4, 2, 3});
  prism::sum(x.permute({2, 0, 1}) * w).backward();
  // x.grad[i][j][k] = w[k][i][j]
  Tensor g = x.grad();
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) CHECK(g.at({i, j, k}) == k * 6 + i * 3 + j);
    }
  }

  // reshape of a transposed tensor copies (contiguous + view): the gradient is routed back.
  Tensor m = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor r = m.t().reshape({6});  // m[0][0], m[1][0], m[0][1], m[1][1], m[0][2], m[1][2]
  prism::sum(r * iota({6})).backward();
  CHECK(m.grad().to_vector() == std::vector<double>{0, 2, 4, 1, 3, 5});

  m.zero_grad();
  prism::sum(m.view({3, 2}) * iota({3, 2})).backward();
  CHECK(m.grad().to_vector() == std::vector<double>{0, 1, 2, 3, 4, 5});

  m.zero_grad();
  prism::sum(m.unsqueeze(0).squeeze(0).flatten() * iota({6})).backward();
  CHECK(m.grad().to_vector() == std::vector<double>{0, 1, 2, 3, 4, 5});

  m.zero_grad();
  prism::sum(m.transpose(0, 1).contiguous() * iota({3, 2})).backward();
  CHECK(m.grad().to_vector() == std::vector<double>{0, 2, 4, 1, 3, 5});
}

TEST_CASE("autograd: gradients through clone and cast") {
  Tensor x = leaf({1, 2}, {2});
  Tensor d = x.to(DType::f64);
  CHECK(d.requires_grad());
  prism::sum(d * d + x.clone().to(DType::f64)).backward();
  CHECK(x.grad().dtype() == DType::f32);
  CHECK(x.grad().to_vector() == std::vector<double>{3, 5});
}

TEST_CASE("autograd: branches where one path does not require grad") {
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor c = prism::from_vector(std::vector<float>{4, 5, 6}, {3});
  Tensor cc = prism::exp(c);  // untracked branch
  CHECK(cc.grad_fn() == nullptr);
  Tensor y = x * c + cc * c;
  prism::sum(y).backward();
  CHECK(x.grad().to_vector() == std::vector<double>{4, 5, 6});
  CHECK_FALSE(c.grad().defined());
  CHECK_FALSE(cc.grad().defined());

  // Two leaves, only one of which requires grad, meet in one op.
  Tensor a = leaf({2, 3}, {2});
  Tensor b = prism::from_vector(std::vector<float>{7, 11}, {2});
  prism::sum(a * b * a).backward();  // d/da = 2ab
  CHECK(a.grad().to_vector() == std::vector<double>{28, 66});
  CHECK_FALSE(b.grad().defined());

  // A tracked value that feeds only an untracked computation leaves no gradient behind.
  Tensor p = leaf({1, 2}, {2});
  Tensor q = leaf({3, 4}, {2});
  Tensor unused = p * 5.0;
  prism::sum(q * q).backward();
  CHECK_FALSE(p.grad().defined());
  CHECK(q.grad().to_vector() == std::vector<double>{6, 8});
}

TEST_CASE("autograd: inside backward, grad mode is off and buffers are gradients") {
  // A custom op whose backward looks at the context it runs in.
  Tensor x = leaf({1, 2}, {2});
  Tensor out = x * 1.0;
  bool ran = false, grad_mode = true;
  prism::MemRole role = prism::MemRole::activation;
  prism::profiler::Phase phase = prism::profiler::Phase::forward;
  Tensor probe = out.detach() * 1.0;  // a fresh tensor to attach the probe to
  prism::autograd::record(probe, "probe", {&out},
                          [&](const Tensor& g, prism::autograd::Grads& grads) {
                            ran = true;
                            grad_mode = prism::grad_enabled();
                            role = prism::current_alloc_role();
                            phase = prism::profiler::current_phase();
                            grads.set(0, "probe.dx", [&] { return g * 3.0; });
                          });
  CHECK(probe.requires_grad());
  CHECK(std::string(probe.grad_fn()->op()) == "probe");
  prism::sum(probe).backward();
  CHECK(ran);
  CHECK_FALSE(grad_mode);
  CHECK(role == prism::MemRole::gradient);
  CHECK(phase == prism::profiler::Phase::backward);
  CHECK(x.grad().to_vector() == std::vector<double>{3, 3});
  // And everything is back to normal afterwards.
  CHECK(prism::grad_enabled());
  CHECK(prism::current_alloc_role() == prism::MemRole::activation);
  CHECK(prism::profiler::current_phase() == prism::profiler::Phase::forward);
}

TEST_CASE("autograd: a long chain backpropagates and is freed without deep recursion") {
  Tensor x = leaf({1}, {1});
  Tensor y = x;
  const int n = 100000;
  for (int i = 0; i < n; ++i) y = y + 1.0;
  prism::sum(y).backward();
  CHECK(x.grad().item() == 1);
  CHECK(y.item() == n + 1);
  y = Tensor();  // drops the whole chain of nodes
  CHECK(x.grad().item() == 1);
}

TEST_CASE("autograd: a long chain that is never backpropagated is freed too") {
  Tensor x = leaf({1}, {1});
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = y * 1.0;
  CHECK(y.item() == 1);
  y = Tensor();
  CHECK(x.requires_grad());
}
