// `prism bench MODEL --mode decode`: a language model generating text one token at a time with
// a KV cache, at batch 1, as a chat user would wait for it.
//
// What is measured (random weights from the seed, random prompt ids; no tokenizer needed):
//   time to first token  the prompt's prefill (one forward over its tokens, the head on the last
//                        position only) and the choice of the first token
//   per-token latency    each later token: one decoding step (one new row through every layer,
//                        one query against the cached keys) and the greedy choice
//   tokens/s             generated tokens over the time after the first token
//   KV-cache bytes       the cache the sequence needs (2 x layers x (prompt + tokens) x D floats)
//
// The limit a decoding step cannot beat. At batch 1 every weight is read once per token and
// does one multiply-add per read (2 FLOPs per 4 bytes), so a step is memory-bound: its floor is
// the bytes it must read over the machine's measured bandwidth,
//   bound = (weight bytes read per token + mean KV-cache bytes read per token) / bandwidth,
// with the weights counted as the step reads them: every matrix, the LM head's [V, D] (the tied
// token embedding read whole), one row of each embedding table. The bandwidth is `prism
// machine`'s triad at the run's thread count, of the cache level whose measured working set holds
// those bytes (a small model's weights stay in cache from token to token), else of DRAM (GPT-2
// small's 0.5 GB).
// The report prints the measured p50 beside the bound and their ratio.
//
// One sequence of prompt + tokens is run untimed first (OpenMP start-up, first-touch page
// faults, the allocator's cache); then `sequences` timed ones, each from a fresh cache; then a
// few steps with the profiler on, for the table of where a step's time goes (each op's bytes
// from its cost formula over its time: how close each one streams to the bandwidth).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/environment.h"
#include "analysis/latency.h"
#include "nn/models/zoo.h"

namespace prism::analysis {

struct DecodeOptions {
  std::string model;      // a GPT of the zoo (nn::is_language_model)
  int64_t prompt = 64;    // prompt tokens, >= 1
  int64_t tokens = 64;    // generated tokens per sequence, >= 1; prompt + tokens <= block
  int64_t sequences = 3;  // timed sequences, >= 1
  uint64_t seed = 42;     // weights and prompt ids
  bool peak = true;       // look up (or measure, once) the machine's bandwidth for the bound
  bool check_environment = true;
  nn::ModelOptions model_options;  // block_size: the context (default the model's)
};

struct DecodeResult {
  DecodeOptions options;
  Fingerprint fingerprint;
  Environment environment;
  int64_t parameters = 0;
  std::vector<double> ttft_ns;         // one per timed sequence
  std::vector<double> token_ns;        // every later token of every timed sequence, in order
  LatencyStats ttft, per_token;        // of the two above
  double tokens_per_s = 0;             // 1e9 / mean per-token time
  int64_t cache_bytes = 0;             // the KV cache of one sequence (allocated, max length)
  int64_t weight_bytes_per_token = 0;  // read by one decoding step (see the header)
  int64_t kv_bytes_per_token = 0;      // cached keys and values read, mean over the tokens
  std::string bandwidth_level;  // the level whose measured set holds those bytes: "L3", "DRAM"
  double bandwidth_gbps = 0;    // its triad bandwidth; 0: unknown (--no-peak, ...)
  double bound_ns = 0;          // (weight + kv bytes) / bandwidth; 0 when unknown
  std::vector<int64_t> first_tokens;  // the first sequence's generated ids (a quality probe)
  // Where one decoding step goes: the ops of `profiled_steps` steps (after the timed ones, the
  // profiler on), per step, largest self time first.
  struct StepOp {
    std::string name;
    double calls = 0, self_ns = 0, bytes = 0, flops = 0;
  };
  int64_t profiled_steps = 0;
  std::vector<StepOp> step_ops;
};

// Throws prism::Error naming the problem (a model that is not a GPT, sizes out of range, a
// prompt + tokens longer than the context) before any model is built.
void check_decode_options(const DecodeOptions& options);
// Runs it; the caller sets the thread count first.
DecodeResult run_decode_bench(const DecodeOptions& options);
std::string format_decode(const DecodeResult& r);
nlohmann::ordered_json decode_to_json(const DecodeResult& r);

}  // namespace prism::analysis
