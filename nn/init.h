// Parameter initialisation, the same schemes and defaults as the mainstream frameworks, drawn
// from prism's global generator: after prism::manual_seed(s), building the same model gives
// the same weights, bit for bit, with any compiler.
//
// Kaiming (He) uniform. For a layer y = W x with fan_in inputs per output, independent inputs
// of variance v and weights of variance s^2 give outputs of variance fan_in * s^2 * v. He et
// al. (2015) choose s^2 = gain^2 / fan_in so the variance is kept through the layer, with
// gain^2 = 2 / (1 + a^2) for a leaky ReLU of negative slope a (a = 0: ReLU, gain^2 = 2).
// A uniform U(-b, b) has variance b^2 / 3, so
//
//   b = gain * sqrt(3 / fan_in) = sqrt(6 / ((1 + a^2) fan_in)).
//
// PyTorch's default for Linear and Conv2d weights is this with a = sqrt(5), which gives
// b = 1 / sqrt(fan_in); their biases are U(-1/sqrt(fan_in), 1/sqrt(fan_in)). prism uses the
// same defaults, so a model here starts where the same model starts there (in distribution).
#pragma once

#include <cmath>

#include "tensor/ops.h"

namespace prism::nn::init {

// Inputs feeding one output of a weight: shape[1] * (product of shape[2:]). Linear [out, in]
// gives in; Conv2d [O, C, kh, kw] gives C * kh * kw.
int64_t fan_in(const Dims& weight_shape);

// b = sqrt(6 / ((1 + a^2) fan_in)), the bound of the Kaiming-uniform distribution.
double kaiming_uniform_bound(int64_t fan_in, double a = std::sqrt(5.0));

// U(-b, b) with b = kaiming_uniform_bound(fan_in(shape), a).
Tensor kaiming_uniform(const Dims& shape, double a = std::sqrt(5.0), DType dtype = DType::f32);
// The default bias: U(-1/sqrt(fan_in), 1/sqrt(fan_in)); zeros when fan_in is 0.
Tensor bias_uniform(const Dims& shape, int64_t fan_in, DType dtype = DType::f32);
Tensor uniform(const Dims& shape, double low, double high, DType dtype = DType::f32);
Tensor normal(const Dims& shape, double mean = 0, double std = 1, DType dtype = DType::f32);

}  // namespace prism::nn::init
