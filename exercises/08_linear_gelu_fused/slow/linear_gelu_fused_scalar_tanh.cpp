// Exercise 08, correct but slow: the fusion done right, with libm's scalar tanhf.
//
// The same tiles and epilogue as the solution, but GELU is prism's formula as written, a call
// to std::tanh per element (12 to 15 ns). That call, not memory, is most of the time, so
// fusing saves only the few ms of the bias and GELU passes: the kernel is as fast as
// `unfused` (0.95x to 1.04x of its time, README.md: tier 1, or tier 0 when noise makes it
// inconclusive), never 1.5x faster.
// checker-expects: performance: tier [01] of 2
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

constexpr int64_t kTileRows = 280;  // the solution's tiles
constexpr int64_t kTileCols = 512;

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
  std::vector<float> tile(static_cast<size_t>(kTileRows * kTileCols));
  for (int64_t c0 = 0; c0 < a.out; c0 += kTileCols) {
    const int64_t nc = std::min(kTileCols, a.out - c0);
    for (int64_t r0 = 0; r0 < a.rows; r0 += kTileRows) {
      const int64_t nr = std::min(kTileRows, a.rows - r0);
      matmul_block(matmul, a, r0, nr, c0, nc, tile.data());
      epilogue(a, r0, nr, c0, nc, tile.data());
    }
  }
}

PRISM_REGISTER_KERNEL(linear_gelu, my_linear_gelu_fused);
