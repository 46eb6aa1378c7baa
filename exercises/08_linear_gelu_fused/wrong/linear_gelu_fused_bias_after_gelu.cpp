// Exercise 08, a typical mistake: the bias added after the GELU.
//
// y = gelu(x W^T) + b reads like "a linear layer, then an activation" with the bias in the
// wrong place: a Linear layer's bias belongs to the linear part, y = gelu(x W^T + b). The two
// differ wherever b is not 0. (z, here, is right: the mistake is in y alone.)
// checker-expects: x .1,1. W .1,1. +FAIL +error
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

// prism's GELU, the tanh form, with libm's tanhf.
inline float gelu(float v) {
  constexpr float kS = 0.7978845608028654f;
  return 0.5f * v * (1.0f + std::tanh(kS * (v + 0.044715f * v * v * v)));
}

void epilogue(const LinearGeluArgs<float>& a, int64_t r0, int64_t nr, int64_t c0, int64_t nc,
              const float* t) {
  for (int64_t r = 0; r < nr; ++r) {
    const float* v = t + r * nc;
    const int64_t at = (r0 + r) * a.out + c0;
    for (int64_t c = 0; c < nc; ++c) {
      const float b = a.bias ? a.bias[c0 + c] : 0.0f;
      if (a.z) a.z[at + c] = v[c] + b;
      a.y[at + c] = gelu(v[c]) + b;  // the mistake: b outside the GELU
    }
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
