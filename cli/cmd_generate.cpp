// `prism generate MODEL.safetensors --prompt TEXT`: continues a prompt with a trained character
// transformer and measures the decoding, with a KV cache (nn/kv_cache.h), without one, or both
// (--compare).
//
// What is measured, per way (nn/models/gpt_decoder.h runs both under one window policy):
//   time to first token  the prompt's prefill (one forward over the prompt) and the first
//                        sample: what a user waits before any text appears
//   per-token latency    each later token: one decoding step and a sample; p50 / p95 / p99 by
//                        profiler::stats::quantile. With the cache a step costs O(t) (one new
//                        row per layer, one query against t cached keys); without it O(t^2)
//                        (the whole window again), t the context so far.
//   tokens/s             all generated tokens over the whole time, prefill included
//   KV-cache memory      the memory tracker's kv_cache role while decoding (0 without cache)
// One untimed forward over the prompt runs first, so OpenMP start-up and first-touch page
// faults are billed to neither way. At the context limit the window slides by half and is
// recomputed (see gpt_decoder.h); the count of slides is printed.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/command.h"
#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/options.h"
#include "nn/models/gpt_checkpoint.h"
#include "nn/models/gpt_decoder.h"
#include "profiler/clock.h"
#include "profiler/memory.h"
#include "profiler/statistics.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"

namespace prism::cli {

namespace {

// The flags, as add_options (below) declares them.
struct GenerateOptions {
  std::string model_path;  // `prism train transformer --save` output
  std::string prompt;
  int64_t tokens = 200;      // new tokens
  double temperature = 0.8;  // 0 = greedy argmax
  int64_t top_k = 0;         // 0 = every token
  uint64_t seed = 42;
  bool no_cache = false;  // recompute the whole window every token
  bool compare = false;   // both ways, side by side
  int64_t block = 0;      // context; 0 = the model's block_size
  int threads = 0;
};

struct Run {
  std::string text;  // generated characters only
  double ttft_ms = 0;
  std::vector<double> step_ms;  // tokens 2..N
  double total_ms = 0;
  int64_t cache_bytes = 0;
  int64_t slides = 0;
};

int64_t kv_cache_live_bytes() {
  return profiler::memory_stats(0).live_by_role[static_cast<size_t>(MemRole::kv_cache)];
}

Run decode(nn::GPT& model, const nn::data::Vocabulary& vocab, const std::vector<int64_t>& prompt,
           const GenerateOptions& o, int64_t context, bool cached) {
  nn::GptDecoder dec(model, context, cached);
  Generator gen(o.seed);
  Run r;
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(o.tokens));
  const int64_t t0 = profiler::now_ns();
  // Each token drawn with its step named, should the model's output not be finite.
  auto draw = [&](const std::vector<double>& logits) {
    try {
      return nn::sample_token(logits, o.temperature, o.top_k, gen);
    } catch (const Error& e) {
      throw Error("generate: token " + std::to_string(out.size() + 1) + " of " +
                  std::to_string(o.tokens) + (cached ? "" : " (uncached)") + ": " + e.what());
    }
  };
  std::vector<double> logits = dec.start(prompt);
  out.push_back(draw(logits));
  int64_t last = profiler::now_ns();
  r.ttft_ms = static_cast<double>(last - t0) * 1e-6;
  r.cache_bytes = kv_cache_live_bytes();
  for (int64_t i = 1; i < o.tokens; ++i) {
    logits = dec.push(out.back());
    out.push_back(draw(logits));
    const int64_t now = profiler::now_ns();
    r.step_ms.push_back(static_cast<double>(now - last) * 1e-6);
    last = now;
  }
  r.total_ms = static_cast<double>(last - t0) * 1e-6;
  r.slides = dec.slides();
  r.text = vocab.decode(out);
  return r;
}

std::string quantile_ms(const std::vector<double>& ms, double q) {
  if (ms.empty()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", profiler::stats::quantile(ms, q));
  return buf;
}

std::string fmt_ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}

std::string fmt_bytes(int64_t b) {
  char buf[48];
  if (b >= (int64_t{1} << 20))
    std::snprintf(buf, sizeof buf, "%lld (%.2f MiB)", static_cast<long long>(b),
                  static_cast<double>(b) / (1 << 20));
  else
    std::snprintf(buf, sizeof buf, "%lld (%.1f KiB)", static_cast<long long>(b),
                  static_cast<double>(b) / 1024);
  return buf;
}

int run_generate(const GenerateOptions& o) {
  // Every check before any work: the flags, the file, the prompt.
  if (!(o.temperature >= 0)) {
    throw UsageError("--temperature must be >= 0 (0 is greedy), got " +
                     std::to_string(o.temperature));
  }
  if (o.tokens < 1) throw UsageError("--tokens must be at least 1");
  if (o.no_cache && o.compare) {
    throw UsageError("--no-cache and --compare exclude each other (--compare runs both ways)");
  }
  if (o.prompt.empty()) throw UsageError("--prompt needs at least one character");
  if (o.threads > 0) set_threads(o.threads);

  nn::TextModel tm;
  try {
    tm = nn::load_text_model(o.model_path);
  } catch (const Error& e) {
    throw Error(std::string("generate: ") + e.what());
  }
  nn::GPT& model = *tm.model;
  const nn::GPTConfig& c = model.config();
  for (size_t i = 0; i < o.prompt.size(); ++i) {
    const auto ch = static_cast<unsigned char>(o.prompt[i]);
    if (!tm.vocab.contains(ch)) {
      char shown[16];
      std::snprintf(shown, sizeof shown, ch >= 32 && ch < 127 ? "'%c'" : "byte 0x%02x", ch);
      throw UsageError(std::string("--prompt: character ") + shown + " at position " +
                       std::to_string(i) + " is not in the model's vocabulary of " +
                       std::to_string(tm.vocab.size()) + " characters");
    }
  }
  const int64_t context = o.block == 0 ? c.block_size : o.block;
  if (context > c.block_size) {
    throw UsageError("--block " + std::to_string(o.block) + " exceeds the model's context " +
                     std::to_string(c.block_size) + " (its position table has no row beyond; " +
                     "train with a larger --block)");
  }
  const std::vector<int64_t> prompt = tm.vocab.encode(o.prompt);

  std::printf("model: %s, %lld parameters (%s)\n", o.model_path.c_str(),
              static_cast<long long>(model.parameter_count()), model.extra_repr().c_str());
  std::printf(
      "prompt %zu characters%s; %lld tokens, context %lld, temperature %g, top-k %s, seed %llu, "
      "%d thread%s\n",
      prompt.size(),
      static_cast<int64_t>(prompt.size()) > context ? " (cropped to the context)" : "",
      static_cast<long long>(o.tokens), static_cast<long long>(context), o.temperature,
      o.top_k == 0 ? "all" : std::to_string(o.top_k).c_str(),
      static_cast<unsigned long long>(o.seed), max_threads(), max_threads() == 1 ? "" : "s");
  std::printf(
      "context limit: when the window holds %lld tokens it slides by half (keeps the newest "
      "%lld) and recomputes them\n\n",
      static_cast<long long>(context), static_cast<long long>(std::max<int64_t>(1, context / 2)));

  {  // warm-up, untimed (see the header)
    NoGrad no_grad;
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(prompt.size()), context);
    const std::vector<int64_t> tail(prompt.end() - n, prompt.end());
    model(from_vector(tail, {1, n}));
  }

  std::vector<std::pair<std::string, Run>> runs;
  if (!o.no_cache) runs.emplace_back("cached", decode(model, tm.vocab, prompt, o, context, true));
  if (o.no_cache || o.compare) {
    runs.emplace_back("uncached", decode(model, tm.vocab, prompt, o, context, false));
  }

  std::printf("%s%s\n\n", o.prompt.c_str(), runs.front().second.text.c_str());
  if (runs.size() == 2) {
    const bool same = runs[0].second.text == runs[1].second.text;
    std::printf("texts with and without the cache: %s\n\n",
                same ? "identical" : "DIFFERENT (float rounding moved a sample)");
  }

  auto row = [&](const char* name, auto cell) {
    std::printf("%-22s", name);
    for (const auto& [label, r] : runs) std::printf("%20s", cell(r).c_str());
    std::printf("\n");
  };
  std::printf("%-22s", "");
  for (const auto& [label, r] : runs) std::printf("%20s", label.c_str());
  std::printf("\n");
  row("time to first token", [](const Run& r) { return fmt_ms(r.ttft_ms); });
  row("per-token p50", [](const Run& r) { return quantile_ms(r.step_ms, 0.50); });
  row("per-token p95", [](const Run& r) { return quantile_ms(r.step_ms, 0.95); });
  row("per-token p99", [](const Run& r) { return quantile_ms(r.step_ms, 0.99); });
  row("tokens/s", [&](const Run& r) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(o.tokens) / (r.total_ms * 1e-3));
    return std::string(buf);
  });
  row("KV-cache memory (B)", [](const Run& r) { return fmt_bytes(r.cache_bytes); });
  row("window slides", [](const Run& r) { return std::to_string(r.slides); });
  if (runs.size() == 2) {
    const double speedup = runs[1].second.total_ms / runs[0].second.total_ms;
    std::printf("\nthe cache is %.2fx faster over the whole generation\n", speedup);
  }
  return 0;
}

void add_options(CLI::App& cmd, GenerateOptions& o) {
  cmd.add_option("model_file", o.model_path,
                 "a character transformer (prism train transformer --save FILE)")
      ->required();
  cmd.add_option("--prompt", o.prompt,
                 "the text to continue (characters of the model's vocabulary)")
      ->required();
  cmd.add_option("--tokens", o.tokens, "new tokens to generate, 1 to 100000 (default 200)")
      ->check(whole_number(1, 100'000));
  cmd.add_option("--temperature", o.temperature, "softmax temperature; 0 = greedy (default 0.8)")
      ->check(number_in(0, 1000));
  cmd.add_option("--top-k", o.top_k, "sample among the k most likely tokens (default all)")
      ->check(whole_number(0, 1'000'000));
  cmd.add_option("--seed", o.seed, "seed of the sampling (default 42)")->check(seed_number());
  cmd.add_flag("--no-cache", o.no_cache, "no KV cache: recompute the whole context every token");
  cmd.add_flag("--compare", o.compare, "run with and without the KV cache, side by side");
  cmd.add_option("--block", o.block, "context length, at most the model's (default the model's)")
      ->check(whole_number(1, 1'000'000));
  cmd.add_option("--threads", o.threads, "OpenMP threads (default: PRISM_THREADS, else all cores)")
      ->check(whole_number(1, 1024));
}

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<GenerateOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_generate(*o); },
          .files = [o](CommandFiles& f) { f.input("model_file", o->model_path); }};
}

const RegisteredCommand registered(
    {.order = 1600,
     .name = "generate",
     .help = "text from a trained character transformer, with and without a KV cache",
     .runs_kernels = true,
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
