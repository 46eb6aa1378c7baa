#include "nn/models/gpt_checkpoint.h"

#include <cstdio>
#include <string>

namespace prism::nn {

namespace {

const char* kHex = "0123456789abcdef";

std::string to_hex(const std::string& bytes) {
  std::string out;
  for (char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(path + ": " + what);
}

const std::string& need(const Metadata& meta, const std::string& path, const std::string& key) {
  const auto it = meta.find(key);
  if (it == meta.end()) fail(path, "the metadata has no '" + key + "'");
  return it->second;
}

// A decimal integer in [1, 10^9]: nothing else is a size a GPT could have.
int64_t need_size(const Metadata& meta, const std::string& path, const std::string& key) {
  const std::string& s = need(meta, path, key);
  int64_t v = 0;
  bool ok = !s.empty() && s.size() <= 10;
  for (char c : s) {
    if (c < '0' || c > '9') ok = false;
    if (ok) v = v * 10 + (c - '0');
  }
  if (!ok || v < 1 || v > 1'000'000'000) {
    fail(path, "metadata '" + key + "' is '" + s + "', not a positive whole number");
  }
  return v;
}

// The state (parameters and buffers, names and shapes) of a GPT of config `c`, built on the meta
// device: shapes without memory.
NamedTensors meta_state(const GPTConfig& c, const std::string& path) {
  DefaultDevice on_meta(Device::meta);
  try {
    return GPT(c).named_state();
  } catch (const Error& e) {  // a size past prism's limits
    fail(path, std::string("its metadata describes a GPT prism cannot build: ") + e.what());
  }
}

// The metadata is believed only once the file's tensors agree with it, before any model is
// built: a `prism.gpt.layers` edited to 1e9 would otherwise have a model of that many layers
// allocated before the load found that the tensors do not fit. First the count, from a 1-layer
// and a 2-layer model on the meta device (the per-layer count), so that a huge layer count is
// refused without building it; then every name, dtype and shape against a meta model of the
// config (check_safetensors_fit: the file's bytes, no tensor made).
void check_tensors_fit(const GPTConfig& c, int64_t held, const std::string& path) {
  GPTConfig one = c, two = c;
  one.layers = 1;
  two.layers = 2;
  const auto base = static_cast<int64_t>(meta_state(one, path).size());
  const auto per_layer = static_cast<int64_t>(meta_state(two, path).size()) - base;
  if ((held - base) % per_layer != 0 || held < base || (held - base) / per_layer + 1 != c.layers) {
    fail(path, "its metadata describes a GPT of " + std::to_string(c.layers) +
                   (c.layers == 1 ? " layer (" : " layers (") +
                   std::to_string(base + (c.layers - 1) * per_layer) +
                   " tensors), but the file holds " + std::to_string(held) + " tensors");
  }
  DefaultDevice on_meta(Device::meta);
  const GPT meta(c);
  try {
    check_safetensors_fit(meta, path);
  } catch (const Error& e) {
    fail(path, std::string("its tensors are not those of the GPT its metadata describes (") +
                   meta.extra_repr() + "): " + e.what());
  }
}

}  // namespace

Metadata text_model_metadata(const Module& model, const data::Vocabulary& vocab) {
  const auto* gpt = dynamic_cast<const GPT*>(&model);
  if (gpt == nullptr) return {};
  const GPTConfig& c = gpt->config();
  return {{"prism.model", "gpt"},
          {"prism.gpt.vocab", std::to_string(c.vocab)},
          {"prism.gpt.block_size", std::to_string(c.block_size)},
          {"prism.gpt.d_model", std::to_string(c.d_model)},
          {"prism.gpt.heads", std::to_string(c.heads)},
          {"prism.gpt.layers", std::to_string(c.layers)},
          {"prism.gpt.tied", c.tie_weights ? "true" : "false"},
          {"prism.gpt.rope", c.rope ? "true" : "false"},
          {"prism.vocab.hex", to_hex(vocab.chars())}};
}

TextModel load_text_model(const std::string& path) {
  Metadata meta;
  const int64_t held = safetensors_tensor_count(path, &meta);  // the layout validated
  const auto kind = meta.find("prism.model");
  if (kind == meta.end() || kind->second != "gpt") {
    fail(path,
         "not a character transformer checkpoint (no 'prism.model: gpt' metadata); write "
         "one with `prism train transformer --data text --save FILE`");
  }
  GPTConfig c;
  c.vocab = need_size(meta, path, "prism.gpt.vocab");
  c.block_size = need_size(meta, path, "prism.gpt.block_size");
  c.d_model = need_size(meta, path, "prism.gpt.d_model");
  c.heads = need_size(meta, path, "prism.gpt.heads");
  c.layers = need_size(meta, path, "prism.gpt.layers");
  const std::string& tied = need(meta, path, "prism.gpt.tied");
  if (tied != "true" && tied != "false") fail(path, "metadata 'prism.gpt.tied' is '" + tied + "'");
  c.tie_weights = tied == "true";
  // Absent in checkpoints written before rope existed: those have wpe.
  const auto rope = meta.find("prism.gpt.rope");
  if (rope != meta.end() && rope->second != "true" && rope->second != "false") {
    fail(path, "metadata 'prism.gpt.rope' is '" + rope->second + "'");
  }
  c.rope = rope != meta.end() && rope->second == "true";
  c.dropout = 0;
  if (c.d_model % c.heads != 0) {
    fail(path, "d_model " + std::to_string(c.d_model) + " is not a multiple of heads " +
                   std::to_string(c.heads));
  }

  const std::string& hex = need(meta, path, "prism.vocab.hex");
  std::string chars;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    const int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
    if (hi < 0 || lo < 0) break;
    chars += static_cast<char>(hi * 16 + lo);
  }
  bool sorted = chars.size() * 2 == hex.size() && !chars.empty();
  for (size_t i = 1; sorted && i < chars.size(); ++i) {
    sorted = static_cast<unsigned char>(chars[i - 1]) < static_cast<unsigned char>(chars[i]);
  }
  if (!sorted) {
    fail(path, "metadata 'prism.vocab.hex' is not a list of distinct sorted bytes in hex");
  }
  if (static_cast<int64_t>(chars.size()) != c.vocab) {
    fail(path, "the vocabulary has " + std::to_string(chars.size()) + " characters but the model " +
                   std::to_string(c.vocab) + " token ids");
  }

  check_tensors_fit(c, held, path);

  TextModel out;
  out.vocab = data::Vocabulary(chars);  // distinct and sorted: the same ids
  {
    DefaultDevice on_cpu(Device::cpu);
    out.model = std::make_shared<GPT>(c);
  }
  load_safetensors(*out.model, path);  // checked above; what is left: the values are finite
  out.model->eval();
  return out;
}

}  // namespace prism::nn
