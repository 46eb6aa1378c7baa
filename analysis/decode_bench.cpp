#include "analysis/decode_bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "analysis/report_format.h"
#include "nn/models/gpt.h"
#include "nn/models/gpt_decoder.h"
#include "profiler/aggregate.h"
#include "profiler/clock.h"
#include "profiler/machine.h"
#include "profiler/session.h"
#include "tensor/random.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace prism::analysis {

namespace {

constexpr int64_t kMaxSequences = 10'000;
constexpr int64_t kProfiledSteps = 5;
constexpr size_t kStepOpRows = 8;

// The context the model is built with: the length of its default input [1, block].
int64_t context_of(const DecodeOptions& o) {
  return nn::default_input(o.model, o.model_options).shape[1];
}

// Bytes one decoding step reads from the weights: every parameter whole, except the embedding
// tables, of which it reads one row each, and the tied token embedding, which the LM head then
// reads whole (so it counts once whole, plus its row).
int64_t weight_bytes_per_token(nn::GPT& m) {
  const int64_t elem = m.wte->weight.element_size();
  const int64_t d = m.config().d_model;
  int64_t bytes = 0;
  for (const Tensor& p : m.parameters()) bytes += p.nbytes();
  bytes -= m.wpe->weight.nbytes() - d * elem;  // one position row
  if (m.head)
    bytes -= m.wte->weight.nbytes() - d * elem;  // untied: one token row of wte
  else
    bytes += d * elem;  // tied: the row, and the head
  return bytes;
}

// Keys and values read by the step that writes position t (0-based): every layer reads
// t + 1 cached rows of keys and of values, D floats each.
int64_t kv_bytes_at(const nn::GPT& m, int64_t t) {
  const nn::GPTConfig& c = m.config();
  return 2 * c.layers * (t + 1) * c.d_model * m.wte->weight.element_size();
}

int64_t argmax(const std::vector<double>& logits) {
  return std::max_element(logits.begin(), logits.end()) - logits.begin();
}

// The bandwidth a step's bytes stream at: a cache level's triad when they fit in the working
// set that level was measured on (a small model's weights stay in cache from one token to the
// next), else DRAM's. The measured set, not the level's reported size: a VM may report an L3 of
// hundreds of MiB shared with other guests, and a figure measured on 16 MiB says nothing of
// 500 MB.
std::pair<std::string, double> stream_roof(const profiler::MachinePeak& m, int threads,
                                           int64_t bytes) {
  if (const profiler::ThreadLimits* row = m.row(threads)) {
    for (const profiler::LevelRate& l : row->levels) {
      if (bytes <= l.working_set_bytes && l.gbps.best > 0) return {l.level, l.gbps.best};
    }
  }
  return {"DRAM", m.peak_gbps(threads)};
}

struct Sequence {
  double ttft_ns = 0;
  std::vector<double> token_ns;
  std::vector<int64_t> tokens;
  int64_t cache_bytes = 0;
};

// One prompt through prefill, then `tokens - 1` greedy steps, each timed on its own.
Sequence run_sequence(nn::GPT& model, const std::vector<int64_t>& prompt, int64_t tokens,
                      int64_t context) {
  nn::GptDecoder dec(model, context, /*use_cache=*/true);
  Sequence s;
  int64_t t0 = profiler::now_ns();
  s.tokens.push_back(argmax(dec.start(prompt)));
  int64_t t1 = profiler::now_ns();
  s.ttft_ns = static_cast<double>(t1 - t0);
  s.cache_bytes = dec.cache()->bytes();
  for (int64_t i = 1; i < tokens; ++i) {
    t0 = t1;
    s.tokens.push_back(argmax(dec.push(s.tokens.back())));
    t1 = profiler::now_ns();
    s.token_ns.push_back(static_cast<double>(t1 - t0));
  }
  return s;
}

}  // namespace

void check_decode_options(const DecodeOptions& o) {
  if (!nn::is_language_model(o.model)) {
    throw Error("bench --mode decode: " + o.model +
                " is not a language model (decode needs a GPT: transformer, gpt-char, gpt2-*)");
  }
  const int64_t context = context_of(o);  // an unknown model is an Error naming the zoo
  if (o.prompt < 1) throw Error("bench --mode decode: the prompt needs at least 1 token");
  if (o.tokens < 1) throw Error("bench --mode decode: generate at least 1 token");
  if (o.prompt + o.tokens > context) {
    throw Error(fmt::format(
        "bench --mode decode: a prompt of {} and {} new tokens need a context of {}, more than "
        "{}'s {} (shorten them, or raise --block up to the model's block size)",
        o.prompt, o.tokens, o.prompt + o.tokens, o.model, context));
  }
  if (o.sequences < 1 || o.sequences > kMaxSequences) {
    throw Error(fmt::format("bench --mode decode: timed sequences must be in 1..{}, got {}",
                            kMaxSequences, o.sequences));
  }
}

DecodeResult run_decode_bench(const DecodeOptions& o) {
  check_decode_options(o);
  DecodeResult r;
  r.options = o;
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  r.fingerprint = fingerprint(threads);
  if (o.check_environment) {
    r.environment =
        check_environment(threads, r.fingerprint.physical_cores, r.fingerprint.logical_cpus);
  }
  const profiler::MachinePeak* machine = o.peak ? profiler::machine_peak(true) : nullptr;

  manual_seed(o.seed);
  const std::shared_ptr<nn::Module> built = nn::make_model(o.model, o.model_options);
  auto* model = dynamic_cast<nn::GPT*>(built.get());
  if (model == nullptr) throw Error("bench --mode decode: " + o.model + " is not a GPT");
  r.parameters = model->parameter_count();
  const int64_t context = o.prompt + o.tokens;  // the cache holds the whole sequence

  // Random prompt ids from the seed (uniform over the vocabulary).
  Generator gen(o.seed + 1);
  std::vector<int64_t> prompt(static_cast<size_t>(o.prompt));
  for (int64_t& id : prompt) {
    id = std::min(model->config().vocab - 1,
                  static_cast<int64_t>(gen.uniform() * static_cast<double>(model->config().vocab)));
  }

  run_sequence(*model, prompt, o.tokens, context);  // untimed: see the header
  for (int64_t s = 0; s < o.sequences; ++s) {
    Sequence seq = run_sequence(*model, prompt, o.tokens, context);
    r.ttft_ns.push_back(seq.ttft_ns);
    r.token_ns.insert(r.token_ns.end(), seq.token_ns.begin(), seq.token_ns.end());
    r.cache_bytes = seq.cache_bytes;
    if (s == 0) r.first_tokens = seq.tokens;
  }
  r.ttft = latency_stats(r.ttft_ns);
  if (!r.token_ns.empty()) {
    r.per_token = latency_stats(r.token_ns);
    r.tokens_per_s = 1e9 / r.per_token.mean;
  }

  // The profiled steps: a fresh sequence's prefill (unprofiled), then up to kProfiledSteps steps.
  if (o.tokens > 1) {
    nn::GptDecoder dec(*model, context, /*use_cache=*/true);
    int64_t next = argmax(dec.start(prompt));
    r.profiled_steps = std::min<int64_t>(kProfiledSteps, o.tokens - 1);
    profiler::Profile profile;
    {
      profiler::Session session;
      for (int64_t i = 0; i < r.profiled_steps; ++i) next = argmax(dec.push(next));
      profile = session.stop();
    }
    const double steps = static_cast<double>(r.profiled_steps);
    for (const profiler::OpRow& row : profiler::aggregate_ops(profile)) {
      r.step_ops.push_back({row.name, static_cast<double>(row.calls) / steps,
                            static_cast<double>(row.self_ns) / steps,
                            static_cast<double>(row.cost.bytes) / steps,
                            static_cast<double>(row.cost.flops) / steps});
    }
  }

  r.weight_bytes_per_token = weight_bytes_per_token(*model);
  // The decoding steps write positions prompt .. prompt + tokens - 2.
  int64_t kv = 0;
  for (int64_t t = o.prompt; t < o.prompt + o.tokens - 1; ++t) kv += kv_bytes_at(*model, t);
  r.kv_bytes_per_token = o.tokens > 1 ? kv / (o.tokens - 1) : 0;
  if (machine != nullptr) {
    const auto [level, gbps] =
        stream_roof(*machine, threads, r.weight_bytes_per_token + r.kv_bytes_per_token);
    r.bandwidth_level = level;
    r.bandwidth_gbps = gbps;
  }
  if (r.bandwidth_gbps > 0) {
    r.bound_ns = static_cast<double>(r.weight_bytes_per_token + r.kv_bytes_per_token) /
                 r.bandwidth_gbps;  // bytes / (GB/s) = ns
  }
  return r;
}

std::string format_decode(const DecodeResult& r) {
  const DecodeOptions& o = r.options;
  std::string out = fmt::format(
      "bench {} --mode decode: {} parameters, batch 1, KV cache, greedy; prompt {} token{}, {} "
      "new token{} a sequence, {} timed sequence{} (one untimed first), {} thread{}\n",
      o.model, r.parameters, o.prompt, o.prompt == 1 ? "" : "s", o.tokens, o.tokens == 1 ? "" : "s",
      o.sequences, o.sequences == 1 ? "" : "s", r.fingerprint.threads,
      r.fingerprint.threads == 1 ? "" : "s");
  out += fmt::format("KV cache: {} a sequence ({} positions)\n\n", format_bytes(r.cache_bytes),
                     o.prompt + o.tokens);
  out += fmt::format("time to first token (prefill of {} token{}): p50 {} (min {}, max {})\n",
                     o.prompt, o.prompt == 1 ? "" : "s", format_ns(r.ttft.p50),
                     format_ns(r.ttft.min), format_ns(r.ttft.max));
  if (r.token_ns.empty()) {
    out += "per token: none (one token a sequence is the first token only)\n";
  } else {
    const LatencyStats& p = r.per_token;
    out += fmt::format(
        "per token ({} step{}): p50 {} [95% {}, {}], p90 {}, p99 {}{}, max {}; {:.1f} tokens/s\n",
        p.n, p.n == 1 ? "" : "s", format_ns(p.p50), format_ns(p.p50_ci.low),
        format_ns(p.p50_ci.high), format_ns(p.p90), format_ns(p.p99),
        p.n < kMinSamplesForP99 ? " (few steps: near the max)" : "", format_ns(p.max),
        r.tokens_per_s);
  }
  out += fmt::format(
      "\nbytes a step must read: weights {} (every matrix once, the tied head's [V, D] included) "
      "+ cached keys and values {} (mean over the steps)\n",
      format_bytes(r.weight_bytes_per_token), format_bytes(r.kv_bytes_per_token));
  if (r.bound_ns > 0 && !r.token_ns.empty()) {
    out += fmt::format(
        "bandwidth limit: {} a token at {:.1f} GB/s ({} triad: where those bytes fit; {} "
        "thread{}, prism machine); p50 is {:.2f}x the limit\n",
        format_ns(r.bound_ns), r.bandwidth_gbps, r.bandwidth_level, r.fingerprint.threads,
        r.fingerprint.threads == 1 ? "" : "s", r.per_token.p50 / r.bound_ns);
  } else if (r.bound_ns <= 0) {
    out += "bandwidth limit: unknown (--no-peak, or the machine's figures are not measured)\n";
  }
  if (!r.step_ops.empty()) {
    double total = 0;
    for (const auto& op : r.step_ops) total += op.self_ns;
    out += fmt::format(
        "\nwhere a step goes ({} profiled steps, per step; GB/s: the op's bytes "
        "from its cost formula over its time):\n",
        r.profiled_steps);
    out += fmt::format("  {:<22} {:>7} {:>11} {:>7} {:>11} {:>8}\n", "op", "calls", "time", "share",
                       "bytes", "GB/s");
    for (size_t i = 0; i < r.step_ops.size() && i < kStepOpRows; ++i) {
      const auto& op = r.step_ops[i];
      out += fmt::format("  {:<22} {:>7.0f} {:>11} {:>6.1f}% {:>11} {:>8.1f}\n", op.name, op.calls,
                         format_ns(op.self_ns), 100 * op.self_ns / total,
                         format_bytes(static_cast<int64_t>(op.bytes)),
                         op.self_ns > 0 ? op.bytes / op.self_ns : 0.0);
    }
    if (r.step_ops.size() > kStepOpRows) {
      out += fmt::format("  ({} more ops)\n", r.step_ops.size() - kStepOpRows);
    }
  }
  out += warnings_section(r.environment);
  return out;
}

nlohmann::ordered_json decode_to_json(const DecodeResult& r) {
  const DecodeOptions& o = r.options;
  nlohmann::ordered_json j;
  j["kind"] = "prism.decode";
  j["model"] = o.model;
  j["options"] = {{"prompt", o.prompt},
                  {"tokens", o.tokens},
                  {"sequences", o.sequences},
                  {"seed", o.seed},
                  {"threads", r.fingerprint.threads}};
  j["cpu"] = r.fingerprint.cpu_model;
  j["parameters"] = r.parameters;
  j["ttft"] = latency_json(r.ttft);
  j["per_token"] = latency_json(r.per_token);
  j["tokens_per_s"] = r.tokens_per_s;
  j["cache_bytes"] = r.cache_bytes;
  j["weight_bytes_per_token"] = r.weight_bytes_per_token;
  j["kv_bytes_per_token"] = r.kv_bytes_per_token;
  j["bandwidth_gbps"] = r.bandwidth_gbps;
  j["bandwidth_level"] = r.bandwidth_level;
  j["bound_ns"] = r.bound_ns;
  j["ttft_ns"] = r.ttft_ns;
  j["token_ns"] = r.token_ns;
  j["first_tokens"] = r.first_tokens;
  j["profiled_steps"] = r.profiled_steps;
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const auto& op : r.step_ops) {
    ops.push_back({{"name", op.name},
                   {"calls", op.calls},
                   {"self_ns", op.self_ns},
                   {"bytes", op.bytes},
                   {"flops", op.flops}});
  }
  j["step_ops"] = ops;
  j["warnings"] = r.environment.warnings;
  return j;
}

}  // namespace prism::analysis
