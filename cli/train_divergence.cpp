#include "cli/train_divergence.h"

#include <fmt/format.h>

#include "tensor/autograd/anomaly.h"

namespace prism::cli {

std::string first_non_finite_gradient(const nn::Module& model) {
  for (const auto& [name, p] : model.named_parameters()) {
    if (p.grad().defined() && autograd::count_non_finite(p.grad()) > 0) return name;
  }
  return "";
}

namespace {

// The first parameter or buffer holding a non-finite value, or "".
std::string first_non_finite_weight(const nn::Module& model) {
  for (const auto& [name, t] : model.named_state()) {
    if (autograd::count_non_finite(t) > 0) return name;
  }
  return "";
}

// Where the first non-finite value came from: the op named by a replay under DetectNonFinite.
std::string find_origin(nn::Module& model, const Tensor& input, const Divergence& d,
                        const std::function<void()>& replay) {
  if (const int64_t n = autograd::count_non_finite(input); n > 0) {
    return fmt::format("the input batch itself holds {} non-finite values: check the data", n);
  }
  if (const std::string w = first_non_finite_weight(model); !w.empty()) {
    if (d.step == 1) {
      return fmt::format(
          "the weights were not finite before the first step ('{}' holds NaN or Inf): were they "
          "loaded with --allow-non-finite?",
          w);
    }
    return fmt::format(
        "the weights were not finite before the step ('{}' holds NaN or Inf): the previous "
        "step's loss and gradients were finite, but its update (learning rate x gradient) was not",
        w);
  }
  model.zero_grad();
  try {
    autograd::DetectNonFinite detect;
    replay();
  } catch (const autograd::NonFiniteError& e) {
    return fmt::format("first non-finite value: {}", e.what());
  }
  return std::string("running the step again did not reproduce it") +
         (d.has_dropout ? " (dropout drew new masks)" : "");
}

}  // namespace

void report_divergence(const Divergence& d, nn::Module& model, const Tensor& input,
                       const std::function<void()>& replay) {
  const std::string origin = find_origin(model, input, d, replay);
  throw Error(fmt::format(
      "training diverged at step {}: {}\n"
      "  {}\n"
      "  hint: a loss that grows until it overflows usually means the learning rate is too "
      "high ({} {:g}): try one ten times smaller\n"
      "  stopped before the optimizer step; no checkpoint or profile was written",
      d.step, d.what, origin, d.lr_source, d.lr));
}

}  // namespace prism::cli
