// analysis/models_compare.h: width matching (exact, deterministic sizes), the checks before
// any work, the findings on synthetic results with known answers, and one tiny real run.
#include "analysis/models_compare.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "kernels/types.h"
#include "tests/test_util.h"

using namespace prism;
using namespace prism::analysis;
using prism::testing::contains;

namespace {

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

std::string error_of(const ModelsOptions& o) {
  try {
    check_models_options(o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("models: the default widths are the zoo's defaults") {
  for (const char* m : {"mlp", "cnn", "transformer"}) {
    nn::ModelOptions o;
    o.width = default_width(m);
    CHECK_MESSAGE(model_size(m, MatchBy::params, o) == model_size(m, MatchBy::params, {}), m);
  }
  CHECK(model_size("mlp", MatchBy::params, {}) == 269322);  // zoo.h's figure
  CHECK(width_step("transformer") == 4);                    // gpt-char's heads
  CHECK(width_step("mlp") == 1);
  CHECK_FALSE(can_scale_width("resnet18"));
  CHECK_THROWS_AS(default_width("resnet18"), Error);
}

TEST_CASE("models: model_size counts parameters and forward FLOPs per sample exactly") {
  // mlp 784 -> 256 -> 256 -> 10: weights and biases.
  CHECK(model_size("mlp", MatchBy::params, {}) ==
        784 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10);
  // Forward FLOPs per sample: 2 per multiply-add, plus the bias adds and the two ReLUs (one
  // FLOP per element each) as the cost table counts them; at least the matmuls' share.
  const double f = model_size("mlp", MatchBy::flops, {});
  CHECK(f >= 2.0 * (784 * 256 + 256 * 256 + 256 * 10));
  CHECK(f < 2.0 * (784 * 256 + 256 * 256 + 256 * 10) + 2000);
  // Linear in the batch: the size is per sample whatever the width search builds.
  nn::ModelOptions wide;
  wide.width = 512;
  CHECK(model_size("mlp", MatchBy::flops, wide) > f);
}

TEST_CASE("models: --match params finds the widths for mlp vs cnn and mlp vs transformer") {
  const double mlp = model_size("mlp", MatchBy::params, {});
  const WidthMatch cnn = match_width("cnn", MatchBy::params, mlp, {});
  CHECK(cnn.from_width == 16);
  CHECK(cnn.from_size == 12'810);
  CHECK(cnn.within_tolerance);
  CHECK(std::abs(cnn.error_pct) <= kMatchTolerancePct);
  nn::ModelOptions at;
  at.width = cnn.to_width;
  CHECK(model_size("cnn", MatchBy::params, at) == cnn.to_size);
  // The closest width: one step either side is further from the target.
  for (int64_t d : {-1, 1}) {
    at.width = cnn.to_width + d;
    CHECK(std::abs(model_size("cnn", MatchBy::params, at) - mlp) >= std::abs(cnn.to_size - mlp));
  }
  CHECK(cnn.to_width == 109);
  CHECK(cnn.to_size == 269'676);
  CHECK(describe_match(cnn) ==
        "cnn width 16 -> 109: 12,810 -> 269,676 parameters (target 269,322), within 0.13%");

  const WidthMatch gpt = match_width("transformer", MatchBy::params, mlp, {});
  CHECK(gpt.from_size == 826'112);
  CHECK(gpt.to_width == 72);  // a multiple of the 4 heads
  CHECK(gpt.to_size == 271'152);
  CHECK(gpt.within_tolerance);

  // The other way: the mlp scaled to the transformer's parameter count.
  const WidthMatch up = match_width("mlp", MatchBy::params, gpt.from_size, {});
  CHECK(up.to_width == 594);
  CHECK(up.to_size == 825'670);
  CHECK(up.within_tolerance);
}

TEST_CASE("models: --match flops finds the widths by forward FLOPs per sample") {
  const double mlp = model_size("mlp", MatchBy::flops, {});
  const double cnn = model_size("cnn", MatchBy::flops, {});
  CHECK(mlp == 538'634);
  CHECK(cnn == 1'369'226);
  // The mlp scaled to the cnn's work per sample (`prism models cnn mlp --match flops`).
  const WidthMatch to_cnn = match_width("mlp", MatchBy::flops, cnn, {});
  CHECK(to_cnn.to_width == 520);
  CHECK(to_cnn.to_size == 1'368'650);
  CHECK(to_cnn.within_tolerance);
  nn::ModelOptions at;
  at.width = to_cnn.to_width;
  CHECK(model_size("mlp", MatchBy::flops, at) == to_cnn.to_size);

  // The cnn scaled down to the mlp's: its FLOPs grow with the square of the channels, so the
  // widths 9 and 10 straddle the target by -8% and +10%: the closest, said to be outside.
  const WidthMatch cnn_down = match_width("cnn", MatchBy::flops, mlp, {});
  CHECK(cnn_down.to_width == 9);
  CHECK(cnn_down.to_size == 495'766);
  CHECK_FALSE(cnn_down.within_tolerance);
  CHECK(contains(describe_match(cnn_down), "-8.0%: outside the 5% tolerance"));

  // The transformer reads 128 tokens per sample: even at width 4 it does 3x the mlp's work
  // (the closest achievable), but at a context of 8 a width within 5% exists.
  const WidthMatch far = match_width("transformer", MatchBy::flops, mlp, {});
  CHECK(far.to_width == 4);
  CHECK_FALSE(far.within_tolerance);
  nn::ModelOptions short_ctx;
  short_ctx.block_size = 8;
  const WidthMatch gpt = match_width("transformer", MatchBy::flops, mlp, short_ctx);
  CHECK(gpt.to_width == 24);
  CHECK(gpt.to_size == 555'624);
  CHECK(gpt.within_tolerance);
  // And the mlp scaled up to the transformer's work at its default context.
  const WidthMatch up =
      match_width("mlp", MatchBy::flops, model_size("transformer", MatchBy::flops, {}), {});
  CHECK(up.to_width == 10'266);
  CHECK(up.within_tolerance);
}

TEST_CASE("models: bad options are refused before any work, each with its reason") {
  ModelsOptions o;
  o.models = {"mlp", "nosuch"};
  CHECK(contains(error_of(o), "unknown model 'nosuch'"));
  o.models = {"mlp", "mlp"};
  CHECK(contains(error_of(o), "mlp is named twice"));
  o.models = {"cnn", "lenet"};
  CHECK(contains(error_of(o), "cnn and lenet are the same model"));
  o.models = {"mlp", "resnet18"};
  CHECK(error_of(o).empty());  // no match: a ResNet compares as it is
  o.match = MatchBy::params;
  const std::string e = error_of(o);
  CHECK(contains(e, "cannot scale resnet18"));
  CHECK(contains(e, "mlp"));
  CHECK(contains(e, "cnn"));
  o.models = {"resnet18", "mlp"};  // the target need not scale
  CHECK(error_of(o).empty());
  o.match = MatchBy::none;
  o.models = {"mlp"};
  o.batch = 0;
  CHECK(contains(error_of(o), "batch size 0"));
  o.batch = 2;
  o.models = {};
  CHECK(contains(error_of(o), "at least one model"));
  CHECK_THROWS_AS(match_by_from_name("widths"), Error);
  CHECK(match_by_from_name("") == MatchBy::none);
}

namespace {

// Two models with known numbers: "a" matmul-bound and near peak, "b" elementwise-heavy and
// far from it.
ModelsResult synthetic() {
  ModelsResult r;
  r.options.models = {"a", "b"};
  r.options.batch = 4;
  r.threads = 2;
  r.peak_gflops = 100;
  r.peak_gbps = 10;
  r.ridge_flop_per_byte = 10;
  auto set = [](ModeResult& m, BenchMode mode, double matmul, double elementwise, double pct,
                double intensity, double fwd, double bwd, int64_t act) {
    m.mode = mode;
    m.class_ns[static_cast<size_t>(OpClass::matmul)] = matmul;
    m.class_ns[static_cast<size_t>(OpClass::elementwise)] = elementwise;
    m.pct_peak = pct;
    m.gflops = pct;  // of a 100 GFLOP/s peak
    m.intensity = intensity;
    m.forward_flops = fwd;
    m.backward_flops = bwd;
    m.activation_bytes = static_cast<double>(act);
  };
  r.models.resize(2);
  r.models[0].model = "a";
  set(r.models[0].train, BenchMode::train, 90, 10, 40, 30, 1000, 2000, 4000);
  set(r.models[0].infer, BenchMode::infer, 80, 20, 50, 30, 1000, 0, 400);
  r.models[1].model = "b";
  set(r.models[1].train, BenchMode::train, 30, 70, 2, 1.5, 500, 750, 40000);
  set(r.models[1].infer, BenchMode::infer, 60, 40, 3, 1.5, 500, 0, 4000);
  return r;
}

}  // namespace

TEST_CASE("models: findings on a synthetic result with known answers") {
  ModelsResult r = synthetic();
  CHECK(dominant_class(r.models[0].train) == OpClass::matmul);
  CHECK(r.models[0].train.class_share_pct(OpClass::matmul) == doctest::Approx(90));
  CHECK(dominant_class(r.models[1].train) == OpClass::elementwise);
  CHECK(furthest_from_peak(r, BenchMode::train) == 1);
  CHECK(furthest_from_peak(r, BenchMode::infer) == 1);

  const std::string f = joined(findings(r));
  CHECK(contains(f,
                 "a is matmul-dominated: matmul takes 90.0% of the training step and 80.0% "
                 "of the inference call"));
  CHECK(contains(f,
                 "b: elementwise dominates the training step (70.0%), matmul the inference "
                 "call (60.0%)"));
  CHECK(contains(f, "furthest from peak in the training step: b at 2.0% of 100.0 GFLOP/s"));
  CHECK(contains(f,
                 "1.5 FLOP/byte, is below the ridge point (10.0 FLOP/byte at 2 threads), so "
                 "its roof is 1.5 x 10.0 GB/s = 15.0 GFLOP/s and it reaches 13% of that: "
                 "short of its roof"));
  r.models[1].train.gflops = 12;  // 80% of its roof
  CHECK(contains(joined(findings(r)), "reaches 80% of that: memory traffic is what limits it"));
  // Faster than its main-memory roof: the data stayed in cache, and the finding says so.
  r.models[1].train.gflops = 20;
  CHECK(contains(joined(findings(r)), "it runs above that, so its data stays in cache"));
  CHECK(contains(f, "a 2.00x"));
  CHECK(contains(f, "b 1.50x"));
  // Activations per sample, largest first: b 40000 / 4 = 10 kB, a 1 kB; 10x.
  CHECK(contains(f,
                 "activation memory per sample in the training step (allocated by the "
                 "forward pass): b 10.0 kB, a 1.0 kB (b needs 10.0x what a does)"));
  CHECK(contains(f, "in the inference call (alive at the peak): b 1.0 kB, a 100 B"));

  // A largest class under half the time does not "dominate": the finding names it the largest.
  {
    ModelsResult m = synthetic();
    ModeResult& t = m.models[1].train;
    t.class_ns[static_cast<size_t>(OpClass::matmul)] = 25;
    t.class_ns[static_cast<size_t>(OpClass::elementwise)] = 45;
    t.class_ns[static_cast<size_t>(OpClass::conv)] = 30;
    const std::string g = joined(findings(m));
    CHECK(contains(g,
                   "b: no class dominates the training step: the largest share is elementwise's, "
                   "45.0% (then conv 30.0%); matmul dominates the inference call (60.0%)"));
    CHECK_FALSE(contains(g, "elementwise dominates"));
  }

  // Above the ridge: far from peak, but not for want of bandwidth.
  r.models[1].train.intensity = 50;
  CHECK(contains(joined(findings(r)),
                 "50.0 FLOP/byte, is above the ridge point (10.0 FLOP/byte at 2 threads), so the "
                 "roofline allows the full peak"));

  // No peak: no furthest-from-peak verdict, and the findings say why.
  r.peak_gflops = 0;
  CHECK(furthest_from_peak(r, BenchMode::train) == -1);
  const std::string np = joined(findings(r));
  CHECK_FALSE(contains(np, "furthest from peak"));
  CHECK(contains(np, "no machine peak"));
}

TEST_CASE("models: the attention finding reads the trend from the probes") {
  ModelsResult r = synthetic();
  r.models[0].model = "transformer";
  auto probe = [&](BenchMode mode, int64_t block, double pct, const char* skipped = "") {
    AttentionProbe p;
    p.model = "transformer";
    p.mode = mode;
    p.block = block;
    p.attention_pct = pct;
    p.skipped = skipped;
    r.probes.push_back(p);
  };
  probe(BenchMode::train, 256, 40);  // in any order: the finding sorts by context
  probe(BenchMode::train, 64, 10);
  probe(BenchMode::train, 128, 20);
  probe(BenchMode::infer, 64, 30);
  probe(BenchMode::infer, 128, 30.5);
  probe(BenchMode::infer, 256, 0, "too big");
  const std::string f = joined(findings(r));
  CHECK(contains(f,
                 "transformer: attention's share of the training step: 10.0% at context 64, "
                 "20.0% at context 128, 40.0% at context 256: it grows with the context "
                 "(10.0% -> 40.0% from 64 to 256)"));
  CHECK(contains(f,
                 "30.5% at context 128, not measured at context 256 (too big): it stays "
                 "about level"));
}

TEST_CASE("models: the JSON carries every model, mode and finding") {
  const ModelsResult r = synthetic();
  const nlohmann::ordered_json j = models_to_json(r);
  CHECK(j["kind"] == "prism.models");
  REQUIRE(j["models"].size() == 2);
  CHECK(j["models"][1]["model"] == "b");
  CHECK(j["models"][0]["train"]["flops_by_phase"]["backward"] == 2000.0);
  CHECK(j["models"][0]["train"]["time_by_class"]["matmul"]["pct"] == 90.0);
  CHECK(j["findings"].size() == findings(r).size());
}

TEST_CASE("models: a tiny interleaved run pools rounds in rotated order, counters exact") {
  ModelsOptions o;
  o.models = {"mlp", "cnn"};
  o.batch = 2;
  o.rounds = 2;
  o.duration_s = 0.005;
  o.warmup = 1;
  o.peak = false;
  std::vector<std::string> order;
  o.progress = [&](const std::string& s) { order.push_back(s); };
  const ModelsResult r = run_models(o);
  REQUIRE(order.size() == 8);
  CHECK(order[0] == "round 1/2: train mlp");
  CHECK(order[1] == "round 1/2: train cnn");
  CHECK(order[4] == "round 2/2: train cnn");  // rotated
  CHECK(order[5] == "round 2/2: train mlp");
  REQUIRE(r.models.size() == 2);
  const ModelResult& mlp = r.models[0];
  CHECK(mlp.parameters == 269322);
  CHECK(mlp.width == 256);
  CHECK(mlp.train.samples_ns.size() >= 2 * 3);  // min_iters per round, pooled
  // The measured forward FLOPs of an inference call are the meta device's count, exactly.
  CHECK(mlp.infer.forward_flops == 2 * model_size("mlp", MatchBy::flops, {}));
  CHECK(mlp.train.backward_flops > mlp.train.forward_flops);
  CHECK(mlp.train.ci_low_ns <= mlp.train.median_ns);
  CHECK(mlp.train.median_ns <= mlp.train.ci_high_ns);
  CHECK(mlp.train.peak_by_role[static_cast<size_t>(profiler::MemRole::gradient)] > 0);
  CHECK(mlp.infer.peak_by_role[static_cast<size_t>(profiler::MemRole::gradient)] == 0);
  CHECK(r.models[1].train.class_share_pct(OpClass::conv) > 0);
  // Each class's time is its median over the rounds (of two: their mean).
  REQUIRE(mlp.train.class_ns_rounds.size() == 2);
  for (size_t c = 0; c < mlp.train.class_ns.size(); ++c) {
    CHECK(mlp.train.class_ns[c] ==
          doctest::Approx((mlp.train.class_ns_rounds[0][c] + mlp.train.class_ns_rounds[1][c]) / 2));
  }
  CHECK(r.probes.empty());  // no transformer
}
