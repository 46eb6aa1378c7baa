// The `prism` subcommands, as plain functions over plain option structs. main.cpp owns the
// command-line parsing (CLI11) and the mapping of failures to exit codes:
//   0  success
//   1  a run-time error (prism::Error, a file that cannot be written): "prism: error: ..."
//   2  a usage error: a bad flag, an unknown command, a bad value (e.g. --kernel matmul=nosuch)
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/types.h"

namespace prism::analysis::html {
struct ProfileData;  // analysis/html/profile_views.h
}

namespace prism::cli {

// A bad value that only the command itself can judge (an unknown kernel variant, a bad
// PRISM_THREADS). main() reports it like a parse error: message, usage hint, exit 2.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

// `prism --version`: version, compiler, flags, build type, CUDA, OpenMP threads.
std::string version_text();

// `prism ops`: every registered op, its cost formula and its kernel variants.
int run_ops();

// `prism demo`: trains the CNN for a short run under the profiler and writes the reports.
struct DemoOptions {
  int steps = 300;
  int threads = 0;  // 0: PRISM_THREADS, else the OpenMP default
  uint64_t seed = 42;
  std::vector<std::string> kernels;  // "op=variant" (or comma-separated lists of them)
  std::string trace_path = "trace.json";
  std::string json_path = "profile.json";
  std::string report_path = "report.html";
  int rows = 30;  // rows of the op table to print; 0 = all
};
int run_demo(const DemoOptions& opts);

// `prism train MODEL`: trains a zoo model on a data set (cmd_train.cpp).
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
int run_train(const TrainOptions& opts);

// `prism summary MODEL`: per-module shapes, parameters and costs on the meta device.
struct SummaryOptions {
  std::string model;
  std::string input;  // "1x3x224x224"; "" = the model's default input
  int depth = 0;      // 0 = every level
  bool backward = true;
};
int run_summary(const SummaryOptions& opts);

// `prism machine`: peak FLOP/s and memory bandwidth per thread count, cached (cmd_machine.cpp).
struct MachineOptions {
  int threads = 0;       // measure 1..threads; 0 = PRISM_THREADS, else all cores
  bool refresh = false;  // measure even if the cache has this build's figures
  std::string json_path;
  // Measurement settings; giving any of them measures now and does not touch the cache.
  int reps = 0;            // repetitions per figure (default 9)
  double fma_ms = 0;       // length of one FMA repetition in ms (default 50)
  int64_t stream_mib = 0;  // MiB per STREAM array (default 4 x L3, 64 MiB to 1 GiB)
};
int run_machine(const MachineOptions& opts);

// `prism lab OP`: validates and times every kernel variant of an op (cmd_lab.cpp).
struct LabCliOptions {
  std::string op;
  bool list = false;                  // --list: the ops the lab knows
  std::vector<std::string> sizes;     // empty: the op's defaults
  std::vector<std::string> variants;  // empty: all
  std::vector<int> threads{1};        // each variant is timed at every count; the first is the base
  int repetitions = 11;
  double min_sample_ms = 20;
  double max_seconds = 20;
  uint64_t seed = 1;
  bool no_peak = false;        // do not look up (or measure) the machine's peaks
  std::string device = "cpu";  // cpu | cuda (the CUDA variants, checked against the CPU kernel)
  bool counters = false;       // --counters: hardware counters per variant
  std::string json_path;
};
int run_lab(const LabCliOptions& opts);

// `prism bench MODEL`: latency, throughput and memory of a model (cmd_bench.cpp).
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
int run_bench(const BenchCliOptions& opts);

// `prism bench collectives` under mpirun: allreduce time and bandwidth per message size, the
// alpha-beta fit and, with --predict MODEL, the DDP step time at this world size
// (cmd_collectives.cpp; the measurement is nn/dist/collectives_bench.h's).
struct CollectivesCliOptions {
  std::vector<std::string> sizes;  // "4", "64K", "1M"; empty: powers of 4 from 4 B to 64 MiB
  int reps = 20;
  int warmup = 3;
  double timeout_s = 60;  // how long a rank waits for the others before stopping the job
  std::string predict;    // a zoo model: predict its DDP training step
  int64_t batch = 0;      // global batch (0: the model's training default)
  double bucket_mb = -1;  // gradient bucket size in MiB (0: one bucket; unset: kDefaultBucketBytes)
  int64_t block_size = 0;  // transformers: context length (0: 64, as `prism train`)
  double duration_s = 1;   // seconds of timed training steps per measurement
  int threads = 0;
  std::string json_path;
};
int run_collectives(const CollectivesCliOptions& opts);

// `prism models A B ...`: architectures compared on one machine, each model's training step and
// inference call timed interleaved with the others (cmd_models.cpp).
struct ModelsOptions {
  std::vector<std::string> models;  // at least one zoo model
  std::string match;                // "" | params | flops: scale widths to the first model's
  int64_t batch = 32;
  int threads = 0;
  int rounds = 3;         // interleaved rounds (each model once per round, per mode)
  double duration_s = 1;  // seconds of timed calls per model, mode and round
  uint64_t seed = 42;
  int64_t block_size = 0;  // transformers: context length (0: the model's)
  bool no_peak = false;
  std::string json_path;
};
int run_models(const ModelsOptions& opts);

// `prism sweep MODEL --vary NAME=V1,V2,...`: time, throughput, FLOPs and memory as one size
// grows, a power-law fit, its knees, and a prediction checked by measuring (cmd_sweep.cpp).
struct SweepOptions {
  std::string model;
  std::string mode = "train";  // infer | train
  std::string vary;            // "batch=1,2,4,8": batch, seq, width, depth or threads
  int64_t batch = 0;           // the batch when another size varies (0: the model's default)
  int threads = 0;
  int warmup = 3;
  double duration_s = 1;  // seconds of timed calls per point
  int64_t predict = 0;    // > 0: predict time and memory at this size
  bool check = false;     // with --predict: measure it and print the error
  uint64_t seed = 42;
  int64_t image_size = 0;
  int64_t block_size = 0;  // transformers: context length when seq does not vary
  std::vector<std::string> kernels;
  bool no_peak = false;
  std::string json_path;
};
int run_sweep(const SweepOptions& opts);

// `prism report IN.json ...`: profiles as one self-contained HTML page (cmd_report.cpp).
struct ReportOptions {
  std::vector<std::string> inputs;  // profiles (`prism train --profile --json`, `prism demo`)
  std::string output_path = "report.html";
};
int run_report(const ReportOptions& opts);
// The page run_report writes, for profiles already read (analysis/html/profile_views.h) and
// named (a file name): also what `prism train --report` and `prism demo` write.
std::string report_html(const std::vector<std::string>& names,
                        const std::vector<analysis::html::ProfileData>& profiles);

// `prism compare`: two result files, or a model run both ways, interleaved (cmd_compare.cpp).
struct CompareOptions {
  std::vector<std::string> inputs;  // BASE.json CAND.json, or MODEL
  std::string a_flags, b_flags;     // with MODEL: what differs ("--kernel matmul=naive")
  int rounds = 4;
  BenchCliOptions bench;  // with MODEL: the settings both sides share
  int rows = 10;          // rows of the per-op table
  std::string json_path;  // also write the comparison as JSON ("prism.compare")
};
// The --load file one side of `prism compare MODEL` gives in its --a or --b flags ("" for none);
// a UsageError for flags a side may not set (file_roles.cpp lists it among compare's inputs).
std::string compare_side_load(const std::string& flags, const char* which);
int run_compare(const CompareOptions& opts);

// `prism gate`: a regression gate between two results, or the self-gate (cmd_gate.cpp).
struct GateCliOptions {
  std::string base, cand;
  std::string max_p99_increase = "15%";
  std::string max_throughput_drop = "10%";
  std::string max_memory_increase = "5%";
  double max_quality_drop = 0.5;
  std::string max_loss_increase = "1%";
  double max_output_diff = 1e-3;
  std::vector<std::string> exact;
  std::string baselines;  // a directory of committed baselines: check them (or --update)
  bool update = false;
  bool verbose = false;
  std::string json_path;  // --json: the checks and the verdict, for `prism report`
};
// Exit codes: 0 every threshold held, 1 a threshold broke (the verdict), 2 a usage error or an
// input it cannot read (no verdict), kExitGateOutput the verdict was printed but its --json could
// not be written: never 1, which a CI script reads as "the change regressed".
inline constexpr int kExitGateOutput = 3;
int run_gate(const GateCliOptions& opts);

// ---- kernel choices (kernel_choices.cpp) -----------------------------------------------------
// Applies each --kernel value ("op=variant" or a comma-separated list); a bad one is a
// UsageError naming the variants (or ops) that exist.
void apply_kernel_flags(const std::vector<std::string>& specs);
// Reads PRISM_KERNELS (below --kernel in priority); a bad value is a UsageError.
void load_kernel_env();
// "matmul=naive,softmax=naive" for every op not running its default variant (each op once),
// or "defaults (see `prism ops`)".
std::string kernel_summary();

// ---- output files (output_check.cpp) ---------------------------------------------------------
// Throws an Error naming `what` ("trace") and the reason if `path` cannot be written
// (profiler::check_output_path). A checkpoint must be a regular file; a text output may also be
// a device or a FIFO (--json /dev/stdout).
void check_writable(const std::string& path, const char* what, bool regular_file_only = false);
// (That no output is an input or another output is checked once for every command, before it
// runs: cli/file_roles.h.)

// `prism check NAME`: builds an exercise's checker with the learner's file (only that file and
// the checker's main are compiled; the libraries are already built), runs it, and records the
// verdict for `prism course` (cmd_check.cpp; the course on disk: course.h).
struct CheckOptions {
  std::string name;  // "relu", "01_relu" or "01"
  bool quick = false;
  bool no_timing = false;
  int64_t seed = -1;        // -1: the checker's default
  int threads = 0;          // 0: the checker's default (1)
  int runs = 0;             // 0: the checker's default
  int max_seconds = 0;      // 0: the checker's default (a variant's samples at one size)
  bool grade_busy = false;  // grade the speed even when other processes are busy
  // Seconds one step of the checker (a case, the timing) may run before it is stopped and the
  // check fails: a kernel that never returns must not hang `prism check`.
  double time_limit_s = 300;
};
int run_check(const CheckOptions& opts);

// `prism course`: the modules and exercises in course order, the learner's progress on each, and
// what to do next (cmd_course.cpp).
struct CourseOptions {
  std::string json_path;  // also write it as JSON
};
int run_course(const CourseOptions& opts);

// `prism quantize MODEL.safetensors -o MODEL.int8.safetensors`: int8 post-training
// quantization of a trained mlp or cnn (cmd_quantize.cpp, nn/quantized.h).
struct QuantizeOptions {
  std::string model_path;
  std::string output_path;
  std::string model;              // mlp | cnn; "" = from the checkpoint's tensor names
  std::string data;               // "" = the model's default (train_data.h)
  int64_t calibrate = 8;          // calibration batches from the training set
  int64_t batch = 64;             // calibration and evaluation batch size
  std::string method = "minmax";  // minmax | percentile
  double percentile = 99.99;
  int64_t eval_batches = 0;  // 0 = the whole held-out set
  int threads = 0;
  uint64_t seed = 42;
};
int run_quantize(const QuantizeOptions& opts);

// `prism generate MODEL.safetensors --prompt TEXT`: text from a trained character transformer,
// with a KV cache (nn/kv_cache.h) or without; time to first token, per-token latency
// percentiles, tokens/s and cache memory (cmd_generate.cpp).
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
int run_generate(const GenerateOptions& opts);

// ---- models (train_data.cpp) -----------------------------------------------------------------
// A UsageError listing the zoo's models unless `model` names one: checked before any data set
// is loaded, so a typo costs a millisecond, not the loading of a 400 MB data set.
void check_model_name(const std::string& model);
// A UsageError when `--checkpoint value` does not fit `model` (a bad value; a model without
// blocks), before anything is loaded.
void check_checkpoint_flag(const std::string& model, const std::string& value);

// ---- devices (threads.cpp) -------------------------------------------------------------------
// "cpu" or "cuda" (what --device accepts) as a Device. cuda on a machine without a usable GPU
// is an Error that says why (a driver missing, no device, a build without CUDA).
Device device_from_flag(const std::string& name);

// ---- threads (threads.cpp) -------------------------------------------------------------------
// PRISM_THREADS as a thread count; 0 when unset. A value that is not a positive integer is a
// UsageError.
int threads_from_env();
// omp_set_num_threads(n) (a no-op in a build without OpenMP).
void set_threads(int n);
// omp_get_max_threads(): the threads the next parallel region will use (1 without OpenMP).
int max_threads();
// The CPU kernels' split rule from the region costs `prism machine` cached for this build
// (kernels/split_rule.h); the reference rule when nothing is cached. Reads the cache, never
// measures; a corrupt cache is a warning on stderr.
void install_split_rule();

}  // namespace prism::cli
