// nn's LayerNorm, RMSNorm, SwiGLU and cross-entropy loss run the fused tensor ops (layer_norm,
// rms_norm, swiglu, cross_entropy): one forward row and one backward row each in the profile,
// the same values as the compositions they replaced, and the public nn API unchanged.
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

TEST_CASE("nn::RMSNorm is one rms_norm op forward and one backward, and normalises rows") {
  nn::RMSNorm norm(12);
  CHECK(norm.parameters().size() == 1);
  CHECK(norm.extra_repr() == "12, eps=1e-06, affine=true");
  Tensor x = randn({3, 5, 12}).set_requires_grad();
  profiler::Session session;
  Tensor y = norm(x);
  const profiler::Profile& p = session.stop();
  CHECK(forward_ops(p) == std::vector<std::string>{"rms_norm"});
  profiler::Session s2;
  sum(y * y).backward();
  const profiler::Profile& p2 = s2.stop();
  CHECK(count_op(p2, "rms_norm_backward") == 1);
  REQUIRE(norm.weight.grad().defined());
  REQUIRE(x.grad().defined());
  // weight 1: each row's mean square is 1 (up to eps).
  for (double ms : mean(y * y, {2}).to_vector()) CHECK(ms == doctest::Approx(1.0).epsilon(1e-4));
  CHECK_THROWS_WITH_AS(norm(randn({2, 11})), doctest::Contains("RMSNorm(12): input [2,11]"), Error);
  CHECK_THROWS_WITH_AS(nn::RMSNorm(0), doctest::Contains("dim must be positive"), Error);
  CHECK(nn::RMSNorm(4, 1e-5, false).parameters().empty());
}

TEST_CASE("nn::SwiGLU is three bias-free Linears around one swiglu op, forward and backward") {
  nn::SwiGLU ff(12, 32);
  CHECK(ff.type_name() == "SwiGLU");
  CHECK(ff.extra_repr() == "dim=12, hidden=32");
  CHECK(ff.parameters().size() == 3);  // w1, w2, w3 weights; no biases, as in LLaMA
  CHECK(ff.w1->weight.shape() == Dims{32, 12});
  CHECK(ff.w2->weight.shape() == Dims{12, 32});
  CHECK(ff.w3->weight.shape() == Dims{32, 12});
  CHECK_FALSE(ff.w1->bias.defined());
  int64_t params = 0;
  for (const Tensor& p : ff.parameters()) params += p.numel();
  CHECK(params == 3 * 12 * 32);

  Tensor x = randn({3, 5, 12}).set_requires_grad();
  profiler::Session session;
  Tensor y = ff(x);
  const profiler::Profile& p = session.stop();
  CHECK(y.shape() == Dims{3, 5, 12});
  // w1 x, w3 x, the gate and product as one op (no silu, no mul), then w2.
  CHECK(forward_ops(p) == std::vector<std::string>{"matmul", "matmul", "swiglu", "matmul"});
  profiler::Session s2;
  sum(y * y).backward();
  const profiler::Profile& p2 = s2.stop();
  CHECK(count_op(p2, "swiglu_backward") == 1);
  CHECK(count_op(p2, "silu_backward") == 0);
  for (const Tensor& w : ff.parameters()) CHECK(w.grad().defined());
  REQUIRE(x.grad().defined());

  CHECK_THROWS_WITH_AS(ff(randn({2, 11})), doctest::Contains("SwiGLU(12 -> 32): input [2,11]"),
                       Error);
  CHECK_THROWS_WITH_AS(nn::SwiGLU(0, 4), doctest::Contains("SwiGLU: sizes must be positive"),
                       Error);
}

TEST_CASE("nn::SwiGLU gives the values and gradients of w2(silu(w1 x) * w3 x)") {
  nn::SwiGLU ff(7, 11);
  Tensor x = randn({4, 7}).set_requires_grad();
  Tensor g = randn({4, 7});
  Tensor y = ff(x);
  y.backward(g);
  // The composition from ops: silu and mul (two ops forward, three backward).
  Tensor x2 = x.detach().set_requires_grad();
  Tensor w1 = ff.w1->weight.detach().set_requires_grad();
  Tensor w2 = ff.w2->weight.detach().set_requires_grad();
  Tensor w3 = ff.w3->weight.detach().set_requires_grad();
  Tensor y2 = matmul(silu(matmul(x2, w1.t())) * matmul(x2, w3.t()), w2.t());
  y2.backward(g);
  auto close = [](const Tensor& a, const Tensor& b) {
    std::vector<double> va = a.to_vector(), vb = b.to_vector();
    REQUIRE(va.size() == vb.size());
    for (size_t i = 0; i < va.size(); ++i) CHECK(va[i] == doctest::Approx(vb[i]).epsilon(1e-5));
  };
  close(y, y2);
  close(x.grad(), x2.grad());
  close(ff.w1->weight.grad(), w1.grad());
  close(ff.w2->weight.grad(), w2.grad());
  close(ff.w3->weight.grad(), w3.grad());
}

TEST_CASE("nn::SwiGLU and nn::SiLU pass a float64 gradient check") {
  nn::SwiGLU ff(5, 6);
  CHECK_GRADCHECK(nn::test::gradcheck_module(ff, nn::test::leaf64({2, 3, 5}, -2, 2)));
  nn::SiLU act;
  CHECK_GRADCHECK(nn::test::gradcheck_module(act, nn::test::leaf64({4, 3}, -4, 4)));
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
