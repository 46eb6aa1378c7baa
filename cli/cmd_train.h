// `prism train MODEL`'s options, shared by the files the command is split into (cmd_train.cpp:
// the flags, the set-up; train_steps.cpp, train_report.cpp, train_ddp.cpp) and by `prism demo`,
// which is `prism train cnn` with the profile on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace prism::cli {

// `prism train`'s flags (cmd_train.cpp declares them).
struct TrainOptions {
  std::string model;
  std::string data;  // "" = the model's default (see train_data.h)
  int epochs = 1;
  int64_t steps = 0;                // > 0 overrides epochs
  int64_t batch = 0;                // 0 = the model's default
  double lr = 0;                    // 0 = the model's default
  std::string optimizer;            // sgd | adam | adamw, "" = the model's default
  std::string schedule = "cosine";  // cosine (to lr/100 over the run) | none
  int64_t block_size = 0;           // transformers: context length (default 64)
  bool rope = false;                // transformers: rotary position embeddings, no wpe
  int threads = 0;
  std::string device = "cpu";  // cpu | cuda
  uint64_t seed = 42;
  std::vector<std::string> kernels;
  bool profile = false;
  int64_t profile_warmup = 5;   // steps before the profiled window
  int64_t profile_steps = 20;   // steps in the profiled window
  bool prefetch = true;         // prepare the next batch on a background thread
  int64_t eval_batches = 1000;  // held-out batches evaluated at the end (at most)
  std::string trace_path;
  std::string json_path;
  std::string report_path;  // --report; "" with a --trace: report.html beside the trace
  std::string save_path;
  std::string load_path;
  bool allow_non_finite = false;  // --load/--save accept NaN/Inf weights
  bool counters = false;          // --counters: hardware counters per op in the profile
  int rows = 30;
  std::string precision = "fp32";  // --precision: fp32 | bf16 (autocast, fp32 master weights)
  std::string checkpoint;          // --checkpoint: "" | blocks | every-N (recompute activations)
  // --ddp (cli/train_ddp.h): data-parallel training under mpirun; --batch is the global batch.
  bool ddp = false;
  double bucket_mb = 1;      // --bucket-mb: gradient bucket size, MiB (0 = one bucket)
  bool no_overlap = false;   // --no-overlap: allreduce after backward, not during it
  int64_t check_every = 50;  // --check-every: steps between weight checksums across ranks
  double ddp_timeout = 60;   // --ddp-timeout: seconds before a silent rank stops the job
};
// Trains the model (cmd_train.cpp).
int run_train(const TrainOptions& opts);

}  // namespace prism::cli
