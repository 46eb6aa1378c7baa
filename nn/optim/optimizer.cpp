#include "nn/optim/optimizer.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "profiler/recorder.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"
#include "tensor/storage.h"

namespace prism::nn::optim {

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string describe(size_t i, const Tensor& t) {
  return "parameter " + std::to_string(i) + " " + t.shape().str();
}

}  // namespace

Optimizer::Optimizer(std::vector<Tensor> params, double lr, const char* name)
    : params_(std::move(params)), lr_(lr), name_(name) {
  const std::string who = name_;
  if (params_.empty()) throw Error(who + ": got an empty parameter list");
  std::set<const TensorImpl*> seen;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    if (!p.defined()) throw Error(who + ": parameter " + std::to_string(i) + " is undefined");
    if (p.dtype() == DType::i64) {
      throw Error(who + ": " + describe(i, p) + " is int64; only float tensors can be trained");
    }
    if (!p.is_leaf()) {
      throw Error(who + ": " + describe(i, p) +
                  " is not a leaf (it was computed by an op); optimize the tensors it was made "
                  "from, or a detach()ed copy");
    }
    if (!p.requires_grad()) {
      throw Error(who + ": " + describe(i, p) +
                  " does not require grad (call set_requires_grad() on it)");
    }
    if (!p.is_contiguous()) {
      throw Error(who + ": " + describe(i, p) + " is not contiguous (strides " + p.strides().str() +
                  "); updates run in place on contiguous buffers");
    }
    if (!seen.insert(&p.impl()).second) {
      throw Error(who + ": " + describe(i, p) +
                  " appears more than once in the list; it would be updated twice per step");
    }
  }
  require(std::isfinite(lr) && lr >= 0, "lr must be a finite number >= 0", lr);
}

void Optimizer::require(bool ok, const char* what, double value) const {
  if (!ok) throw Error(std::string(name_) + ": " + what + ", got " + num(value));
}

void Optimizer::check_state(size_t i, const Tensor& param, const Tensor& state,
                            const char* what) const {
  if (!(state.shape() == param.shape()) || state.dtype() != param.dtype()) {
    throw Error(std::string(name_) + ": " + describe(i, param) + " " + dtype_name(param.dtype()) +
                " no longer matches its " + what + " " + state.shape().str() + " " +
                dtype_name(state.dtype()) +
                " (was the model converted after the optimizer's first step? make a new "
                "optimizer)");
  }
}

void Optimizer::set_lr(double lr) {
  require(std::isfinite(lr) && lr >= 0, "lr must be a finite number >= 0", lr);
  lr_ = lr;
}

void Optimizer::zero_grad() {
  for (const Tensor& p : params_) p.zero_grad();
}

void Optimizer::step() {
  profiler::PhaseGuard phase(profiler::Phase::optimizer);
  profiler::Scope scope(name_);
  NoGrad no_grad;

  // 1. Check every gradient before touching anything.
  std::vector<size_t> active;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    const Tensor g = p.grad();
    if (!g.defined()) continue;
    if (!(g.shape() == p.shape()) || g.dtype() != p.dtype() || g.device() != p.device()) {
      throw Error(std::string(name_) + ": " + describe(i, p) + " " + dtype_name(p.dtype()) +
                  " on " + device_name(p.device()) + " has a gradient " + g.shape().str() + " " +
                  dtype_name(g.dtype()) + " on " + device_name(g.device()));
    }
    if (!p.is_contiguous()) {
      throw Error(std::string(name_) + ": " + describe(i, p) + " is no longer contiguous");
    }
    active.push_back(i);
  }

  // 2. Create (or check) state: the only allocations of a step, tagged as optimizer state.
  {
    AllocRole role(MemRole::optimizer);
    for (size_t i : active) prepare_state(i, params_[i]);
  }

  // 3. Update. Nothing below throws for inputs that passed 1 and 2.
  for (size_t i : active) {
    Tensor g = params_[i].grad();
    if (!g.is_contiguous()) {
      AllocRole role(MemRole::temporary);
      g = contiguous(g);
    }
    update(i, params_[i], g);
  }
  ++steps_;
}

}  // namespace prism::nn::optim
