// `prism train MODEL`: trains a model from the zoo on a data set, with a progress line, a
// held-out evaluation at the end, and (with --profile, --trace or --json) a profile of a window
// of training steps: the op table, the module tree, a trace and a JSON record.
//
// Only a window of steps is profiled (by default steps 6-25, after the warm-up steps that fill
// caches and the allocator): a whole run would record millions of ops and write a trace no
// viewer opens. Step times are measured for every step either way; the JSON's train block
// gives their median and range.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/environment.h"
#include "analysis/run_record.h"
#include "cli/commands.h"
#include "cli/train_data.h"
#include "cli/train_divergence.h"
#include "kernels/gpu_runtime.h"
#include "nn/data/loader.h"
#include "nn/loss.h"
#include "nn/models/gpt.h"
#include "nn/models/zoo.h"
#include "nn/optim/lr_schedule.h"
#include "nn/optim/make.h"
#include "nn/safetensors.h"
#include "profiler/clock.h"
#include "profiler/memory.h"
#include "profiler/reports.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace prism::cli {

namespace {

// Loss and the number of correct predictions for one batch.
struct StepResult {
  Tensor loss;
  int64_t correct = 0;
  int64_t count = 0;
};

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

struct Evaluation {
  double loss = 0;
  double accuracy = 0;
  int64_t examples = 0;
};

// Mean loss and accuracy over the held-out set (at most `max_batches` batches), eval mode.
Evaluation evaluate(nn::Module& model, const nn::data::Dataset& data, Task task, int64_t batch,
                    int64_t max_batches, Device device) {
  NoGrad no_grad;
  const bool was_training = model.is_training();
  model.eval();
  nn::data::DataLoader loader(data, batch, /*shuffle=*/task == Task::next_char, /*seed=*/7);
  Evaluation e;
  double loss_sum = 0;
  int64_t correct = 0, batches = 0;
  for (auto& b : loader) {
    StepResult r = forward_batch(model, b, task, true, device);
    loss_sum += r.loss.item<double>() * static_cast<double>(r.count);
    correct += r.correct;
    e.examples += r.count;
    if (++batches >= max_batches) break;
  }
  model.train(was_training);
  if (e.examples > 0) {
    e.loss = loss_sum / static_cast<double>(e.examples);
    e.accuracy = static_cast<double>(correct) / static_cast<double>(e.examples);
  }
  return e;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

profiler::TreeOptions tree_options(const nn::Module& model) {
  profiler::TreeOptions t;
  for (const auto& [path, m] : model.named_modules()) {
    const std::string full = path.empty() ? model.name() : model.name() + "." + path;
    t.modules[full] = profiler::ModuleInfo{m->type_name(), m->parameter_count()};
  }
  return t;
}

}  // namespace

int run_train(const TrainOptions& o) {
  if (o.threads > 0) set_threads(o.threads);
  load_kernel_env();
  apply_kernel_flags(o.kernels);
  const bool profiling = o.profile || !o.trace_path.empty() || !o.json_path.empty();
  if (!o.trace_path.empty()) check_writable(o.trace_path, "trace");
  if (!o.json_path.empty()) check_writable(o.json_path, "json");
  if (!o.save_path.empty()) check_writable(o.save_path, "checkpoint", /*regular_file_only=*/true);
  check_distinct_outputs(
      {{"--save", o.save_path}, {"--json", o.json_path}, {"--trace", o.trace_path}});

  check_model_name(o.model);                         // before the data set is loaded
  const Device device = device_from_flag(o.device);  // cuda without a GPU: a clear error here
  manual_seed(o.seed);
  const nn::TrainingDefaults def = nn::training_defaults(o.model);
  const int64_t batch = o.batch > 0 ? o.batch : def.batch;
  const double lr = o.lr > 0 ? o.lr : def.lr;
  const std::string opt_name = o.optimizer.empty() ? def.optimizer : o.optimizer;

  // Data first: the model's input and output sizes follow from it.
  nn::ModelOptions mo;
  if (nn::is_language_model(o.model)) mo.block_size = o.block_size > 0 ? o.block_size : 64;
  TrainData data = load_train_data(o.data, o.model, mo.block_size > 0 ? mo.block_size : 64, o.seed);
  mo = model_options_for(data, o.model, mo);
  // Every step takes a full batch (drop_last): a batch larger than the training set has none.
  if (batch > data.train->size()) {
    throw UsageError("--batch " + std::to_string(batch) + " is larger than the training set: " +
                     std::to_string(data.train->size()) + " examples in " + data.name +
                     "; use a batch of at most " + std::to_string(data.train->size()));
  }
  std::shared_ptr<nn::Module> model = nn::make_model(o.model, mo);
  const nn::NonFinite non_finite =
      o.allow_non_finite ? nn::NonFinite::allow : nn::NonFinite::refuse;
  if (!o.load_path.empty()) nn::load_safetensors(*model, o.load_path, true, non_finite);
  model->to(device);  // before the optimizer, whose state is made beside each parameter
  auto opt = nn::optim::make_optimizer(opt_name, model->parameters(), lr);

  const int64_t per_epoch = std::max<int64_t>(1, data.train->size() / batch);
  const int64_t steps = o.steps > 0 ? o.steps : per_epoch * std::max(o.epochs, 1);
  std::printf(
      "training %s (%lld parameters) on %s: %lld examples, batch %lld, %s lr %g (schedule %s), "
      "%lld steps, %d thread%s\n",
      o.model.c_str(), static_cast<long long>(model->parameter_count()), data.name.c_str(),
      static_cast<long long>(data.train->size()), static_cast<long long>(batch), opt_name.c_str(),
      lr, o.schedule.c_str(), static_cast<long long>(steps), max_threads(),
      max_threads() == 1 ? "" : "s");
  if (const std::string k = kernel_summary(); !k.empty()) std::printf("kernels: %s\n", k.c_str());

  // The learning rate follows a cosine from lr down to lr/100 over the run (after a short
  // warm-up for the Adam family), unless --schedule none keeps it constant.
  std::unique_ptr<nn::optim::LRSchedule> schedule;
  if (o.schedule == "cosine") {
    const int64_t warmup = opt_name == "sgd" ? 0 : std::min<int64_t>(100, steps / 10);
    schedule = std::make_unique<nn::optim::CosineAnnealing>(*opt, steps, lr / 100, warmup);
  }
  nn::data::DataLoader loader(*data.train, batch, /*shuffle=*/true, o.seed, /*drop_last=*/true,
                              /*prefetch=*/o.prefetch);
  const int64_t window_begin = std::min<int64_t>(o.profile_warmup, std::max<int64_t>(steps - 1, 0));
  const int64_t window_end = std::min<int64_t>(steps, window_begin + o.profile_steps);
  std::unique_ptr<profiler::Session> session;
  profiler::Profile profile;

  std::vector<double> step_ms;
  step_ms.reserve(static_cast<size_t>(steps));
  double last_loss = 0, window_loss = 0;
  int64_t window_correct = 0, window_count = 0;
  const int64_t report_every = std::max<int64_t>(1, steps / 10);
  const auto t_start = std::chrono::steady_clock::now();
  int64_t samples = 0;
  // Stops the run with a report of where the first non-finite value appeared (exit 1).
  auto diverged = [&](int64_t step, const std::string& what, const nn::data::Batch& b) {
    if (session) session->stop(), session.reset();  // the replay is not part of the profile
    Divergence d;
    d.step = step + 1;
    d.what = what;
    d.lr = lr;
    d.lr_source = o.lr > 0 ? "--lr" : "the model's default lr";
    for (const auto& [path, m] : model->named_modules()) {
      d.has_dropout = d.has_dropout || m->type_name() == "Dropout";
    }
    report_divergence(d, *model, b.input,
                      [&] { forward_batch(*model, b, data.task, false, device).loss.backward(); });
  };
  for (int64_t step = 0; step < steps; ++step) {
    if (profiling && step == window_begin) session = std::make_unique<profiler::Session>();
    std::optional<nn::data::Batch> b = loader.next();
    if (!b) b = loader.next();  // the epoch ended: the next call starts a new one
    const int64_t t0 = profiler::now_ns();
    StepResult r = forward_batch(*model, *b, data.task, true, device);
    // A non-finite loss or gradient stops the run before the optimizer step can spread it into
    // the weights (cli/train_divergence.h); both checks read values the step has anyway.
    const double loss = r.loss.item<double>();
    if (!std::isfinite(loss)) {
      diverged(step, std::isnan(loss) ? "the loss is nan" : fmt::format("the loss is {}", loss),
               *b);
    }
    r.loss.backward();
    if (const std::string p = first_non_finite_gradient(*model); !p.empty()) {
      diverged(step,
               fmt::format("the loss is finite ({:.4g}) but the gradient of {} is not", loss, p),
               *b);
    }
    opt->step();
    opt->zero_grad();
    if (schedule) schedule->step();
    // GPU work is queued, not done, when the host gets here: wait, so the step time is the
    // device's too.
    if (device == Device::cuda) kernels::gpu::synchronize();
    step_ms.push_back(static_cast<double>(profiler::now_ns() - t0) / 1e6);
    if (session && step + 1 == window_end) profile = session->stop(), session.reset();

    last_loss = loss;
    window_loss += last_loss;
    window_correct += r.correct;
    window_count += r.count;
    samples += b->size();
    if ((step + 1) % report_every == 0 || step + 1 == steps) {
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
      const int64_t n = (step % report_every) + 1;
      std::printf("step %*lld/%lld  loss %.4f  accuracy %5.1f%%  %.0f samples/s\n",
                  static_cast<int>(std::to_string(steps).size()), static_cast<long long>(step + 1),
                  static_cast<long long>(steps), window_loss / static_cast<double>(n),
                  100.0 * static_cast<double>(window_correct) /
                      static_cast<double>(std::max<int64_t>(window_count, 1)),
                  static_cast<double>(samples) / std::max(secs, 1e-9));
      std::fflush(stdout);
      window_loss = 0;
      window_correct = window_count = 0;
    }
  }
  loader.stop();

  // Text: 50 random batches of windows estimate the validation loss well (overlapping windows
  // of the same text make the full set mostly repetition).
  const int64_t eval_batches =
      data.task == Task::next_char ? std::min<int64_t>(o.eval_batches, 50) : o.eval_batches;
  const Evaluation ev = evaluate(*model, *data.test, data.task, batch, eval_batches, device);
  const double med = median(step_ms);
  const double lo = step_ms.empty() ? 0 : *std::min_element(step_ms.begin(), step_ms.end());
  const double hi = step_ms.empty() ? 0 : *std::max_element(step_ms.begin(), step_ms.end());
  std::printf("step time: median %.3f ms (min %.3f, max %.3f) over %zu steps\n", med, lo, hi,
              step_ms.size());
  if (data.task == Task::next_char) {
    std::printf(
        "validation: loss %.4f nats/char over %lld characters (unigram entropy of the text: "
        "%.4f)\n",
        ev.loss, static_cast<long long>(ev.examples), data.unigram_entropy_nats);
    if (auto* gpt = dynamic_cast<nn::GPT*>(model.get())) {
      model->to(Device::cpu);  // sampling runs token by token on the host
      // Start a line, or, in a text with no newline at all, from its vocabulary's first character.
      const std::string start = data.text->vocab().contains('\n')
                                    ? std::string("\n")
                                    : data.text->vocab().chars().substr(0, 1);
      const std::vector<int64_t> prompt = data.text->encode(start);
      const std::vector<int64_t> out = gpt->generate(prompt, 200, 0.8, 0, o.seed);
      std::printf("sample:\n%s\n", data.text->decode(out).c_str());
    }
  } else if (ev.examples == 0) {
    std::printf("test: no held-out examples (the test set is empty): nothing to report\n");
  } else {
    std::printf("test: accuracy %.2f%%, loss %.4f over %lld examples\n", 100.0 * ev.accuracy,
                ev.loss, static_cast<long long>(ev.examples));
  }

  if (!o.save_path.empty()) {
    model->to(Device::cpu);  // the file is written from host memory
    nn::save_safetensors(*model, o.save_path, {}, non_finite);
    std::printf("saved weights to %s\n", o.save_path.c_str());
  }
  if (!profiling) return 0;
  if (session) profile = session->stop(), session.reset();
  std::printf("\nprofile of steps %lld-%lld:\n", static_cast<long long>(window_begin + 1),
              static_cast<long long>(window_end));
  profiler::TableOptions table;
  table.max_rows = o.rows;
  std::fputs(profiler::format_table(profile, table).c_str(), stdout);
  std::fputs("\n", stdout);
  std::fputs(profiler::format_tree(profile, tree_options(*model)).c_str(), stdout);
  if (!o.trace_path.empty()) {
    profiler::write_text_file(o.trace_path, profiler::trace_json(profile));
    std::printf(
        "wrote %s  (timeline: open https://ui.perfetto.dev or chrome://tracing and load it)\n",
        o.trace_path.c_str());
  }
  if (!o.json_path.empty()) {
    const analysis::Fingerprint fp = analysis::fingerprint(
        max_threads(), device == Device::cuda ? kernels::gpu::device_info().name : "cpu");
    const nlohmann::ordered_json fingerprint_json = analysis::fingerprint_to_json(fp);
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(profiler::profile_json(profile));
    j["train"] = {
        {"model", o.model},
        {"data", data.name},
        {"batch", batch},
        {"threads", max_threads()},
        {"device", device_name(device)},
        {"optimizer", opt_name},
        {"lr", lr},
        {"schedule", o.schedule},
        {"steps", steps},
        {"profiled_steps", {window_begin + 1, window_end}},
        {"step_ms", {{"median", med}, {"min", lo}, {"max", hi}}},
        // Every step's time, so `prism compare` and `prism gate` can test a difference.
        {"step_samples_ms", step_ms},
        {"kernels", analysis::kernel_choices()},
        {"fingerprint", fingerprint_json},
        {"peak_rss_bytes", analysis::resident_memory().peak_bytes},
        {"tracked_peak_bytes", profiler::memory_stats(device == Device::cuda ? 1 : 0).peak_bytes},
        {"final_loss", last_loss},
        // null, not 0, when nothing was held out: a loss of 0 would read as a perfect model.
        {"test_loss", ev.examples > 0 ? nlohmann::ordered_json(ev.loss) : nlohmann::ordered_json()},
        {"test_accuracy", data.task == Task::classify && ev.examples > 0
                              ? nlohmann::ordered_json(ev.accuracy)
                              : nlohmann::ordered_json()},
        {"unigram_entropy_nats", data.task == Task::next_char
                                     ? nlohmann::ordered_json(data.unigram_entropy_nats)
                                     : nlohmann::ordered_json()}};
    profiler::write_text_file(o.json_path, j.dump(2) + "\n");
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  return 0;
}

}  // namespace prism::cli
