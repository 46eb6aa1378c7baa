// Exercise 08, a typical mistake: GELU's tanh written as (e - 1) / (e + 1) with e = exp(2u).
//
// To make the epilogue vectorise, tanh u is computed from a vectorisable exp (fast_exp) by its
// textbook formula (e^u - e^-u) / (e^u + e^-u) = (e - 1) / (e + 1), e = e^(2u). On the inputs a
// layer usually sees that is right: the curved part, |v| < 6, passes. But u = sqrt(2/pi) (v +
// 0.044715 v^3) grows like v^3, and once u > 44 (v > 10), e overflows float32 to inf and
// (e - 1) / (e + 1) is inf / inf = NaN where tanh u is 1 and gelu(v) = v. (For v < -10, e = 0
// and the quotient is -1: right.) 1 - 2 / (e + 1), or 0.5 (1 + tanh u) = 1 / (1 + e^(-2u)) as
// the solution writes it, goes to the limit instead.
// checker-expects: bias from -100 to 100 .GELU's flat and straight parts. +FAIL +error inf
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/ops/linear_gelu/args.h"
#include "kernels/ops/matmul/args.h"
#include "kernels/cpu/fast_exp.h"
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

// gelu(v) = 0.5 v (1 + tanh u), u = s (v + c v^3), with tanh u = (e - 1) / (e + 1), e = exp(2u).
inline float gelu(float v) {
  constexpr float kS = 0.7978845608028654f;  // sqrt(2 / pi)
  constexpr float kC = 0.044715f;
  const float u = kS * (v + kC * v * v * v);
  const float e = prism::kernels::cpu::fast_exp(2.0f * u);
  return 0.5f * v * (1.0f + (e - 1.0f) / (e + 1.0f));  // the mistake: inf / inf for u > 44
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
