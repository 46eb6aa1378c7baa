#include "analysis/models_compare.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "analysis/report_format.h"
#include "analysis/run_record.h"
#include "nn/models/gpt.h"
#include "profiler/aggregate.h"
#include "profiler/machine.h"
#include "profiler/session.h"
#include "profiler/statistics.h"
#include "tensor/ops.h"

namespace prism::analysis {

namespace {

// nn/models/zoo.cpp's defaults for the models without a named configuration (zoo.h documents
// them; a test checks that building at these widths gives the default model).
constexpr int64_t kMlpWidth = 256;
constexpr int64_t kCnnWidth = 16;
// nn::ModelOptions' largest width (zoo.cpp refuses more).
constexpr int64_t kMaxWidth = int64_t{1} << 16;

// The GPT configuration behind a zoo name ("transformer" is the "gpt-char" configuration).
nn::GPTConfig gpt_of(const std::string& model) {
  return nn::gpt_config(model == "transformer" ? "gpt-char" : model);
}

bool is_mlp(const std::string& m) {
  return m == "mlp";
}
bool is_cnn(const std::string& m) {
  return m == "cnn" || m == "lenet";
}

}  // namespace

std::string with_commas(double v) {
  const long long n = std::llround(v);
  std::string digits = std::to_string(n < 0 ? -n : n), out = n < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string si(double v) {
  const char* units[] = {"", "k", "M", "G", "T", "P"};
  int u = 0;
  while (std::abs(v) >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  return fmt::format("{:.3g} {}", v, units[u]);
}

// ---- matching ----------------------------------------------------------------------------------

MatchBy match_by_from_name(const std::string& name) {
  if (name.empty() || name == "none") return MatchBy::none;
  if (name == "params") return MatchBy::params;
  if (name == "flops") return MatchBy::flops;
  throw Error("models: --match takes params or flops, got '" + name + "'");
}

const char* match_by_name(MatchBy m) {
  switch (m) {
    case MatchBy::none:
      return "none";
    case MatchBy::params:
      return "params";
    case MatchBy::flops:
      return "flops";
  }
  return "?";
}

bool can_scale_width(const std::string& model) {
  return is_mlp(model) || is_cnn(model) || nn::is_language_model(model);
}

int64_t default_width(const std::string& model) {
  if (is_mlp(model)) return kMlpWidth;
  if (is_cnn(model)) return kCnnWidth;
  if (nn::is_language_model(model)) return gpt_of(model).d_model;
  throw Error("models: " + model + " has no width to scale (mlp, cnn and the GPTs have one)");
}

int64_t width_step(const std::string& model) {
  if (nn::is_language_model(model)) return gpt_of(model).heads;
  default_width(model);  // an Error for a model without a width
  return 1;
}

double model_size(const std::string& model, MatchBy by, const nn::ModelOptions& options) {
  DefaultDevice meta(Device::meta);
  if (by == MatchBy::params) {
    return static_cast<double>(nn::make_model(model, options)->parameter_count());
  }
  if (by != MatchBy::flops) throw Error("model_size: no size to compare for --match none");
  // One inference call at batch 1, exactly as the bench runs it (eval mode, no grad).
  Workload w(model, BenchMode::infer, options, Device::meta, 0);
  w.set_batch(1, 0);
  profiler::Profile profile;
  {
    profiler::Session session;
    w.call();
    profile = session.stop();
  }
  int64_t flops = 0;
  for (const profiler::OpRow& r : profiler::aggregate_ops(profile)) {
    flops = profiler::saturating_add(flops, r.cost.flops);
  }
  return static_cast<double>(flops);
}

WidthMatch match_width(const std::string& model, MatchBy by, double target,
                       const nn::ModelOptions& options) {
  if (by == MatchBy::none) throw Error("match_width: nothing to match (--match none)");
  if (!(target > 0)) throw Error("match_width: the target size must be positive");
  WidthMatch m;
  m.model = model;
  m.by = by;
  m.target = target;
  m.from_width = options.width > 0 ? options.width : default_width(model);
  const int64_t step = width_step(model);
  auto size_at = [&](int64_t k) {  // the size at width k * step
    nn::ModelOptions o = options;
    o.width = k * step;
    return model_size(model, by, o);
  };
  m.from_size = size_at(m.from_width / step);
  // Bisection for the first k with size_at(k) >= target, k in [1, kmax]: the size grows with
  // the width (every layer's weights and work grow with it).
  int64_t lo = 1, hi = kMaxWidth / step;
  if (size_at(hi) < target) {
    lo = hi;  // the widest allowed is still smaller: the closest achievable
  } else {
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (size_at(mid) >= target) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
  }
  int64_t best = lo;
  double best_size = size_at(lo);
  if (lo > 1) {
    const double below = size_at(lo - 1);
    if (std::abs(below - target) < std::abs(best_size - target)) {
      best = lo - 1;
      best_size = below;
    }
  }
  m.to_width = best * step;
  m.to_size = best_size;
  m.error_pct = 100 * (best_size - target) / target;
  m.within_tolerance = std::abs(m.error_pct) <= kMatchTolerancePct;
  return m;
}

std::string describe_match(const WidthMatch& m) {
  const bool params = m.by == MatchBy::params;
  const std::string what = params ? "parameters" : "forward FLOPs per sample";
  std::string s =
      fmt::format("{} width {} -> {}: {} -> {} {} (target {})", m.model, m.from_width, m.to_width,
                  with_commas(m.from_size), with_commas(m.to_size), what, with_commas(m.target));
  if (m.within_tolerance) {
    s += fmt::format(", within {:.2f}%", std::abs(m.error_pct));
  } else {
    s += fmt::format(", {:+.1f}%: outside the {:.0f}% tolerance, the closest any width comes",
                     m.error_pct, kMatchTolerancePct);
  }
  return s;
}

// ---- checking --------------------------------------------------------------------------------

namespace {

// The bench settings of one model and mode in a round: what check_models_options checks and
// run_models measures with.
BenchOptions bench_options_for(const ModelsOptions& o, const std::string& model, BenchMode mode,
                               const nn::ModelOptions& options) {
  BenchOptions b;
  b.model = model;
  b.mode = mode;
  b.batches = {o.batch};
  b.warmup = o.warmup;
  b.duration_s = o.duration_s;
  b.min_iters = o.min_iters;
  b.profile_calls = o.profile_calls;
  b.seed = o.seed;
  b.model_options = options;
  b.check_environment = false;  // run_models reads the environment once for all
  b.peak = false;               // and the machine's peak
  return b;
}

}  // namespace

void check_models_options(const ModelsOptions& o) {
  if (o.models.empty()) throw Error("models: name at least one model (e.g. mlp cnn transformer)");
  for (size_t i = 0; i < o.models.size(); ++i) {
    nn::default_input(o.models[i], o.model_options);  // an unknown model: the zoo's message
    // Aliases name one zoo entry, and each entry has its own description: cnn and lenet are
    // one model, named twice.
    for (size_t j = 0; j < i; ++j) {
      if (nn::model_description(o.models[j]) == nn::model_description(o.models[i])) {
        throw Error(o.models[j] == o.models[i] ? "models: " + o.models[i] + " is named twice"
                                               : "models: " + o.models[j] + " and " + o.models[i] +
                                                     " are the same model, named twice");
      }
    }
  }
  if (o.match != MatchBy::none) {
    for (size_t i = 1; i < o.models.size(); ++i) {
      if (!can_scale_width(o.models[i])) {
        throw Error(fmt::format(
            "models: --match {} cannot scale {}: --match scales the width of mlp (hidden units), "
            "cnn (conv channels) and the GPTs (transformer, gpt2-small, gpt2-medium: d_model); "
            "the first model, the target, may be any",
            match_by_name(o.match), o.models[i]));
      }
    }
  }
  // --block sets a GPT's context length; with no GPT among the models it was silently dropped.
  if (o.model_options.block_size > 0 &&
      std::none_of(o.models.begin(), o.models.end(), nn::is_language_model)) {
    throw Error(
        "models: --block sets a GPT's context length, and none of the models has one (the GPTs: "
        "transformer, gpt2-small, gpt2-medium)");
  }
  if (o.rounds < 1) throw Error("models: --rounds must be at least 1");
  if (o.min_iters < 1 || o.warmup < 0 || o.profile_calls < 1) {
    throw Error("models: the call counts must be positive");
  }
  for (const std::string& m : o.models) {
    check_bench_options(bench_options_for(o, m, BenchMode::train, o.model_options));
  }
}

// ---- measuring
// -----------------------------------------------------------------------------------

double ModeResult::class_share_pct(OpClass c) const {
  double total = 0;
  for (double t : class_ns) total += t;
  return total > 0 ? 100 * class_ns[static_cast<size_t>(c)] / total : 0;
}

namespace {

// Adds one round's bench result to the pooled mode result.
void pool(ModeResult& m, const BatchResult& b, bool first) {
  m.samples_ns.insert(m.samples_ns.end(), b.samples_ns.begin(), b.samples_ns.end());
  m.class_ns_rounds.push_back(b.class_ns);
  if (first) {
    // The counters are exact and the same in every round: the first round's stand.
    m.counters = b.counters;
    double forward_alloc = 0;
    for (const OpPerCall& op : b.ops) {
      if (op.phase == "forward") {
        m.forward_flops += op.flops;
        forward_alloc += op.alloc_bytes;
      }
      if (op.phase == "backward") m.backward_flops += op.flops;
      if (op.phase == "optimizer") m.optimizer_flops += op.flops;
    }
    if (m.mode == BenchMode::train) m.activation_bytes = forward_alloc;
  }
  if (first || b.tracked_peak_bytes > m.tracked_peak_bytes) {
    m.tracked_peak_bytes = b.tracked_peak_bytes;
    m.peak_by_role = b.tracked_peak_by_role;
    constexpr size_t kAct = static_cast<size_t>(profiler::MemRole::activation);
    if (m.mode == BenchMode::infer) m.activation_bytes = static_cast<double>(m.peak_by_role[kAct]);
  }
}

using ClassTimes = std::array<double, kNumOpClasses>;

// Each class's median over the rounds: one window that a busy machine stalled cannot decide
// the split.
ClassTimes median_by_class(const std::vector<ClassTimes>& rounds) {
  ClassTimes out{};
  for (size_t c = 0; c < out.size() && !rounds.empty(); ++c) {
    std::vector<double> per_round;
    for (const ClassTimes& r : rounds) per_round.push_back(r[c]);
    out[c] = profiler::stats::median(per_round);
  }
  return out;
}

double attention_share(const ClassTimes& class_ns) {
  ModeResult one;
  one.class_ns = class_ns;
  return one.class_share_pct(OpClass::attention);
}

void finish(ModeResult& m, double peak_gflops) {
  m.class_ns = median_by_class(m.class_ns_rounds);
  m.median_ns = profiler::stats::median(m.samples_ns);
  // Consecutive calls are correlated (a busy neighbour slows a whole stretch): the interval
  // resamples contiguous blocks of calls, not single calls (statistics.h, batch means).
  const profiler::stats::Interval ci =
      profiler::stats::block_bootstrap_quantile_ci(m.samples_ns, 0.5);
  m.ci_low_ns = ci.low;
  m.ci_high_ns = ci.high;
  m.gflops = static_cast<double>(m.counters.flops) / m.median_ns;
  m.pct_peak = peak_gflops > 0 ? 100 * m.gflops / peak_gflops : 0;
  m.intensity = m.counters.bytes > 0
                    ? static_cast<double>(m.counters.flops) / static_cast<double>(m.counters.bytes)
                    : 0;
}

// One round of an attention probe: a short profiled run at context `p.block`, its attention
// share added to p.rounds_pct and its class times to `rounds` (a context too long for the
// memory is said, not fatal).
void probe_attention(const ModelsOptions& o, const nn::ModelOptions& options, AttentionProbe& p,
                     std::vector<ClassTimes>& rounds) {
  if (!p.skipped.empty()) return;
  nn::ModelOptions at_block = options;
  at_block.block_size = p.block;
  BenchOptions b = bench_options_for(o, p.model, p.mode, at_block);
  b.iters = 1;  // the probe needs the profiled window's class times, not a timing
  b.warmup = 1;
  try {
    rounds.push_back(run_bench(b).batches.at(0).class_ns);
    p.rounds_pct.push_back(attention_share(rounds.back()));
  } catch (const Error& e) {
    p.skipped = e.what();
  }
}

}  // namespace

ModelsResult run_models(const ModelsOptions& o) {
  check_models_options(o);
  ModelsResult res;
  res.options = o;
  res.options.progress = nullptr;
#ifdef _OPENMP
  res.threads = omp_get_max_threads();
#endif
  res.fingerprint = fingerprint(res.threads);

  // Widths first (meta device, no measuring): every model after the first is scaled to it.
  const size_t n = o.models.size();
  std::vector<nn::ModelOptions> options(n, o.model_options);
  res.models.resize(n);
  for (size_t i = 0; i < n; ++i) res.models[i].model = o.models[i];
  if (o.match != MatchBy::none) {
    const double target = model_size(o.models[0], o.match, o.model_options);
    for (size_t i = 1; i < n; ++i) {
      if (o.progress) o.progress("matching " + o.models[i] + "'s width");
      WidthMatch m = match_width(o.models[i], o.match, target, o.model_options);
      options[i].width = m.to_width;
      res.matches.push_back(std::move(m));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    ModelResult& mr = res.models[i];
    mr.width = can_scale_width(mr.model)
                   ? (options[i].width > 0 ? options[i].width : default_width(mr.model))
                   : 0;
    DefaultDevice meta(Device::meta);
    mr.parameters = nn::make_model(mr.model, options[i])->parameter_count();
  }

  // Refuse what cannot fit before timing anything: a training step's tracked memory (the
  // larger of the two modes), from a dry run on the meta device.
  const int64_t ram = physical_memory_bytes();
  for (size_t i = 0; i < n; ++i) {
    const int64_t need = dry_run_peak_bytes(
        bench_options_for(o, o.models[i], BenchMode::train, options[i]), o.batch);
    if (ram > 0 && need > ram) {
      throw Error(fmt::format(
          "models: {} at batch {} needs about {:.1f} GiB of tensors in one training step, more "
          "than this machine's {:.1f} GiB of memory: use a smaller --batch",
          o.models[i], o.batch, static_cast<double>(need) / (1 << 30),
          static_cast<double>(ram) / (1 << 30)));
    }
  }

  if (o.peak) {
    if (const profiler::MachinePeak* m = profiler::machine_peak(true)) {
      res.peak_gflops = m->peak_gflops(res.threads);
      res.peak_gbps = m->peak_gbps(res.threads);
      res.ridge_flop_per_byte = m->ridge_flop_per_byte(res.threads);
    }
  }
  res.environment =
      check_environment(res.threads, res.fingerprint.physical_cores, res.fingerprint.logical_cpus);

  // The rounds: every model once per mode, the order rotated by one each round.
  const BenchMode modes[] = {BenchMode::train, BenchMode::infer};
  for (int r = 0; r < o.rounds; ++r) {
    for (BenchMode mode : modes) {
      for (size_t k = 0; k < n; ++k) {
        const size_t i = (k + static_cast<size_t>(r)) % n;
        ModelResult& mr = res.models[i];
        if (o.progress) {
          o.progress(
              fmt::format("round {}/{}: {} {}", r + 1, o.rounds, bench_mode_name(mode), mr.model));
        }
        const BenchResult br = run_bench(bench_options_for(o, mr.model, mode, options[i]));
        if (mr.input.empty()) mr.input = br.input;
        ModeResult& m = mode == BenchMode::train ? mr.train : mr.infer;
        m.mode = mode;
        pool(m, br.batches.at(0), r == 0);
      }
    }
  }
  for (ModelResult& mr : res.models) {
    finish(mr.train, res.peak_gflops);
    finish(mr.infer, res.peak_gflops);
  }

  // Attention against context length: half and double the context, both modes, in rounds as
  // above (each a short profiled run); the context itself from the main measurement. A share
  // is read as the table's are: from each class's median over the rounds.
  if (o.attention_probes) {
    struct Extra {
      AttentionProbe probe;
      size_t model;
      std::vector<ClassTimes> rounds;
    };
    std::vector<Extra> extra;
    for (size_t i = 0; i < n; ++i) {
      if (!nn::is_language_model(o.models[i])) continue;
      const int64_t block = nn::default_input(o.models[i], options[i]).shape[1];
      for (BenchMode mode : modes) {
        for (int64_t ctx : {block / 2, block, block * 2}) {
          if (ctx < 1) continue;
          AttentionProbe p;
          p.model = o.models[i];
          p.mode = mode;
          p.block = ctx;
          if (ctx == block) {
            const ModeResult& m = res.models[i].mode(mode);
            for (const ClassTimes& r : m.class_ns_rounds)
              p.rounds_pct.push_back(attention_share(r));
            p.attention_pct = m.class_share_pct(OpClass::attention);
            res.probes.push_back(p);
          } else {
            extra.push_back({p, i, {}});
          }
        }
      }
    }
    for (int r = 0; r < o.rounds; ++r) {
      for (Extra& e : extra) {
        if (o.progress) {
          o.progress(fmt::format("round {}/{}: attention at context {}: {} {}", r + 1, o.rounds,
                                 e.probe.block, bench_mode_name(e.probe.mode), e.probe.model));
        }
        probe_attention(o, options[e.model], e.probe, e.rounds);
      }
    }
    for (Extra& e : extra) {
      if (e.probe.skipped.empty())
        e.probe.attention_pct = attention_share(median_by_class(e.rounds));
      res.probes.push_back(e.probe);
    }
  }
  return res;
}

// ---- JSON --------------------------------------------------------------------------------------

namespace {

nlohmann::ordered_json mode_json(const ModeResult& m, int64_t batch) {
  nlohmann::ordered_json j;
  j["mode"] = bench_mode_name(m.mode);
  j["median_ns"] = m.median_ns;
  j["ci95_ns"] = {m.ci_low_ns, m.ci_high_ns};
  j["per_sample_ns"] = m.median_ns / static_cast<double>(batch);
  j["counters"] = {{"flops", m.counters.flops},
                   {"macs", m.counters.macs},
                   {"bytes", m.counters.bytes},
                   {"allocs", m.counters.allocs},
                   {"alloc_bytes", m.counters.alloc_bytes}};
  j["flops_by_phase"] = {{"forward", m.forward_flops},
                         {"backward", m.backward_flops},
                         {"optimizer", m.optimizer_flops}};
  j["gflops"] = m.gflops;
  j["pct_peak"] = m.pct_peak;
  j["intensity_flop_per_byte"] = m.intensity;
  nlohmann::ordered_json cls = nlohmann::ordered_json::object();
  for (int c = 0; c < kNumOpClasses; ++c) {
    cls[op_class_name(static_cast<OpClass>(c))] = {
        {"ns", m.class_ns[static_cast<size_t>(c)]},
        {"pct", m.class_share_pct(static_cast<OpClass>(c))}};
  }
  j["time_by_class"] = cls;
  j["activation_bytes"] = m.activation_bytes;
  j["tracked_peak_bytes"] = m.tracked_peak_bytes;
  nlohmann::ordered_json roles = nlohmann::ordered_json::object();
  for (int k = 0; k < profiler::kNumRoles; ++k) {
    roles[profiler::role_name(static_cast<profiler::MemRole>(k))] =
        m.peak_by_role[static_cast<size_t>(k)];
  }
  j["peak_by_role"] = roles;
  j["samples_ns"] = m.samples_ns;
  return j;
}

}  // namespace

nlohmann::ordered_json models_to_json(const ModelsResult& r) {
  nlohmann::ordered_json j;
  j["kind"] = "prism.models";
  j["fingerprint"] = fingerprint_to_json(r.fingerprint);
  j["warnings"] = r.environment.warnings;
  j["options"] = {{"models", r.options.models},
                  {"match", match_by_name(r.options.match)},
                  {"batch", r.options.batch},
                  {"rounds", r.options.rounds},
                  {"duration_s", r.options.duration_s},
                  {"seed", r.options.seed},
                  {"block_size", r.options.model_options.block_size}};
  j["threads"] = r.threads;
  j["machine"] = {{"peak_gflops", r.peak_gflops},
                  {"peak_gbps", r.peak_gbps},
                  {"ridge_flop_per_byte", r.ridge_flop_per_byte}};
  j["matches"] = nlohmann::ordered_json::array();
  for (const WidthMatch& m : r.matches) {
    j["matches"].push_back({{"model", m.model},
                            {"by", match_by_name(m.by)},
                            {"from_width", m.from_width},
                            {"to_width", m.to_width},
                            {"from_size", m.from_size},
                            {"to_size", m.to_size},
                            {"target", m.target},
                            {"error_pct", m.error_pct},
                            {"within_tolerance", m.within_tolerance}});
  }
  j["models"] = nlohmann::ordered_json::array();
  for (const ModelResult& m : r.models) {
    j["models"].push_back({{"model", m.model},
                           {"width", m.width},
                           {"parameters", m.parameters},
                           {"input", m.input},
                           {"train", mode_json(m.train, r.options.batch)},
                           {"infer", mode_json(m.infer, r.options.batch)}});
  }
  j["attention_probes"] = nlohmann::ordered_json::array();
  for (const AttentionProbe& p : r.probes) {
    nlohmann::ordered_json q = {{"model", p.model},
                                {"mode", bench_mode_name(p.mode)},
                                {"block", p.block},
                                {"attention_pct", p.attention_pct},
                                {"rounds_pct", p.rounds_pct}};
    if (!p.skipped.empty()) q["skipped"] = p.skipped;
    j["attention_probes"].push_back(q);
  }
  j["findings"] = findings(r);
  return j;
}

}  // namespace prism::analysis
