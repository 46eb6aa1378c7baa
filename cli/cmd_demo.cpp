// `prism demo`: the whole framework in one run. It makes a spiral data set, trains a small MLP
// on it with plain SGD while a profiler session records every op, prints the op table, and
// writes a Chrome/Perfetto trace and a JSON profile.
//
// The phases are labelled the way a learner would want to read them back: scope "data" for
// the data set, "init" for the initial weights, "model" (with "fc1", "relu", "fc2", "loss") for
// the forward pass, phase "backward" from the autograd engine, phase "optimizer" (scope "sgd")
// for the update, "eval" for the accuracy check on progress steps.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/mlp.h"
#include "cli/spiral.h"
#include "profiler/recorder.h"
#include "profiler/reports.h"
#include "tensor/random.h"
#include "tensor/storage.h"

namespace prism::cli {

namespace {

constexpr int kClasses = 3;
constexpr int kPointsPerClass = 100;
constexpr int kHidden = 64;

struct Dataset {
  Tensor x;       // [n, 2] float32
  Tensor labels;  // [n, 1] int64, for gather
  std::vector<int64_t> label_values;
};

Dataset load_spiral(uint64_t seed) {
  profiler::Scope scope("data");
  AllocRole role(MemRole::data);
  SpiralData d = make_spiral(kPointsPerClass, kClasses, seed);
  Dataset ds;
  ds.x = from_vector(d.points, {d.count, 2});
  ds.labels = from_vector(d.labels, {d.count, 1});
  ds.label_values = std::move(d.labels);
  return ds;
}

void print_progress(int step, int steps, double loss, double acc) {
  const int width = static_cast<int>(std::to_string(steps).size());
  fmt::print("step {:>{}}/{}  loss {:.4f}  accuracy {:5.1f}%\n", step, width, steps, loss,
             100.0 * acc);
  std::fflush(stdout);
}

}  // namespace

int run_demo(const DemoOptions& opts) {
  if (opts.threads > 0) set_threads(opts.threads);
  apply_kernel_flags(opts.kernels);
  load_kernel_env();
  check_writable(opts.trace_path, "trace");
  check_writable(opts.json_path, "JSON profile");

  fmt::print(
      "prism demo: a 2-{}-{} MLP learns a {}-class spiral ({} points) with plain SGD\n"
      "  steps {}, lr {}, seed {}, threads {}, kernels: {}\n\n",
      kHidden, kClasses, kClasses, kClasses * kPointsPerClass, opts.steps, opts.lr, opts.seed,
      max_threads(), kernel_summary());
  std::fflush(stdout);

  manual_seed(opts.seed);
  const int every = std::max(1, opts.steps / 10);
  const auto t0 = std::chrono::steady_clock::now();

  profiler::Session session;
  const Dataset data = load_spiral(opts.seed);
  Mlp model = [] {
    profiler::Scope scope("init");
    return Mlp(2, kHidden, kClasses);
  }();
  for (int step = 1; step <= opts.steps; ++step) {
    Tensor logits, loss;
    {
      profiler::Scope scope("model");
      logits = model.forward(data.x);
      profiler::Scope loss_scope("loss");
      loss = nll_loss(log_softmax(logits, 1), data.labels);
    }
    loss.backward();
    model.sgd_step(opts.lr);
    if (step == 1 || step % every == 0 || step == opts.steps) {
      profiler::Scope scope("eval");
      print_progress(step, opts.steps, loss.item(), accuracy(logits, data.label_values));
    }
  }
  const profiler::Profile& profile = session.stop();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  fmt::print("\ntrained {} steps in {:.2f} s ({} parameters)\n\n", opts.steps, seconds,
             model.parameter_count());
  profiler::TableOptions table;
  table.max_rows = opts.rows;
  std::fputs(profiler::format_table(profile, table).c_str(), stdout);
  std::fflush(stdout);

  profiler::write_text_file(opts.trace_path, profiler::trace_json(profile));
  profiler::write_text_file(opts.json_path, profiler::profile_json(profile));
  fmt::print(
      "\nwrote {}  (timeline: open https://ui.perfetto.dev or chrome://tracing and load it)\n"
      "wrote {}  (the op table as JSON, for scripts)\n",
      opts.trace_path, opts.json_path);
  return 0;
}

}  // namespace prism::cli
