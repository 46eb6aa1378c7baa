// int8 inference ops (tensor/ops/quantized.cpp): the two an int8 post-training-quantized layer
// runs (nn/quantized.h). Neither records autograd: quantized models are for inference, and
// rounding has no useful gradient.
#pragma once

#include "tensor/tensor.h"

namespace prism {

// Symmetric quantization (the op "quantize_int8"; `prism lab quantize_int8`): int8 q =
// clamp(round_half_even(x / scale), -127, 127), same shape as x (float32, any layout; read through
// a contiguous copy when strided). scale must be finite and > 0.
Tensor quantize(const Tensor& x, float scale);

// The int8 GEMM with its requantization fused:
//   out[i][j] = (sum_p a[i][p] w[j][p]) * a_scale * w_scale[j] + bias[j]
// a int8 [m, k] (any strides; the quantized activations, all quantized with a_scale), w int8
// [n, k] (any strides; a Linear's weight layout), w_scale float32 [n] (per output channel),
// bias float32 [n] or undefined -> float32 [m, n]. The products are summed exactly in int32,
// so every variant gives the same bits (kernels/ops/matmul_int8/epilogue.h says where float
// rounding enters). CPU only.
Tensor matmul_int8(const Tensor& a, float a_scale, const Tensor& w, const Tensor& w_scale,
                   const Tensor& bias);

}  // namespace prism
