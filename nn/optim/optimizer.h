// Optimizer: the base of SGD, Adam and AdamW. It holds the parameters to train and the
// learning rate; a subclass keeps its per-parameter state and says how one parameter moves.
//
//   prism::nn::optim::SGD opt(model->parameters(), /*lr=*/0.1, /*momentum=*/0.9);
//   for (...) {
//     Tensor loss = loss_fn((*model)(x), y);
//     loss.backward();
//     opt.step();        // one in-place update op per parameter with a gradient
//     opt.zero_grad();   // drops the gradients (the next backward makes fresh ones)
//   }
//
// What step() does, so that the profile and the memory report tell the truth about it:
//   - runs under profiler::PhaseGuard(Phase::optimizer): every op it issues (the update ops
//     "sgd_update" / "adam_update", the zeros of newly created state) is an optimizer-phase row,
//     inside a profiler scope named after the optimizer ("SGD", "Adam", "AdamW");
//   - runs under NoGrad: an update is not part of any graph;
//   - creates state lazily, on a parameter's first step with a gradient, zero-initialised and
//     tagged MemRole::optimizer (memory reports show it as optimizer state);
//   - skips parameters whose .grad is undefined (frozen, or unused by this loss), leaving their
//     state untouched (Adam's per-parameter step count does not advance either);
//   - checks everything before it changes anything: a refused step() updates no parameter.
//
// Parameters are Tensor handles shared with the model, so updates are seen by the model. They
// must be leaf tensors with requires_grad, float32 or float64, contiguous, each listed once.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace prism::nn::optim {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that has a gradient.
  void step();
  // Drops every parameter's .grad (an absent gradient, not a zero tensor).
  void zero_grad();

  double lr() const { return lr_; }
  // A finite lr >= 0 (an Error otherwise). LR schedules call this.
  void set_lr(double lr);

  const std::vector<Tensor>& params() const { return params_; }
  // Completed step() calls.
  int64_t step_count() const { return steps_; }
  // "SGD", "Adam", "AdamW": the profiler scope of step() and the prefix of its errors.
  const char* name() const { return name_; }

 protected:
  // Checks the parameter list and lr; `name` is a string literal.
  Optimizer(std::vector<Tensor> params, double lr, const char* name);

  // Creates parameter i's state if it has none yet (called inside step()'s guards, so new
  // tensors are tagged optimizer state), or checks that the state it has still matches the
  // parameter. Throws before anything is updated.
  virtual void prepare_state(size_t i, const Tensor& param) = 0;
  // Updates parameter i in place with its gradient (contiguous, same shape and dtype). Called
  // only after every parameter with a gradient passed prepare_state.
  virtual void update(size_t i, const Tensor& param, const Tensor& grad) = 0;

  // For subclasses' checks: throws Error("<name>: <what>, got <value>") when !ok.
  void require(bool ok, const char* what, double value) const;
  // Throws if `state` (named `what`) no longer has parameter i's shape and dtype (the model was
  // converted with Module::to after the state was created).
  void check_state(size_t i, const Tensor& param, const Tensor& state, const char* what) const;

 private:
  std::vector<Tensor> params_;
  double lr_;
  const char* name_;
  int64_t steps_ = 0;
};

}  // namespace prism::nn::optim
