// `prism demo`: the whole framework in one short run. It trains the LeNet-style CNN on
// Fashion-MNIST (generated shape images when the Debian package is not installed) while the
// profiler records a window of steps, then prints the op table and the module tree, and writes
// a Chrome/Perfetto trace, a JSON profile and the HTML report of that profile. It is `prism train
// cnn` with the profile on.
#include "cli/commands.h"

namespace prism::cli {

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

}  // namespace prism::cli
