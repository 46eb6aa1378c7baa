// `prism train`'s step loop: forward, loss, backward, optimizer step, with a progress line, the
// profiled window and the divergence check (cli/train_run.h).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/train_ddp.h"
#include "cli/train_divergence.h"
#include "cli/train_run.h"
#include "kernels/gpu_runtime.h"
#include "nn/data/loader.h"
#include "nn/loss.h"
#include "nn/optim/lr_schedule.h"
#include "profiler/clock.h"
#include "tensor/autocast.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"

namespace prism::cli {

namespace {

// The progress line, every tenth of the run: the mean loss and the accuracy over the steps since
// the last line, and the throughput since the start.
class Progress {
 public:
  explicit Progress(int64_t steps)
      : steps_(steps),
        every_(std::max<int64_t>(1, steps / 10)),
        start_(std::chrono::steady_clock::now()) {}

  void add(int64_t step, double loss, const StepResult& r, int64_t batch_size) {
    loss_ += loss;
    correct_ += r.correct;
    count_ += r.count;
    samples_ += batch_size;
    if ((step + 1) % every_ != 0 && step + 1 != steps_) return;
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const int64_t n = (step % every_) + 1;
    std::printf(
        "step %*lld/%lld  loss %.4f  accuracy %5.1f%%  %.0f samples/s\n",
        static_cast<int>(std::to_string(steps_).size()), static_cast<long long>(step + 1),
        static_cast<long long>(steps_), loss_ / static_cast<double>(n),
        100.0 * static_cast<double>(correct_) / static_cast<double>(std::max<int64_t>(count_, 1)),
        static_cast<double>(samples_) / std::max(secs, 1e-9));
    std::fflush(stdout);
    loss_ = 0;
    correct_ = count_ = 0;
  }

 private:
  int64_t steps_;
  int64_t every_;
  std::chrono::steady_clock::time_point start_;
  double loss_ = 0;
  int64_t correct_ = 0, count_ = 0, samples_ = 0;
};

// Stops the run at a non-finite loss or gradient, before the optimizer step can spread it into
// the weights: replays the step to find the op that made it, and throws the report (exit 1).
[[noreturn]] void stop_diverged(const TrainOptions& o, TrainRun& run, StepLog& log, int64_t step,
                                const std::string& what, const nn::data::Batch& b) {
  if (log.session) log.session->stop(), log.session.reset();  // the replay is not profiled
  Divergence d;
  d.step = step + 1;
  d.what = what;
  d.lr = run.lr;
  d.lr_source = o.lr > 0 ? "--lr" : "the model's default lr";
  for (const auto& [path, m] : run.model->named_modules()) {
    d.has_dropout = d.has_dropout || m->type_name() == "Dropout";
  }
  report_divergence(d, *run.model, b.input, [&] {
    forward_batch(*run.model, b, run.data.task, false, run.device).loss.backward();
  });
}

}  // namespace

StepResult forward_batch(nn::Module& model, const nn::data::Batch& b, Task task, bool count,
                         Device device) {
  StepResult r;
  // Batches are made on the cpu; on the GPU the copy is part of the step (to_cuda records).
  Tensor logits = model(b.input.to(device));
  Tensor labels = b.target.to(device);
  if (task == Task::next_char) {
    const int64_t v = logits.size(-1);
    logits = logits.reshape({-1, v});
    labels = labels.reshape({-1});
  }
  r.loss = nn::cross_entropy(logits, labels);
  if (count) {
    NoGrad no_grad;
    const std::vector<int64_t> pred = argmax(logits.detach(), 1).to_vector<int64_t>();
    const std::vector<int64_t> truth = labels.to_vector<int64_t>();
    for (size_t i = 0; i < pred.size(); ++i) r.correct += pred[i] == truth[i];
    r.count = static_cast<int64_t>(pred.size());
  }
  return r;
}

StepLog run_steps(const TrainOptions& o, TrainRun& run, bool profiling) {
  const int64_t steps = run.steps;
  // The learning rate follows a cosine from lr down to lr/100 over the run (after a short
  // warm-up for the Adam family), unless --schedule none keeps it constant.
  std::unique_ptr<nn::optim::LRSchedule> schedule;
  if (o.schedule == "cosine") {
    const int64_t warmup = run.opt_name == "sgd" ? 0 : std::min<int64_t>(100, steps / 10);
    schedule = std::make_unique<nn::optim::CosineAnnealing>(*run.opt, steps, run.lr / 100, warmup);
  }
  nn::data::LoaderOptions lo{run.batch, /*shuffle=*/true, o.seed, /*drop_last=*/true,
                             /*prefetch=*/o.prefetch};
  if (run.comm) {  // --ddp: this rank's part of every global batch (nn/data/loader.h)
    lo.shard_rank = run.comm->rank();
    lo.shard_count = run.comm->size();
  }
  nn::data::DataLoader loader(*run.data.train, lo);
  StepLog log;
  log.window_begin = std::min<int64_t>(o.profile_warmup, std::max<int64_t>(steps - 1, 0));
  log.window_end = std::min<int64_t>(steps, log.window_begin + o.profile_steps);
  log.step_ms.reserve(static_cast<size_t>(steps));
  log.losses.reserve(static_cast<size_t>(steps));
  Progress progress(steps);
  for (int64_t step = 0; step < steps; ++step) {
    if (profiling && step == log.window_begin) {
      profiler::SessionOptions so;
      so.counters = o.counters;  // on this thread, which runs every op of the step
      log.session = std::make_unique<profiler::Session>(so);
    }
    std::optional<nn::data::Batch> b = loader.next();
    if (!b) b = loader.next();  // the epoch ended: the next call starts a new one
    if (run.comm) maybe_inject_fault(*run.comm, step + 1, *run.model);
    const int64_t t0 = profiler::now_ns();
    // --precision bf16: forward and backward under the autocast policy (tensor/autocast.h); the
    // optimizer step below updates the fp32 master weights outside it.
    std::optional<Autocast> policy;
    if (o.precision == "bf16") policy.emplace(DType::bf16);
    StepResult r = forward_batch(*run.model, *b, run.data.task, true, run.device);
    // A non-finite loss or gradient stops the run before the optimizer step can spread it into
    // the weights (cli/train_divergence.h); both checks read values the step has anyway.
    double loss = r.loss.item<double>();
    if (run.comm) {
      // The global batch's loss (the mean of the ranks' equal shards) and correct count, on
      // every rank: the progress line, and the same divergence decision everywhere.
      double sums[3] = {loss, static_cast<double>(r.correct), static_cast<double>(r.count)};
      dist::allreduce_profiled(*run.comm, sums, 3, "allreduce of the step's loss");
      loss = sums[0] / run.comm->size();
      r.correct = static_cast<int64_t>(sums[1]);
      r.count = static_cast<int64_t>(sums[2]);
    }
    if (!std::isfinite(loss)) {
      stop_diverged(o, run, log, step,
                    std::isnan(loss) ? "the loss is nan" : fmt::format("the loss is {}", loss), *b);
    }
    if (run.sync) {
      // Buckets of gradients start their allreduce as backward finishes them (nn/dist/ddp.h).
      {
        const auto hook = run.sync->hook();
        r.loss.backward();
      }
      run.sync->finish();
      log.comm_wait_ms.push_back(static_cast<double>(run.sync->last_stats().wait_ns) / 1e6);
    } else {
      r.loss.backward();
    }
    policy.reset();
    if (const std::string p = first_non_finite_gradient(*run.model); !p.empty()) {
      stop_diverged(
          o, run, log, step,
          fmt::format("the loss is finite ({:.4g}) but the gradient of {} is not", loss, p), *b);
    }
    run.opt->step();
    run.opt->zero_grad();
    if (schedule) schedule->step();
    // GPU work is queued, not done, when the host gets here: wait, so the step time is the
    // device's too.
    if (run.device == Device::cuda) kernels::gpu::synchronize();
    log.step_ms.push_back(static_cast<double>(profiler::now_ns() - t0) / 1e6);
    if (log.session && step + 1 == log.window_end) {
      log.profile = log.session->stop(), log.session.reset();
    }
    log.last_loss = loss;
    log.losses.push_back(loss);
    progress.add(step, loss, r, run.comm ? run.batch : b->size());
    if (run.sync && ((step + 1) % o.check_every == 0 || step + 1 == steps)) {
      run.sync->check_weights_identical(step + 1);
    }
  }
  loader.stop();
  return log;
}

}  // namespace prism::cli
