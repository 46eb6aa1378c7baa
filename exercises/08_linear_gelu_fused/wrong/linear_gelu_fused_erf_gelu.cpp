// Exercise 08, a typical mistake: the exact GELU instead of prism's tanh approximation.
//
// GELU is defined as v Phi(v) = 0.5 v (1 + erf(v / sqrt 2)); prism (as GPT-2 and most
// transformer code of its time) uses the approximation 0.5 v (1 + tanh(sqrt(2/pi) (v +
// 0.044715 v^3))), and y must match the op's definition. The two differ by up to 4.7e-4, at
// |v| = 2.7: about 1e-4 of the largest output here, ten times the tolerance. (std::erf is also
// a scalar call, no faster than tanhf.)
// checker-expects: bias from -6 to 6 .GELU's curve. +FAIL +error
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/ops/linear_gelu/args.h"
#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"

using prism::kernels::LinearGeluArgs;
using prism::kernels::MatmulArgs;

namespace {

using MatmulKernel = void (*)(const MatmulArgs<float>&);

constexpr int64_t kTile = 256;

MatmulKernel selected_matmul() {
  return prism::kernels::registry()
      .at("matmul", prism::Device::cpu)
      .select(prism::DType::f32)
      .get<MatmulArgs, float>();
}

void matmul_block(MatmulKernel matmul, const LinearGeluArgs<float>& a, int64_t r0, int64_t nr,
                  int64_t c0, int64_t nc, float* tile) {
  MatmulArgs<float> m{};
  m.a = a.x + r0 * a.x_rs;
  m.b = a.weight + c0 * a.w_rs;
  m.c = tile;
  m.batch = 1;
  m.m = nr;
  m.n = nc;
  m.k = a.in;
  m.a_bs = 0, m.a_rs = a.x_rs, m.a_cs = a.x_cs;
  m.b_bs = 0, m.b_rs = a.w_cs, m.b_cs = a.w_rs;
  matmul(m);
}

inline float gelu(float v) {
  return 0.5f * v * (1.0f + std::erf(v * 0.70710678f));  // the mistake: the exact form
}

void epilogue(const LinearGeluArgs<float>& a, int64_t r0, int64_t nr, int64_t c0, int64_t nc,
              float* t) {
  for (int64_t r = 0; r < nr; ++r) {
    float* v = t + r * nc;
    if (a.bias) {
      for (int64_t c = 0; c < nc; ++c) v[c] += a.bias[c0 + c];
    }
    const int64_t at = (r0 + r) * a.out + c0;
    if (a.z) std::memcpy(a.z + at, v, static_cast<size_t>(nc) * sizeof(float));
    for (int64_t c = 0; c < nc; ++c) a.y[at + c] = gelu(v[c]);
  }
}

}  // namespace

void my_linear_gelu_fused(const LinearGeluArgs<float>& a) {
  const MatmulKernel matmul = selected_matmul();
  std::vector<float> tile(static_cast<size_t>(kTile * kTile));
  for (int64_t c0 = 0; c0 < a.out; c0 += kTile) {
    const int64_t nc = std::min(kTile, a.out - c0);
    for (int64_t r0 = 0; r0 < a.rows; r0 += kTile) {
      const int64_t nr = std::min(kTile, a.rows - r0);
      matmul_block(matmul, a, r0, nr, c0, nc, tile.data());
      epilogue(a, r0, nr, c0, nc, tile.data());
    }
  }
}

PRISM_REGISTER_KERNEL(linear_gelu, my_linear_gelu_fused);
