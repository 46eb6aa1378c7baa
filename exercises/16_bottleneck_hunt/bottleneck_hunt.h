// Exercise 16, the capstone: a training loop with inefficiencies planted in it, to find with the
// profiler and remove without moving the loss. Your file, bottleneck_hunt.cpp, defines
// hunt_train(); README.md teaches the hunt: profile, hypothesis, one change, compare, keep or
// revert.
//
// The task: images of 28 x 28 bytes, as a data set stores them, and their class (0 to 9); a
// two-layer perceptron, 784 -> 256 (ReLU) -> 10, trained with plain SGD on the cross-entropy,
// each step over `micro_batches` micro-batches of `batch` images whose gradients are averaged.
// The checker builds the data and the weights and hands both to your loop and to the original
// one (baseline.cpp), on the same seed: both must train the same model, step by step.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "tensor/tensor.h"

namespace bottleneck_hunt {

// Images as bytes (0 to 255), row-major [n, 784], and their labels.
struct HuntData {
  int64_t n = 0;
  int64_t features = 784;
  std::vector<uint8_t> pixels;  // n * features
  std::vector<int64_t> labels;  // n
};

// The perceptron: y = relu(x w1^T + b1) w2^T + b2, with w1 [256, 784], b1 [256], w2 [10, 256],
// b2 [10] (nn::Linear's layout: a weight is [out, in]), all float32 leaves with requires_grad.
struct HuntModel {
  prism::Tensor w1, b1, w2, b2;
  std::vector<prism::Tensor> parameters() const { return {w1, b1, w2, b2}; }
};

struct HuntSettings {
  int64_t steps = 16;
  int64_t batch = 64;         // images per micro-batch
  int64_t micro_batches = 2;  // per step; their gradients are averaged
  double lr = 0.05;           // SGD: p = p - lr * (mean of the micro-batches' gradients)
};

// Called after every step with its index (0, 1, ...): the checker times the steps through it.
using StepDone = std::function<void(int64_t step)>;

// Trains `model` in place for settings.steps steps; returns each step's loss (the mean over its
// micro-batches). Micro-batch j of step s covers images [(s m + j) b, (s m + j + 1) b) modulo n,
// m = micro_batches, b = batch (n is a multiple of b). A pixel enters the model as byte / 255.
std::vector<float> hunt_train(HuntModel& model, const HuntData& data, const HuntSettings& settings,
                              const StepDone& step_done);

}  // namespace bottleneck_hunt
