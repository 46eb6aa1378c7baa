// nn's LayerNorm and cross-entropy loss run the fused tensor ops (layer_norm, cross_entropy):
// one forward row and one backward row each in the profile, the same values as the compositions
// they replaced, and the public nn API unchanged.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "nn/nn.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tests/nn/nn_test_util.h"

using namespace prism;

namespace {

// Forward-phase op rows of a profile, by name.
std::vector<std::string> forward_ops(const profiler::Profile& p) {
  std::vector<std::string> out;
  for (const auto& r : p.recording.records) {
    if (r.kind == profiler::Kind::op && r.phase == profiler::Phase::forward) out.push_back(r.op);
  }
  return out;
}

int count_op(const profiler::Profile& p, const std::string& name) {
  int n = 0;
  for (const auto& r : p.recording.records) n += r.kind == profiler::Kind::op && name == r.op;
  return n;
}

}  // namespace

TEST_CASE("nn::LayerNorm is one layer_norm op forward and one layer_norm_backward") {
  nn::LayerNorm ln(12);
  Tensor x = randn({3, 5, 12}).set_requires_grad();
  profiler::Session session;
  Tensor y = ln(x);
  const profiler::Profile& p = session.stop();
  CHECK(forward_ops(p) == std::vector<std::string>{"layer_norm"});
  profiler::Session s2;
  sum(y * y).backward();
  const profiler::Profile& p2 = s2.stop();
  CHECK(count_op(p2, "layer_norm_backward") == 1);
  REQUIRE(ln.weight.grad().defined());
  REQUIRE(ln.bias.grad().defined());
  REQUIRE(x.grad().defined());
  // weight 1 and bias 0: each row has mean 0.
  for (double m : mean(y.reshape({15, 12}), {1}).to_vector()) CHECK(std::fabs(m) < 1e-5);
}

TEST_CASE("nn::LayerNorm gives the values and gradients of the composition it replaced") {
  nn::LayerNorm ln(7);
  {
    NoGrad no_grad;
    nn::assign(ln.weight, randn({7}));
    nn::assign(ln.bias, randn({7}));
  }
  Tensor x = randn({4, 7}).set_requires_grad();
  Tensor g = randn({4, 7});
  Tensor y = ln(x);
  y.backward(g);
  Tensor dx = x.grad(), dw = ln.weight.grad(), db = ln.bias.grad();
  // The old composed forward: mean, subtract, variance, divide, affine.
  Tensor x2 = x.detach().set_requires_grad();
  Tensor w2 = ln.weight.detach().set_requires_grad();
  Tensor b2 = ln.bias.detach().set_requires_grad();
  Tensor mu = mean(x2, {-1}, true);
  Tensor xc = x2 - mu;
  Tensor var = mean(xc * xc, {-1}, true);
  Tensor y2 = xc / prism::sqrt(var + 1e-5) * w2 + b2;
  y2.backward(g);
  auto close = [](const Tensor& a, const Tensor& b) {
    std::vector<double> va = a.to_vector(), vb = b.to_vector();
    REQUIRE(va.size() == vb.size());
    for (size_t i = 0; i < va.size(); ++i) CHECK(va[i] == doctest::Approx(vb[i]).epsilon(1e-4));
  };
  close(y, y2);
  close(dx, x2.grad());
  close(dw, w2.grad());
  close(db, b2.grad());
}

TEST_CASE("nn::cross_entropy is the cross_entropy op: one forward row, one backward row") {
  Tensor logits = randn({8, 10}).set_requires_grad();
  Tensor labels = from_vector(std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 9}, {8});
  profiler::Session session;
  Tensor loss = nn::cross_entropy(logits, labels);
  const profiler::Profile& p = session.stop();
  CHECK(forward_ops(p) == std::vector<std::string>{"cross_entropy"});
  profiler::Session s2;
  loss.backward();
  const profiler::Profile& p2 = s2.stop();
  CHECK(count_op(p2, "cross_entropy_backward") == 1);
  // The composed definition gives the same loss and gradient.
  Tensor l2 = logits.detach().set_requires_grad();
  Tensor composed = nn::nll_loss(log_softmax(l2, 1), labels, nn::Reduction::mean);
  composed.backward();
  CHECK(loss.item() == doctest::Approx(composed.item()).epsilon(1e-6));
  std::vector<double> g1 = logits.grad().to_vector(), g2 = l2.grad().to_vector();
  for (size_t i = 0; i < g1.size(); ++i) CHECK(g1[i] == doctest::Approx(g2[i]).epsilon(1e-5));
  // nn::Reduction is prism::Reduction: both spellings work.
  CHECK(nn::cross_entropy(logits, labels, nn::Reduction::sum).item() ==
        doctest::Approx(8 * loss.item()).epsilon(1e-6));
}
