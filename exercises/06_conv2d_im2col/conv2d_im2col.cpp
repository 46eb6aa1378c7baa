// Exercise 06: conv2d as im2col and one matrix product per image. The task is in README.md,
// next to this file.
//
// Your kernel receives a Conv2dArgs<float> (kernels/args.h), every buffer contiguous:
//   a.x        [n, c, h, w]     the input images
//   a.weight   [o, c, kh, kw]   the filters
//   a.bias     [o]              or null (no bias)
//   a.out      [n, o, ho, wo]   the output, arrives uninitialised
//   a.workspace                 scratch space of a.workspace_size >= c*kh*kw * ho*wo floats:
//                               room for one image's patch matrix
//   a.stride, a.padding         ho = (h + 2 padding - kh) / stride + 1, and the same for wo
// (a.dy is for the backward ops; conv2d does not read it.)
//
//   out[n][o][i][j] = bias[o] + sum_{c,p,q} x[n][c][i*stride - padding + p][j*stride - padding + q]
//                                           * weight[o][c][p][q]
// where x outside [0,h) x [0,w) reads 0.
//
// Check it:  build/prism check conv2d_im2col
#include "kernels/ops/conv2d/args.h"
#include "kernels/registry.h"

using prism::kernels::Conv2dArgs;

// [[maybe_unused]]: the empty body does not read `a` yet, and -Wextra warns about unused
// parameters. Delete the attribute once your code uses `a`.
void my_conv2d_im2col([[maybe_unused]] const Conv2dArgs<float>& a) {
  // TODO(exercise): for each image, fill a.workspace with its patch matrix
  // cols[(c, p, q)][(i, j)] (0 where the patch reaches into the padding), then compute
  // out[o][(i, j)] = bias[o] + sum_k weight[o][k] * cols[k][(i, j)] with the i-k-j loop of
  // exercise 03. When the checker passes, delete this TODO comment: ctest then checks your
  // kernel instead of expecting this empty one to fail.
}

PRISM_REGISTER_KERNEL(conv2d, my_conv2d_im2col);
