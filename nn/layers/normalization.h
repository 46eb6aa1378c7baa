// Normalization layers.
//
// LayerNorm (Ba et al., 2016) normalises each row over its last dim:
//   mu = mean(x), var = mean((x - mu)^2)   over the last dim (biased variance)
//   y  = (x - mu) / sqrt(var + eps) * weight + bias        weight, bias: [dim]
// It is the tensor op layer_norm (tensor/ops.h): one fused kernel forward, one backward that
// gives dx, dweight and dbias together.
//
// RMSNorm (Zhang & Sennrich, 2019; LLaMA's normalisation) drops the mean and the bias:
//   y = x / sqrt(mean(x^2) + eps) * weight            over the last dim, weight: [dim]
// It is the tensor op rms_norm: one fused kernel forward, one backward for dx and dweight.
//
// BatchNorm2d is composed from tensor ops (mean, sub, mul, sqrt, div), so autograd derives its
// backward and the profile shows each step.
//
// BatchNorm2d (Ioffe & Szegedy, 2015) normalises each channel over the batch and the image:
//   training: mu_c, var_c = mean and biased variance of x[:, c, :, :]   (n = N*H*W values)
//             y = (x - mu_c) / sqrt(var_c + eps) * weight_c + bias_c
//             running_mean <- (1 - momentum) running_mean + momentum mu_c
//             running_var  <- (1 - momentum) running_var  + momentum var_c * n / (n - 1)
//   eval:     the same y with running_mean and running_var in place of mu_c and var_c.
// The running variance is updated with the unbiased estimate (n / (n - 1)), as PyTorch does;
// the normalisation itself uses the biased one. The update runs under NoGrad: it is state, not
// part of the function being differentiated.
#pragma once

#include "nn/module.h"

namespace prism::nn {

class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t dim, double eps = 1e-5, bool affine = true);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "LayerNorm"; }
  std::string extra_repr() const override;

  Tensor weight;  // [dim], ones; undefined without affine
  Tensor bias;    // [dim], zeros; undefined without affine

 private:
  int64_t dim_;
  double eps_;
};

class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6, bool affine = true);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "RMSNorm"; }
  std::string extra_repr() const override;

  Tensor weight;  // [dim], ones; undefined without affine

 private:
  int64_t dim_;
  double eps_;
};

class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(int64_t channels, double eps = 1e-5, double momentum = 0.1);
  Tensor forward(const Tensor& x) override;
  std::string type_name() const override { return "BatchNorm2d"; }
  std::string extra_repr() const override;

  Tensor weight;        // [C], ones
  Tensor bias;          // [C], zeros
  Tensor running_mean;  // [C] buffer, zeros
  Tensor running_var;   // [C] buffer, ones

 private:
  int64_t channels_;
  double eps_, momentum_;
};

}  // namespace prism::nn
