// GPT: a decoder-only transformer language model (Radford et al., 2018, 2019), laid out as
// GPT-2 and nanoGPT lay it out.
//
//   idx  int64 [B, T], T <= block_size          token ids
//   wte(idx) + wpe(0..T-1)      [B, T, D]        token embedding + learned position embedding
//                                               ([T, D] broadcast over the batch)
//   drop                        [B, T, D]        dropout on the embeddings (training only)
//   blocks.0 .. blocks.L-1      [B, T, D]        pre-LN TransformerBlocks, causal attention:
//                                               position t sees positions 0..t only
//   ln_f                        [B, T, D]        final LayerNorm (pre-LN blocks leave the
//                                               residual stream unnormalised)
//   head                        [B, T, V]        logits over the vocabulary for the next token
//
// Weight tying (Press & Wolf, 2017; GPT-2 does it): with tie_weights the head is x wte^T, the
// token embedding read backwards, so there is no separate [V, D] head matrix. It saves V*D
// parameters (38.6M of GPT-2 small's 124M) and ties "what a token means" at the input to "how
// likely it is" at the output. The head then is a matmul in a profiler scope named "head";
// untied, it is a Linear(D, V, bias=false) child named "head".
//
// Parameters (D = d_model, L = layers, V = vocab, P = block_size):
//   V D (wte) + P D (wpe; none with rope) + L (12 D^2 + 13 D) (blocks) + 2 D (ln_f)
//   [+ V D untied]
//   gpt2-small (V 50257, P 1024, D 768, L 12), tied: 38,597,376 + 786,432 + 85,054,464 + 1,536
//   = 124,439,808, the figure usually quoted as "124M"; untied 163,037,184.
//
// Initialisation as GPT-2: embeddings and Linear weights N(0, 0.02), biases 0, and the two
// projections that write into the residual stream (attn.proj and mlp.2) N(0, 0.02 / sqrt(2 L)),
// so the stream's variance does not grow with depth (2 L residual additions). The layers'
// own defaults would not do here: Embedding's N(0, 1) tied to the head would start the logits
// with a standard deviation of about sqrt(D), far from the uniform guess a new model should make.
//
// Dropout: the config's rate applies to the embeddings ("drop"). TransformerBlock has no
// dropout of its own (attention and residual dropout), so that is all the regularisation there
// is; the rate does not change any count or shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/kv_cache.h"
#include "nn/layers/container.h"
#include "nn/layers/dropout.h"
#include "nn/layers/embedding.h"
#include "nn/layers/linear.h"
#include "nn/layers/normalization.h"
#include "nn/layers/transformer.h"
#include "tensor/random.h"

namespace prism::nn {

struct GPTConfig {
  int64_t vocab = 128;       // tokens; a character vocabulary of up to 128 symbols by default
  int64_t block_size = 128;  // the longest context (positions in wpe)
  int64_t d_model = 128;
  int64_t heads = 4;
  int64_t layers = 4;
  double dropout = 0.1;
  bool tie_weights = true;
  // Rotary position embeddings in every attention layer (prism::rope) instead of the learned
  // table wpe: no wpe module, P D fewer parameters, and position enters as a rotation of q
  // and k. Off: GPT-2's layout.
  bool rope = false;
};

// The named configurations:
//   "gpt-char"    vocab 128, block 128, d 128, heads 4, layers 4 (~0.8M parameters), for
//                 character-level text;
//   "gpt2-small"  vocab 50257, block 1024, d 768, heads 12, layers 12 (124M, tied);
//   "gpt2-medium" vocab 50257, block 1024, d 1024, heads 16, layers 24 (355M, tied).
// An unknown name is an Error listing these.
GPTConfig gpt_config(const std::string& name);

// The next token drawn from `logits` [vocab] as GPT::generate draws it: greedy argmax when
// temperature is 0 or top_k is 1, else softmax(logits / temperature) over the top_k largest
// (0: all), in double, by inverse-CDF sampling with one uniform draw from `gen`. A logit that
// is NaN or infinite is an Error naming it (never sorted, never drawn).
int64_t sample_token(const std::vector<double>& logits, double temperature, int64_t top_k,
                     Generator& gen);
std::vector<std::string> gpt_config_names();

class GPT : public Module {
 public:
  explicit GPT(const GPTConfig& config);
  // idx int64 [B, T] with 1 <= T <= block_size and ids in [0, vocab) -> logits [B, T, vocab].
  Tensor forward(const Tensor& idx) override;
  std::string type_name() const override { return "GPT"; }
  std::string extra_repr() const override;
  const GPTConfig& config() const { return config_; }

  // Autoregressive sampling: appends max_new_tokens tokens to `prompt` and returns the whole
  // sequence (prompt first, so its size is prompt.size() + max_new_tokens). Each step runs the
  // model on the last block_size tokens (the context is cropped: positions beyond block_size
  // have no embedding) and samples the next token from softmax(logits / temperature) over the
  // top_k most likely tokens (top_k 0: all of them). temperature 0 (or top_k 1) is greedy.
  //
  // It draws from its own Generator seeded with `seed`, not the global one, so a seed always
  // gives the same text and generating does not change what training draws next. It runs under
  // NoGrad and in eval mode (no dropout), then restores the mode the model was in. It needs a
  // model with values (cpu), not one on the meta device.
  std::vector<int64_t> generate(const std::vector<int64_t>& prompt, int64_t max_new_tokens,
                                double temperature = 1.0, int64_t top_k = 0, uint64_t seed = 0);

  // Incremental decoding with a KV cache (nn/kv_cache.h; the loop around it with a context
  // window: nn/models/gpt_decoder.h). idx int64 [B, n] are the tokens at positions
  // [t0, t0 + n), t0 = cache.length(), t0 + n <= min(cache.max_len(), block_size); returns
  // their logits [B, n, vocab], the same values forward() gives at those positions of the whole
  // sequence, and leaves cache.length() = t0 + n. Each block reads the cached keys and values
  // of positions < t0 and computes only the n new rows. Inference only: it runs under NoGrad
  // (no graph is recorded). forward() itself, what training runs, does not change.
  // last_only: the logits of the last position only, [B, 1, vocab] (a decoder's prefill needs
  // no more; the head is the model's largest product per row).
  Tensor forward_cached(const Tensor& idx, KVCache& cache, bool last_only = false);
  // A cache for this model: `layers` x 2 buffers [batch, heads, max_len, d_model / heads] of
  // wte's dtype on its device; max_len 0 means block_size (and more than block_size is an Error).
  KVCache make_cache(int64_t batch, int64_t max_len = 0) const;

  std::shared_ptr<Embedding> wte;  // [vocab, D]
  std::shared_ptr<Embedding> wpe;  // [block_size, D]; null with config.rope
  std::shared_ptr<Dropout> drop;
  std::shared_ptr<Sequential> blocks;  // "0" .. "L-1": TransformerBlock
  std::shared_ptr<LayerNorm> ln_f;
  std::shared_ptr<Linear> head;  // [vocab, D] without bias; null when tied to wte

 private:
  GPTConfig config_;
};

}  // namespace prism::nn
