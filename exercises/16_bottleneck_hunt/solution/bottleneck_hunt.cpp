// Exercise 16, a reference solution: the same model, data order, loss and update as the original
// loop, without its four wastes (the checker names each as it finds it gone):
//   1. the images are decoded (bytes -> float32 / 255) once, before the loop, not for every
//      micro-batch: the original cast all n images to take 64 of them;
//   2. each layer is prism's linear(x, w, b), which reads w [out, in] as it is stored; the
//      original copied w^T into a new contiguous tensor on every call (and its gradient back);
//   3. backward adds each micro-batch's gradient into .grad itself: the original cloned every
//      gradient and summed the clones into new tensors;
//   4. zero_grad() drops the old gradients: the next backward writes the first one, so nothing
//      is zero-filled (the original filled a zero tensor per parameter per step).
// The losses agree with the original's to rounding: the same sums in another order (the fused
// linear adds the bias inside the product).
#include <vector>

#include "exercises/16_bottleneck_hunt/bottleneck_hunt.h"
#include "tensor/ops.h"
#include "tensor/optim_ops.h"

using prism::Tensor;

namespace bottleneck_hunt {
namespace {

Tensor images(const HuntData& data) {
  const Tensor bytes = prism::from_vector(
      std::vector<int64_t>(data.pixels.begin(), data.pixels.end()), {data.n, data.features});
  return prism::cast(bytes, prism::DType::f32) * (1.0 / 255.0);
}

// The ReLU of the hidden layer is folded into the second linear (relu_input): applied as the
// product reads its input, with no [batch, 256] tensor of its own.
Tensor forward(const HuntModel& m, const Tensor& x) {
  return prism::linear(prism::linear(x, m.w1, m.b1), m.w2, m.b2, /*relu_input=*/true);
}

}  // namespace

std::vector<float> hunt_train(HuntModel& model, const HuntData& data, const HuntSettings& s,
                              const StepDone& step_done) {
  const std::vector<Tensor> params = model.parameters();
  const Tensor x_all = images(data);  // decoded once
  const Tensor y_all = prism::from_vector(data.labels, {data.n});
  prism::SgdHyper h;
  h.lr = s.lr;
  std::vector<float> losses;
  for (int64_t step = 0; step < s.steps; ++step) {
    for (const Tensor& p : params) p.zero_grad();
    float loss_sum = 0;
    for (int64_t j = 0; j < s.micro_batches; ++j) {
      const int64_t first = ((step * s.micro_batches + j) * s.batch) % data.n;
      const Tensor loss = prism::cross_entropy(forward(model, x_all.narrow(0, first, s.batch)),
                                               y_all.narrow(0, first, s.batch));
      loss.backward();  // adds into each parameter's .grad
      loss_sum += loss.item<float>();
    }
    for (const Tensor& p : params) {
      prism::sgd_update_(p, p.grad() * (1.0 / static_cast<double>(s.micro_batches)), Tensor(), h);
    }
    losses.push_back(loss_sum / static_cast<float>(s.micro_batches));
    step_done(step);
  }
  return losses;
}

}  // namespace bottleneck_hunt
