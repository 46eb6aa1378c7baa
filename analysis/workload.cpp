#include "analysis/workload.h"

#include <vector>

#include "kernels/gpu_runtime.h"
#include "nn/loss.h"
#include "nn/optim/make.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "tensor/storage.h"

namespace prism::analysis {

const char* bench_mode_name(BenchMode m) {
  return m == BenchMode::infer ? "infer" : "train";
}

namespace {

// Integers uniform in [0, n) from the seeded default generator, as an int64 tensor.
Tensor random_ids(const Dims& shape, int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(shape.numel()));
  for (int64_t& x : v) {
    x = static_cast<int64_t>(default_generator().next_u64() % static_cast<uint64_t>(n));
  }
  return from_vector(v, shape);
}

}  // namespace

Tensor synthetic_input(const nn::ModelInput& spec, int64_t rows, int64_t vocab) {
  AllocRole role(profiler::MemRole::data);
  Dims shape = spec.shape;
  shape[0] = rows;
  if (spec.dtype == DType::i64) return random_ids(shape, vocab);
  return randn(shape, spec.dtype);
}

Workload::Workload(const std::string& model, BenchMode mode, const nn::ModelOptions& options,
                   Device device, uint64_t seed)
    : name_(model), mode_(mode), device_(device) {
  manual_seed(seed);
  {
    // Built on the cpu, then moved; a meta model is built on the meta device directly.
    DefaultDevice on(device == Device::meta ? Device::meta : Device::cpu);
    model_ = nn::make_model(model, options);
    spec_ = nn::default_input(model, options);
    // The output width (classes or vocabulary) from one call on the meta device.
    DefaultDevice meta(Device::meta);
    NoGrad no_grad;
    width_ = (*nn::make_model(model, options))(spec_.make()).size(-1);
  }
  if (device != Device::meta) model_->to(device);
  if (mode == BenchMode::train) {
    model_->train();
    const nn::TrainingDefaults def = nn::training_defaults(model);
    opt_ = nn::optim::make_optimizer(def.optimizer, model_->parameters(), def.lr);
  } else {
    model_->eval();
  }
}

void Workload::set_batch(int64_t batch, uint64_t seed, const nn::data::Dataset* data) {
  manual_seed(seed);
  if (data && device_ != Device::meta) {
    std::vector<int64_t> indices(static_cast<size_t>(batch));
    for (int64_t i = 0; i < batch; ++i) indices[static_cast<size_t>(i)] = i % data->size();
    nn::data::Batch b = data->get_batch(indices);
    x_ = b.input.to(device_);
    target_ = mode_ == BenchMode::train ? b.target.to(device_) : Tensor();
    return;
  }
  nn::ModelInput labels{language_model() ? Dims{batch, spec_.shape[1]} : Dims{batch}, DType::i64};
  if (device_ == Device::meta) {  // shapes only: no values to draw, the same role as real data
    DefaultDevice meta(Device::meta);
    AllocRole role(profiler::MemRole::data);
    Dims shape = spec_.shape;
    shape[0] = batch;
    x_ = zeros(shape, spec_.dtype);
    if (mode_ == BenchMode::train) target_ = zeros(labels.shape, DType::i64);
    return;
  }
  x_ = synthetic_input(spec_, batch, width_);
  if (mode_ == BenchMode::train) {
    target_ = synthetic_input(labels, batch, width_);
  }
  if (device_ == Device::cuda) {
    x_ = x_.to(device_);
    if (target_.defined()) target_ = target_.to(device_);
  }
}

void Workload::call() {
  if (mode_ == BenchMode::infer) {
    infer_rows(x_.size(0));
    return;
  }
  Tensor logits = (*model_)(x_);
  Tensor loss = language_model()
                    ? nn::cross_entropy(logits.reshape({-1, width_}), target_.reshape({-1}))
                    : nn::cross_entropy(logits, target_);
  loss.backward();
  opt_->step();
  opt_->zero_grad();
  if (device_ == Device::cuda) kernels::gpu::synchronize();
  if (device_ != Device::meta) last_loss_ = loss.item<double>();
}

void Workload::infer_rows(int64_t rows) {
  NoGrad no_grad;
  Tensor y = (*model_)(rows == x_.size(0) ? x_ : x_.narrow(0, 0, rows));
  if (device_ == Device::cuda) kernels::gpu::synchronize();
}

}  // namespace prism::analysis
