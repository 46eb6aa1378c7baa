// Losses: values against hand computations, gradient checks, errors for bad input, and the
// end-to-end check that layers + loss + backward learn: a tiny MLP overfits one batch.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "nn/nn.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/nn/nn_test_util.h"

using namespace prism;
using namespace prism::nn;
using prism::nn::test::gradcheck_module;
using prism::nn::test::leaf64;

namespace {
Tensor labels(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return from_vector(v, {n});
}
}  // namespace

TEST_CASE("loss: mse_loss is the mean (or sum) of squared differences") {
  Tensor p = from_vector(std::vector<double>{1, 2, 3, 4}, {2, 2});
  Tensor t = from_vector(std::vector<double>{0, 2, 5, 1}, {2, 2});
  CHECK(mse_loss(p, t).item() == doctest::Approx((1 + 0 + 4 + 9) / 4.0));
  CHECK(mse_loss(p, t, Reduction::sum).item() == doctest::Approx(14.0));
  CHECK(mse_loss(p, t).dim() == 0);
  CHECK_ERROR("mse_loss: prediction [4,1] and target [4] must have the same shape",
              mse_loss(ones({4, 1}), ones({4})));
  CHECK_ERROR("mse_loss: prediction is float32, target is float64",
              mse_loss(ones({2}), ones({2}, DType::f64)));
  CHECK_ERROR("mse_loss: target must be float32 or float64, got int64",
              mse_loss(ones({2}), zeros({2}, DType::i64)));
}

TEST_CASE("loss: nll_loss picks the labelled log-probability") {
  Tensor lp = from_vector(std::vector<double>{-0.1, -2.0, -3.0, -1.5, -0.5, -2.5}, {2, 3});
  CHECK(nll_loss(lp, labels({0, 2})).item() == doctest::Approx((0.1 + 2.5) / 2));
  CHECK(nll_loss(lp, labels({1, 1}), Reduction::sum).item() == doctest::Approx(2.5));
}

TEST_CASE("loss: cross_entropy is nll of log_softmax") {
  const std::vector<double> z{2.0, -1.0, 0.5, 0.0, 3.0, 1.0};
  Tensor logits = from_vector(z, {2, 3});
  double want = 0;
  const int64_t lab[] = {2, 1};
  for (int r = 0; r < 2; ++r) {
    double s = 0;
    for (int c = 0; c < 3; ++c) s += std::exp(z[static_cast<size_t>(r * 3 + c)]);
    want += std::log(s) - z[static_cast<size_t>(r * 3 + lab[r])];
  }
  CHECK(cross_entropy(logits, labels({2, 1})).item() == doctest::Approx(want / 2));
  // Large logits stay finite (log_softmax subtracts the max).
  Tensor big = from_vector(std::vector<float>{1000, 0, -1000, 1000}, {2, 2});
  const double ce = cross_entropy(big, labels({0, 1})).item();
  CHECK(std::isfinite(ce));
  CHECK(ce == doctest::Approx(0.0));
  // Uniform logits over C classes: log C.
  CHECK(cross_entropy(zeros({4, 10}), labels({0, 3, 9, 5})).item() ==
        doctest::Approx(std::log(10.0)));
}

TEST_CASE("loss: gradient of cross_entropy is (softmax - onehot) / N") {
  Tensor logits = randn({3, 4});
  logits.set_requires_grad();
  cross_entropy(logits, labels({1, 0, 3})).backward();
  const std::vector<double> sm = softmax(logits.detach(), 1).to_vector();
  const std::vector<double> g = logits.grad().to_vector();
  const int64_t lab[] = {1, 0, 3};
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) {
      const size_t i = static_cast<size_t>(r * 4 + c);
      CHECK(g[i] == doctest::Approx((sm[i] - (c == lab[r] ? 1 : 0)) / 3).epsilon(1e-5));
    }
  }
}

TEST_CASE("loss: gradcheck mse, nll and cross_entropy") {
  const Tensor lab = labels({2, 0, 1, 2});
  auto check = [](const std::function<Tensor(const std::vector<Tensor>&)>& f,
                  std::vector<Tensor> in) {
    GradcheckResult r = gradcheck(f, in);
    CHECK_MESSAGE(r.ok, r.message);
  };
  check([](const std::vector<Tensor>& in) { return mse_loss(in[0], in[1]); },
        {leaf64({3, 2}), leaf64({3, 2})});
  check([](const std::vector<Tensor>& in) { return mse_loss(in[0], in[1], Reduction::sum); },
        {leaf64({5}), leaf64({5})});
  check([&](const std::vector<Tensor>& in) { return nll_loss(log_softmax(in[0], 1), lab); },
        {leaf64({4, 3})});
  check([&](const std::vector<Tensor>& in) { return nll_loss(in[0], lab, Reduction::sum); },
        {leaf64({4, 3})});
  check([&](const std::vector<Tensor>& in) { return cross_entropy(in[0], lab); },
        {leaf64({4, 3}, -3, 3)});
  // Through a layer: cross_entropy(Linear(x)).
  manual_seed(21);
  struct Head : Module {
    Head(Tensor l) : lab(std::move(l)) {
      fc = register_module("fc", std::make_shared<Linear>(5, 3));
    }
    Tensor forward(const Tensor& x) override { return cross_entropy((*fc)(x), lab); }
    std::string type_name() const override { return "Head"; }
    Tensor lab;
    std::shared_ptr<Linear> fc;
  } head(lab);
  CHECK_GRADCHECK(gradcheck_module(head, leaf64({4, 5})));
}

TEST_CASE("loss: bad shapes, dtypes and labels are clear errors") {
  Tensor logits = zeros({3, 4});
  CHECK_ERROR("cross_entropy: input must be [N, C], got [12]",
              cross_entropy(zeros({12}), labels({0})));
  CHECK_ERROR("cross_entropy: labels must be int64, got float32",
              cross_entropy(logits, zeros({3})));
  CHECK_ERROR("cross_entropy: labels must be [N] = [3] for input [3,4], got [2]",
              cross_entropy(logits, labels({0, 1})));
  CHECK_ERROR("cross_entropy: labels must be [N] = [3] for input [3,4], got [3,1]",
              cross_entropy(logits, from_vector(std::vector<int64_t>{0, 1, 2}, {3, 1})));
  CHECK_ERROR("cross_entropy: label 4 at position 1 is out of range [0, 4)",
              cross_entropy(logits, labels({0, 4, 1})));
  CHECK_ERROR("nll_loss: label -1 at position 2 is out of range [0, 4)",
              nll_loss(logits, labels({0, 1, -1})));
  CHECK_ERROR("nll_loss: input must be float32 or float64, got int64",
              nll_loss(zeros({3, 4}, DType::i64), labels({0, 1, 2})));
  CHECK_ERROR("nll_loss: empty batch", nll_loss(zeros({0, 4}), zeros({0}, DType::i64)));
}

TEST_CASE("loss: a tiny MLP overfits one batch with plain SGD") {
  manual_seed(22);
  auto model = std::make_shared<Sequential>();
  model->emplace<Linear>(4, 32);
  model->emplace<ReLU>();
  model->emplace<Linear>(32, 3);
  Tensor x = randn({8, 4});
  Tensor y = labels({0, 1, 2, 0, 1, 2, 0, 1});
  const double lr = 0.5;
  double first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    model->zero_grad();
    Tensor loss = cross_entropy((*model)(x), y);
    loss.backward();
    if (step == 0) first = loss.item();
    last = loss.item();
    NoGrad no_grad;
    for (const Tensor& p : model->parameters()) assign(p, p - p.grad() * lr);
  }
  INFO("loss " << first << " -> " << last);
  CHECK(first > 0.5);
  CHECK(last < first / 10);
  // Every example is now classified correctly.
  Tensor pred = argmax((*model)(x), 1);
  CHECK(pred.to_vector<int64_t>() == y.to_vector<int64_t>());
}
