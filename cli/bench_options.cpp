#include "cli/bench_options.h"

#include <CLI/CLI.hpp>

#include "cli/options.h"
#include "cli/train_data.h"

namespace prism::cli {

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

analysis::BenchOptions bench_options(const BenchCliOptions& o) {
  analysis::BenchOptions b;
  b.model = o.model;
  if (o.mode == "decode") {
    throw UsageError(
        "--mode decode: only `prism bench MODEL --mode decode` runs it (one sequence at batch "
        "1, not a batch sweep to compare or gate)");
  }
  if (o.mode != "infer" && o.mode != "train") {
    throw UsageError("--mode: expected infer, train or decode, got '" + o.mode + "'");
  }
  if (o.prompt_tokens > 0 || o.new_tokens > 0) {
    throw UsageError("--prompt-tokens and --tokens are for --mode decode");
  }
  b.mode = o.mode == "infer" ? analysis::BenchMode::infer : analysis::BenchMode::train;
  if (!o.checkpoint.empty()) {  // before any data is loaded
    if (b.mode != analysis::BenchMode::train) {
      throw UsageError("--checkpoint " + o.checkpoint +
                       ": activation checkpointing is for --mode train (inference keeps no "
                       "activations for backward, so there is nothing to recompute)");
    }
    check_checkpoint_flag(o.model, o.checkpoint);
  }
  if (!o.batches.empty()) b.batches = o.batches;
  b.warmup = o.warmup;
  b.duration_s = o.duration_s;
  b.iters = o.iters;
  b.device = device_from_flag(o.device);
  b.seed = o.seed;
  b.model_options.image_size = o.image_size;
  b.model_options.block_size = o.block_size;
  if (o.rope && !nn::is_language_model(o.model)) {
    throw UsageError("--rope: rotary position embeddings are for the transformers, not " + o.model);
  }
  b.model_options.rope = o.rope;
  if (!o.data.empty() && o.image_size > 0) {
    // model_options_for takes the size from the data set's examples; a --image-size beside it
    // was silently dropped.
    throw UsageError("--image-size: with --data the data set's examples set the input size (" +
                     o.data + "); leave --image-size out");
  }
  if (!o.data.empty()) {
    // Real inputs: the held-out split for inference, the training split for training steps,
    // with the model shaped for them (classes, image size, vocabulary).
    const TrainData data =
        load_train_data(o.data, o.model, o.block_size > 0 ? o.block_size : 64, o.seed);
    if (nn::is_language_model(o.model) && o.block_size == 0) b.model_options.block_size = 64;
    b.model_options = model_options_for(data, o.model, b.model_options);
    b.data = b.mode == analysis::BenchMode::infer ? data.test : data.train;
    b.data_name = data.name;
  }
  b.qps = o.qps;
  b.server.max_batch = o.max_batch;
  b.server.max_wait_ms = o.max_wait_ms;
  b.server.duration_s = o.duration_s;
  b.server.drain_s = o.duration_s;
  b.server.seed = o.seed;
  b.slo_ms = o.slo_ms;
  b.peak = !o.no_peak;
  b.precision = o.precision;
  b.load_path = o.load_path;
  b.model_options.checkpoint = o.checkpoint;
  return b;
}

}  // namespace prism::cli
