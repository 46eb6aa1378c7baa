// Exercise 16's checks: the learner's training loop (bottleneck_hunt.cpp) against the original
// (baseline.cpp), on the same data and weights.
//
//   1. The quality line: both loops train 16 steps from the same start; the loss of every step
//      must agree within kLossTolerance (relative to the largest loss). Removing waste changes
//      the order of a few float sums, no more; a change that moves the loss (a gradient no
//      longer averaged, a step skipped, pixels not scaled) is not a speed-up.
//   2. The fixes found, from each loop's profile (one profiled run each), exactly: each planted
//      waste leaves a signature in the op table that the fix removes (kWastes): the decode's
//      `cast` of all n images, the weights' `contiguous` copies, the gradients' `clone`s, the
//      `zeros` fills. Counts and bytes per step, no timing: the same on every machine.
//   3. The speed: prism compare's decision (analysis/compare.h) on the step times of both
//      loops, run in interleaved rounds (A B B A ...), each run's first steps dropped as warm-up:
//      the median ratio with its 95% interval, "better" only when the interval lies below 1.
//      Reported, not graded: a shared machine may hide a real gain in its noise, while the
//      signatures in 2 cannot lie.
// Passes when the loss holds and at least one waste is gone; the tier is the number gone.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/bottleneck.h"
#include "analysis/compare.h"
#include "analysis/environment.h"
#include "analysis/model_bench.h"
#include "analysis/run_record.h"
#include "exercises/16_bottleneck_hunt/bottleneck_hunt.h"
#include "exercises/checker/checker.h"
#include "profiler/aggregate.h"
#include "profiler/clock.h"
#include "profiler/machine.h"
#include "profiler/output_file.h"
#include "profiler/reports.h"
#include "profiler/session.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace bottleneck_hunt::baseline {
std::vector<float> hunt_train(HuntModel& model, const HuntData& data, const HuntSettings& s,
                              const StepDone& step_done);
}

namespace prism::exercises {
namespace {

using bottleneck_hunt::HuntData;
using bottleneck_hunt::HuntModel;
using bottleneck_hunt::HuntSettings;
using TrainFn = std::vector<float> (*)(HuntModel&, const HuntData&, const HuntSettings&,
                                       const bottleneck_hunt::StepDone&);

constexpr const char* kFile = "exercises/16_bottleneck_hunt/bottleneck_hunt.cpp";
constexpr int64_t kImages = 1024;
constexpr int kClasses = 10;
// Float32 sums in another order move a loss by a few 1e-7 of it; a changed update by far more
// than 1e-4 within 16 steps (solution/ and wrong/ measure both).
constexpr double kLossTolerance = 1e-4;

// ---- the task ----------------------------------------------------------------------------------

// n images of random bytes, each labelled by a fixed random linear teacher (argmax of W x), so
// that there is something to learn and the loss falls.
HuntData make_data(uint64_t seed) {
  HuntData d;
  d.n = kImages;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> teacher(static_cast<size_t>(kClasses * d.features));
  for (double& w : teacher) w = normal(rng);
  d.pixels.resize(static_cast<size_t>(d.n * d.features));
  for (uint8_t& p : d.pixels) p = static_cast<uint8_t>(byte(rng));
  for (int64_t i = 0; i < d.n; ++i) {
    int best = 0;
    double best_score = -1e300;
    for (int c = 0; c < kClasses; ++c) {
      double score = 0;
      for (int64_t f = 0; f < d.features; ++f) {
        score += teacher[static_cast<size_t>(c * d.features + f)] *
                 (d.pixels[static_cast<size_t>(i * d.features + f)] / 255.0 - 0.5);
      }
      if (score > best_score) best_score = score, best = c;
    }
    d.labels.push_back(best);
  }
  return d;
}

// The perceptron's start, the same for every run of a seed (He initialisation for the ReLU layer).
HuntModel make_model(uint64_t seed) {
  manual_seed(seed + 16);
  HuntModel m;
  m.w1 = (randn({256, 784}) * std::sqrt(2.0 / 784)).set_requires_grad();
  m.b1 = zeros({256}).set_requires_grad();
  m.w2 = (randn({kClasses, 256}) * std::sqrt(1.0 / 256)).set_requires_grad();
  m.b2 = zeros({kClasses}).set_requires_grad();
  return m;
}

// One run of a loop: its losses and the time of each step, on the profiler's clock.
struct Run {
  std::vector<float> losses;
  std::vector<double> step_ns;
};

// A loop that did not keep the contract (hunt_train in bottleneck_hunt.h): what it did instead.
struct LoopBroke {
  std::string what;
};

// Runs a loop, which must call step_done once per step, in order, and return a loss per step: its
// step times are what the speed is judged on, so a loop that reports more steps than it takes
// would look faster. Throws LoopBroke when it does not, or when it throws.
Run run_loop(TrainFn train, const HuntData& data, const HuntSettings& s, HuntModel m) {
  Run r;
  int64_t last = profiler::now_ns();
  int64_t expected = 0;
  bool in_order = true;
  try {
    r.losses = train(m, data, s, [&](int64_t step) {
      const int64_t now = profiler::now_ns();
      r.step_ns.push_back(static_cast<double>(now - last));
      last = now;
      in_order = in_order && step == expected++;
    });
  } catch (const std::exception& e) {
    throw LoopBroke{fmt::format("it threw after {} steps: {}", r.step_ns.size(), e.what())};
  }
  const auto n = static_cast<size_t>(s.steps);
  if (r.step_ns.size() != n || !in_order) {
    throw LoopBroke{fmt::format(
        "it called step_done {} times{} for {} steps: once per step, with the step's index, is "
        "how the checker times them",
        r.step_ns.size(), in_order ? "" : " (not with 0, 1, 2, ...)", s.steps)};
  }
  if (r.losses.size() != n) {
    throw LoopBroke{fmt::format("it returned {} losses for {} steps", r.losses.size(), s.steps)};
  }
  return r;
}

// ---- the wastes --------------------------------------------------------------------------------

// A planted waste and the op row it leaves in a profile (still_there says when it is gone).
struct Waste {
  const char* name;   // what the waste is
  const char* op;     // the op row that shows it
  const char* where;  // where the original loop does it
  const char* fix;    // the change that removes it
};

const Waste kWastes[] = {
    {"the images decoded at every micro-batch", "cast",
     "images(data) casts all 1024 images to float32 to take 64 of them",
     "decode once, before the loop, and take each micro-batch with narrow (a view)"},
    {"a weight transposed into a copy on every call", "contiguous",
     "dense() calls w.t().contiguous(): a copy of w, and in backward a copy of its gradient",
     "matmul reads a transposed view as it is (its strides say so), or linear(x, w, b) reads "
     "w [out, in] directly"},
    {"gradients accumulated by copy", "clone",
     "sums[i] = sums[i] + grad.clone(): a copy and a new tensor per parameter per micro-batch",
     "let backward add each micro-batch's gradient into .grad (it accumulates), and step on it"},
    {"a zero-fill inside the step", "zeros", "zeros_like(p) per parameter per step, to sum into",
     "zero_grad() drops the old gradient: the next backward writes the first one, nothing is "
     "filled"},
};
constexpr int kNumWastes = static_cast<int>(sizeof kWastes / sizeof kWastes[0]);

// One op's totals in a profile, per step: calls, bytes (the cost formula's minimum traffic) and
// self time.
struct OpPerStep {
  double calls = 0, bytes = 0, self_ns = 0;
};

// From a profile's op rows (profiler::aggregate_ops, made once per profile).
OpPerStep per_step(const std::vector<profiler::OpRow>& rows, const std::string& op, int64_t steps) {
  OpPerStep out;
  for (const profiler::OpRow& row : rows) {
    if (row.name != op) continue;
    out.calls += static_cast<double>(row.calls) / static_cast<double>(steps);
    out.bytes += static_cast<double>(row.cost.bytes) / static_cast<double>(steps);
    out.self_ns += static_cast<double>(row.self_ns) / static_cast<double>(steps);
  }
  return out;
}

// Whether a waste is still in your loop: its op moves at least half the bytes per step it moved
// in the original (the cost formula's minimum traffic, exact). The fixed loop moves none or a
// sliver (the decode done once: 1/16 of one decode a step; only each micro-batch's images: 1/8):
// a legitimate small copy elsewhere is not mistaken for the waste. What this cannot see is a waste
// moved into another op (grad * 1.0 for grad.clone()): the speed below and the allocations in
// its exact counters still show it.
bool still_there(const OpPerStep& yours, const OpPerStep& original) {
  return original.bytes > 0 && yours.bytes >= original.bytes / 2;
}

// ---- the reports -------------------------------------------------------------------------------

// A loop's profiled run, as `prism train --json` writes one (profile_json plus a "train" block),
// with the step times of its timed runs: what prism compare reads (analysis/run_record.h).
nlohmann::json result_doc(const std::string& name, const profiler::Profile& profile,
                          const Run& profiled, const std::vector<double>& step_ns,
                          const HuntSettings& s, int threads) {
  nlohmann::json doc = nlohmann::json::parse(profiler::profile_json(profile));
  std::vector<double> ms;
  for (double ns : step_ns) ms.push_back(ns / 1e6);
  doc["train"] = {
      {"model", "bottleneck_hunt"},
      {"loop", name},
      {"data", "synthetic bytes"},
      {"batch", s.batch * s.micro_batches},
      {"threads", threads},
      {"steps", s.steps},
      {"profiled_steps", {1, s.steps}},
      {"step_samples_ms", ms},
      {"kernels", analysis::kernel_choices()},
      {"fingerprint", analysis::fingerprint_to_json(analysis::fingerprint(threads, "cpu"))},
      {"step_losses", profiled.losses},
  };
  return doc;
}

// The bottleneck map of a profiled run (analysis/bottleneck.h), with the machine's figures from
// `prism machine`'s cache when there is one.
std::string bottleneck_text(const profiler::Profile& profile, int64_t steps, int threads) {
  analysis::BottleneckSettings bs;
  if (const profiler::MachinePeak* m = profiler::machine_peak(false)) {
    bs.peaks = analysis::peaks_of(*m);
  } else {
    bs.no_peaks_reason = "none cached: `prism machine` measures and caches them";
  }
  bs.dispatch_ns = analysis::measure_dispatch_ns(true);
  bs.lever.model = "bottleneck_hunt";
  bs.lever.threads = threads;
  return analysis::format_bottleneck(
      analysis::map_bottlenecks(analysis::window_load(profile, static_cast<double>(steps)), bs));
}

// ---- the check ---------------------------------------------------------------------------------

struct Profiled {
  profiler::Profile profile;
  Run run;
};

// The model is made before the session starts: the profile holds the loop's ops alone.
Profiled profiled_run(TrainFn train, const HuntData& data, const HuntSettings& s, uint64_t seed) {
  Profiled p;
  HuntModel m = make_model(seed);
  profiler::Session session;
  p.run = run_loop(train, data, s, std::move(m));
  p.profile = session.stop();
  return p;
}

Outcome run_hunt(const Options& o) {
  HuntSettings s;
  s.steps = 16;
  const HuntData data = make_data(o.seed);
  const TrainFn yours = &bottleneck_hunt::hunt_train;
  const TrainFn original = &bottleneck_hunt::baseline::hunt_train;
  fmt::print(
      "\nyour loop ({}) against the original (baseline.cpp): {} images, batch {} x {} "
      "micro-batches, {} SGD steps from the same weights\n",
      kFile, data.n, s.batch, s.micro_batches, s.steps);

  // 1. The quality line.
  note_step(o, "the losses");
  const Profiled a = profiled_run(original, data, s, o.seed);
  const Profiled b = profiled_run(yours, data, s, o.seed);
  const std::vector<double> la(a.run.losses.begin(), a.run.losses.end());
  const std::vector<double> lb(b.run.losses.begin(), b.run.losses.end());
  // Both have a loss per step (run_loop checks it); a NaN one makes the difference NaN.
  const analysis::LossDifference d = analysis::loss_difference(la, lb);
  const bool held = std::isfinite(d.relative) && d.relative <= kLossTolerance;
  fmt::print(
      "  the loss of every step, yours vs the original  {}  max |B - A| / max |A| = {} "
      "(tolerance {:.0e}); step {}: {:.5f} vs {:.5f}\n",
      held ? "PASS" : "FAIL",
      std::isnan(d.relative) ? std::string("not comparable (a loss is not finite)")
                             : fmt::format("{:.1e}", d.relative),
      kLossTolerance, d.steps, d.last_b, d.last_a);
  if (!held) {
    fmt::print(
        "\nhint: your loop no longer trains the same model. A speed-up must leave the arithmetic "
        "alone: the same micro-batches in the same order, their gradients averaged (divided by "
        "{}), one SGD step each, pixels scaled by 1/255, and every parameter's gradient dropped "
        "before the next step (zero_grad()).\n",
        s.micro_batches);
    return {1, 0, kNumWastes};
  }

  // 2. The wastes, from the two profiles. The ones still there are counted, not named: finding
  // them in the profile is the exercise.
  note_step(o, "the profiles");
  fmt::print("\nthe wastes (from each loop's profile, per step: exact counts, no timing):\n");
  int found = 0;
  const std::vector<profiler::OpRow> rows_a = profiler::aggregate_ops(a.profile);
  const std::vector<profiler::OpRow> rows_b = profiler::aggregate_ops(b.profile);
  for (const Waste& w : kWastes) {
    const OpPerStep before = per_step(rows_a, w.op, s.steps);
    const OpPerStep after = per_step(rows_b, w.op, s.steps);
    if (still_there(after, before)) continue;
    ++found;
    fmt::print(
        "  FIXED  {}: the original's `{}` row, {:.1f} calls and {:.0f} kB a step ({:.2f} ms on "
        "this run), is {:.1f} calls and {:.0f} kB in yours.\n         The original: {}. The "
        "fix: {}.\n",
        w.name, w.op, before.calls, before.bytes / 1e3, before.self_ns / 1e6, after.calls,
        after.bytes / 1e3, w.where, w.fix);
  }
  fmt::print("{} of {} wastes removed.\n", found, kNumWastes);

  // 3. The speed, side by side.
  if (o.timing) {
    note_step(o, "timing");
    const int rounds = o.quick ? 2 : 6;
    const int warmup = 2;  // the first steps of a run: allocator and caches still cold
    std::vector<double> ta, tb;
    for (int r = 0; r < rounds; ++r) {
      // A B B A ...: drift falls on both sides alike.
      for (const bool first_is_a : {r % 2 == 0, r % 2 != 0}) {
        const Run run = run_loop(first_is_a ? original : yours, data, s, make_model(o.seed));
        std::vector<double>& into = first_is_a ? ta : tb;
        into.insert(into.end(), run.step_ns.begin() + std::min<size_t>(warmup, run.step_ns.size()),
                    run.step_ns.end());
      }
    }
    const int threads = o.threads;
    const nlohmann::json da = result_doc("original", a.profile, a.run, ta, s, threads);
    const nlohmann::json db = result_doc("yours", b.profile, b.run, tb, s, threads);
    const analysis::Comparison c = analysis::compare_runs(analysis::run_from_json(da, "original"),
                                                          analysis::run_from_json(db, "yours"));
    fmt::print(
        "\nthe speed: prism compare, the original (A) against yours (B), {} interleaved runs "
        "each, {} steps of each run timed:\n{}",
        rounds, s.steps - warmup, analysis::format_comparison(c, 8));
  }
  if (found == 0) {
    fmt::print(
        "\nhint: no waste is gone yet. Profile your loop (build/exercises/exercise_bottleneck_hunt "
        "--profile): the op table's largest rows and the bottleneck map say where the time goes. "
        "Pick the largest, say why it is there, change that one thing, and check again.\n");
    return {1, 0, kNumWastes};
  }
  if (found < kNumWastes) {
    fmt::print("\nnext: {} more to find; the op table of --profile shows each as a row.\n",
               kNumWastes - found);
  }
  return {0, found, kNumWastes, found < kNumWastes ? "missed" : ""};
}

// --profile: your loop's op table and bottleneck map; --record FILE: your run as a result file.
Outcome measure(const Options& o) {
  if (!o.record_file.empty()) {
    try {  // before the runs: a path that cannot be written costs nothing
      profiler::check_output_path(o.record_file, "record");
    } catch (const std::exception& e) {
      fmt::print(stderr, "checker: {}\n", e.what());
      return {2};
    }
  }
  {
    HuntSettings s;
    const HuntData data = make_data(o.seed);
    const Profiled b = profiled_run(&bottleneck_hunt::hunt_train, data, s, o.seed);
    if (o.profile) {
      fmt::print("\nyour loop, {} steps under the profiler:\n{}\n{}", s.steps,
                 profiler::format_table(b.profile), bottleneck_text(b.profile, s.steps, o.threads));
    }
    if (!o.record_file.empty()) {
      std::vector<double> times;
      for (int r = 0; r < 4; ++r) {
        const Run run = run_loop(&bottleneck_hunt::hunt_train, data, s, make_model(o.seed));
        times.insert(times.end(), run.step_ns.begin() + 2, run.step_ns.end());  // 16 steps
      }
      profiler::write_text_file(
          o.record_file,
          result_doc("recorded", b.profile, b.run, times, s, o.threads).dump(2) + "\n");
      fmt::print(
          "\nwrote {}: compare two of them with build/prism compare BEFORE.json AFTER.json (two "
          "files timed at different times: the machine may have changed in between)\n",
          o.record_file);
    }
    return {0, 0, 0, "not graded"};
  }
}

Outcome hunt(const Options& o) {
  try {
    return o.profile || !o.record_file.empty() ? measure(o) : run_hunt(o);
  } catch (const LoopBroke& broke) {
    fmt::print(
        "\nyour loop broke its contract: {}.\nhint: hunt_train (bottleneck_hunt.h) takes the "
        "settings' steps, calls step_done(step) after each, and returns one loss per step.\n",
        broke.what);
    return {1, 0, kNumWastes};
  } catch (const std::exception& e) {  // writing the record
    fmt::print(stderr, "checker: {}\n", e.what());
    return {2};
  }
}

Exercise make_bottleneck_hunt() {
  Exercise ex;
  ex.id = "16_bottleneck_hunt";
  ex.file = kFile;
  ex.title = "find and remove the waste in a training loop, keeping its loss (the capstone)";
  ex.tolerance = kLossTolerance;
  ex.tolerance_why = "the losses of the same steps, summed in another order";
  ex.run = hunt;
  ex.runs_a_loop = true;
  return ex;
}

const bool registered = add_exercise(make_bottleneck_hunt());

}  // namespace
}  // namespace prism::exercises
