// `prism bench collectives`, under an MPI launcher:
//
//   mpirun -np 2 build/prism bench collectives [--sizes 4,4K,1M] [--reps 20] [--json FILE]
//   mpirun -np 2 build/prism bench collectives --predict mlp [--batch 64] [--bucket-mb 1]
//
// Every rank times the allreduces (nn/dist/collectives_bench.h); rank 0 alone prints the table
// per message size and the alpha-beta fit (nn/dist/alpha_beta.h). With --predict MODEL every
// rank also times MODEL's training step at its share of the global batch with `prism bench`'s
// machinery (analysis/model_bench.h: run_bench), and the fit turns the model's gradient buckets
// into a communication time: the DDP step without overlap and its bound with perfect overlap.
//
// Failures. Bad flags are usage errors (exit 2) before MPI starts; without a launcher the command
// stops before any work (exit 1). After MPI has started, an error every rank meets alike (a
// global batch the ranks cannot split) ends MPI cleanly on every rank and only rank 0 reports
// it; any other error stops the whole job (Comm::abort), so no rank waits for one that gave up.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "analysis/model_bench.h"
#include "analysis/report_format.h"
#include "cli/command.h"
#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/options.h"
#include "cli/train_data.h"
#include "nn/dist/buckets.h"
#include "nn/dist/collectives_bench.h"
#include "nn/dist/comm.h"
#include "nn/models/zoo.h"
#include "profiler/output_file.h"
#include "tensor/storage.h"

namespace prism::cli {

namespace {

// The flags, as add_options (below) declares them.
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

using nlohmann::ordered_json;

// "4 B", "64 KiB", "16 MiB": message sizes are powers of two, so binary units read exactly.
std::string size_label(int64_t b) {
  if (b >= (1 << 20) && b % (1 << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= (1 << 10) && b % (1 << 10) == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

dist::CollectivesOptions collectives_options(const CollectivesCliOptions& o) {
  dist::CollectivesOptions c;
  c.reps = o.reps;
  c.warmup = o.warmup;
  try {
    for (const std::string& s : o.sizes) c.sizes.push_back(dist::parse_message_size(s));
    dist::check_collectives_options(c);
  } catch (const Error& e) {
    throw UsageError(std::string("--sizes: ") + e.what());
  }
  return c;
}

// ---- the prediction's inputs, settled before MPI starts ---------------------------------------

struct PredictSetup {
  analysis::BenchOptions bench;  // mode train; the batch is set per measurement
  int64_t global_batch = 0;
  int64_t bucket_bytes = dist::kDefaultBucketBytes;
  std::vector<int64_t> numels;  // the parameters' element counts, in registration order
  int64_t parameters = 0;
  std::string data_name;  // the data set whose shapes the model takes
};

PredictSetup predict_setup(const CollectivesCliOptions& o) {
  check_model_name(o.predict);
  PredictSetup p;
  p.global_batch = o.batch > 0 ? o.batch : nn::training_defaults(o.predict).batch;
  if (o.bucket_mb >= 0) p.bucket_bytes = static_cast<int64_t>(o.bucket_mb * (1 << 20));
  if (o.bucket_mb > 0 && p.bucket_bytes < 4) {
    throw UsageError("--bucket-mb: a bucket must hold one float32 at least");
  }
  // The model shaped as `prism train MODEL` shapes it: its default data set's classes, image
  // size or vocabulary, and train's context length (64) for the language models; synthetic
  // inputs of those shapes are what the steps are timed on.
  const int64_t block = o.block_size > 0 ? o.block_size : 64;
  const TrainData data = load_train_data("", o.predict, block, 42);
  nn::ModelOptions mo;
  if (nn::is_language_model(o.predict)) mo.block_size = block;
  mo = model_options_for(data, o.predict, mo);
  p.data_name = data.name.substr(0, data.name.find(" ("));  // the set's name, not its path
  {
    // The parameters' sizes, from the model built on the meta device (shapes, no data): the
    // same registration order DDP plans its buckets in.
    DefaultDevice meta(Device::meta);
    for (const Tensor& t : nn::make_model(o.predict, mo)->parameters()) {
      p.numels.push_back(t.numel());
      p.parameters += t.numel();
    }
  }
  analysis::BenchOptions& b = p.bench;
  b.model = o.predict;
  b.mode = analysis::BenchMode::train;
  b.model_options = mo;
  b.warmup = 3;
  b.duration_s = o.duration_s;
  b.profile_calls = 1;  // the profiled window is not used here: keep it short
  b.peak = false;
  b.check_environment = false;
  try {
    b.batches = {std::max<int64_t>(1, p.global_batch)};
    analysis::check_bench_options(b);
  } catch (const Error& e) {
    throw UsageError(std::string("--predict: ") + e.what());
  }
  return p;
}

struct PredictResult {
  int ranks = 0;
  int64_t local_batch = 0;
  std::vector<double> compute_ns;  // per rank: the median training step at the local batch
  double single_ns = 0;            // rank 0 alone, the global batch
  std::vector<int64_t> bucket_bytes;
  dist::StepPrediction step;
};

// The median training step time of MODEL at `batch` on this rank (run_bench: the cold call,
// warm-up, then the timed stretch).
double median_step_ns(analysis::BenchOptions b, int64_t batch) {
  b.batches = {batch};
  const analysis::BenchResult r = analysis::run_bench(b);
  return r.batches.front().latency.p50;
}

PredictResult run_predict(dist::Comm& comm, const PredictSetup& s, const dist::AlphaBetaFit& fit) {
  PredictResult p;
  p.ranks = comm.size();
  p.local_batch = s.global_batch / comm.size();
  // Every rank at once, as in DDP training: the ranks share the machine's cores and memory.
  comm.barrier("predict: start");
  const double mine = median_step_ns(s.bench, p.local_batch);
  for (uint64_t ns : comm.allgather(static_cast<uint64_t>(mine), "predict: compute times")) {
    p.compute_ns.push_back(static_cast<double>(ns));
  }
  // The step waits for the slowest rank's gradients.
  const double compute_ns = *std::max_element(p.compute_ns.begin(), p.compute_ns.end());
  // For comparison, one process at the global batch: rank 0, while the others wait.
  // The others wait for rank 0's solo measurement, as long as it takes (a large model's cold
  // call alone can pass --timeout): no deadline, as a rank that dies is still seen by mpirun.
  if (comm.rank() == 0) p.single_ns = median_step_ns(s.bench, s.global_batch);
  {
    dist::WithoutDeadline no_deadline(comm);
    comm.barrier("predict: one process at the global batch");
  }

  for (const dist::Bucket& b : dist::plan_buckets(s.numels, s.bucket_bytes)) {
    p.bucket_bytes.push_back(b.numel * 4);
  }
  p.step = dist::predict_ddp_step(compute_ns * 1e-9, p.bucket_bytes, fit);
  return p;
}

// ---- output ---------------------------------------------------------------------------------

std::string format_sizes(const dist::CollectivesResult& r) {
  std::string out = fmt::format(
      "allreduce (sum, float32, in place) over {} ranks: {} timed repetitions per size after {} "
      "warm-up; a repetition's time is the slowest rank's\n\n",
      r.ranks, r.reps, r.warmup);
  analysis::TextColumns t({"size", "median", "95% interval", "min", "algbw GB/s", "busbw GB/s"});
  for (const dist::SizeResult& s : r.sizes) {
    const profiler::stats::Summary& m = s.summary;
    t.add({size_label(s.bytes), analysis::format_ns(m.median * 1e9),
           analysis::format_ns(m.ci_low * 1e9) + " .. " + analysis::format_ns(m.ci_high * 1e9),
           analysis::format_ns(m.min * 1e9), fmt::format("{:.3f}", s.algbw_gbs),
           fmt::format("{:.3f}", s.busbw_gbs)});
  }
  out += t.str("  ");
  out += "  algbw = bytes / time; busbw = algbw * 2(n-1)/n, what each rank's links carried\n";
  if (r.ranks == 1) {
    out +=
        "  one rank: an allreduce moves no data, so these times are MPI's call overhead and the "
        "fit's bandwidth means nothing; run under mpirun -np 2 or more\n";
  }
  out += "\n";
  if (r.fit.n == 0) {
    out += "alpha-beta fit: needs two message sizes or more\n";
    return out;
  }
  out += fmt::format(
      "alpha-beta fit, t(m) = alpha + m / bandwidth (least squares in relative error):\n"
      "  alpha {:.2f} us   bandwidth {:.3f} GB/s   worst relative residual {:.0f}% (at {})\n",
      r.fit.alpha_us(), r.fit.bandwidth_gbs(), 100 * r.fit.worst_rel_residual,
      size_label(static_cast<int64_t>(r.fit.worst_bytes)));
  if (r.fit.constrained == dist::AlphaBetaFit::Constrained::alpha_zero) {
    out +=
        "  (alpha held at 0: the free line's alpha was negative, the small sizes' noise; measure "
        "more repetitions)\n";
  } else if (r.fit.constrained == dist::AlphaBetaFit::Constrained::beta_zero) {
    out +=
        "  (no bandwidth term: the times did not grow with the size; measure larger sizes or more "
        "repetitions)\n";
  }
  return out;
}

std::string format_prediction(const CollectivesCliOptions& o, const PredictSetup& s,
                              const PredictResult& p) {
  const dist::StepPrediction& st = p.step;
  const auto ms = [](double seconds) { return analysis::format_ns(seconds * 1e9); };
  std::string out = fmt::format(
      "\nDDP step of {} at global batch {} on {} ranks (local batch {}, {} thread(s) a rank), "
      "predicted; the model shaped for {}\n",
      o.predict, s.global_batch, p.ranks, p.local_batch, max_threads(), s.data_name);
  std::string per_rank;
  for (double ns : p.compute_ns)
    per_rank += (per_rank.empty() ? "" : ", ") + analysis::format_ns(ns);
  out += fmt::format(
      "  compute T_c   {:>10}   training step at batch {}, median, slowest rank "
      "(ranks: {})\n",
      ms(st.compute_s), p.local_batch, per_rank);
  const std::string bucket_plan =
      s.bucket_bytes > 0 ? fmt::format("{} bucket{} of at most {}", st.buckets,
                                       st.buckets == 1 ? "" : "s", size_label(s.bucket_bytes))
                         : std::string("one bucket");
  out += fmt::format("  gradients     {:>10}   {} parameters x 4 B in {}\n",
                     analysis::format_bytes(st.gradient_bytes), s.parameters, bucket_plan);
  out += fmt::format("  comm T_m      {:>10}   sum over buckets of alpha + bytes / bandwidth\n",
                     ms(st.comm_s));
  out += fmt::format("  no overlap    {:>10}   T_c + T_m\n", ms(st.no_overlap_s));
  out += fmt::format(
      "  full overlap  {:>10}   max(T_c + last bucket, T_m): the last bucket ({}) holds the "
      "first layers' gradients, ready only when backward ends, so it cannot overlap\n",
      ms(st.overlap_s), ms(st.last_bucket_s));
  out += fmt::format("  one process   {:>10}   rank 0 alone at batch {} (for comparison)\n",
                     analysis::format_ns(p.single_ns), s.global_batch);
  return out;
}

ordered_json to_json(const CollectivesCliOptions& o, const dist::CollectivesResult& r,
                     const std::optional<PredictSetup>& s, const PredictResult& p) {
  ordered_json sizes = ordered_json::array();
  for (const dist::SizeResult& z : r.sizes) {
    ordered_json samples = ordered_json::array();
    for (double t : z.seconds) samples.push_back(t * 1e6);
    sizes.push_back({{"bytes", z.bytes},
                     {"median_us", z.summary.median * 1e6},
                     {"ci_low_us", z.summary.ci_low * 1e6},
                     {"ci_high_us", z.summary.ci_high * 1e6},
                     {"min_us", z.summary.min * 1e6},
                     {"max_us", z.summary.max * 1e6},
                     {"algbw_gbs", z.algbw_gbs},
                     {"busbw_gbs", z.busbw_gbs},
                     {"samples_us", samples}});
  }
  ordered_json doc = {
      {"kind", "prism.collectives"}, {"op", "allreduce"}, {"ranks", r.ranks}, {"reps", r.reps},
      {"warmup", r.warmup},          {"sizes", sizes}};
  if (r.fit.n > 0) {
    doc["fit"] = {{"alpha_us", r.fit.alpha_us()},
                  {"beta_s_per_byte", r.fit.beta_s},
                  {"bandwidth_gbs", r.fit.bandwidth_gbs()},
                  {"worst_rel_residual", r.fit.worst_rel_residual},
                  {"worst_bytes", r.fit.worst_bytes}};
  }
  if (s) {
    const dist::StepPrediction& st = p.step;
    ordered_json per_rank = ordered_json::array();
    for (double ns : p.compute_ns) per_rank.push_back(ns * 1e-6);
    doc["predict"] = {{"model", o.predict},
                      {"data", s->data_name},
                      {"ranks", p.ranks},
                      {"global_batch", s->global_batch},
                      {"local_batch", p.local_batch},
                      {"parameters", s->parameters},
                      {"gradient_bytes", st.gradient_bytes},
                      {"bucket_bytes", s->bucket_bytes},
                      {"buckets", p.bucket_bytes},
                      {"compute_ms", st.compute_s * 1e3},
                      {"compute_ms_per_rank", per_rank},
                      {"comm_ms", st.comm_s * 1e3},
                      {"last_bucket_ms", st.last_bucket_s * 1e3},
                      {"no_overlap_ms", st.no_overlap_s * 1e3},
                      {"overlap_ms", st.overlap_s * 1e3},
                      {"single_process_ms", p.single_ns * 1e-6}};
  }
  return doc;
}

int run_collectives(const CollectivesCliOptions& o) {
  // Flags first (usage errors, exit 2), then the launcher: nothing runs before both pass.
  const dist::CollectivesOptions co = collectives_options(o);
  if (!o.predict.empty() && co.sizes.size() == 1) {
    throw UsageError("--predict needs the alpha-beta fit, so at least two --sizes");
  }
  if (o.predict.empty() && (o.batch > 0 || o.bucket_mb >= 0 || o.block_size > 0)) {
    throw UsageError("--batch, --bucket-mb and --block describe the model of --predict MODEL");
  }
  if (!o.predict.empty()) check_model_name(o.predict);
  if (o.threads > 0) set_threads(o.threads);
  if (!dist::launched_by_mpi()) {
    throw Error(
        "bench collectives measures MPI's allreduce between processes, and this process was not "
        "started by an MPI launcher: run it under one, e.g. `mpirun -np 2 build/prism bench "
        "collectives` (as root add --allow-run-as-root)");
  }
  std::optional<PredictSetup> setup;
  if (!o.predict.empty()) setup = predict_setup(o);  // a data set's shapes, before MPI starts

  dist::Comm& comm = dist::Comm::world(o.timeout_s);
  const bool root = comm.rank() == 0;
  // Errors known before any measurement: a global batch the ranks cannot split (every rank sees
  // it alike) and a JSON file rank 0 cannot write (rank 0 tells the others). MPI then ends
  // cleanly everywhere and rank 0 alone says why.
  std::string usage_error, json_error;
  if (setup && setup->global_batch % comm.size() != 0) {
    usage_error = fmt::format(
        "--batch {}: the global batch is split evenly over the ranks, and {} ranks do not divide "
        "it (give a multiple of {})",
        setup->global_batch, comm.size(), comm.size());
  }
  if (root && usage_error.empty() && !o.json_path.empty()) {
    try {
      check_writable(o.json_path, "json");
    } catch (const Error& e) {
      json_error = e.what();
    }
  }
  const uint64_t stop = usage_error.empty() && json_error.empty() ? 0 : 1;
  if (comm.allgather(stop, "bench collectives: start").front() != 0) {
    comm.finalize();
    if (!root) return usage_error.empty() ? 1 : 2;
    if (!usage_error.empty()) throw UsageError(usage_error);
    throw Error(json_error);
  }

  try {
    const dist::CollectivesResult r = dist::measure_allreduce(comm, co);
    if (root) std::fputs(format_sizes(r).c_str(), stdout);
    PredictResult p;
    if (setup) {
      if (r.fit.beta_s <= 0) {
        if (root) std::puts("\nno prediction: the fit has no positive bandwidth term");
      } else {
        p = run_predict(comm, *setup, r.fit);
        if (root) std::fputs(format_prediction(o, *setup, p).c_str(), stdout);
      }
    }
    if (root && !o.json_path.empty()) {
      profiler::write_text_file(o.json_path, to_json(o, r, setup, p).dump(1) + "\n");
      std::printf("wrote %s\n", o.json_path.c_str());
    }
    std::fflush(stdout);
    comm.finalize();
  } catch (const std::exception& e) {
    comm.abort(e.what());  // one rank's failure: stop every rank rather than leave them waiting
  }
  return 0;
}

// The sizes are checked when the command runs (nn/dist/collectives_bench.h: parse_message_size).
void add_options(CLI::App& cmd, CollectivesCliOptions& o) {
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

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<CollectivesCliOptions>();
  // `bench collectives` takes none of `bench MODEL`'s flags nor its model: each given is named
  // (CLI11 would take them as the parent's and the command would ignore them).
  CLI::App* bench = cmd.get_parent();
  add_options(cmd, *o);
  return {.run = [o] { return run_collectives(*o); },
          .files = [o](CommandFiles& f) { f.output("--json", o->json_path); },
          .check =
              [bench] {
                for (const CLI::Option* opt : bench->get_options()) {
                  if (opt->count() == 0 || opt->get_name() == "--help") continue;
                  if (opt->get_positional()) {
                    throw CLI::ValidationError(
                        "bench collectives takes no model of its own; predict one with --predict "
                        "MODEL");
                  }
                  throw CLI::ValidationError(
                      fmt::format("bench collectives: {} is a flag of `prism bench MODEL`; give "
                                  "the collectives' own flags after `collectives` (see --help)",
                                  opt->get_name()));
                }
              }};
}

const RegisteredCommand registered(
    {.order = 710,
     .name = "collectives",
     .help = "(under mpirun) allreduce latency and bandwidth per message size, the alpha-beta fit, "
             "and with --predict MODEL the DDP step time at this number of ranks",
     .parent = "bench",
     .runs_kernels = true,
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
