#include "nn/models/gpt_decoder.h"

#include <algorithm>
#include <string>

#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"

namespace prism::nn {

namespace {

// The last position's logits of [1, n, V], as doubles.
std::vector<double> last_logits(const Tensor& logits) {
  return logits.select(0, 0).select(0, logits.size(1) - 1).to_vector<double>();
}

}  // namespace

GptDecoder::GptDecoder(GPT& model, int64_t context, bool use_cache)
    : model_(model), context_(context) {
  const int64_t block = model.config().block_size;
  if (context < 1 || context > block) {
    throw Error("GptDecoder: context " + std::to_string(context) + " must be between 1 and " +
                "the model's block_size " + std::to_string(block));
  }
  if (model.wte->weight.device() != Device::cpu) {
    throw Error("GptDecoder: the model must be on the cpu");
  }
  model_.eval();  // no dropout while decoding
  if (use_cache) cache_.emplace(model.make_cache(/*batch=*/1, context));
}

void GptDecoder::check_token(int64_t id) const {
  if (id < 0 || id >= model_.config().vocab) {
    throw Error("GptDecoder: token " + std::to_string(id) + " is outside the vocabulary [0, " +
                std::to_string(model_.config().vocab) + ")");
  }
}

std::vector<double> GptDecoder::run_window() {
  NoGrad no_grad;
  const Tensor idx = from_vector(window_, {1, window_length()});
  if (cache_) {
    cache_->clear();
    return last_logits(model_.forward_cached(idx, *cache_, /*last_only=*/true));
  }
  return last_logits(model_(idx));
}

std::vector<double> GptDecoder::start(const std::vector<int64_t>& prompt) {
  if (prompt.empty()) throw Error("GptDecoder::start: the prompt needs at least one token");
  for (int64_t id : prompt) check_token(id);
  const size_t keep = std::min(prompt.size(), static_cast<size_t>(context_));
  window_.assign(prompt.end() - static_cast<std::ptrdiff_t>(keep), prompt.end());
  slides_ = 0;
  return run_window();
}

std::vector<double> GptDecoder::push(int64_t token) {
  check_token(token);
  if (window_.empty()) throw Error("GptDecoder::push: call start() with a prompt first");
  window_.push_back(token);
  if (window_length() > context_) {
    // Slide by half (see the header): keep the newest context / 2 tokens (at least the new one).
    const int64_t keep = std::max<int64_t>(1, context_ / 2);
    window_.erase(window_.begin(), window_.end() - keep);
    ++slides_;
    return run_window();
  }
  if (!cache_) return run_window();
  NoGrad no_grad;
  return last_logits(
      model_.forward_cached(from_vector(std::vector<int64_t>{token}, {1, 1}), *cache_));
}

}  // namespace prism::nn
