// What `prism train` prints and writes once the steps are done: the step times, the held-out
// evaluation, a text sample, and the profiled window (op table, bottleneck map, module tree,
// trace, JSON).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/bottleneck.h"
#include "analysis/environment.h"
#include "analysis/html/profile_views.h"
#include "analysis/model_bench.h"
#include "analysis/run_record.h"
#include "cli/train_ddp.h"
#include "cli/train_run.h"
#include "kernels/gpu_runtime.h"
#include "kernels/opinfo/op_info.h"
#include "nn/data/loader.h"
#include "nn/models/gpt.h"
#include "profiler/machine.h"
#include "profiler/memory.h"
#include "profiler/reports.h"
#include "tensor/autograd/grad_mode.h"

namespace prism::cli {

namespace {

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

// Median, minimum and maximum of the step times (all 0 for no steps).
struct StepTimes {
  double median = 0, min = 0, max = 0;
};

StepTimes step_times(std::vector<double> v) {
  StepTimes t;
  if (v.empty()) return t;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  t.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  t.min = v.front();
  t.max = v.back();
  return t;
}

profiler::TreeOptions tree_options(const nn::Module& model) {
  profiler::TreeOptions t;
  for (const auto& [path, m] : model.named_modules()) {
    const std::string full = path.empty() ? model.name() : model.name() + "." + path;
    t.modules[full] = profiler::ModuleInfo{m->type_name(), m->parameter_count()};
  }
  return t;
}

// 200 characters from a character GPT, on the host, starting a line (or, in a text with no
// newline at all, from its vocabulary's first character).
void print_sample(nn::GPT& gpt, const TrainRun& run, uint64_t seed) {
  run.model->to(Device::cpu);  // sampling runs token by token on the host
  const nn::data::CharDataset& text = *run.data.text;
  const std::string start =
      text.vocab().contains('\n') ? std::string("\n") : text.vocab().chars().substr(0, 1);
  const std::vector<int64_t> prompt = text.encode(start);
  const std::vector<int64_t> out = gpt.generate(prompt, 200, 0.8, 0, seed);
  std::printf("sample:\n%s\n", text.decode(out).c_str());
}

// The JSON's `train` block: the settings, the step times and the outcome of the run.
nlohmann::ordered_json train_json(const TrainOptions& o, const TrainRun& run, const StepLog& log,
                                  const Evaluation& ev) {
  const TrainData& data = run.data;
  const StepTimes t = step_times(log.step_ms);
  const bool cuda = run.device == Device::cuda;
  const analysis::Fingerprint fp =
      analysis::fingerprint(max_threads(), cuda ? kernels::gpu::device_info().name : "cpu");
  nlohmann::ordered_json j = {
      {"model", o.model},
      {"data", data.name},
      {"batch", run.batch},
      {"threads", max_threads()},
      {"device", device_name(run.device)},
      {"optimizer", run.opt_name},
      {"lr", run.lr},
      {"schedule", o.schedule},
      {"precision", o.precision},
      {"steps", run.steps},
      {"profiled_steps", {log.window_begin + 1, log.window_end}},
      {"step_ms", {{"median", t.median}, {"min", t.min}, {"max", t.max}}},
      // Every step's time, so `prism compare` and `prism gate` can test a difference.
      {"step_samples_ms", log.step_ms},
      {"kernels", analysis::kernel_choices()},
      {"fingerprint", analysis::fingerprint_to_json(fp)},
      {"peak_rss_bytes", analysis::resident_memory().peak_bytes},
      {"tracked_peak_bytes", profiler::memory_stats(cuda ? 1 : 0).peak_bytes},
      {"final_loss", log.last_loss},
      // null, not 0, when nothing was held out: a loss of 0 would read as a perfect model.
      {"test_loss", ev.examples > 0 ? nlohmann::ordered_json(ev.loss) : nlohmann::ordered_json()},
      {"test_accuracy", data.task == Task::classify && ev.examples > 0
                            ? nlohmann::ordered_json(ev.accuracy)
                            : nlohmann::ordered_json()},
      {"unigram_entropy_nats", data.task == Task::next_char
                                   ? nlohmann::ordered_json(data.unigram_entropy_nats)
                                   : nlohmann::ordered_json()},
      // Every step's loss (the global batch's under --ddp), to compare runs step by step.
      {"step_losses", log.losses}};
  if (run.comm) {
    const StepTimes w = step_times(log.comm_wait_ms);
    j["ddp"] = {{"ranks", run.comm->size()},
                {"parameters", run.model->parameter_count()},
                {"bucket_bytes", static_cast<int64_t>(o.bucket_mb * 1024 * 1024)},
                {"buckets", run.sync->buckets().size()},
                {"overlap", !o.no_overlap},
                {"gradient_bytes", run.sync->last_stats().bytes},
                {"wait_ms", {{"median", w.median}, {"min", w.min}, {"max", w.max}}},
                {"wait_samples_ms", log.comm_wait_ms}};
  }
  return j;
}

// The bottleneck map of the profiled window (analysis/bottleneck.h). The machine's figures come
// from `prism machine`'s cache only: measuring them takes seconds a training run should not
// spend unasked, so without the cache the map classes ops by overhead alone and says why.
analysis::BottleneckMap bottleneck_map(const TrainOptions& o, const TrainRun& run,
                                       const StepLog& log) {
  const bool cuda = run.device == Device::cuda;
  analysis::BottleneckSettings s;
  if (cuda) {
    s.no_peaks_reason = "the map has the CPU's roofs only";
  } else if (const profiler::MachinePeak* m = profiler::machine_peak(false)) {
    s.peaks = analysis::peaks_of(*m);
  } else {
    s.no_peaks_reason = "none cached: `prism machine` measures and caches them";
  }
  s.dispatch_ns = analysis::measure_dispatch_ns(true);  // the session has stopped: nothing recorded
  const profiler::MemoryStats mem = profiler::memory_stats(cuda ? 1 : 0);
  s.tracked_peak_bytes = mem.peak_bytes;
  s.activation_peak_bytes = mem.peak_by_role[static_cast<size_t>(profiler::MemRole::activation)];
  s.memory_budget_bytes =
      cuda ? kernels::gpu::device_info().total_bytes : analysis::physical_memory_bytes();
  s.lever.model = o.model;
  s.lever.mode = "train";
  s.lever.batch = run.batch;
  s.lever.threads = max_threads();
  // The data set as --data names it: the flag, or the built-in default's name (its first word).
  s.lever.data = o.data.empty() ? run.data.name.substr(0, run.data.name.find(' ')) : o.data;
  if (s.lever.data.find(' ') != std::string::npos) s.lever.data = "'" + s.lever.data + "'";
  for (const opinfo::OpInfo& op : opinfo::op_infos()) s.lever.lab_ops.push_back(op.op);
  const double steps = static_cast<double>(std::max<int64_t>(log.window_end - log.window_begin, 1));
  return analysis::map_bottlenecks(analysis::window_load(log.profile, steps), s);
}

}  // namespace

Evaluation report_evaluation(const TrainOptions& o, TrainRun& run, const StepLog& log) {
  const TrainData& data = run.data;
  // Text: 50 random batches of windows estimate the validation loss well (overlapping windows
  // of the same text make the full set mostly repetition).
  const int64_t eval_batches =
      data.task == Task::next_char ? std::min<int64_t>(o.eval_batches, 50) : o.eval_batches;
  const Evaluation ev =
      evaluate(*run.model, *data.test, data.task, run.batch, eval_batches, run.device);
  const StepTimes t = step_times(log.step_ms);
  std::printf("step time: median %.3f ms (min %.3f, max %.3f) over %zu steps\n", t.median, t.min,
              t.max, log.step_ms.size());
  if (run.comm) {
    const StepTimes w = step_times(log.comm_wait_ms);
    std::printf(
        "data parallel (rank 0): gradients averaged a median %.3f ms after backward ended (min "
        "%.3f, max %.3f); %d of %zu buckets started during backward in the last step\n",
        w.median, w.min, w.max, run.sync->last_stats().buckets_during_backward,
        run.sync->buckets().size());
  }
  if (data.task == Task::next_char) {
    std::printf(
        "validation: loss %.4f nats/char over %lld characters (unigram entropy of the text: "
        "%.4f)\n",
        ev.loss, static_cast<long long>(ev.examples), data.unigram_entropy_nats);
    if (auto* gpt = dynamic_cast<nn::GPT*>(run.model.get())) print_sample(*gpt, run, o.seed);
  } else if (ev.examples == 0) {
    std::printf("test: no held-out examples (the test set is empty): nothing to report\n");
  } else {
    std::printf("test: accuracy %.2f%%, loss %.4f over %lld examples\n", 100.0 * ev.accuracy,
                ev.loss, static_cast<long long>(ev.examples));
  }
  return ev;
}

void report_profile(const TrainOptions& o, const TrainRun& run, StepLog& log,
                    const Evaluation& ev) {
  if (log.session) log.profile = log.session->stop(), log.session.reset();
  const profiler::Profile& profile = log.profile;
  // --ddp: one trace with a process row per rank, gathered by rank 0 (every rank takes part);
  // the tables and files are rank 0's.
  std::string trace = o.trace_path.empty() ? "" : profiler::trace_json(profile);
  if (run.comm && !o.trace_path.empty()) trace = merged_rank_trace(*run.comm, profile, trace);
  if (!run.is_rank0()) return;
  std::printf("\nprofile of steps %lld-%lld:\n", static_cast<long long>(log.window_begin + 1),
              static_cast<long long>(log.window_end));
  profiler::TableOptions table;
  table.max_rows = o.rows;
  std::fputs(profiler::format_table(profile, table).c_str(), stdout);
  const analysis::BottleneckMap map = bottleneck_map(o, run, log);
  std::fputs(("\n" + analysis::format_bottleneck(map)).c_str(), stdout);
  std::fputs("\n", stdout);
  std::fputs(profiler::format_tree(profile, tree_options(*run.model)).c_str(), stdout);
  if (!o.trace_path.empty()) {
    profiler::write_text_file(o.trace_path, trace);
    std::printf(
        "wrote %s  (timeline: open https://ui.perfetto.dev or chrome://tracing and load it)\n",
        o.trace_path.c_str());
  }
  if (o.json_path.empty() && o.report_path.empty()) return;
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(profiler::profile_json(profile));
  // The profiler knows scopes by path only; the model knows each one's type and parameters.
  const profiler::TreeOptions modules = tree_options(*run.model);
  for (auto& m : j["modules"]) {
    const auto it = modules.modules.find(m["path"].get<std::string>());
    if (it == modules.modules.end()) continue;
    m["type"] = it->second.type;
    m["params"] = it->second.params;
  }
  j["train"] = train_json(o, run, log, ev);
  j["bottleneck"] = analysis::bottleneck_json(map);
  if (!o.json_path.empty()) {
    profiler::write_text_file(o.json_path, j.dump(2) + "\n");
    std::printf("wrote %s\n", o.json_path.c_str());
  }
  if (!o.report_path.empty()) {
    // The page `prism report` would make of that JSON, read back through the same checks.
    const nlohmann::json doc = nlohmann::json::parse(j.dump());
    const std::string name = o.json_path.empty()
                                 ? "prism train " + o.model
                                 : std::filesystem::path(o.json_path).filename().string();
    profiler::write_text_file(o.report_path,
                              report_html({name}, {analysis::html::read_profile(doc)}));
    std::printf("wrote %s  (open it in a browser)\n", o.report_path.c_str());
  }
}

}  // namespace prism::cli
