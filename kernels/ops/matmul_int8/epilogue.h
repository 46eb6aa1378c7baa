// The requantization every matmul_int8 variant ends with, in one place so that the variants
// agree bit for bit (kernels/args.h, MatmulInt8Args):
//   out = fma(float(acc), a_scale * w_scale[j], bias[j])
// Where float rounding enters, and only there: float(acc) is exact while |acc| < 2^24 (k up to
// about 1,040 at full-range operands; larger sums round to nearest); the scale product
// a_scale * w_scale[j] rounds once; the fma rounds once (std::fma: one rounding whatever the
// compiler's contraction settings, so no variant can differ by fusing or not fusing).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/ops/matmul_int8/args.h"

namespace prism::kernels::cpu {

// Writes row i's outputs [j0, j1) from acc (acc[j - j0] for column j).
inline void requantize_row(const MatmulInt8Args<float>& a, int64_t i, int64_t j0, int64_t j1,
                           const int32_t* acc) {
  float* out = a.out + i * a.n;
  for (int64_t j = j0; j < j1; ++j) {
    const float scale = a.a_scale * a.w_scale[j];
    const float bias = a.bias ? a.bias[j] : 0.f;
    out[j] = std::fma(static_cast<float>(acc[j - j0]), scale, bias);
  }
}

}  // namespace prism::kernels::cpu
