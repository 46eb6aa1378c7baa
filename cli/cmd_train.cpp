// `prism train MODEL`: trains a model from the zoo on a data set, with a progress line, a
// held-out evaluation at the end, and (with --profile, --trace or --json) a profile of a window
// of training steps: the op table, the module tree, a trace and a JSON record.
//
// Only a window of steps is profiled (by default steps 6-25, after the warm-up steps that fill
// caches and the allocator): a whole run would record millions of ops and write a trace no
// viewer opens. Step times are measured for every step either way; the JSON's train block
// gives their median and range.
//
// This file sets the run up and runs its pieces in order (cli/train_run.h): the step loop
// (train_steps.cpp), then the evaluation, the checkpoint and the profile (train_report.cpp).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/cmd_train.h"
#include "cli/command.h"
#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/options.h"
#include "cli/train_data.h"
#include "cli/train_ddp.h"
#include "cli/train_run.h"
#include "nn/models/gpt_checkpoint.h"
#include "nn/models/zoo.h"
#include "nn/optim/make.h"
#include "nn/safetensors.h"
#include "tensor/autocast.h"
#include "tensor/random.h"

namespace prism::cli {

namespace {

// Every output file is checked before any data is loaded or any step runs, so an unwritable or
// repeated path fails at once instead of after the whole run.
void check_outputs(const TrainOptions& o) {
  if (!o.trace_path.empty()) check_writable(o.trace_path, "trace");
  if (!o.json_path.empty()) check_writable(o.json_path, "json");
  if (!o.report_path.empty()) check_writable(o.report_path, "report");
  if (!o.save_path.empty()) check_writable(o.save_path, "checkpoint", /*regular_file_only=*/true);
}

// Resolves the options against the model's defaults, loads the data (the model's input and
// output sizes follow from it), builds the model on its device and its optimizer, and prints
// the line saying what will run.
TrainRun set_up(const TrainOptions& o, dist::Comm* comm) {
  check_model_name(o.model);  // before the data set is loaded
  check_checkpoint_flag(o.model, o.checkpoint);
  TrainRun run;
  run.comm = comm;
  run.device = device_from_flag(o.device);  // cuda without a GPU: a clear error here
  if (comm && run.device != Device::cpu) {
    throw UsageError("--ddp: data parallelism runs on the cpu (MPI); drop --device " + o.device);
  }
  manual_seed(o.seed);
  const nn::TrainingDefaults def = nn::training_defaults(o.model);
  run.batch = o.batch > 0 ? o.batch : def.batch;
  run.lr = o.lr > 0 ? o.lr : def.lr;
  run.opt_name = o.optimizer.empty() ? def.optimizer : o.optimizer;

  nn::ModelOptions mo;
  if (o.rope && !nn::is_language_model(o.model)) {
    throw UsageError("--rope: rotary position embeddings are for the transformers, not " + o.model);
  }
  mo.rope = o.rope;
  if (nn::is_language_model(o.model)) mo.block_size = o.block_size > 0 ? o.block_size : 64;
  run.data = load_train_data(o.data, o.model, mo.block_size > 0 ? mo.block_size : 64, o.seed);
  const TrainData& data = run.data;
  mo = model_options_for(data, o.model, mo);
  mo.checkpoint = o.checkpoint;
  // Every step takes a full batch (drop_last): a batch larger than the training set has none.
  if (run.batch > data.train->size()) {
    throw UsageError("--batch " + std::to_string(run.batch) + " is larger than the training set: " +
                     std::to_string(data.train->size()) + " examples in " + data.name +
                     "; use a batch of at most " + std::to_string(data.train->size()));
  }
  if (comm && run.batch % comm->size() != 0) {
    throw UsageError(fmt::format(
        "--ddp: the global batch {} does not split into {} equal shards, one per rank; use a "
        "multiple of {}",
        run.batch, comm->size(), comm->size()));
  }
  run.model = nn::make_model(o.model, mo);
  run.non_finite = o.allow_non_finite ? nn::NonFinite::allow : nn::NonFinite::refuse;
  if (!o.load_path.empty()) nn::load_safetensors(*run.model, o.load_path, true, run.non_finite);
  run.model->to(run.device);  // before the optimizer, whose state is made beside each parameter
  run.opt = nn::optim::make_optimizer(run.opt_name, run.model->parameters(), run.lr);

  const int64_t per_epoch = std::max<int64_t>(1, data.train->size() / run.batch);
  run.steps = o.steps > 0 ? o.steps : per_epoch * std::max(o.epochs, 1);
  if (comm) {
    // The same run on every rank, from rank 0's weights (cli/train_ddp.h).
    check_same_config(*comm, ddp_config(o, data.name, data.train->size(), run.batch, run.lr,
                                        run.opt_name, run.steps, *run.model));
    dist::DdpOptions d;
    // A positive size below one byte is still a size (one parameter per bucket), not 0 (one
    // bucket for everything).
    d.bucket_bytes =
        o.bucket_mb > 0 ? std::max<int64_t>(1, static_cast<int64_t>(o.bucket_mb * 1024 * 1024)) : 0;
    d.overlap = !o.no_overlap;
    run.sync = std::make_unique<dist::GradSync>(*comm, run.model->parameters(), d);
    run.sync->broadcast_parameters();
    // Each rank its own random stream from here on (dropout masks): with the same seed every
    // rank would drop the same units of its shard, which one process at the global batch never
    // does. Rank 0 keeps the plain run's stream, so -np 1 trains exactly as without --ddp.
    if (comm->rank() != 0) {
      manual_seed(o.seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(comm->rank())));
    }
  }
  std::printf(
      "training %s (%lld parameters) on %s: %lld examples, batch %lld, %s lr %g (schedule %s), "
      "%lld steps, %d thread%s\n",
      o.model.c_str(), static_cast<long long>(run.model->parameter_count()), data.name.c_str(),
      static_cast<long long>(data.train->size()), static_cast<long long>(run.batch),
      run.opt_name.c_str(), run.lr, o.schedule.c_str(), static_cast<long long>(run.steps),
      max_threads(), max_threads() == 1 ? "" : "s");
  if (const std::string k = kernel_summary(); !k.empty()) std::printf("kernels: %s\n", k.c_str());
  if (comm) {
    const size_t buckets = run.sync->buckets().size();
    const std::string bucket_text = o.bucket_mb > 0
                                        ? fmt::format("{} gradient bucket{} of at most {:g} MiB",
                                                      buckets, buckets == 1 ? "" : "s", o.bucket_mb)
                                        : std::string("one gradient bucket for all gradients");
    std::printf(
        "data parallel: %d ranks, %lld examples each per step, %s, allreduce %s; weights "
        "compared every %lld steps\n",
        comm->size(), static_cast<long long>(run.batch / comm->size()), bucket_text.c_str(),
        o.no_overlap ? "after backward" : "overlapped with backward",
        static_cast<long long>(o.check_every));
  }
  if (o.precision == "bf16") {
    if (run.device == Device::cuda) {
      throw UsageError("--precision bf16: the bf16 GEMMs run on the cpu only; drop --device cuda");
    }
    std::printf(
        "precision bf16: matmuls and convolutions in bfloat16 (fp32 sums), fp32 master weights "
        "and optimizer state; softmax, norms and losses in fp32\n");
  }
  return run;
}

}  // namespace

int run_train(const TrainOptions& given) {
  TrainOptions o = given;
  // A trace comes with its page: report.html in the trace's folder, unless --report says where.
  // (file_roles.h has already refused it if that is one of the run's other files.)
  bool page_replaces = false;
  if (o.report_path.empty() && !o.trace_path.empty()) {
    o.report_path = report_beside_trace(o.trace_path);
    std::error_code ec;  // a link loop there is check_writable's to report, with its message
    page_replaces = !o.report_path.empty() && std::filesystem::exists(o.report_path, ec);
  }
  if (o.threads > 0) set_threads(o.threads);
  // --ddp: MPI first (a usage error without a launcher, before any work), then the same set-up
  // on every rank.
  dist::Comm* comm = o.ddp ? &start_ddp(o) : nullptr;
  if (page_replaces && (comm == nullptr || comm->rank() == 0)) {
    std::printf(
        "note: --trace writes its page to %s, replacing the file there (--report PATH "
        "writes it elsewhere)\n",
        o.report_path.c_str());
  }
  load_kernel_env();
  apply_kernel_flags(o.kernels);
  // --counters counts events per op in the profile, so it profiles too.
  const bool profiling = o.profile || o.counters || !o.trace_path.empty() || !o.json_path.empty() ||
                         !o.report_path.empty();
  check_outputs(o);
  TrainRun run = set_up(o, comm);
  StepLog log = run_steps(o, run, profiling);
  Evaluation ev;
  if (run.is_rank0()) {
    // The held-out evaluation runs in the precision the model was trained in.
    Autocast policy(o.precision == "bf16" ? DType::bf16 : DType::f32);
    ev = report_evaluation(o, run, log);
  }
  if (!o.save_path.empty() && run.is_rank0()) {
    run.model->to(Device::cpu);  // the file is written from host memory
    // A text model's file also carries its shape and vocabulary, for `prism generate`.
    const nn::Metadata meta = run.data.text
                                  ? nn::text_model_metadata(*run.model, run.data.text->vocab())
                                  : nn::Metadata{};
    nn::save_safetensors(*run.model, o.save_path, meta, run.non_finite);
    std::printf("saved weights to %s\n", o.save_path.c_str());
  }
  if (profiling) report_profile(o, run, log, ev);
  if (comm) comm->finalize();
  return 0;
}

namespace {

void add_options(CLI::App& cmd, TrainOptions& o) {
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

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<TrainOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_train(*o); },
          .files =
              [o](CommandFiles& f) {
                f.input("--load", o->load_path);
                // The image models read Fashion-MNIST by default (train_data.h).
                const bool mnist_default = !o->model.empty() && !nn::is_language_model(o->model) &&
                                           o->model != "mlp-spiral";
                f.data_set(o->data, mnist_default);
                f.output("--save", o->save_path);
                f.output("--json", o->json_path);
                f.output("--trace", o->trace_path);
                if (!o->report_path.empty()) {
                  f.output("--report", o->report_path);
                } else if (!o->trace_path.empty()) {
                  // "" for a trace sent to a stream: no page is written then.
                  f.output("--trace's report.html", report_beside_trace(o->trace_path));
                }
              }};
}

const RegisteredCommand registered(
    {.order = 300,
     .name = "train",
     .help = "train a model (mlp, cnn, transformer, resnet18, ...) on a data set",
     .runs_kernels = true,
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
