#include "nn/models/gpt.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "nn/init.h"
#include "profiler/recorder.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace prism::nn {

namespace {

struct NamedConfig {
  const char* name;
  GPTConfig config;
};

const std::vector<NamedConfig>& named_configs() {
  // {vocab, block_size, d_model, heads, layers, dropout, tie_weights}
  static const std::vector<NamedConfig> configs = {
      {"gpt-char", {128, 128, 128, 4, 4, 0.1, true}},
      {"gpt2-small", {50257, 1024, 768, 12, 12, 0.1, true}},
      {"gpt2-medium", {50257, 1024, 1024, 16, 24, 0.1, true}},
  };
  return configs;
}

// Replaces a parameter's values with N(0, sd) draws (or zeros with sd = 0), on its own device.
void reinit(const Tensor& p, double sd) {
  DefaultDevice on(p.device());
  assign(p, sd == 0 ? zeros(p.shape(), p.dtype()) : init::normal(p.shape(), 0.0, sd, p.dtype()));
}

void reinit_linear(const Linear& l, double sd) {
  reinit(l.weight, sd);
  if (l.bias.defined()) reinit(l.bias, 0);
}

// Restores a module's training mode when generate() ends, also when it ends by an exception.
class ModeRestore {
 public:
  explicit ModeRestore(Module& m) : m_(m), was_training_(m.is_training()) {}
  ~ModeRestore() { m_.train(was_training_); }
  ModeRestore(const ModeRestore&) = delete;
  ModeRestore& operator=(const ModeRestore&) = delete;

 private:
  Module& m_;
  bool was_training_;
};

}  // namespace

GPTConfig gpt_config(const std::string& name) {
  for (const auto& c : named_configs()) {
    if (name == c.name) return c.config;
  }
  std::string known;
  for (const auto& c : named_configs()) {
    if (!known.empty()) known += ", ";
    known += c.name;
  }
  throw Error("gpt_config: unknown configuration '" + name + "'; known: " + known);
}

std::vector<std::string> gpt_config_names() {
  std::vector<std::string> names;
  for (const auto& c : named_configs()) names.emplace_back(c.name);
  return names;
}

GPT::GPT(const GPTConfig& config) : config_(config) {
  const GPTConfig& c = config;
  if (c.vocab <= 0 || c.block_size <= 0 || c.d_model <= 0 || c.heads <= 0 || c.layers <= 0) {
    throw Error("GPT: vocab, block_size, d_model, heads and layers must be positive (" +
                extra_repr() + ")");
  }
  if (c.d_model % c.heads != 0) {
    throw Error("GPT: d_model must be a multiple of heads (" + extra_repr() + ")");
  }
  if (!(c.dropout >= 0 && c.dropout < 1)) {
    throw Error("GPT: dropout must be in [0, 1) (" + extra_repr() + ")");
  }
  wte = register_module("wte", std::make_shared<Embedding>(c.vocab, c.d_model));
  if (!c.rope) wpe = register_module("wpe", std::make_shared<Embedding>(c.block_size, c.d_model));
  drop = register_module("drop", std::make_shared<Dropout>(c.dropout));
  blocks = register_module("blocks", std::make_shared<Sequential>());
  std::vector<std::shared_ptr<TransformerBlock>> made;
  for (int64_t i = 0; i < c.layers; ++i) {
    made.push_back(blocks->emplace<TransformerBlock>(c.d_model, c.heads, /*causal=*/true));
    made.back()->attn->set_rope(c.rope);
  }
  ln_f = register_module("ln_f", std::make_shared<LayerNorm>(c.d_model));
  if (!c.tie_weights) {
    head = register_module("head", std::make_shared<Linear>(c.d_model, c.vocab, false));
  }

  // GPT-2's initialisation (see the header). On meta nothing is drawn.
  NoGrad no_grad;
  const double sd = 0.02;
  const double sd_residual = sd / std::sqrt(2.0 * static_cast<double>(c.layers));
  reinit(wte->weight, sd);
  if (wpe) reinit(wpe->weight, sd);
  for (const auto& b : made) {
    reinit_linear(*b->attn->qkv, sd);
    reinit_linear(*b->attn->proj, sd_residual);
    for (size_t i = 0; i < b->mlp->size(); ++i) {
      if (auto* l = dynamic_cast<Linear*>((*b->mlp)[i].get())) {
        // mlp.0 widens D -> 4D; the last Linear writes back into the residual stream.
        reinit_linear(*l, i + 1 == b->mlp->size() ? sd_residual : sd);
      }
    }
  }
  if (head) reinit_linear(*head, sd);
}

Tensor GPT::forward(const Tensor& idx) {
  if (idx.dtype() != DType::i64 || idx.dim() != 2) {
    throw Error(std::string("GPT: input must be int64 token ids [B, T], got ") +
                dtype_name(idx.dtype()) + " " + idx.shape().str());
  }
  const int64_t t = idx.size(1);
  if (t < 1 || t > config_.block_size) {
    throw Error("GPT: sequence length " + std::to_string(t) + " of input " + idx.shape().str() +
                " must be between 1 and block_size " + std::to_string(config_.block_size) +
                " (crop the context to its last block_size tokens)");
  }
  Tensor x = (*wte)(idx);
  if (wpe) {  // with rope, attention turns q and k by their positions instead
    Tensor pos;
    {
      DefaultDevice on(idx.device());  // the positions go where the ids are (cpu or meta)
      pos = arange(t, DType::i64);     // [T]: 0, 1, ..., T-1
    }
    // [B, T, D] + [T, D]: every sequence in the batch gets the same position vectors.
    x = x + (*wpe)(pos);
  }
  x = (*drop)(x);
  x = (*blocks)(x);  // [B, T, D]
  x = (*ln_f)(x);
  if (head) return (*head)(x);  // [B, T, V]
  // Tied: logits = x wte^T, [B, T, D] @ [D, V]; the transpose is a view.
  profiler::Scope scope("head");
  return matmul(x, wte->weight.t());
}

int64_t sample_token(const std::vector<double>& last, double temperature, int64_t top_k,
                     Generator& gen) {
  const int64_t v = static_cast<int64_t>(last.size());
  if (v == 0) throw Error("sample_token: no logits");
  // A NaN or an infinity (weights that overflow float32 somewhere in the forward pass) has no
  // place in an argmax or a softmax, and a NaN breaks the ordering the sort below needs (a
  // comparator that is not a strict weak order is undefined behaviour): refused, never sampled.
  for (int64_t i = 0; i < v; ++i) {
    if (!std::isfinite(last[static_cast<size_t>(i)])) {
      throw Error("sample_token: the logits are not finite (logit " + std::to_string(i) + " of " +
                  std::to_string(v) + " is " +
                  (std::isnan(last[static_cast<size_t>(i)]) ? "nan" : "inf") +
                  "): the model's forward pass overflowed float32");
    }
  }
  if (temperature == 0 || top_k == 1) {
    return std::max_element(last.begin(), last.end()) - last.begin();
  }
  // softmax(z / temperature) over the `keep` largest logits, in double, shifted by the max so
  // exp never overflows; then inverse-CDF sampling with one uniform draw.
  const int64_t keep = top_k <= 0 ? v : std::min(top_k, v);
  std::vector<double> z(static_cast<size_t>(v));
  std::vector<int64_t> order(static_cast<size_t>(v));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::partial_sort(order.begin(), order.begin() + keep, order.end(),
                    [&](int64_t a, int64_t b) { return last[a] > last[b]; });
  const double top = last[static_cast<size_t>(order[0])];
  double total = 0;
  for (int64_t i = 0; i < keep; ++i) {
    const size_t k = static_cast<size_t>(order[static_cast<size_t>(i)]);
    z[k] = std::exp((last[k] - top) / temperature);
    total += z[k];
  }
  const double u = gen.uniform() * total;
  double cum = 0;
  for (int64_t i = 0; i < keep; ++i) {
    const int64_t k = order[static_cast<size_t>(i)];
    cum += z[static_cast<size_t>(k)];
    if (u < cum) return k;
  }
  return order[static_cast<size_t>(keep - 1)];  // if rounding leaves u above the last sum
}

std::vector<int64_t> GPT::generate(const std::vector<int64_t>& prompt, int64_t max_new_tokens,
                                   double temperature, int64_t top_k, uint64_t seed) {
  const int64_t v = config_.vocab;
  if (prompt.empty()) throw Error("GPT::generate: the prompt needs at least one token");
  if (max_new_tokens < 0) {
    throw Error("GPT::generate: max_new_tokens must be >= 0, got " +
                std::to_string(max_new_tokens));
  }
  if (!(temperature >= 0) || !std::isfinite(temperature)) {
    throw Error("GPT::generate: temperature must be finite and >= 0 (0 is greedy), got " +
                std::to_string(temperature));
  }
  if (top_k < 0) {
    throw Error("GPT::generate: top_k must be >= 0 (0 keeps every token), got " +
                std::to_string(top_k));
  }
  for (int64_t id : prompt) {
    if (id < 0 || id >= v) {
      throw Error("GPT::generate: prompt token " + std::to_string(id) +
                  " is out of the vocabulary [0, " + std::to_string(v) + ")");
    }
  }
  if (wte->weight.device() != Device::cpu) {
    throw Error(std::string("GPT::generate: the model is on ") + device_name(wte->weight.device()) +
                "; sampling needs its values, so build it on the cpu");
  }

  NoGrad no_grad;
  ModeRestore restore(*this);
  eval();  // no dropout while sampling
  DefaultDevice on_cpu(Device::cpu);
  Generator gen(seed);
  std::vector<int64_t> tokens = prompt;
  for (int64_t step = 0; step < max_new_tokens; ++step) {
    // The last block_size tokens: the model has no position embedding beyond that.
    const size_t start = tokens.size() > static_cast<size_t>(config_.block_size)
                             ? tokens.size() - config_.block_size
                             : 0;
    const std::vector<int64_t> context(tokens.begin() + static_cast<std::ptrdiff_t>(start),
                                       tokens.end());
    const int64_t t = static_cast<int64_t>(context.size());
    Tensor logits = (*this)(from_vector(context, {1, t}));  // [1, T, V]
    // Only the last position predicts the next token.
    const std::vector<double> last = logits.select(0, 0).select(0, t - 1).to_vector<double>();

    tokens.push_back(sample_token(last, temperature, top_k, gen));
  }
  return tokens;
}

std::string GPT::extra_repr() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", config_.dropout);
  return "vocab=" + std::to_string(config_.vocab) +
         ", block=" + std::to_string(config_.block_size) +
         ", d=" + std::to_string(config_.d_model) + ", heads=" + std::to_string(config_.heads) +
         ", layers=" + std::to_string(config_.layers) + ", dropout=" + buf +
         ", tied=" + (config_.tie_weights ? "true" : "false") + (config_.rope ? ", rope=true" : "");
}

}  // namespace prism::nn
