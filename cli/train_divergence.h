// `prism train` stops at the first step whose loss or gradient is not finite, and says where
// the first NaN or Inf came from, instead of training on and saving garbage.
//
// Each step checks the loss (before backward) and every parameter's gradient (before the
// optimizer step), so the weights are still those that produced the bad value. The step is then
// run again under autograd::DetectNonFinite (tensor/autograd/anomaly.h), which names the first
// op, forward or backward, to turn finite values into non-finite ones.
#pragma once

#include <functional>
#include <string>

#include "nn/module.h"

namespace prism::cli {

// The first parameter (by name) whose gradient holds a NaN or an infinity, or "".
std::string first_non_finite_gradient(const nn::Module& model);

// What a diverged step was, for the report.
struct Divergence {
  int64_t step = 0;          // 1-based, as the progress lines count
  std::string what;          // "the loss is nan", "the gradient of fc1.weight holds 3 inf ..."
  double lr = 0;             // the learning rate in use, for the hint
  std::string lr_source;     // "--lr" or "the model's default"
  bool has_dropout = false;  // the replay draws new dropout masks
};

// Runs `replay` (the same step's forward and backward, on the same batch) under DetectNonFinite
// and throws an Error with the whole report: the step, what went non-finite, the op where the
// first non-finite value appeared (or why it could not be found), and a hint. `input` is the
// batch as the model saw it, checked first: NaN in the data is the data's fault, not an op's.
[[noreturn]] void report_divergence(const Divergence& d, nn::Module& model, const Tensor& input,
                                    const std::function<void()>& replay);

}  // namespace prism::cli
