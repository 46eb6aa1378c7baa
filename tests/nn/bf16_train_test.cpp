// Training under the bf16 autocast policy (tensor/autocast.h): the MLP and the CNN of the zoo,
// a few SGD steps on a fixed random batch, from the same initial weights as a float32 run.
//
// Tolerance: every GEMM's inputs are rounded to 8 significant bits, so each product errs by at
// most 2^-7 relative and each output of a layer by at most 2^-7 of the sum of its products'
// magnitudes; with random weights of a freshly initialised net the outputs are a few of those
// magnitudes, and cross-entropy of 10 classes changes by at most the logits' change. Five steps
// of SGD carry that through: 2% of the loss (about 2.3 for 10 classes, so 0.05) is the stated
// bound; a wrong gradient (a dropped or mis-scaled term) moves the loss by far more over five
// steps at this learning rate. The master weights and the gradients stay float32.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "nn/models/zoo.h"
#include "nn/module.h"
#include "nn/optim/sgd.h"
#include "tensor/autocast.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace prism {
namespace {

std::vector<double> train_losses(const std::string& model, bool bf16, int steps) {
  manual_seed(42);
  auto net = nn::make_model(model, {});
  manual_seed(7);
  const Tensor x = randn({16, 1, 28, 28});
  std::vector<int64_t> y;
  for (int64_t i = 0; i < 16; ++i) y.push_back(i % 10);
  const Tensor target = from_vector(y, {16});
  nn::optim::SGD opt(net->parameters(), 0.05);
  std::vector<double> losses;
  for (int s = 0; s < steps; ++s) {
    Tensor loss;
    {
      Autocast policy(bf16 ? DType::bf16 : DType::f32);
      loss = cross_entropy((*net)(model == "mlp" ? x.reshape({16, 784}) : x), target);
      loss.backward();
    }
    for (const Tensor& p : net->parameters()) {
      REQUIRE(p.dtype() == DType::f32);
      REQUIRE(p.grad().dtype() == DType::f32);
    }
    losses.push_back(loss.item<double>());
    opt.step();
    opt.zero_grad();
  }
  return losses;
}

}  // namespace

TEST_CASE("bf16 autocast: the MLP and the CNN train like float32 (loss within 2%)") {
  for (const char* model : {"mlp", "cnn"}) {
    INFO(model);
    const std::vector<double> f32 = train_losses(model, false, 5);
    const std::vector<double> bf16 = train_losses(model, true, 5);
    for (size_t i = 0; i < f32.size(); ++i) {
      INFO("step " << i << ": fp32 " << f32[i] << ", bf16 " << bf16[i]);
      CHECK(std::abs(bf16[i] - f32[i]) <= 0.02 * f32[i]);
    }
    CHECK(bf16.back() < bf16.front());  // it learns
  }
}

}  // namespace prism
