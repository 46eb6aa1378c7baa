// The `prism bench` flags that `bench MODEL` and `compare MODEL` share: the options struct, the
// flags (defined once, so both commands take them with the same text and checks) and their
// mapping to analysis::BenchOptions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/model_bench.h"
#include "cli/commands.h"

namespace CLI {
class App;
}

namespace prism::cli {

// `prism bench MODEL`'s flags (cmd_bench.cpp declares those of bench alone); `compare MODEL` takes
// the ones both share and runs each side as a bench.
struct BenchCliOptions {
  std::string model;
  std::string mode = "infer";    // infer | train | decode (bench only)
  std::vector<int64_t> batches;  // empty: 1,8,64
  int threads = 0;
  int warmup = 5;
  double duration_s = 2;
  int64_t iters = 0;
  std::vector<std::string> kernels;
  std::string device = "cpu";
  uint64_t seed = 42;
  int64_t image_size = 0;   // image models: square input size (0: the model's)
  int64_t block_size = 0;   // transformers: context length (0: the model's)
  bool rope = false;        // transformers: rotary position embeddings, no wpe
  std::string data;         // "": synthetic inputs; else a data set as `train --data` takes
  std::vector<double> qps;  // the server scenario's rates
  int max_batch = 8;
  double max_wait_ms = 2;
  double slo_ms = 0;
  bool no_peak = false;
  bool counters = false;   // --counters: hardware counters per op in the profiled window
  bool model_off = false;  // --model-off: the input pipeline alone, the model replaced
  std::string json_path;
  std::string precision = "fp32";  // --precision: fp32 | bf16 | int8 (int8: infer only)
  std::string load_path;   // --load: fp32 weights (train --save) or, with int8, quantize's output
  std::string checkpoint;  // --checkpoint: "" | blocks | every-N (train only)
  int64_t prompt_tokens = 0;  // --prompt-tokens (decode; 0: 64)
  int64_t new_tokens = 0;     // --tokens (decode; 0: 64)
};

// Declares the shared flags on `cmd` (bench's or compare's); `with_json`: --json writes the bench
// result (compare writes its own). The --batch help names the default that `o` holds.
void add_shared_bench_options(CLI::App& cmd, BenchCliOptions& o, bool with_json);

// Maps the flags; an unknown mode or device is a UsageError. Kernel choices and the thread
// count are process settings the caller applies.
analysis::BenchOptions bench_options(const BenchCliOptions& o);

}  // namespace prism::cli
