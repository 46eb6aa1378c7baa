// `prism quantize MODEL.safetensors -o MODEL.int8.safetensors`: int8 post-training quantization.
//
// Loads a float32 checkpoint of the mlp or the cnn (`prism train --save`), calibrates the
// activation scales on --calibrate batches of the training set (--method minmax | percentile),
// converts every Linear and Conv2d to int8 (nn/quantized.h), and prints what the trade gives
// and costs: weight bytes fp32 vs int8, and the held-out accuracy of both (with how often the
// two agree on the predicted class). The int8 model is written atomically, with metadata saying
// how it was made; `prism bench MODEL --precision int8 --load FILE` times it.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/commands.h"
#include "cli/file_roles.h"
#include "cli/options.h"
#include "cli/train_data.h"
#include "nn/data/loader.h"
#include "nn/models/zoo.h"
#include "nn/quantized.h"
#include "nn/safetensors.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"

namespace prism::cli {

namespace {

// The flags, as add_options (below) declares them.
struct QuantizeOptions {
  std::string model_path;
  std::string output_path;
  std::string model;              // mlp | cnn; "" = from the checkpoint's tensor names
  std::string data;               // "" = the model's default (train_data.h)
  int64_t calibrate = 8;          // calibration batches from the training set
  int64_t batch = 64;             // calibration and evaluation batch size
  std::string method = "minmax";  // minmax | percentile
  double percentile = 99.99;
  int64_t eval_batches = 0;  // 0 = the whole held-out set
  int threads = 0;
  uint64_t seed = 42;
};

// The architecture a checkpoint holds, from its tensor names: conv1.weight (the cnn) or
// fc1.weight (the mlp).
std::string guess_model(const std::string& path) {
  const nn::NamedTensors t = nn::read_safetensors(path);
  bool conv = false, fc = false;
  for (const auto& [name, tensor] : t) {
    conv = conv || name == "conv1.weight";
    fc = fc || name == "fc1.weight";
  }
  if (conv) return "cnn";
  if (fc) return "mlp";
  throw UsageError("quantize: cannot tell the architecture of " + path +
                   " (no conv1.weight or fc1.weight): give --model mlp or --model cnn");
}

struct Accuracy {
  int64_t correct = 0, examples = 0;
  double seconds = 0;
  std::vector<int64_t> predictions;
  double value() const { return examples ? static_cast<double>(correct) / examples : 0; }
};

Accuracy evaluate(nn::Module& model, const nn::data::Dataset& data, int64_t batch,
                  int64_t max_batches) {
  NoGrad no_grad;
  model.eval();
  nn::data::DataLoader loader(data, batch, /*shuffle=*/false, /*seed=*/0);
  Accuracy a;
  const auto t0 = std::chrono::steady_clock::now();
  int64_t batches = 0;
  for (auto& b : loader) {
    const Tensor pred = argmax(model(b.input), -1).contiguous();
    const Tensor target = b.target.to(DType::i64).contiguous();
    for (int64_t i = 0; i < pred.numel(); ++i) {
      const int64_t p = pred.data<int64_t>()[i];
      a.predictions.push_back(p);
      a.correct += p == target.data<int64_t>()[i];
    }
    a.examples += pred.numel();
    if (max_batches > 0 && ++batches >= max_batches) break;
  }
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return a;
}

int run_quantize(const QuantizeOptions& o) {
  if (o.threads > 0) set_threads(o.threads);
  // Refuse what would fail late before any work: the output path, the input file, the model.
  check_writable(o.output_path, "int8 model", /*regular_file_only=*/true);
  const std::string model = o.model.empty()      ? guess_model(o.model_path)
                            : o.model == "lenet" ? "cnn"
                                                 : o.model;
  nn::CalibrationOptions cal;
  cal.method = nn::parse_calibration_method(o.method);
  cal.percentile = o.percentile;

  const TrainData data = load_train_data(o.data, model, 0, o.seed);
  if (data.task != Task::classify) throw UsageError("quantize: needs an image data set");
  const nn::ModelOptions mo = model_options_for(data, model, {});
  auto fp32 = nn::make_model(model, mo);
  nn::load_safetensors(*fp32, o.model_path, /*strict=*/true);

  // Calibration: the first --calibrate batches of the shuffled training set.
  std::vector<Tensor> batches;
  {
    nn::data::DataLoader loader(*data.train, o.batch, /*shuffle=*/true, o.seed);
    for (auto& b : loader) {
      batches.push_back(b.input);
      if (static_cast<int64_t>(batches.size()) >= o.calibrate) break;
    }
  }
  const std::string how = cal.method == nn::CalibrationMethod::minmax
                              ? fmt::format("minmax over {} batches of {}", batches.size(), o.batch)
                              : fmt::format("percentile {} over {} batches of {}", cal.percentile,
                                            batches.size(), o.batch);
  auto int8 = nn::quantize_model(*fp32, batches, cal);

  const int64_t fp_bytes = nn::parameter_bytes(*fp32), q_bytes = int8->weight_bytes();
  std::printf("quantized %s (%s) to int8: activation scales from %s on %s\n", model.c_str(),
              o.model_path.c_str(), how.c_str(), data.name.c_str());
  std::printf(
      "weights: fp32 %lld bytes, int8 %lld bytes (int8 weights + fp32 scales and "
      "biases): %.2fx smaller\n",
      static_cast<long long>(fp_bytes), static_cast<long long>(q_bytes),
      static_cast<double>(fp_bytes) / static_cast<double>(q_bytes));

  const Accuracy a = evaluate(*fp32, *data.test, o.batch, o.eval_batches);
  const Accuracy b = evaluate(*int8, *data.test, o.batch, o.eval_batches);
  int64_t agree = 0;
  for (size_t i = 0; i < a.predictions.size(); ++i) agree += a.predictions[i] == b.predictions[i];
  std::printf(
      "held-out accuracy over %lld examples: fp32 %.2f%%, int8 %.2f%% (delta %+.2f "
      "points); same class predicted on %.2f%%\n",
      static_cast<long long>(a.examples), 100 * a.value(), 100 * b.value(),
      100 * (b.value() - a.value()),
      a.examples ? 100.0 * static_cast<double>(agree) / static_cast<double>(a.examples) : 0.0);
  std::printf("evaluation time (batch %lld): fp32 %.3f s, int8 %.3f s\n",
              static_cast<long long>(o.batch), a.seconds, b.seconds);

  nn::save_quantized(*int8, o.output_path,
                     {{"prism.model", model},
                      {"prism.calibration", how},
                      {"prism.calibration.data", data.name},
                      {"prism.source", o.model_path}});
  std::printf("wrote %s\n", o.output_path.c_str());
  return 0;
}

void add_options(CLI::App& cmd, QuantizeOptions& o) {
  cmd.add_option("model_file", o.model_path, "a float32 checkpoint (prism train --save)")
      ->required();
  cmd.add_option("-o,--output", o.output_path, "where to write the int8 model (.safetensors)")
      ->type_name("FILE")
      ->required();
  cmd.add_option("--model", o.model,
                 "the checkpoint's architecture: mlp or cnn (default: read "
                 "from its tensor names)")
      ->check(CLI::IsMember({"mlp", "cnn", "lenet"}));
  cmd.add_option("--data", o.data,
                 "data set for calibration and the held-out accuracy "
                 "(default: the model's, Fashion-MNIST when installed)")
      ->type_name("NAME|PATH");
  cmd.add_option("--calibrate", o.calibrate,
                 "calibration batches (default 8; percentile keeps every value seen: 4 bytes each)")
      ->check(whole_number(1, 10'000));
  cmd.add_option("--batch", o.batch, "calibration and evaluation batch size (default 64)")
      ->check(whole_number(1, 65'536));
  cmd.add_option("--method", o.method, "activation ranges: minmax or percentile")
      ->check(CLI::IsMember({"minmax", "percentile"}));
  cmd.add_option("--percentile", o.percentile, "with --method percentile (default 99.99)")
      ->check(number_in(1e-9, 100));
  cmd.add_option("--eval-batches", o.eval_batches, "held-out batches evaluated (default all)")
      ->check(whole_number(0, 1'000'000));
  cmd.add_option("--threads", o.threads, "OpenMP threads")->check(whole_number(1, 1024));
  cmd.add_option("--seed", o.seed, "seed of the calibration batches' shuffle")
      ->check(seed_number());
}

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<QuantizeOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_quantize(*o); },
          .files =
              [o](CommandFiles& f) {
                f.input("model_file", o->model_path);
                f.data_set(o->data, true);
                f.output("--output", o->output_path);
              }};
}

const RegisteredCommand registered(
    {.order = 1500,
     .name = "quantize",
     .help = "int8 post-training quantization of a trained mlp or cnn: sizes, accuracy",
     .runs_kernels = true,
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
