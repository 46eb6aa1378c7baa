// `prism bench MODEL --mode decode` as library code (analysis/decode_bench.h): the counts it
// reports, the bytes a step must read (exact, from the model's shapes), and its refusals.
#include <doctest/doctest.h>

#include "analysis/decode_bench.h"
#include "nn/models/gpt.h"

using namespace prism;
using namespace prism::analysis;

namespace {

DecodeOptions small(int64_t prompt, int64_t tokens) {
  DecodeOptions o;
  o.model = "transformer";  // gpt-char: vocab 128, block 128, d 128, 4 layers
  o.prompt = prompt;
  o.tokens = tokens;
  o.sequences = 2;
  o.peak = false;
  o.check_environment = false;
  return o;
}

}  // namespace

TEST_CASE("decode bench: one time to first token per sequence, one time per later token") {
  const DecodeResult r = run_decode_bench(small(5, 4));
  CHECK(r.ttft_ns.size() == 2);
  CHECK(r.token_ns.size() == 2 * 3);
  CHECK(r.per_token.n == 6);
  CHECK(r.tokens_per_s > 0);
  CHECK(r.first_tokens.size() == 4);
  for (int64_t id : r.first_tokens) CHECK((id >= 0 && id < 128));
  // The cache holds the whole sequence: 2 x layers x positions x d_model floats.
  CHECK(r.cache_bytes == 2 * 4 * (5 + 4) * 128 * 4);
  CHECK(r.profiled_steps == 3);
  REQUIRE(!r.step_ops.empty());
  double matmul_calls = 0;
  for (const auto& op : r.step_ops) {
    if (op.name == "matmul") matmul_calls = op.calls;
  }
  // Per step: qkv, proj and fc2 in each of 4 blocks, and the tied head (fc1 is linear_gelu).
  CHECK(matmul_calls == 4 * 3 + 1);
  CHECK(r.bound_ns == 0);  // no bandwidth without the machine's figures
}

TEST_CASE("decode bench: the bytes a step reads, exactly") {
  const DecodeResult r = run_decode_bench(small(3, 3));
  // gpt-char's parameters, minus the position table but one row, plus one row of the tied wte
  // (the head reads wte whole once, the lookup one row).
  const int64_t d = 128, params = r.parameters;
  CHECK(r.weight_bytes_per_token == 4 * (params - 128 * d + d + d));
  // Steps write positions 3 and 4 and read 4 and 5 cached rows: mean 4.5 rows of K and V a layer.
  CHECK(r.kv_bytes_per_token == (2 * 4 * 4 * d * 4 + 2 * 4 * 5 * d * 4) / 2);
}

TEST_CASE("decode bench: refusals name the problem, before any model is built") {
  DecodeOptions o = small(100, 100);
  CHECK_THROWS_WITH_AS(check_decode_options(o), doctest::Contains("need a context of 200"), Error);
  o = small(4, 4);
  o.model = "mlp";
  CHECK_THROWS_WITH_AS(check_decode_options(o), doctest::Contains("not a language model"), Error);
  o = small(0, 4);
  CHECK_THROWS_WITH_AS(check_decode_options(o), doctest::Contains("at least 1 token"), Error);
  o = small(4, 0);
  CHECK_THROWS_WITH_AS(check_decode_options(o), doctest::Contains("at least 1 token"), Error);
  o = small(4, 4);
  o.sequences = 0;
  CHECK_THROWS_WITH_AS(check_decode_options(o), doctest::Contains("timed sequences"), Error);
}
