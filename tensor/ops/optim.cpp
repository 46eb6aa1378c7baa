// In-place optimizer updates: sgd_update_ and adam_update_ (tensor/optim_ops.h has the math).
//
// Same life as every op (DESIGN.md): check everything first, so a refused call changes no
// value; pick the kernel; open a record with the cost (docs/COSTS.md, "Optimizer updates");
// run the kernel on the buffers in place. The fused default allocates nothing; the unfused
// "per_tensor" variant (tag naive) gets its temporaries as one scratch buffer allocated inside
// the record and tagged temporary, so the profile shows what fusion saves. Nothing is recorded
// for autograd, but every buffer written has its version counter bumped (Tensor::version), so
// a graph that saved one of them before the update refuses its backward instead of computing a
// wrong gradient. The optimizer calling these sets the profiler phase to `optimizer`.
#include <cmath>
#include <cstdio>
#include <string>

#include "kernels/costs.h"
#include "kernels/ops/optim/op.h"
#include "tensor/dispatch.h"
#include "tensor/optim_ops.h"

namespace prism {

namespace {

using detail::OpHandle;

OpHandle op_sgd(kernels::ops::sgd_update), op_adam(kernels::ops::adam_update);

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A hyperparameter check: `ok` false throws "<op>: <what>, got <value>".
void require(bool ok, const char* op, const char* what, double value) {
  if (!ok) throw Error(std::string(op) + ": " + what + ", got " + num(value));
}

void check_contiguous(const char* op, const char* name, const Tensor& t) {
  if (!t.is_contiguous()) {
    throw Error(std::string(op) + ": " + name + " must be contiguous (updated in place), got " +
                t.shape().str() + " with strides " + t.strides().str());
  }
}

// `t` (grad or a state tensor) must match param and be a contiguous buffer of its own.
void check_companion(const char* op, const char* name, const Tensor& param, const Tensor& t) {
  if (!t.defined()) throw Error(std::string(op) + ": " + name + " is undefined");
  if (!(t.shape() == param.shape())) {
    throw Error(std::string(op) + ": " + name + " has shape " + t.shape().str() +
                " but param has shape " + param.shape().str());
  }
  if (t.dtype() != param.dtype()) {
    throw Error(std::string(op) + ": " + name + " is " + dtype_name(t.dtype()) + " but param is " +
                dtype_name(param.dtype()));
  }
  detail::check_same_device(op, param, t);
  check_contiguous(op, name, t);
}

// Buffers written in place must not alias anything else the kernel reads.
void check_distinct(const char* op, const char* a_name, const Tensor& a, const char* b_name,
                    const Tensor& b) {
  if (a.defined() && b.defined() && a.shares_storage_with(b)) {
    throw Error(std::string(op) + ": " + a_name + " and " + b_name +
                " share memory; each must be a buffer of its own");
  }
}

void check_param(const char* op, const Tensor& param) {
  detail::check_float(op, param);
  check_contiguous(op, "param", param);
}

// Scratch for a naive-tagged (unfused, per_tensor) variant: `elements` of temporary memory,
// allocated inside the op's record so it is attributed to it. Fused variants get none. `plan`:
// the variant whose memory the call has (OpHandle::planned).
Tensor workspace_for(const kernels::KernelEntry& plan, int64_t elements, const Tensor& param) {
  if (plan.tag != kernels::VariantTag::naive || elements == 0) return Tensor();
  AllocRole role(MemRole::temporary);
  return detail::empty_like_shape(Dims{elements}, param.dtype(), param.device());
}

template <class T>
void run_sgd(const kernels::KernelEntry& k, const Tensor& p, const Tensor& g, const Tensor& vel,
             const SgdHyper& h, const Tensor& ws) {
  kernels::SgdArgs<T> a{};
  a.param = p.data<T>();
  a.grad = g.data<T>();
  a.velocity = vel.defined() ? vel.data<T>() : nullptr;
  a.numel = p.numel();
  a.lr = h.lr;
  a.momentum = h.momentum;
  a.weight_decay = h.weight_decay;
  a.nesterov = h.nesterov;
  a.workspace = ws.defined() ? ws.data<T>() : nullptr;
  a.workspace_size = ws.defined() ? ws.numel() : 0;
  k.get<kernels::SgdArgs, T>()(a);
}

template <class T>
void run_adam(const kernels::KernelEntry& k, const Tensor& p, const Tensor& g, const Tensor& m,
              const Tensor& v, const AdamHyper& h, const Tensor& ws) {
  kernels::AdamArgs<T> a{};
  a.param = p.data<T>();
  a.grad = g.data<T>();
  a.m = m.data<T>();
  a.v = v.data<T>();
  a.numel = p.numel();
  a.lr = h.lr;
  a.beta1 = h.beta1;
  a.beta2 = h.beta2;
  a.eps = h.eps;
  a.weight_decay = h.weight_decay;
  a.decoupled = h.decoupled;
  const double t = static_cast<double>(h.step);
  a.bias_correction1 = 1 - std::pow(h.beta1, t);
  a.bias_correction2 = 1 - std::pow(h.beta2, t);
  a.workspace = ws.defined() ? ws.data<T>() : nullptr;
  a.workspace_size = ws.defined() ? ws.numel() : 0;
  k.get<kernels::AdamArgs, T>()(a);
}

}  // namespace

void sgd_update_(const Tensor& param, const Tensor& grad, const Tensor& velocity,
                 const SgdHyper& h) {
  const char* op = op_sgd.name();
  // `!(x >= 0)` also refuses NaN.
  require(std::isfinite(h.lr) && h.lr >= 0, op, "lr must be a finite number >= 0", h.lr);
  require(std::isfinite(h.momentum) && h.momentum >= 0, op, "momentum must be >= 0", h.momentum);
  require(std::isfinite(h.weight_decay) && h.weight_decay >= 0, op, "weight_decay must be >= 0",
          h.weight_decay);
  require(!h.nesterov || h.momentum > 0, op, "nesterov needs momentum > 0", h.momentum);
  check_param(op, param);
  check_companion(op, "grad", param, grad);
  const bool momentum = h.momentum != 0;
  const Tensor vel = momentum ? velocity : Tensor();
  if (momentum) {
    if (!velocity.defined()) {
      throw Error(std::string(op) + ": momentum " + num(h.momentum) +
                  " needs a velocity tensor (zeros before the first step)");
    }
    check_companion(op, "velocity", param, velocity);
    check_distinct(op, "velocity", vel, "param", param);
    check_distinct(op, "velocity", vel, "grad", grad);
  }

  const auto& k = op_sgd.kernel(param.device(), param.dtype());
  detail::OpRecordScope rec(op, k.name.c_str(), param.device(), {&param, &grad, &vel}, [&] {
    return costs::sgd_update(param.numel(), param.element_size(), h.weight_decay != 0, momentum,
                             h.nesterov);
  });
  const Tensor ws = workspace_for(
      op_sgd.planned(k, param.dtype()),
      kernels::sgd_per_tensor_workspace(param.numel(), h.weight_decay != 0, h.nesterov), param);
  if (param.dtype() == DType::f32)
    run_sgd<float>(k, param, grad, vel, h, ws);
  else
    run_sgd<double>(k, param, grad, vel, h, ws);
  param.bump_version();
  if (vel.defined()) vel.bump_version();
}

void adam_update_(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                  const AdamHyper& h) {
  const char* op = op_adam.name();
  require(std::isfinite(h.lr) && h.lr >= 0, op, "lr must be a finite number >= 0", h.lr);
  require(h.beta1 >= 0 && h.beta1 < 1, op, "beta1 must be in [0, 1)", h.beta1);
  require(h.beta2 >= 0 && h.beta2 < 1, op, "beta2 must be in [0, 1)", h.beta2);
  require(std::isfinite(h.eps) && h.eps >= 0, op, "eps must be >= 0", h.eps);
  require(std::isfinite(h.weight_decay) && h.weight_decay >= 0, op, "weight_decay must be >= 0",
          h.weight_decay);
  require(h.step >= 1, op, "step (t) counts from 1", static_cast<double>(h.step));
  check_param(op, param);
  check_companion(op, "grad", param, grad);
  check_companion(op, "m", param, m);
  check_companion(op, "v", param, v);
  check_distinct(op, "m", m, "param", param);
  check_distinct(op, "m", m, "grad", grad);
  check_distinct(op, "v", v, "param", param);
  check_distinct(op, "v", v, "grad", grad);
  check_distinct(op, "m", m, "v", v);

  const auto& k = op_adam.kernel(param.device(), param.dtype());
  detail::OpRecordScope rec(op, k.name.c_str(), param.device(), {&param, &grad, &m, &v}, [&] {
    return costs::adam_update(param.numel(), param.element_size(), h.weight_decay != 0,
                              h.decoupled);
  });
  const Tensor ws = workspace_for(
      op_adam.planned(k, param.dtype()),
      kernels::adam_per_tensor_workspace(param.numel(), h.weight_decay != 0 && !h.decoupled),
      param);
  if (param.dtype() == DType::f32)
    run_adam<float>(k, param, grad, m, v, h, ws);
  else
    run_adam<double>(k, param, grad, m, v, h, ws);
  param.bump_version();
  m.bump_version();
  v.bump_version();
}

}  // namespace prism
