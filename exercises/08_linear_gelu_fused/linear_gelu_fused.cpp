// Exercise 08: linear + GELU, fused. The task is in README.md, next to this file.
//
// Your kernel receives a LinearGeluArgs<float> (kernels/args.h):
//   a.x       the input [rows, in], element (r, p) at x[r * a.x_rs + p * a.x_cs] (a view: any
//             strides)
//   a.weight  [out, in], a Linear layer's weight as stored: element (c, p) at
//             weight[c * a.w_rs + p * a.w_cs]
//   a.bias    [out], or null: no bias
//   a.y       the output [rows, out], contiguous: y[r * a.out + c]
//   a.z       null, or (when a gradient will be wanted: training) a second contiguous
//             [rows, out] output for the pre-activation, which backward needs for gelu'(z)
// and computes
//   z[r][c] = sum_p x[r][p] weight[c][p] + bias[c]                 (z = x W^T + b)
//   y[r][c] = gelu(z[r][c]),  gelu(v) = 0.5 v (1 + tanh(s (v + 0.044715 v^3))),  s = sqrt(2/pi)
// (GELU's tanh approximation, prism's: kernels/ops/elementwise/math.h, math::Gelu).
//
// The unfused way (the `unfused` variant) is three passes over the whole output: the product
// into y, then y += b, then y = gelu(y). Past the caches, the second and third passes each read
// and write the output from memory again. Fused: cut the output into tiles, and for each tile
// compute its block of x W^T into a small buffer, then add the bias and apply GELU to it
// while it is still in cache, writing y (and z) once.
//
// You do not write the product yourself: matmul_block below calls prism's own matmul kernel
// (the one prism would run now, the packed AVX-512 `optimized` variant by default) on one block
// of rows and columns. Your work is the tiling and the epilogue (bias, GELU, z).
//
// Check it:  build/prism check linear_gelu_fused
#include "kernels/ops/linear_gelu/args.h"
#include "kernels/ops/matmul/args.h"
#include "kernels/registry.h"

using prism::kernels::LinearGeluArgs;
using prism::kernels::MatmulArgs;

namespace {

using MatmulKernel = void (*)(const MatmulArgs<float>&);

// The float32 matmul kernel prism runs now: its default, or the variant that --kernel or
// kernels::Use chose. Look it up once per call of your kernel, not once per tile.
[[maybe_unused]] MatmulKernel selected_matmul() {
  return prism::kernels::registry()
      .at("matmul", prism::Device::cpu)
      .select(prism::DType::f32)
      .get<MatmulArgs, float>();
}

// tile[r * nc + c] = sum_p x[r0 + r][p] weight[c0 + c][p]   for r < nr, c < nc:
// the block of x W^T at rows r0 .. r0+nr-1 and columns c0 .. c0+nc-1, written contiguous with
// row length nc (MatmulArgs' C is contiguous [m, n]). A is the block's rows of x, read through
// x's strides; B = W^T is read through W's strides with their roles swapped:
// B[p][j] = weight[c0 + j][p] = weight[(c0 + j) w_rs + p w_cs], so b_rs = w_cs and b_cs = w_rs.
[[maybe_unused]] void matmul_block(MatmulKernel matmul, const LinearGeluArgs<float>& a, int64_t r0,
                                   int64_t nr, int64_t c0, int64_t nc, float* tile) {
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

}  // namespace

// [[maybe_unused]]: the empty body does not read `a` yet, and -Wextra warns about unused
// parameters. Delete the attribute once your code uses `a`.
void my_linear_gelu_fused([[maybe_unused]] const LinearGeluArgs<float>& a) {
  // TODO(exercise): for each tile of the output (rows r0.., columns c0.., e.g. 256 x 256, the
  // last tile in each direction smaller), call matmul_block into a buffer of nr * nc floats,
  // then for each of its elements add bias[c0 + c] (when a.bias is not null), store the sum in
  // z (when a.z is not null) and its GELU in y. Delete this TODO line when the checker passes:
  // ctest then checks your kernel instead of expecting this empty one to fail.
}

PRISM_REGISTER_KERNEL(linear_gelu, my_linear_gelu_fused);
