#include "nn/layers/normalization.h"

#include <cstdio>

#include "nn/layers/checkpoint.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/ops.h"

namespace prism::nn {

namespace {
std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace

// ---- LayerNorm ---------------------------------------------------------------------------------

LayerNorm::LayerNorm(int64_t dim, double eps, bool affine) : dim_(dim), eps_(eps) {
  if (dim <= 0) throw Error("LayerNorm: dim must be positive, got " + std::to_string(dim));
  if (!(eps > 0)) throw Error("LayerNorm: eps must be positive, got " + fmt(eps));
  if (affine) {
    weight = register_parameter("weight", ones({dim}));
    bias = register_parameter("bias", zeros({dim}));
  }
}

Tensor LayerNorm::forward(const Tensor& x) {
  if (x.dim() == 0 || x.size(-1) != dim_) {
    throw Error("LayerNorm(" + std::to_string(dim_) + "): input " + x.shape().str() +
                " must end in " + std::to_string(dim_));
  }
  // One op forward and one backward (tensor/ops/norm.cpp), where the composition of mean,
  // sub, mul, sqrt, div made eleven ops and as many [rows, dim] buffers.
  return layer_norm(x, weight, bias, eps_);
}

std::string LayerNorm::extra_repr() const {
  return std::to_string(dim_) + ", eps=" + fmt(eps_) +
         ", affine=" + (weight.defined() ? "true" : "false");
}

// ---- RMSNorm -----------------------------------------------------------------------------------

RMSNorm::RMSNorm(int64_t dim, double eps, bool affine) : dim_(dim), eps_(eps) {
  if (dim <= 0) throw Error("RMSNorm: dim must be positive, got " + std::to_string(dim));
  if (!(eps > 0)) throw Error("RMSNorm: eps must be positive, got " + fmt(eps));
  if (affine) weight = register_parameter("weight", ones({dim}));
}

Tensor RMSNorm::forward(const Tensor& x) {
  if (x.dim() == 0 || x.size(-1) != dim_) {
    throw Error("RMSNorm(" + std::to_string(dim_) + "): input " + x.shape().str() +
                " must end in " + std::to_string(dim_));
  }
  return rms_norm(x, weight, eps_);
}

std::string RMSNorm::extra_repr() const {
  return std::to_string(dim_) + ", eps=" + fmt(eps_) +
         ", affine=" + (weight.defined() ? "true" : "false");
}

// ---- BatchNorm2d -------------------------------------------------------------------------------

BatchNorm2d::BatchNorm2d(int64_t channels, double eps, double momentum)
    : channels_(channels), eps_(eps), momentum_(momentum) {
  if (channels <= 0) {
    throw Error("BatchNorm2d: channels must be positive, got " + std::to_string(channels));
  }
  if (!(eps > 0)) throw Error("BatchNorm2d: eps must be positive, got " + fmt(eps));
  if (!(momentum >= 0 && momentum <= 1)) {
    throw Error("BatchNorm2d: momentum must be in [0, 1], got " + fmt(momentum));
  }
  weight = register_parameter("weight", ones({channels}));
  bias = register_parameter("bias", zeros({channels}));
  running_mean = register_buffer("running_mean", zeros({channels}));
  running_var = register_buffer("running_var", ones({channels}));
}

Tensor BatchNorm2d::forward(const Tensor& x) {
  if (x.dim() != 4 || x.size(1) != channels_) {
    throw Error("BatchNorm2d(" + std::to_string(channels_) + "): input " + x.shape().str() +
                " must be [N, " + std::to_string(channels_) + ", H, W]");
  }
  const Dims per_channel{1, channels_, 1, 1};  // broadcasts against [N, C, H, W]
  Tensor w = weight.view(per_channel);
  Tensor b = bias.view(per_channel);
  if (!is_training()) {
    Tensor rm = running_mean.view(per_channel);
    Tensor rv = running_var.view(per_channel);
    return (x - rm) / prism::sqrt(rv + eps_) * w + b;
  }
  const int64_t n = x.size(0) * x.size(2) * x.size(3);
  if (n <= 1) {
    throw Error("BatchNorm2d: training needs more than one value per channel, got input " +
                x.shape().str());
  }
  Tensor mu = mean(x, {0, 2, 3}, true);
  Tensor xc = x - mu;
  Tensor var = mean(xc * xc, {0, 2, 3}, true);
  Tensor y = xc / prism::sqrt(var + eps_) * w + b;
  // A checkpointed block's backward runs this forward again (nn/layers/checkpoint.h): the
  // statistics were already folded in by the first run, so the recompute leaves them alone.
  if (!recomputing()) {
    NoGrad no_grad;
    const double m = momentum_;
    const double unbias = static_cast<double>(n) / static_cast<double>(n - 1);
    assign(running_mean, running_mean * (1 - m) + mu.view({channels_}) * m);
    assign(running_var, running_var * (1 - m) + var.view({channels_}) * (m * unbias));
  }
  return y;
}

std::string BatchNorm2d::extra_repr() const {
  return std::to_string(channels_) + ", eps=" + fmt(eps_) + ", momentum=" + fmt(momentum_);
}

}  // namespace prism::nn
