// `prism demo`: the whole framework in one short run. It trains the LeNet-style CNN on
// Fashion-MNIST (generated shape images when the Debian package is not installed) while the
// profiler records a window of steps, then prints the op table and the module tree, and writes
// a Chrome/Perfetto trace, a JSON profile and the HTML report of that profile. It is `prism train
// cnn` with the profile on.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/cmd_train.h"
#include "cli/command.h"
#include "cli/file_roles.h"
#include "cli/options.h"

namespace prism::cli {

namespace {

// The flags, as add_options (below) declares them.
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

int run_demo(const DemoOptions& o) {
  TrainOptions t;
  t.model = "cnn";
  t.steps = o.steps;
  t.threads = o.threads;
  t.seed = o.seed;
  t.kernels = o.kernels;
  t.profile = true;
  t.trace_path = o.trace_path;
  t.json_path = o.json_path;
  t.report_path = o.report_path;
  t.rows = o.rows;
  t.eval_batches = 40;  // 2,560 held-out images: enough to read the accuracy, quick to run
  return run_train(t);
}

void add_options(CLI::App& cmd, DemoOptions& o) {
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

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<DemoOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_demo(*o); },
          .files =
              [o](CommandFiles& f) {
                f.output("--trace", o->trace_path);
                f.output("--json", o->json_path);
                f.output("--report", o->report_path);
              }};
}

const RegisteredCommand registered({.order = 200,
                                    .name = "demo",
                                    .help = "train the CNN briefly under the profiler; print the "
                                            "op table and module tree, write a trace",
                                    .runs_kernels = true,
                                    .setup = &setup});

}  // namespace

}  // namespace prism::cli
