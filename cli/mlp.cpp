#include "cli/mlp.h"

#include <cmath>

#include "profiler/recorder.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/storage.h"

namespace prism::cli {

namespace {

// A trainable leaf whose buffer the memory tracker counts as a parameter.
Tensor as_parameter(const Tensor& t) {
  Tensor p = t.detach();
  p.set_requires_grad();
  p.storage()->set_role(MemRole::parameter);
  return p;
}

}  // namespace

Mlp::Mlp(int in, int hidden, int classes) {
  NoGrad no_grad;
  // He et al. (2015): std sqrt(2 / fan_in) keeps the ReLU layer's activations at unit scale.
  w1_ = as_parameter(randn({in, hidden}, DType::f32, 0.0, std::sqrt(2.0 / in)));
  b1_ = as_parameter(zeros({hidden}));
  w2_ = as_parameter(randn({hidden, classes}, DType::f32, 0.0, std::sqrt(1.0 / hidden)));
  b2_ = as_parameter(zeros({classes}));
}

Tensor Mlp::forward(const Tensor& x) const {
  Tensor h;
  {
    profiler::Scope scope("fc1");
    h = matmul(x, w1_) + b1_;  // b1 [hidden] broadcasts over the rows
  }
  {
    profiler::Scope scope("relu");
    h = relu(h);
  }
  profiler::Scope scope("fc2");
  return matmul(h, w2_) + b2_;
}

void Mlp::sgd_step(double lr) {
  profiler::PhaseGuard phase(profiler::Phase::optimizer);
  profiler::Scope scope("sgd");
  NoGrad no_grad;
  for (Tensor* p : parameters()) {
    const Tensor g = p->grad();
    if (!g.defined()) continue;
    *p = as_parameter(*p - lr * g);
  }
}

int64_t Mlp::parameter_count() const {
  return w1_.numel() + b1_.numel() + w2_.numel() + b2_.numel();
}

Tensor nll_loss(const Tensor& log_probs, const Tensor& labels) {
  return neg(mean(gather(log_probs, 1, labels)));
}

double accuracy(const Tensor& logits, const std::vector<int64_t>& labels) {
  NoGrad no_grad;
  const std::vector<int64_t> predicted = argmax(logits, 1).to_vector<int64_t>();
  if (predicted.empty() || predicted.size() != labels.size()) return 0.0;
  int64_t correct = 0;
  for (size_t i = 0; i < predicted.size(); ++i) correct += predicted[i] == labels[i];
  return static_cast<double>(correct) / static_cast<double>(predicted.size());
}

}  // namespace prism::cli
