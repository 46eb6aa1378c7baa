// Exercise 08, a typical mistake: only whole tiles, once the output is larger than one.
//
// The tile shrinks to the output when the output is smaller than a tile (tr = min(T, rows)),
// so every small case is one whole tile and passes. But the loops then step over whole tiles
// only (r0 + tr <= rows): on an output of 257 x 263 with 256 x 256 tiles, the last row and the
// last 7 columns are never computed. y arrives uninitialised, so they hold whatever was there.
// checker-expects: W .263,129. .partial tiles. +FAIL +[0-9]+ of [0-9]+ elements of y never
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
  const int64_t tr = std::min(kTile, a.rows), tc = std::min(kTile, a.out);
  std::vector<float> tile(static_cast<size_t>(tr * tc));
  for (int64_t c0 = 0; c0 + tc <= a.out; c0 += tc) {     // the mistake: whole tiles only,
    for (int64_t r0 = 0; r0 + tr <= a.rows; r0 += tr) {  // the last partial ones skipped
      matmul_block(matmul, a, r0, tr, c0, tc, tile.data());
      epilogue(a, r0, tr, c0, tc, tile.data());
    }
  }
}

PRISM_REGISTER_KERNEL(linear_gelu, my_linear_gelu_fused);
