// The `prism` command line (CLI11): every command, its options and their validators, parsed
// into a CommandLine without running anything (see parse.h). main.cpp runs the chosen command;
// tests/fuzz/fuzz_cli.cpp fuzzes this parse. The add_*_options functions define each command's
// flags.
#include "cli/parse.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace prism::cli {

namespace {

constexpr int kExitUsage = 2;

// Validators with messages that say what is expected (CLI11's Range says "not in range" for
// "abc"). CLI11 puts the option name in front: "--steps: expected a whole number ...".
CLI::Validator whole_number(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        size_t used = 0;
        long long v = 0;
        try {
          v = std::stoll(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != s.size() || v < lo || v > hi) {
          return fmt::format("expected a whole number from {} to {}, got '{}'", lo, hi, s);
        }
        return "";
      },
      "");  // the range is in the option's help text
}

// Whole numbers from `lo` to `hi`, comma-separated and distinct ("1,2,4"): the whole list is
// checked at once, since a repeated count is an error only beside the others.
CLI::Validator distinct_whole_numbers(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        const std::string expected = fmt::format(
            "expected distinct whole numbers from {} to {}, comma-separated, got '{}'", lo, hi, s);
        std::vector<long long> seen;
        std::string::size_type start = 0;
        while (true) {
          const auto comma = s.find(',', start);
          std::string item = s.substr(start, comma - start);
          if (!whole_number(lo, hi)(item).empty()) {
            return expected + (s.find(',') == std::string::npos ? "" : " ('" + item + "')");
          }
          const long long v = std::stoll(item);
          if (std::find(seen.begin(), seen.end(), v) != seen.end()) {
            return expected + " (" + item + " twice)";
          }
          seen.push_back(v);
          if (comma == std::string::npos) return "";
          start = comma + 1;
        }
      },
      "");
}

// "1,2,4", already checked by distinct_whole_numbers, as numbers.
std::vector<int> int_list(const std::string& s) {
  std::vector<int> out;
  std::istringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoi(item));
  return out;
}

// The whole of `s` as a finite number; nullopt for anything else ("abc", "1x", "nan", "inf",
// "1e400").
std::optional<double> finite_number(const std::string& s) {
  // strtod, not stod: stod throws on a value that underflows (1e-320, a denormal, is a number in
  // range) as it does on one that overflows (1e400 comes back infinite here).
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// A positive finite number, at most `hi` (a learning rate past float32's largest value makes
// the first update infinite; a duration past 1e6 s overflows the nanosecond clock's arithmetic).
CLI::Validator positive_number(double hi, bool allow_zero = false) {
  return CLI::Validator(
      [hi, allow_zero](std::string& s) -> std::string {
        const std::optional<double> v = finite_number(s);
        if (!v || !(*v > 0 || (allow_zero && *v == 0))) {
          if (allow_zero) return fmt::format("expected a number >= 0, got '{}'", s);
          return fmt::format("expected a positive number, got '{}'", s);
        }
        if (*v > hi) return fmt::format("expected a positive number up to {:g}, got '{}'", hi, s);
        return "";
      },
      "");
}

// A finite number from `lo` to `hi`: NaN and infinities are refused (CLI11's Range and
// NonNegativeNumber let "nan" through, every comparison with it being false, and print a bound
// of DBL_MAX as a 300-digit number).
CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        const std::optional<double> v = finite_number(s);
        if (!v || *v < lo || *v > hi) {
          return fmt::format("expected a number from {:g} to {:g}, got '{}'", lo, hi, s);
        }
        return "";
      },
      "");
}

// A seed: every command takes the same ones, 0 to 2^62 (the exercise checker's range, which
// `prism check` passes on), so a seed that works for one works for all.
constexpr long long kMaxSeed = 1LL << 62;
CLI::Validator seed_number() {
  return whole_number(0, kMaxSeed);
}

// A file or directory name: an empty one ("--save ''", or an unset shell variable) is an error,
// not a silent "no output".
CLI::Validator file_name() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return s.empty() ? std::string("expected a file name, got an empty string") : "";
      },
      "");
}

void add_demo_options(CLI::App& cmd, DemoOptions& o) {
  cmd.add_option("--steps", o.steps, "training steps (batches of 64), 1 to 100000")
      ->check(whole_number(1, 100'000))
      ->capture_default_str();
  cmd.add_option("--threads", o.threads,
                 "OpenMP threads, 1 to 1024 (default: PRISM_THREADS, else all cores)")
      ->check(whole_number(1, 1024));
  cmd.add_option("--seed", o.seed, "seed for the data set and the initial weights")
      ->check(seed_number())
      ->capture_default_str();
  cmd.add_option("--kernel", o.kernels,
                 "run a kernel variant for an op, e.g. matmul=naive (repeat the flag for more "
                 "ops; `prism ops` lists them)")
      ->type_name("OP=VARIANT")
      ->allow_extra_args(false);  // one value per --kernel, so a stray word is an error
  cmd.add_option("--trace", o.trace_path, "where to write the Chrome/Perfetto trace")
      ->type_name("FILE")
      ->check(file_name())
      ->capture_default_str();
  cmd.add_option("--json", o.json_path, "where to write the JSON profile")
      ->type_name("FILE")
      ->check(file_name())
      ->capture_default_str();
  cmd.add_option("--report", o.report_path, "where to write the HTML report of the profile")
      ->type_name("FILE")
      ->check(file_name())
      ->capture_default_str();
  cmd.add_option("--rows", o.rows, "rows of the op table to print (0 = all)")
      ->check(whole_number(0, 1'000'000))
      ->capture_default_str();
}

void add_rope(CLI::App& cmd, bool& rope) {
  cmd.add_flag("--rope", rope,
               "transformers: rotary position embeddings in every attention layer, no learned "
               "position table");
}

void add_train_options(CLI::App& cmd, TrainOptions& o) {
  cmd.add_option(
         "model", o.model,
         "model to train: mlp, cnn, transformer, resnet18, ... (see `prism summary --help`)")
      ->required();
  cmd.add_option(
         "--data", o.data,
         "fashion-mnist, shapes, spirals, text, a directory of MNIST-format files or a "
         "text file (default: fashion-mnist if installed, else shapes; text for transformers)")
      ->type_name("NAME|PATH");
  cmd.add_option("--epochs", o.epochs, "passes over the training set")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd.add_option("--steps", o.steps, "training steps (overrides --epochs)")
      ->check(whole_number(1, 100'000'000));
  cmd.add_option("--batch", o.batch, "batch size (default: 128 mlp, 64 cnn/resnet, 32 transformer)")
      ->check(whole_number(1, 1'000'000));
  cmd.add_option("--lr", o.lr, "learning rate (default per model)")
      ->check(positive_number(3.4e38));  // float32's largest value
  cmd.add_option("--optimizer", o.optimizer, "sgd (momentum 0.9), adam or adamw")
      ->check(CLI::IsMember({"sgd", "adam", "adamw"}));
  cmd.add_option("--schedule", o.schedule, "learning-rate schedule: cosine (to lr/100) or none")
      ->check(CLI::IsMember({"cosine", "none"}))
      ->capture_default_str();
  cmd.add_option("--block", o.block_size, "transformer context length (default 64)")
      ->check(whole_number(1, 1'000'000));
  add_rope(cmd, o.rope);
  cmd.add_option("--threads", o.threads, "OpenMP threads (default: PRISM_THREADS, else all cores)")
      ->check(whole_number(1, 1024));
  cmd.add_option("--device", o.device, "where the model trains: cpu, or cuda (needs a GPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "seed for data order and initial weights")
      ->check(seed_number())
      ->capture_default_str();
  cmd.add_option("--kernel", o.kernels, "run a kernel variant for an op, e.g. matmul=naive")
      ->type_name("OP=VARIANT")
      ->allow_extra_args(false);
  cmd.add_flag("--profile", o.profile, "profile a window of steps: op table and module tree");
  cmd.add_option("--profile-steps", o.profile_steps, "steps in the profiled window")
      ->check(whole_number(1, 100'000))
      ->capture_default_str();
  cmd.add_option("--trace", o.trace_path, "write the profiled window's trace (implies --profile)")
      ->type_name("FILE")
      ->check(file_name());
  cmd.add_option("--json", o.json_path,
                 "write the profile and a train summary as JSON (implies --profile)")
      ->type_name("FILE")
      ->check(file_name());
  cmd.add_option("--report", o.report_path,
                 "write the profile as a self-contained HTML page (implies --profile; with "
                 "--trace and no --report: report.html beside the trace)")
      ->type_name("FILE")
      ->check(file_name());
  cmd.add_option("--save", o.save_path, "save the trained weights (safetensors)")
      ->type_name("FILE")
      ->check(file_name());
  cmd.add_option("--load", o.load_path, "start from saved weights (safetensors)")
      ->type_name("FILE")
      ->check(file_name());
  cmd.add_option("--precision", o.precision,
                 "fp32, or bf16: matmuls and convolutions in bfloat16 with fp32 master weights")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v == "int8") {
              return "int8 is for inference only (rounded weights have no gradient): train in "
                     "fp32 or bf16, then `prism quantize` the checkpoint";
            }
            return v == "fp32" || v == "bf16" ? "" : v + " not in {fp32,bf16}";
          },
          "fp32|bf16"))
      ->capture_default_str();
  cmd.add_option("--checkpoint", o.checkpoint,
                 "recompute activations in backward instead of keeping them: blocks (every "
                 "transformer or residual block) or every-N (every N-th block)")
      ->type_name("blocks|every-N");
  cmd.add_flag("--counters", o.counters,
               "hardware counters per op (cycles, instructions, cache and branch misses) in the "
               "profile, where the machine allows them, on the calling thread only (not OpenMP "
               "workers: --threads 1 for exact figures; implies --profile)");
  cmd.add_flag("--allow-non-finite", o.allow_non_finite,
               "let --load and --save accept weights holding NaN or Inf (to inspect a diverged "
               "run; training still stops at the first non-finite loss or gradient)");
  cmd.add_option("--rows", o.rows, "rows of the op table to print (0 = all)")
      ->check(whole_number(0, 1'000'000))
      ->capture_default_str();
  // Data parallelism (nn/dist/ddp.h): under `mpirun -np N`, --batch is the global batch.
  cmd.add_flag("--ddp", o.ddp,
               "data-parallel training under an MPI launcher (mpirun -np N prism train MODEL "
               "--ddp): each rank trains on 1/N of every global batch (--batch), gradients are "
               "averaged by allreduce; rank 0 prints, evaluates and saves");
  cmd.add_option("--bucket-mb", o.bucket_mb,
                 "--ddp: gradient bucket size in MiB (0 = one bucket for all gradients)")
      ->check(positive_number(1e6, /*allow_zero=*/true))
      ->capture_default_str();
  cmd.add_flag("--no-overlap", o.no_overlap,
               "--ddp: start the allreduces after backward instead of during it");
  cmd.add_option("--check-every", o.check_every,
                 "--ddp: compare a checksum of the weights across ranks every K steps")
      ->check(whole_number(1, 100'000'000))
      ->capture_default_str();
  cmd.add_option("--ddp-timeout", o.ddp_timeout,
                 "--ddp: seconds to wait for the other ranks before stopping every rank")
      ->check(positive_number(86400))
      ->capture_default_str();
}

void add_summary_options(CLI::App& cmd, SummaryOptions& o) {
  cmd.add_option("model", o.model,
                 "mlp, cnn, transformer, resnet18, resnet34, resnet50, gpt2-small, gpt2-medium")
      ->required();
  cmd.add_option("--input", o.input, "input shape, e.g. 1x3x224x224 (default: the model's)")
      ->type_name("NxCxHxW");
  cmd.add_option("--depth", o.depth, "module levels to show (0 = all)")
      ->check(whole_number(0, 100));
}

void add_lab_options(CLI::App& cmd, LabCliOptions& o) {
  cmd.add_option("op", o.op, "the op whose variants to compare, e.g. matmul (see --list)");
  cmd.add_flag("--list", o.list, "list the ops the lab knows, their sizes and variants");
  cmd.add_option("--sizes", o.sizes,
                 "sizes to time, comma-separated, e.g. 256,512,1024 or 128x784x256:nt "
                 "(default: the op's own; --list shows the syntax)")
      ->delimiter(',')
      ->type_name("SIZE,...");
  cmd.add_option("--variants", o.variants, "variants to compare (default: all registered)")
      ->delimiter(',')
      ->type_name("NAME,...");
  // One string checked as a whole (not CLI11's per-element delimiter) so duplicates are caught.
  cmd.add_option_function<std::string>(
         "--threads", [&o](const std::string& s) { o.threads = int_list(s); },
         "OpenMP threads for every variant, 1 to 1024; several, comma-separated (e.g. 1,2,4), "
         "time each variant at each count and give its speed-up over the first")
      ->check(distinct_whole_numbers(1, 1024))
      ->type_name("N,...")
      ->default_str("1");
  cmd.add_option("--reps", o.repetitions, "timed samples per variant and size, 1 to 1000")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd.add_option("--min-sample-ms", o.min_sample_ms, "shortest duration of one sample")
      ->check(positive_number(1e6))
      ->capture_default_str();
  cmd.add_option("--max-seconds", o.max_seconds,
                 "skip timing a variant whose samples would take longer than this")
      ->check(positive_number(1e6))
      ->capture_default_str();
  cmd.add_option("--seed", o.seed, "seed for the random inputs")
      ->check(seed_number())
      ->capture_default_str();
  cmd.add_flag("--no-peak", o.no_peak, "do not look up or measure the machine's peaks");
  cmd.add_option("--device", o.device,
                 "cpu, or cuda: time the CUDA variants, each checked against the CPU kernel "
                 "(needs a GPU; with --list, shows the CUDA variants)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd.add_flag("--counters", o.counters,
               "hardware counters per variant (cycles, instructions, cache and branch misses), "
               "where the machine allows them, on the calling thread only (not OpenMP workers)");
  cmd.add_option("--json", o.json_path, "write one row per variant and size as JSON")
      ->type_name("FILE")
      ->check(file_name());
}

void add_machine_options(CLI::App& cmd, MachineOptions& o) {
  cmd.add_option("--threads", o.threads,
                 "measure with 1 to N threads, N from 1 to 1024 (default: PRISM_THREADS, else "
                 "all cores)")
      ->check(whole_number(1, 1024));
  cmd.add_flag("--refresh", o.refresh, "measure again even if this build's figures are cached");
  cmd.add_option("--json", o.json_path, "also write the figures as JSON")
      ->type_name("FILE")
      ->check(file_name());
  cmd.add_option("--reps", o.reps, "repetitions of each figure, 1 to 1000 (default 9; not cached)")
      ->check(whole_number(1, 1000));
  cmd.add_option("--fma-ms", o.fma_ms,
                 "length of one FMA repetition in ms (default 50; not cached)")
      ->check(positive_number(1e6));
  cmd.add_option("--stream-mib", o.stream_mib,
                 "MiB per STREAM array, 1 to 65536 (default 4 x L3; not cached)")
      ->check(whole_number(1, 65536));
}

// Options several model commands share, each defined once: the same flag, text and checks
// in bench, compare, models and sweep.
void add_model_threads(CLI::App& cmd, int& threads) {
  cmd.add_option("--threads", threads, "OpenMP threads (default: PRISM_THREADS, else all cores)")
      ->check(whole_number(1, 1024));
}
void add_model_seed(CLI::App& cmd, uint64_t& seed) {
  cmd.add_option("--seed", seed, "seed for the weights and the synthetic inputs")
      ->check(seed_number())
      ->capture_default_str();
}
void add_image_size(CLI::App& cmd, int64_t& image_size) {
  cmd.add_option("--image-size", image_size,
                 "image models: square input size (default the model's)")
      ->check(whole_number(1, 4096));
}
void add_block(CLI::App& cmd, int64_t& block_size) {
  cmd.add_option("--block", block_size, "transformers: context length (default the model's)")
      ->check(whole_number(1, 1'000'000));
}
void add_kernel(CLI::App& cmd, std::vector<std::string>& kernels) {
  cmd.add_option("--kernel", kernels, "run a kernel variant for an op, e.g. matmul=naive")
      ->type_name("OP=VARIANT")
      ->allow_extra_args(false);
}
void add_no_peak(CLI::App& cmd, bool& no_peak) {
  cmd.add_flag("--no-peak", no_peak, "do not look up or measure the machine's peak FLOP/s");
}

void add_shared_bench_options(CLI::App& cmd, BenchCliOptions& o, bool with_json) {
  cmd.add_option("--mode", o.mode,
                 "infer (forward, eval mode, no grad), train (full steps), or decode (bench, "
                 "language models: KV-cache generation at batch 1)")
      ->check(CLI::IsMember({"infer", "train", "decode"}))
      ->capture_default_str();
  cmd.add_option("--batch", o.batches,
                 o.batches.empty() ? "batch sizes, comma-separated (default 1,8,64)"
                                   : "batch sizes, comma-separated (default 1,64)")
      ->delimiter(',')
      ->check(whole_number(1, 1'000'000))
      ->type_name("N,...");
  add_model_threads(cmd, o.threads);
  cmd.add_option("--warmup", o.warmup, "warm calls after the cold one, before timing")
      ->check(whole_number(0, 100'000))
      ->capture_default_str();
  cmd.add_option("--duration", o.duration_s, "seconds of timed calls per batch size")
      ->check(positive_number(1e6))
      ->capture_default_str();
  add_model_seed(cmd, o.seed);
  add_image_size(cmd, o.image_size);
  add_block(cmd, o.block_size);
  add_rope(cmd, o.rope);
  cmd.add_option("--device", o.device, "cpu, or cuda (needs a GPU)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd.add_option("--data", o.data,
                 "inputs from a data set (as `train --data`: fashion-mnist, shapes, text, a path) "
                 "instead of synthetic ones")
      ->type_name("NAME|PATH");
  add_no_peak(cmd, o.no_peak);
  cmd.add_option("--precision", o.precision,
                 "fp32; bf16 (matmuls and convolutions in bfloat16); int8 (infer: quantized "
                 "weights and activations)")
      ->check(CLI::IsMember({"fp32", "bf16", "int8"}))
      ->capture_default_str();
  cmd.add_option("--load", o.load_path,
                 "weights to time: a float32 checkpoint (`prism train --save`), or with "
                 "--precision int8 an int8 model (`prism quantize`; without --load the model's "
                 "own weights are quantized on the fly)")
      ->type_name("FILE");
  cmd.add_option("--checkpoint", o.checkpoint,
                 "train: recompute activations in backward: blocks or every-N")
      ->type_name("blocks|every-N");
  if (with_json) {
    cmd.add_option("--json", o.json_path, "write the result, every call's time included")
        ->type_name("FILE")
        ->check(file_name());
  }
}

void add_bench_options(CLI::App& cmd, BenchCliOptions& o) {
  // Required unless `bench collectives` is given: checked after the parse (parse_command_line),
  // since CLI11 would demand it of the subcommand too.
  cmd.add_option("model", o.model,
                 "model: mlp, cnn, transformer, resnet18, ... (required, unless `collectives`)");
  add_shared_bench_options(cmd, o, true);
  cmd.add_option("--iters", o.iters,
                 "exactly this many timed calls per batch size (overrides --duration)")
      ->check(whole_number(1, 100'000'000));
  add_kernel(cmd, o.kernels);
  cmd.add_option(
         "--qps", o.qps,
         "server scenario: Poisson request rates to sweep, comma-separated, e.g. 50,100,200")
      ->delimiter(',')
      ->check(positive_number(1e9))
      ->type_name("R,...");
  cmd.add_option("--max-batch", o.max_batch, "server: the largest batch the worker forms")
      ->check(whole_number(1, 4096))
      ->capture_default_str();
  cmd.add_option("--max-wait-ms", o.max_wait_ms,
                 "server: how long the oldest request may wait for its batch to fill")
      ->check(number_in(0, 1e6))
      ->capture_default_str();
  cmd.add_option("--slo-ms", o.slo_ms, "server: report where the p99 latency crosses this")
      ->check(positive_number(1e9));
  cmd.add_flag("--counters", o.counters,
               "hardware counters per op in the profiled window (cycles, instructions, cache "
               "and branch misses), where the machine allows them, on the calling thread only "
               "(not OpenMP workers)");
  cmd.add_flag("--model-off", o.model_off,
               "time the input pipeline alone (needs --data): the model is replaced by a "
               "trivial computation, so the data loader's own rate shows");
  cmd.add_option("--prompt-tokens", o.prompt_tokens,
                 "decode: prompt length in tokens, random ids (default 64)")
      ->check(whole_number(1, 1'000'000));
  cmd.add_option("--tokens", o.new_tokens,
                 "decode: tokens generated per sequence (default 64); --iters: timed sequences "
                 "(default 3)")
      ->check(whole_number(1, 1'000'000));
}

// `prism bench collectives` (under mpirun). The sizes are checked by the command
// (nn/dist/collectives_bench.h: parse_message_size), which this library does not link.
void add_collectives_options(CLI::App& cmd, CollectivesCliOptions& o) {
  cmd.add_option("--sizes", o.sizes,
                 "message sizes in bytes, comma-separated, with K, M or G for KiB, MiB, GiB "
                 "(default: powers of 4 from 4 to 64M)")
      ->delimiter(',')
      ->type_name("BYTES,...");
  cmd.add_option("--reps", o.reps, "timed allreduces per size, 1 to 100000")
      ->check(whole_number(1, 100'000))
      ->capture_default_str();
  cmd.add_option("--warmup", o.warmup, "untimed allreduces per size before them, 0 to 100000")
      ->check(whole_number(0, 100'000))
      ->capture_default_str();
  cmd.add_option("--timeout", o.timeout_s,
                 "seconds a rank waits for the others before stopping the job")
      ->check(positive_number(1e6))
      ->capture_default_str();
  cmd.add_option("--predict", o.predict,
                 "a zoo model: predict its DDP training step at this number of ranks")
      ->type_name("MODEL");
  cmd.add_option("--batch", o.batch,
                 "with --predict: the global batch, split evenly over the ranks (default the "
                 "model's training batch)")
      ->check(whole_number(1, 1'000'000));
  cmd.add_option("--bucket-mb", o.bucket_mb,
                 "with --predict: gradient bucket size in MiB (default 1, as train --ddp; 0 = "
                 "one bucket)")
      ->check(positive_number(1024, /*allow_zero=*/true));
  cmd.add_option("--duration", o.duration_s,
                 "with --predict: seconds of timed training steps per measurement")
      ->check(positive_number(1e6))
      ->capture_default_str();
  cmd.add_option("--block", o.block_size,
                 "with --predict, transformers: context length (default 64, as train)")
      ->check(whole_number(1, 1'000'000));
  add_model_threads(cmd, o.threads);
  cmd.add_option("--json", o.json_path, "also write the sizes, the fit and the prediction")
      ->type_name("FILE")
      ->check(file_name());
}

void add_models_options(CLI::App& cmd, ModelsOptions& o) {
  cmd.add_option("models", o.models, "zoo models to compare, e.g. mlp cnn transformer")
      ->required()
      ->expected(1, 16);
  cmd.add_option("--match", o.match,
                 "scale the models' widths to the first model's parameter count (params) or "
                 "forward FLOPs per sample (flops)")
      ->check(CLI::IsMember({"params", "flops"}));
  cmd.add_option("--batch", o.batch, "batch size for every model")
      ->check(whole_number(1, 1'000'000))
      ->capture_default_str();
  add_model_threads(cmd, o.threads);
  cmd.add_option("--rounds", o.rounds,
                 "interleaved rounds (every model once per mode a round, the order rotated)")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd.add_option("--duration", o.duration_s, "seconds of timed calls per model, mode and round")
      ->check(positive_number(1e6))
      ->capture_default_str();
  add_model_seed(cmd, o.seed);
  add_block(cmd, o.block_size);
  add_no_peak(cmd, o.no_peak);
  cmd.add_option("--json", o.json_path, "also write the comparison as JSON")
      ->type_name("FILE")
      ->check(file_name());
}

void add_sweep_options(CLI::App& cmd, SweepOptions& o) {
  cmd.add_option("model", o.model, "model: mlp, cnn, transformer, resnet18, ...")->required();
  cmd.add_option("--vary", o.vary,
                 "the size to vary and its values: batch=1,2,4,... (also seq= for transformers, "
                 "width=, depth=, threads=)")
      ->type_name("NAME=V1,V2,...")
      ->required();
  cmd.add_option("--mode", o.mode, "infer (forward, eval mode, no grad) or train (full steps)")
      ->check(CLI::IsMember({"infer", "train"}))
      ->capture_default_str();
  cmd.add_option("--batch", o.batch, "batch size when another size varies (default the model's)")
      ->check(whole_number(1, 1'000'000));
  add_model_threads(cmd, o.threads);
  cmd.add_option("--warmup", o.warmup, "warm calls before timing each point")
      ->check(whole_number(0, 100'000))
      ->capture_default_str();
  cmd.add_option("--duration", o.duration_s,
                 "seconds of timed calls per point, split over two passes (up, then down)")
      ->check(positive_number(1e6))
      ->capture_default_str();
  cmd.add_option("--predict", o.predict, "predict time and memory at this size from the fit")
      ->check(whole_number(1, 1'000'000'000));
  cmd.add_flag("--check", o.check, "with --predict: measure that size too and print the error");
  add_model_seed(cmd, o.seed);
  add_image_size(cmd, o.image_size);
  add_block(cmd, o.block_size);
  add_kernel(cmd, o.kernels);
  add_no_peak(cmd, o.no_peak);
  cmd.add_option("--json", o.json_path, "also write the points and the fit as JSON")
      ->type_name("FILE")
      ->check(file_name());
}

void add_report_options(CLI::App& cmd, ReportOptions& o) {
  cmd.add_option("inputs", o.inputs,
                 "profiles: what `prism train MODEL --profile --json F` and `prism demo` write")
      ->type_name("IN.json")
      ->required()
      ->check(file_name());
  cmd.add_option("-o,--output", o.output_path, "the HTML page to write")
      ->type_name("FILE")
      ->check(file_name())
      ->capture_default_str();
}

void add_compare_options(CLI::App& cmd, CompareOptions& o) {
  cmd.add_option("inputs", o.inputs, "BASE.json CAND.json, or a MODEL to run both ways")
      ->required()
      ->expected(1, 2);
  cmd.add_option("--a", o.a_flags, "MODEL: the baseline's flags (default: none)")
      ->type_name("\"FLAGS\"");
  cmd.add_option("--b", o.b_flags, "MODEL: the candidate's flags, e.g. \"--kernel matmul=naive\"")
      ->type_name("\"FLAGS\"");
  cmd.add_option("--rounds", o.rounds, "MODEL: interleaved rounds per side (A B B A ...)")
      ->check(whole_number(1, 1000))
      ->capture_default_str();
  cmd.add_option("--rows", o.rows, "rows of the per-op table (0 = all)")
      ->check(whole_number(0, 1'000'000))
      ->capture_default_str();
  cmd.add_option("--json", o.json_path, "also write the comparison as JSON (for prism report)")
      ->type_name("FILE")
      ->check(file_name());
  o.bench.batches = {1, 64};
  o.bench.duration_s = 4;
  add_shared_bench_options(cmd, o.bench, false);
}

void add_gate_options(CLI::App& cmd, GateCliOptions& o) {
  cmd.add_option("base", o.base, "the baseline result (bench or train JSON)");
  cmd.add_option("cand", o.cand, "the candidate result");
  cmd.add_option("--max-p99-increase", o.max_p99_increase, "largest allowed p99 rise")
      ->type_name("PCT")
      ->capture_default_str();
  cmd.add_option("--max-throughput-drop", o.max_throughput_drop, "largest allowed throughput fall")
      ->type_name("PCT")
      ->capture_default_str();
  cmd.add_option("--max-memory-increase", o.max_memory_increase,
                 "largest allowed rise of peak memory (tracked and resident)")
      ->type_name("PCT")
      ->capture_default_str();
  cmd.add_option("--max-quality-drop", o.max_quality_drop,
                 "largest allowed fall of held-out accuracy, in percentage points")
      ->check(number_in(0, 100))
      ->capture_default_str();
  cmd.add_option("--max-loss-increase", o.max_loss_increase,
                 "largest allowed relative rise of a held-out or training loss")
      ->type_name("PCT")
      ->capture_default_str();
  cmd.add_option("--max-output-diff", o.max_output_diff,
                 "largest allowed relative change of the outputs on fixed inputs (inference)")
      ->check(number_in(0, 1e6))
      ->capture_default_str();
  cmd.add_option("--exact", o.exact,
                 "counters that must be equal: flops, macs, bytes, allocs, alloc_bytes")
      ->delimiter(',')
      ->type_name("NAME,...");
  cmd.add_option("--baselines", o.baselines,
                 "check the deterministic figures of the zoo against the baselines in DIR")
      ->type_name("DIR")
      ->check(file_name());
  cmd.add_flag("--update", o.update, "with --baselines: write the measured figures instead");
  cmd.add_flag("--verbose", o.verbose, "print the checks that passed too");
  cmd.add_option("--json", o.json_path, "also write the checks and the verdict as JSON")
      ->type_name("FILE")
      ->check(file_name());
}

void add_check_options(CLI::App& cmd, CheckOptions& o) {
  cmd.add_option("NAME", o.name,
                 "the exercise: its name (relu), folder (01_relu) or number (01); `prism course` "
                 "lists them")
      ->required();
  cmd.add_flag("--quick", o.quick, "time small sizes, 3 short samples each (what ctest runs)");
  cmd.add_flag("--no-timing", o.no_timing, "check correctness only (no performance tier)");
  cmd.add_option("--seed", o.seed, "other random inputs (default 1)")->check(seed_number());
  cmd.add_option("--threads", o.threads, "OpenMP threads while timing, 1 to 256 (default 1)")
      ->check(whole_number(1, 256));
  cmd.add_option("--runs", o.runs,
                 "timed samples per variant to start with, 1 to 1000 (default 15); an undecided "
                 "tier is sampled again up to max(100, N)")
      ->check(whole_number(1, 1000));
  cmd.add_flag("--grade-busy", o.grade_busy,
               "grade the speed even when other processes are busy (by default not graded then: "
               "the timings would measure their work too)");
  cmd.add_option("--max-seconds", o.max_seconds,
                 "the longest a variant's samples may take at one size, 1 to 3600 (default 10): "
                 "a slower one is not timed there")
      ->check(whole_number(1, 3600));
  cmd.add_option("--time-limit", o.time_limit_s,
                 "seconds one case (or the timing) may run before the check stops it and fails "
                 "(default 300)")
      ->check(number_in(1, 86400));
}

void add_quantize_options(CLI::App& cmd, QuantizeOptions& o) {
  cmd.add_option("model_file", o.model_path, "a float32 checkpoint (prism train --save)")
      ->required();
  cmd.add_option("-o,--output", o.output_path, "where to write the int8 model (.safetensors)")
      ->type_name("FILE")
      ->required();
  cmd.add_option("--model", o.model,
                 "the checkpoint's architecture: mlp or cnn (default: read "
                 "from its tensor names)")
      ->check(CLI::IsMember({"mlp", "cnn", "lenet"}));
  cmd.add_option("--data", o.data,
                 "data set for calibration and the held-out accuracy "
                 "(default: the model's, Fashion-MNIST when installed)")
      ->type_name("NAME|PATH");
  cmd.add_option("--calibrate", o.calibrate,
                 "calibration batches (default 8; percentile keeps every value seen: 4 bytes each)")
      ->check(whole_number(1, 10'000));
  cmd.add_option("--batch", o.batch, "calibration and evaluation batch size (default 64)")
      ->check(whole_number(1, 65'536));
  cmd.add_option("--method", o.method, "activation ranges: minmax or percentile")
      ->check(CLI::IsMember({"minmax", "percentile"}));
  cmd.add_option("--percentile", o.percentile, "with --method percentile (default 99.99)")
      ->check(number_in(1e-9, 100));
  cmd.add_option("--eval-batches", o.eval_batches, "held-out batches evaluated (default all)")
      ->check(whole_number(0, 1'000'000));
  cmd.add_option("--threads", o.threads, "OpenMP threads")->check(whole_number(1, 1024));
  cmd.add_option("--seed", o.seed, "seed of the calibration batches' shuffle")
      ->check(seed_number());
}

void add_generate_options(CLI::App& cmd, GenerateOptions& o) {
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

void add_course_options(CLI::App& cmd, CourseOptions& o) {
  cmd.add_option("--json", o.json_path, "also write the modules, exercises and progress as JSON")
      ->type_name("FILE")
      ->check(file_name());
}

// "prism" or "prism demo": where to point the user for --help.
std::string command_path(const CLI::App& app) {
  std::string path = "prism";
  for (const CLI::App* sub : app.get_subcommands()) path += " " + sub->get_name();
  return path;
}

// An argument that no command or option claimed: name it and list what exists.
std::string unexpected_message(const std::string& arg) {
  if (!arg.empty() && arg[0] == '-') return fmt::format("unknown option '{}'", arg);
  return fmt::format(
      "unknown command '{}' (commands: bench, check, compare, course, demo, gate, generate, lab, "
      "machine, models, ops, report, summary, sweep, train)",
      arg);
}

}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
  CommandLine result;
  CLI::App app{"prism: a from-scratch ML framework with a profiler in its core", "prism"};
  bool show_version = false;
  app.add_flag("--version", show_version, "print the version and how this binary was built");

  CLI::App* ops = app.add_subcommand("ops", "list every op, its kernel variants and cost formula");
  CLI::App* demo = app.add_subcommand("demo",
                                      "train the CNN briefly under the profiler; print the op "
                                      "table and module tree, write a trace");
  add_demo_options(*demo, result.demo);
  CLI::App* train = app.add_subcommand(
      "train", "train a model (mlp, cnn, transformer, resnet18, ...) on a data set");
  add_train_options(*train, result.train);
  CLI::App* summary = app.add_subcommand(
      "summary", "per-module shapes, parameters, FLOPs and activation memory (meta device)");
  add_summary_options(*summary, result.summary);
  CLI::App* machine = app.add_subcommand(
      "machine", "this machine's peak FLOP/s and memory bandwidth per thread count (cached)");
  add_machine_options(*machine, result.machine);
  CLI::App* lab = app.add_subcommand(
      "lab", "validate every kernel variant of an op, then time them side by side");
  add_lab_options(*lab, result.lab);
  CLI::App* bench = app.add_subcommand(
      "bench", "latency percentiles, throughput and memory of a model per batch size");
  add_bench_options(*bench, result.bench);
  CLI::App* collectives = bench->add_subcommand(
      "collectives",
      "(under mpirun) allreduce latency and bandwidth per message size, the alpha-beta fit, "
      "and with --predict MODEL the DDP step time at this number of ranks");
  add_collectives_options(*collectives, result.collectives);
  CLI::App* compare = app.add_subcommand(
      "compare", "baseline against candidate: report, statistics and a decision");
  add_compare_options(*compare, result.compare);
  CLI::App* models = app.add_subcommand(
      "models", "architectures side by side: costs, speed and where the time goes, interleaved");
  add_models_options(*models, result.models);
  CLI::App* sweep = app.add_subcommand(
      "sweep", "how time and memory grow with one size (batch, seq, width, depth, threads)");
  add_sweep_options(*sweep, result.sweep);
  CLI::App* report = app.add_subcommand(
      "report", "profiles as one self-contained HTML page: op breakdown, roofline, memory");
  add_report_options(*report, result.report);
  CLI::App* gate = app.add_subcommand(
      "gate", "a regression gate: exit 1 when a threshold breaks (or check the baselines)");
  add_gate_options(*gate, result.gate);
  CLI::App* check = app.add_subcommand(
      "check", "build and run an exercise's checker on your kernel; record the verdict");
  add_check_options(*check, result.check);
  CLI::App* course = app.add_subcommand(
      "course", "the modules and exercises, your progress on each, and what is next");
  add_course_options(*course, result.course);
  CLI::App* quantize = app.add_subcommand(
      "quantize", "int8 post-training quantization of a trained mlp or cnn: sizes, accuracy");
  add_quantize_options(*quantize, result.quantize);
  CLI::App* generate = app.add_subcommand(
      "generate", "text from a trained character transformer, with and without a KV cache");
  add_generate_options(*generate, result.generate);
  // Leftover arguments at the top level get our own message (see unexpected_message); set after
  // the subcommands exist so they keep rejecting unknown flags themselves.
  app.allow_extras();

  try {
    app.parse(argc, argv);
    // `bench MODEL` needs its model; `bench collectives` takes none, nor the model bench's flags.
    if (bench->parsed() && !collectives->parsed() && result.bench.model.empty()) {
      throw CLI::RequiredError("model");
    }
    if (collectives->parsed()) {
      for (const CLI::Option* opt : bench->get_options()) {
        if (opt->count() == 0 || opt->get_name() == "--help") continue;
        if (opt->get_positional()) {
          throw CLI::ValidationError(
              "bench collectives takes no model of its own; predict one with --predict MODEL");
        }
        throw CLI::ValidationError(
            fmt::format("bench collectives: {} is a flag of `prism bench MODEL`; give the "
                        "collectives' own flags after `collectives` (see --help)",
                        opt->get_name()));
      }
    }
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help: the help on stdout, exit 0
      std::ostringstream out, err;
      result.exit_code = app.exit(e, out, err);
      result.out = out.str();
      result.err = err.str();
      return result;
    }
    result.exit_code = kExitUsage;
    result.err =
        fmt::format("prism: error: {}\nRun '{} --help' for usage.\n", e.what(), command_path(app));
    return result;
  }
  if (!app.remaining().empty()) {
    throw UsageError(unexpected_message(app.remaining().front()));
  }

  if (show_version) {
    result.command = Command::version;
  } else if (ops->parsed()) {
    result.command = Command::ops;
  } else if (demo->parsed()) {
    result.command = Command::demo;
  } else if (train->parsed()) {
    result.command = Command::train;
  } else if (summary->parsed()) {
    result.command = Command::summary;
  } else if (machine->parsed()) {
    result.command = Command::machine;
  } else if (lab->parsed()) {
    result.command = Command::lab;
  } else if (collectives->parsed()) {
    result.command = Command::bench_collectives;
  } else if (bench->parsed()) {
    result.command = Command::bench;
  } else if (compare->parsed()) {
    result.command = Command::compare;
  } else if (models->parsed()) {
    result.command = Command::models;
  } else if (sweep->parsed()) {
    result.command = Command::sweep;
  } else if (report->parsed()) {
    result.command = Command::report;
  } else if (gate->parsed()) {
    result.command = Command::gate;
  } else if (check->parsed()) {
    result.command = Command::check;
  } else if (course->parsed()) {
    result.command = Command::course;
  } else if (quantize->parsed()) {
    result.command = Command::quantize;
  } else if (generate->parsed()) {
    result.command = Command::generate;
  } else {
    result.exit_code = kExitUsage;
    result.err = app.help() + "\nprism: no command given (try `prism demo`)\n";
  }
  return result;
}

}  // namespace prism::cli
