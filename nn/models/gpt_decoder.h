// GptDecoder: next-token logits one token at a time, with a KV cache (nn/kv_cache.h) or
// without one (the whole window recomputed every token), under one context-window policy, so
// the two ways see exactly the same tokens at the same positions and, at temperature 0, write
// the same text. `prism generate` times both with it.
//
//   GptDecoder dec(model, /*context=*/256, /*use_cache=*/true);
//   std::vector<double> logits = dec.start(prompt_ids);   // prefill: time to first token
//   while (...) {
//     int64_t next = sample_token(logits, temperature, top_k, gen);
//     logits = dec.push(next);                            // one decoding step
//   }
//
// The context limit. The model sees at most `context` positions (<= block_size: wpe has no
// row beyond). When the window is full and a token arrives, the window SLIDES BY HALF: it keeps
// its newest context / 2 tokens (the new one included), restarts them at position 0 and
// recomputes them in one prefill. Keys and values depend on absolute positions (wpe is added
// at the input), so the cached rows cannot simply be shifted: they must be recomputed. Halving
// makes that recompute happen once every context / 2 tokens (amortised O(context) per token,
// seen as a spike in the p99 latency) instead of every token, at the price of a shorter
// context right after a slide. The uncached way follows the same window, so its text is the
// same; GPT::generate instead crops to the last block_size tokens at every step.
//
// The decoder puts the model in eval mode (no dropout) and runs every forward under NoGrad.
// Batch 1.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "nn/kv_cache.h"
#include "nn/models/gpt.h"

namespace prism::nn {

class GptDecoder {
 public:
  // context in [1, block_size]; an Error otherwise.
  GptDecoder(GPT& model, int64_t context, bool use_cache);

  // A new sequence: the prompt (its last `context` tokens; at least one token, ids in the
  // vocabulary) is run at positions 0..; returns the logits [vocab] for the next token.
  std::vector<double> start(const std::vector<int64_t>& prompt);
  // Appends `token` to the window (sliding it when full) and returns the next logits.
  std::vector<double> push(int64_t token);

  int64_t context() const { return context_; }
  int64_t window_length() const { return static_cast<int64_t>(window_.size()); }
  int64_t slides() const { return slides_; }  // times the window slid so far
  bool uses_cache() const { return cache_.has_value(); }
  const KVCache* cache() const { return cache_ ? &*cache_ : nullptr; }

 private:
  // Runs the whole window from position 0 (a prefill, or every step without a cache).
  std::vector<double> run_window();
  void check_token(int64_t id) const;

  GPT& model_;
  int64_t context_;
  std::optional<KVCache> cache_;
  std::vector<int64_t> window_;
  int64_t slides_ = 0;
};

}  // namespace prism::nn
