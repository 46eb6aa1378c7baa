// What `prism bench` and the baselines run: a zoo model, synthetic inputs of its shape, and one
// call of it — an inference call (eval mode, no autograd) or a training step (forward, the
// cross-entropy loss, backward, the optimizer's update, zero_grad), with the optimizer and
// learning rate `prism train` would use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/types.h"
#include "nn/data/dataset.h"
#include "nn/models/zoo.h"
#include "nn/optim/optimizer.h"

namespace prism::analysis {

enum class BenchMode { infer, train };
const char* bench_mode_name(BenchMode m);

class Workload {
 public:
  // Builds the model (weights from `seed`) on `device` (cpu, cuda, or meta: shapes only).
  Workload(const std::string& model, BenchMode mode, const nn::ModelOptions& options, Device device,
           uint64_t seed);

  // Makes the inputs (and, for training, the targets) for `batch` rows. Without a data set
  // they are synthetic, from `seed`: images from a standard normal, token ids and labels
  // uniform over the vocabulary or the classes. With one, they are its first `batch` examples
  // (wrapping around a smaller set).
  void set_batch(int64_t batch, uint64_t seed, const nn::data::Dataset* data = nullptr);
  // One call on the current inputs; on cuda it waits for the GPU to finish.
  void call();
  // Inference on the first `rows` rows of the current inputs (the server's batches).
  void infer_rows(int64_t rows);

  double last_loss() const { return last_loss_; }  // training: the latest step's loss
  nn::Module& model() { return *model_; }
  // Runs `m` instead of the model built (inference only: the int8 twin, analysis/int8_bench.h).
  void replace_model(std::shared_ptr<nn::Module> m) { model_ = std::move(m); }
  const nn::ModelInput& input_spec() const { return spec_; }
  int64_t output_width() const { return width_; }  // classes, or the vocabulary size
  bool language_model() const { return spec_.dtype == DType::i64; }
  Device device() const { return device_; }
  const Tensor& input() const { return x_; }

 private:
  std::string name_;
  BenchMode mode_;
  Device device_;
  std::shared_ptr<nn::Module> model_;
  std::unique_ptr<nn::optim::Optimizer> opt_;
  nn::ModelInput spec_;
  int64_t width_ = 0;
  Tensor x_, target_;
  double last_loss_ = 0;
};

// Random inputs of `spec`'s shape with `rows` rows, tagged as data (the current seed).
Tensor synthetic_input(const nn::ModelInput& spec, int64_t rows, int64_t vocab);

}  // namespace prism::analysis
