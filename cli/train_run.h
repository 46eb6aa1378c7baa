// The pieces of `prism train` (cli/cmd_train.cpp runs them in order): a run set up from the
// options, the step loop (train_steps.cpp), and what is printed and written after it
// (train_report.cpp). Shared by those three files only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/cmd_train.h"
#include "cli/commands.h"
#include "cli/train_data.h"
#include "nn/data/dataset.h"
#include "nn/dist/comm.h"
#include "nn/dist/ddp.h"
#include "nn/module.h"
#include "nn/optim/optimizer.h"
#include "nn/safetensors.h"
#include "profiler/session.h"

namespace prism::cli {

// A run ready to train: the settings in force (each from its option, or the model's default),
// the data, the model on its device and its optimizer.
struct TrainRun {
  Device device = Device::cpu;
  int64_t batch = 0;
  double lr = 0;
  std::string opt_name;
  nn::NonFinite non_finite = nn::NonFinite::refuse;  // for --load and --save
  int64_t steps = 0;
  TrainData data;
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<nn::optim::Optimizer> opt;
  // --ddp (cli/train_ddp.h): the ranks, and the gradient averaging; null otherwise.
  dist::Comm* comm = nullptr;
  std::unique_ptr<dist::GradSync> sync;
  bool is_rank0() const { return comm == nullptr || comm->rank() == 0; }
};

// What the step loop leaves for the report.
struct StepLog {
  std::vector<double> step_ms;       // every step's time
  std::vector<double> losses;        // every step's loss
  std::vector<double> comm_wait_ms;  // --ddp: each step's wait for the allreduces
  double last_loss = 0;
  int64_t window_begin = 0;  // the profiled steps are [window_begin, window_end), 0-based
  int64_t window_end = 0;
  // Still recording when the window did not close inside the loop; the report stops it.
  std::unique_ptr<profiler::Session> session;
  profiler::Profile profile;
};

// Loss and the number of correct predictions for one batch.
struct StepResult {
  Tensor loss;
  int64_t correct = 0;
  int64_t count = 0;
};

// The model's loss on one batch (moved to `device` first); with `count`, its correct
// predictions too. Used by the step loop, the divergence replay and the evaluation.
StepResult forward_batch(nn::Module& model, const nn::data::Batch& b, Task task, bool count,
                         Device device);

// Trains run.steps steps with a progress line every tenth of the run, profiling the window of
// steps that `o` asks for when `profiling`. A non-finite loss or gradient stops the run with an
// Error locating it (cli/train_divergence.h).
StepLog run_steps(const TrainOptions& o, TrainRun& run, bool profiling);

// The held-out evaluation after training.
struct Evaluation {
  double loss = 0;
  double accuracy = 0;
  int64_t examples = 0;
};

// Evaluates the model on the held-out set and prints the step times, the evaluation and (a
// character GPT) a sample of generated text.
Evaluation report_evaluation(const TrainOptions& o, TrainRun& run, const StepLog& log);

// Prints the profiled window's op table and module tree, and writes --trace and --json.
void report_profile(const TrainOptions& o, const TrainRun& run, StepLog& log, const Evaluation& ev);

}  // namespace prism::cli
