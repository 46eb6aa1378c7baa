// The version counter and the check that a tensor saved for backward was not modified in place
// since its forward (tensor/autograd/saved.h): the counter's values, the error (op, which saved
// tensor, shape, both versions), views sharing the counter, tensors that were not saved, and
// the ordinary training loop, which never trips it.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tensor/autograd/grad_mode.h"
#include "tensor/autograd/node.h"
#include "tensor/ops.h"
#include "tensor/optim_ops.h"
#include "tensor/random.h"
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

// t -= 1 in place, with a real in-place op (an SGD step with lr 1 and a gradient of ones), as an
// optimizer would; grad mode off, as in an optimizer's step.
void decrement_in_place(const Tensor& t) {
  prism::NoGrad no_grad;
  prism::SgdHyper h;
  h.lr = 1;
  prism::sgd_update_(t, prism::ones_like(t), Tensor(), h);
}

std::vector<double> exp_of(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v) out.push_back(std::exp(static_cast<float>(x)));
  return out;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
}

}  // namespace

TEST_CASE("version counter: 0 when allocated, +1 per in-place op, shared by views") {
  Tensor p = prism::zeros({2, 3});
  Tensor other = prism::zeros({2, 3});
  CHECK(p.version() == 0);
  decrement_in_place(p);
  CHECK(p.version() == 1);
  CHECK(other.version() == 0);  // a counter per storage, not a global one
  CHECK(p.to_vector() == std::vector<double>(6, -1.0));

  // Views (and detach) share the storage, so they share the counter, both ways.
  Tensor row = p.narrow(0, 1, 1);
  Tensor flat = p.reshape({6});
  Tensor t = p.t();
  Tensor d = p.detach();
  for (const Tensor& v : {row, flat, t, d}) CHECK(v.version() == 1);
  decrement_in_place(row);  // modifies one row of p: p's counter moves too
  for (const Tensor& v : {p, row, flat, t, d}) CHECK(v.version() == 2);
  CHECK(p.to_vector() == std::vector<double>{-1, -1, -1, -2, -2, -2});
  p.bump_version();  // what a write through data<T>() must be followed by
  CHECK(flat.version() == 3);

  // A copy has memory of its own, which starts again at 0; so does any op's output.
  CHECK(p.clone().version() == 0);
  CHECK(prism::contiguous(t).version() == 0);  // t is not contiguous: a copy
  CHECK(prism::contiguous(p).version() == 3);  // p is: p itself
  CHECK(prism::exp(p).version() == 0);
  CHECK(p.to(DType::f64).version() == 0);
}

TEST_CASE("version counter: the optimizer updates bump every buffer they write") {
  Tensor p = prism::zeros({4});
  Tensor g = prism::ones({4});
  Tensor vel = prism::zeros({4});
  prism::SgdHyper sgd;
  sgd.momentum = 0.9;
  prism::sgd_update_(p, g, vel, sgd);
  CHECK(p.version() == 1);
  CHECK(vel.version() == 1);
  CHECK(g.version() == 0);  // read, not written

  Tensor m = prism::zeros({4});
  Tensor v = prism::zeros({4});
  prism::AdamHyper adam;
  prism::adam_update_(p, g, m, v, adam);
  prism::adam_update_(p, g, m, v, adam);
  CHECK(p.version() == 3);
  CHECK(m.version() == 2);
  CHECK(v.version() == 2);
  CHECK(g.version() == 0);

  // A refused call (bad hyperparameter) changes nothing, the counter included.
  adam.beta1 = 2;
  CHECK(contains(error_of([&] { prism::adam_update_(p, g, m, v, adam); }), "beta1"));
  CHECK(p.version() == 3);
}

TEST_CASE("version counter: an input saved for backward and modified in place is refused") {
  Tensor x = leaf({1, -2, 3}, {3});
  Tensor loss = prism::sum(prism::relu(x));  // relu saves its input
  decrement_in_place(x);
  const std::string e = error_of([&] { loss.backward(); });
  CHECK(e ==
        "relu: a tensor saved for backward (input #0, shape [3]) was modified in place after "
        "the forward (version 0 then, 1 now): backward would use the new values and compute a "
        "wrong gradient; clone it before modifying, or modify it only after backward");
  CHECK_FALSE(x.grad().defined());

  // The second input of a binary op, and a refused call changes no gradient: the other branch
  // of the graph (whose node would have run first or last) leaves its leaf untouched too.
  Tensor a = leaf({1, 2}, {2});
  Tensor w = leaf({3, 4}, {2});
  Tensor b = leaf({5, 6}, {2});
  Tensor loss2 = prism::sum(a * w) + prism::sum(b * 2.0);
  decrement_in_place(w);
  const std::string e2 = error_of([&] { loss2.backward(); });
  CHECK(contains(e2, "mul: a tensor saved for backward (input #1, shape [2])"));
  CHECK(contains(e2, "(version 0 then, 1 now)"));
  CHECK_FALSE(a.grad().defined());
  CHECK_FALSE(w.grad().defined());
  CHECK_FALSE(b.grad().defined());
  // The refusal freed nothing (no "already freed" now): the same error again.
  CHECK(contains(error_of([&] { loss2.backward(); }), "mul: a tensor saved for backward"));
}

TEST_CASE("version counter: modifying a view of a saved tensor, or the base of a saved view") {
  SUBCASE("a view of the saved input") {
    Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
    Tensor loss = prism::sum(prism::log(x));         // log saves x
    decrement_in_place(x.detach().narrow(0, 1, 1));  // row 1 only, through a view
    const std::string e = error_of([&] { loss.backward(); });
    CHECK(contains(e, "log: a tensor saved for backward (input #0, shape [2,3])"));
    CHECK(contains(e, "(version 0 then, 1 now)"));
  }
  SUBCASE("the parameter behind a saved transposed view (a Linear layer's weight)") {
    Tensor x = prism::ones({2, 3});
    Tensor w = leaf({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {4, 3});
    Tensor loss = prism::sum(prism::matmul(x, w.t()));  // matmul saves the view w.t()
    decrement_in_place(w);
    const std::string e = error_of([&] { loss.backward(); });
    CHECK(contains(e, "matmul: a tensor saved for backward (input #1, shape [3,4])"));
    CHECK(contains(e, "(version 0 then, 1 now)"));
  }
}

TEST_CASE("version counter: an output saved for backward and modified in place is refused") {
  // exp, sqrt, tanh and sigmoid save their output, not their input.
  struct Case {
    const char* op;
    Tensor (*f)(const Tensor&);
  };
  const Case cases[] = {{"exp", prism::exp},
                        {"sqrt", prism::sqrt},
                        {"tanh", prism::tanh},
                        {"sigmoid", prism::sigmoid}};
  for (const Case& c : cases) {
    CAPTURE(c.op);
    Tensor x = leaf({1, 2, 3}, {3});
    Tensor y = c.f(x);
    Tensor loss = prism::sum(y);  // sum saves nothing: the only saved tensor is c.op's
    decrement_in_place(y);
    const std::string e = error_of([&] { loss.backward(); });
    CHECK(e == std::string(c.op) +
                   ": a tensor saved for backward (its output, shape [3]) was modified in place "
                   "after the forward (version 0 then, 1 now): backward would use the new values "
                   "and compute a wrong gradient; clone it before modifying, or modify it only "
                   "after backward");
    CHECK_FALSE(x.grad().defined());
  }

  // A write through data<T>() counts once it is followed by bump_version(); softmax's saved
  // output is its row-ordered buffer, a view of what the caller gets.
  Tensor x = leaf({1, 2, 3, 4}, {2, 2});
  Tensor y = prism::softmax(x, 0);  // softmax over dim 0: the saved buffer is y's transpose
  Tensor loss = prism::sum(y.narrow(0, 0, 1));  // narrow and sum save nothing
  y.data<float>()[0] = 0.5f;
  y.bump_version();
  const std::string e = error_of([&] { loss.backward(); });
  CHECK(contains(e, "softmax: a tensor saved for backward (its output, shape [2,2])"));
  CHECK(contains(e, "(version 0 then, 1 now)"));
}

TEST_CASE("version counter: a saved tensor whose memory was swapped for another is refused") {
  // What nn::assign and Module::to do to a parameter: its handle stays, its buffer changes.
  Tensor x = leaf({1, 2}, {2});
  Tensor w = leaf({3, 4}, {2});
  Tensor loss = prism::sum(x * w);
  w.impl().storage = prism::full({2}, 7.0).storage();
  CHECK(w.version() == 0);  // a fresh buffer: its counter alone cannot tell
  const std::string e = error_of([&] { loss.backward(); });
  CHECK(contains(e,
                 "mul: a tensor saved for backward (input #1, shape [2]) had its memory "
                 "replaced after the forward"));
}

TEST_CASE("version counter: modifying what was not saved is fine and the gradient is right") {
  SUBCASE("exp saves its output, not its input") {
    Tensor x = leaf({0.5f, -1, 2}, {3});
    Tensor loss = prism::sum(prism::exp(x));
    const std::vector<double> before = x.to_vector();
    decrement_in_place(x);
    CHECK(x.version() == 1);
    loss.backward();
    check_close(x.grad().to_vector(), exp_of(before));  // d exp(x) = exp(x) at the old x
  }
  SUBCASE("add saves nothing") {
    Tensor a = leaf({1, 2}, {2});
    Tensor b = leaf({3, 4}, {2});
    Tensor loss = prism::sum(a + b);
    decrement_in_place(a);
    decrement_in_place(b);
    loss.backward();
    CHECK(a.grad().to_vector() == std::vector<double>{1, 1});
    CHECK(b.grad().to_vector() == std::vector<double>{1, 1});
  }
  SUBCASE("an op that copied its input keeps the copy, not the input") {
    // conv2d reads contiguous buffers and copies a transposed input: modifying the memory
    // behind that input afterwards is harmless.
    Tensor base = prism::randn({1, 1, 4, 4});
    Tensor x = base.transpose(2, 3);
    Tensor w = leaf(std::vector<float>(9, 1.0f), {1, 1, 3, 3});
    Tensor loss = prism::sum(prism::conv2d(x, w));
    Tensor w_ref = leaf(std::vector<float>(9, 1.0f), {1, 1, 3, 3});
    prism::sum(prism::conv2d(x.clone(), w_ref)).backward();  // dw at the old values
    decrement_in_place(base);
    CHECK(x.version() == 1);
    loss.backward();
    CHECK(w.grad().to_vector() == w_ref.grad().to_vector());
  }
  SUBCASE("modifying after backward, the usual order") {
    Tensor x = leaf({1, 2, 3}, {3});
    Tensor loss = prism::sum(prism::relu(x) * 2.0);
    loss.backward();
    decrement_in_place(x);  // the graph is gone: nothing to refuse
    CHECK(x.grad().to_vector() == std::vector<double>{2, 2, 2});
  }
}

TEST_CASE("version counter: a retained graph refuses a second backward after a step") {
  Tensor x = prism::from_vector(std::vector<float>{1, 2, 3}, {1, 3});
  Tensor w = leaf({1, 1, 1, 1, 1, 1}, {2, 3});
  Tensor loss = prism::sum(prism::matmul(x, w.t()));
  loss.backward(Tensor(), /*retain_graph=*/true);
  decrement_in_place(w);  // an optimizer step between two backward calls
  const std::string e = error_of([&] { loss.backward(); });
  CHECK(contains(e, "matmul: a tensor saved for backward"));
  // The first gradient is intact: the refused call added nothing.
  CHECK(w.grad().to_vector() == std::vector<double>{1, 2, 3, 1, 2, 3});
}

TEST_CASE("version counter: the ordinary training loop never trips the check") {
  // A two-layer MLP trained as nn::optim trains it: forward, backward, an in-place update of
  // every parameter under NoGrad, gradients dropped, and again: each graph saves the current
  // versions, so nothing is ever refused.
  prism::manual_seed(3);
  Tensor x = prism::randn({16, 4});
  std::vector<int64_t> labels;
  for (int i = 0; i < 16; ++i) labels.push_back(i % 3);
  Tensor target = prism::from_vector(labels, {16});
  Tensor w1 = prism::randn({8, 4}, DType::f32, 0, 0.5).set_requires_grad();
  Tensor b1 = prism::zeros({8}).set_requires_grad();
  Tensor w2 = prism::randn({3, 8}, DType::f32, 0, 0.5).set_requires_grad();
  Tensor b2 = prism::zeros({3}).set_requires_grad();
  const std::vector<Tensor> params{w1, b1, w2, b2};

  auto forward = [&] {
    Tensor h = prism::relu(prism::matmul(x, w1.t()) + b1);
    Tensor logits = prism::sigmoid(prism::matmul(h, w2.t()) + b2) * 4.0;
    return prism::cross_entropy(logits, target);
  };

  SUBCASE("SGD with momentum") {
    std::vector<Tensor> vel;
    for (const Tensor& p : params) vel.push_back(prism::zeros_like(p));
    prism::SgdHyper h;
    h.lr = 0.5;
    h.momentum = 0.9;
    double first = 0, last = 0;
    for (int step = 0; step < 10; ++step) {
      Tensor loss = forward();
      (step == 0 ? first : last) = loss.item();
      CHECK_NOTHROW(loss.backward());
      prism::NoGrad no_grad;
      for (size_t i = 0; i < params.size(); ++i)
        prism::sgd_update_(params[i], params[i].grad(), vel[i], h);
      for (const Tensor& p : params) p.zero_grad();
    }
    CHECK(last < first);
    CHECK(w1.version() == 10);
    CHECK(vel[0].version() == 10);
  }
  SUBCASE("Adam, with the loss evaluated under NoGrad between steps") {
    std::vector<Tensor> m, v;
    for (const Tensor& p : params) {
      m.push_back(prism::zeros_like(p));
      v.push_back(prism::zeros_like(p));
    }
    prism::AdamHyper h;
    h.lr = 0.05;
    for (int step = 1; step <= 10; ++step) {
      Tensor loss = forward();
      CHECK_NOTHROW(loss.backward());
      {
        prism::NoGrad no_grad;
        h.step = step;
        for (size_t i = 0; i < params.size(); ++i)
          prism::adam_update_(params[i], params[i].grad(), m[i], v[i], h);
        for (const Tensor& p : params) p.zero_grad();
        forward();  // an evaluation records nothing, so saves nothing
      }
    }
    CHECK(b2.version() == 10);
  }
}
