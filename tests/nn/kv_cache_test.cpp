// KV-cache decoding (nn/kv_cache.h, GPT::forward_cached, nn/models/gpt_decoder.h): the cached
// incremental forward gives the full forward's logits at every position, greedy decoding writes
// the same tokens with and without the cache (also across a window slide), the cache's memory
// is exactly its formula and shows under the kv_cache role, and bad use is a clear Error.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nn/kv_cache.h"
#include "nn/models/gpt.h"
#include "nn/models/gpt_decoder.h"
#include "nn/module.h"
#include "profiler/memory.h"
#include "profiler/reports.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/nn/nn_test_util.h"
#include "tests/test_util.h"

namespace {

using prism::DType;
using prism::Tensor;
using prism::testing::max_abs_diff;
namespace nn = prism::nn;

// A tiny GPT: 2 layers, 4 heads of size 4, context 48, vocabulary 11, no dropout.
nn::GPTConfig tiny(bool tied = true, bool rope = false) {
  nn::GPTConfig c;
  c.vocab = 11, c.block_size = 48, c.d_model = 16, c.heads = 4, c.layers = 2;
  c.dropout = 0, c.tie_weights = tied, c.rope = rope;
  return c;
}

// GPT-2's initialisation (sd 0.02) makes every logit nearly 0, which would let a wrong cache
// pass; weights N(0, 0.3) make the logits spread over several units and depend on the context.
void spread_weights(nn::GPT& m) {
  prism::NoGrad no_grad;
  for (const Tensor& p : m.parameters()) {
    nn::assign(p, prism::randn(p.shape(), p.dtype(), 0.0, 0.3));
  }
}

int64_t kv_live_bytes() {
  return prism::profiler::memory_stats(0)
      .live_by_role[static_cast<size_t>(prism::MemRole::kv_cache)];
}

// Cached logits (a prefill of 5, a chunk of 3 onto the filled cache, then one token at a time
// to the full context) against the full forward over the whole sequence at the same positions.
void check_cached_equals_full(nn::GPT& m, double tol) {
  prism::NoGrad no_grad;
  m.eval();
  const int64_t v = m.config().vocab, block = m.config().block_size;
  std::vector<int64_t> seq;
  prism::Generator gen(5);
  for (int64_t i = 0; i < block; ++i) seq.push_back(static_cast<int64_t>(gen.next_u64() % v));
  const Tensor full = m(prism::from_vector(seq, {1, block}));  // [1, block, V]

  nn::KVCache cache = m.make_cache(1);
  auto feed = [&](int64_t from, int64_t n) {
    const std::vector<int64_t> part(seq.begin() + from, seq.begin() + from + n);
    const Tensor got = m.forward_cached(prism::from_vector(part, {1, n}), cache);
    REQUIRE(got.shape() == prism::Dims{1, n, v});
    INFO("positions " << from << " .. " << from + n - 1);
    CHECK(max_abs_diff(got, full.narrow(1, from, n)) <= tol);
    CHECK(cache.length() == from + n);
  };
  feed(0, 5);  // prefill: the causal call with Lq == Lk
  feed(5, 3);  // a chunk onto a filled cache: row by row
  for (int64_t t = 8; t < block; ++t) feed(t, 1);

  // last_only (a decoder's prefill): the last position's logits alone, the same values.
  nn::KVCache again = m.make_cache(1);
  const std::vector<int64_t> part(seq.begin(), seq.begin() + 7);
  const Tensor last = m.forward_cached(prism::from_vector(part, {1, 7}), again, true);
  REQUIRE(last.shape() == prism::Dims{1, 1, v});
  CHECK(max_abs_diff(last, full.narrow(1, 6, 1)) <= tol);
  CHECK(again.length() == 7);
}

}  // namespace

// Tolerances. The cached and full forwards do the same arithmetic in another order: the full
// one multiplies [48, D] matrices and runs 48-key attention tiles, the cached one [1, D] rows
// against t keys, so sums are blocked and rounded differently. In float64 that leaves ~1e-15
// relative on logits of size ~10 (bound 1e-10: many orders above rounding, many below any
// real mistake such as a wrong position or a missing key, which moves logits by ~0.1 or more).
// In float32 the same reordering costs ~1e-6 relative per sum through 2 layers: bound 1e-4.
TEST_CASE("kv_cache: the cached incremental logits equal the full forward's at every position") {
  prism::manual_seed(3);
  SUBCASE("float64, tied head") {
    nn::GPT m(tiny(true));
    m.to(DType::f64);
    spread_weights(m);
    check_cached_equals_full(m, 1e-10);
  }
  SUBCASE("float32, untied head") {
    nn::GPT m(tiny(false));
    spread_weights(m);
    check_cached_equals_full(m, 1e-4);
  }
  // With rope the positions live in q and k, not in the input: a cache that turned its keys by
  // the wrong position, or a query turned from position 0 at every step, moves the logits.
  SUBCASE("float64, rope: each step's q and new keys turned from the cache's length") {
    nn::GPT m(tiny(true, true));
    m.to(DType::f64);
    spread_weights(m);
    check_cached_equals_full(m, 1e-10);
  }
}

TEST_CASE("GPT with rope: no position table, P D fewer parameters, and position still matters") {
  prism::manual_seed(4);
  nn::GPT plain(tiny()), turned(tiny(true, true));
  CHECK(turned.wpe == nullptr);
  CHECK(plain.parameter_count() - turned.parameter_count() == 48 * 16);  // block_size x d_model
  CHECK(turned.extra_repr().find("rope=true") != std::string::npos);
  for (const auto& [name, p] : turned.named_parameters())
    CHECK(name.find("wpe") == std::string::npos);
  // Without a position table, only rope tells the model where a token is: the same tokens in
  // another order give other logits at the last position (a bag of tokens would not).
  spread_weights(turned);
  turned.eval();
  prism::NoGrad no_grad;
  const Tensor a = turned(prism::from_vector(std::vector<int64_t>{1, 2, 3, 4}, {1, 4}));
  const Tensor b = turned(prism::from_vector(std::vector<int64_t>{3, 1, 2, 4}, {1, 4}));
  CHECK(max_abs_diff(a.narrow(1, 3, 1), b.narrow(1, 3, 1)) > 1e-3);
}

TEST_CASE("kv_cache: greedy tokens are identical with and without the cache (48 tokens)") {
  prism::manual_seed(4);
  nn::GPT m(tiny(/*tied=*/false));
  spread_weights(m);
  const std::vector<int64_t> prompt{1, 2, 3};
  auto greedy = [&](int64_t context, bool cached, int64_t n, int64_t* slides) {
    nn::GptDecoder dec(m, context, cached);
    prism::Generator gen(1);
    std::vector<int64_t> out;
    std::vector<double> logits = dec.start(prompt);
    for (int64_t i = 0; i < n; ++i) {
      out.push_back(nn::sample_token(logits, 0.0, 0, gen));
      if (i + 1 < n) logits = dec.push(out.back());
    }
    *slides = dec.slides();
    return out;
  };
  int64_t slides_a = 0, slides_b = 0;
  // Within the context (3 + 45 = 48 = block_size): no slide.
  const auto with = greedy(48, true, 45, &slides_a);
  const auto without = greedy(48, false, 45, &slides_b);
  CHECK(with == without);
  CHECK(slides_a == 0);
  // The uncached decoder within the context is GPT::generate's greedy loop.
  auto gen = m.generate(prompt, 45, 0.0, 0, 7);
  CHECK(std::vector<int64_t>(gen.begin() + 3, gen.end()) == without);
  // Context 16, 60 tokens: the window slides (by half, recomputing the cache) and both ways
  // still agree token for token.
  const auto with16 = greedy(16, true, 60, &slides_a);
  const auto without16 = greedy(16, false, 60, &slides_b);
  CHECK(with16 == without16);
  CHECK(slides_a == slides_b);
  CHECK(slides_a >= 3);
  // The tokens vary (a model emitting one token forever would make the comparison weak).
  std::vector<int64_t> distinct = with;
  std::sort(distinct.begin(), distinct.end());
  CHECK(std::unique(distinct.begin(), distinct.end()) - distinct.begin() >= 3);
}

TEST_CASE("kv_cache: memory is 2 * layers * batch * heads * max_len * head_dim * 4 bytes") {
  nn::GPT m(tiny());
  const int64_t before = kv_live_bytes();
  {
    nn::KVCache cache = m.make_cache(/*batch=*/3, /*max_len=*/40);
    const int64_t expected = 2 * 2 * 3 * 4 * 40 * 4 * 4;  // 15,360 bytes
    CHECK(cache.bytes() == expected);
    CHECK(kv_live_bytes() - before == expected);
    CHECK(cache.max_len() == 40);
    CHECK(cache.head_dim() == 4);
    // Decoding writes into the buffers in place: the role's bytes do not grow.
    prism::NoGrad no_grad;
    m.eval();
    m.forward_cached(prism::from_vector(std::vector<int64_t>(6, 1), {3, 2}), cache);
    m.forward_cached(prism::from_vector(std::vector<int64_t>{1, 2, 3}, {3, 1}), cache);
    CHECK(cache.length() == 3);
    CHECK(kv_live_bytes() - before == expected);
    cache.clear();
    CHECK(cache.length() == 0);
  }
  CHECK(kv_live_bytes() == before);    // freed with the cache
  nn::KVCache full = m.make_cache(1);  // max_len 0: block_size
  CHECK(full.bytes() == 2 * 2 * 1 * 4 * 48 * 4 * 4);
}

TEST_CASE("kv_cache: a profile's memory timeline shows the cache as its own role") {
  nn::GPT m(tiny());
  m.eval();
  prism::profiler::Session session;
  {
    nn::KVCache cache = m.make_cache(1, 8);
    prism::NoGrad no_grad;
    m.forward_cached(prism::from_vector(std::vector<int64_t>{1, 2, 3}, {1, 3}), cache);
  }
  const auto j = nlohmann::json::parse(prism::profiler::profile_json(session.stop()));
  int64_t most = 0;
  for (const auto& s : j.at("memory").at("timeline")) {
    if (s.at("roles").contains("kv_cache")) {
      most = std::max(most, s.at("roles").at("kv_cache").get<int64_t>());
    }
  }
  CHECK(most == 2 * 2 * 1 * 4 * 8 * 4 * 4);  // the whole cache, under "kv_cache"
}

TEST_CASE("kv_cache: bad use is a clear Error") {
  nn::GPT m(tiny());
  prism::NoGrad no_grad;
  auto ids = [](std::vector<int64_t> v) {
    const int64_t n = static_cast<int64_t>(v.size());
    return prism::from_vector(v, {1, n});
  };
  CHECK_ERROR("must be positive", nn::KVCache(2, 1, 4, 0, 4));
  CHECK_ERROR("must be between 1 and block_size 48", m.make_cache(1, 49));
  {
    nn::KVCache small = m.make_cache(1, 4);
    m.forward_cached(ids({1, 2, 3}), small);
    CHECK_ERROR("exceed the limit 4", m.forward_cached(ids({1, 2}), small));
    CHECK(small.length() == 3);  // refused before any write
  }
  {
    nn::KVCache wrong(3, 1, 4, 8, 4);  // 3 layers for a 2-layer model
    CHECK_ERROR("does not fit the model", m.forward_cached(ids({1}), wrong));
    CHECK_ERROR("must both be [1, 4, n, 4]",
                wrong.append(0, prism::zeros({1, 4, 2, 4}), prism::zeros({1, 2, 2, 4})));
    CHECK_ERROR("layer 3 is outside [0, 3)", wrong.keys(3));
  }
  {
    nn::KVCache cache = m.make_cache(1);
    CHECK_ERROR("int64 token ids [B, n]", m.forward_cached(prism::zeros({1, 2}), cache));
    nn::MultiHeadAttention bidirectional(16, 4, /*causal=*/false);
    CHECK_ERROR("needs causal attention",
                bidirectional.forward_cached(prism::zeros({1, 1, 16}), cache, 0));
  }
  CHECK_ERROR("context 0 must be between 1 and the model's block_size 48",
              nn::GptDecoder(m, 0, true));
  nn::GptDecoder dec(m, 8, true);
  CHECK_ERROR("token 11 is outside the vocabulary [0, 11)", dec.start({1, 11}));
  CHECK_ERROR("call start() with a prompt first", dec.push(1));
}

TEST_CASE("copy_into: writes into a strided view in place, refuses a shape or a gradient") {
  Tensor buf = prism::zeros({2, 5});
  const Tensor col = buf.narrow(1, 3, 1);  // [2, 1], strides {5, 1}: not contiguous
  prism::copy_into(col, prism::from_vector(std::vector<float>{7, 8}, {2, 1}));
  CHECK(buf.to_vector<float>() == std::vector<float>{0, 0, 0, 7, 0, 0, 0, 0, 8, 0});
  CHECK_ERROR("copy_into: copy between shapes [3] and [2,1]",
              prism::copy_into(col, prism::zeros({3})));
  Tensor leaf = prism::zeros({2, 1});
  leaf.set_requires_grad();
  CHECK_ERROR("records no gradient", prism::copy_into(col, leaf));
}

TEST_CASE("sample_token: a NaN or infinite logit is an error, whatever the way of drawing") {
  const double nan = std::nan(""), inf = HUGE_VAL;
  for (const std::vector<double>& logits :
       {std::vector<double>{1, nan, 2}, std::vector<double>{inf, 0, 1},
        std::vector<double>{0, 1, -inf}, std::vector<double>{nan, nan, nan}}) {
    for (const auto& [temperature, top_k] :
         {std::pair<double, int64_t>{0, 0}, {0.8, 0}, {0.8, 2}, {1, 1}}) {
      prism::Generator gen(7);
      CHECK_THROWS_WITH_AS(prism::nn::sample_token(logits, temperature, top_k, gen),
                           doctest::Contains("the logits are not finite"), prism::Error);
    }
  }
  prism::Generator gen(7);
  CHECK(prism::nn::sample_token({1, 3, 2}, 0, 0, gen) == 1);  // finite logits still draw
}
