// matmul_int8's argument structs: what its kernels see (the words and the contract every struct follows:
// kernels/args.h). The CPU and CUDA kernels include this header alone.
#pragma once

#include <cstdint>

#include "kernels/args.h"

namespace prism::kernels {

// int8 inference GEMM with its requantization fused in (kernels/ops/matmul_int8/):
//   acc[i][j] = sum_p a[i][p] * w[j][p]                   int8 x int8, exact in int32
//   out[i][j] = fma(float(acc[i][j]), a_scale * w_scale[j], bias[j])   (bias null: + 0)
// a [m, k] strided (quantized activations), w [n, k] strided (a Linear's weight as stored, one
// row per output channel), out contiguous float [m, n]. T is the float type of the output and
// the scales (the registry's dtype slot: float32); the integer operands are always int8.
// |acc| <= k * 127 * 127, so int32 holds any k below 133,000 (the front end checks).
template <class T>
struct MatmulInt8Args {
  const int8_t* a;
  const int8_t* w;
  const T* w_scale;  // [n], one per output channel
  const T* bias;     // [n] or null
  T* out;
  T a_scale;
  int64_t m, n, k;
  int64_t a_rs, a_cs, w_rs, w_cs;
};

// out[i] = clamp(round_half_even(x[i] / scale), -127, 127) over a contiguous x of numel
// elements: symmetric quantization (the zero point is 0, and -128 is left out so that the
// range is symmetric and the negation of any value is representable).
template <class T>
struct QuantizeArgs {
  const T* x;
  int8_t* out;
  T scale;
  int64_t numel;
};

}  // namespace prism::kernels
