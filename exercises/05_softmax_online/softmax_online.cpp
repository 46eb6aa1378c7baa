// Exercise 05: softmax with the maximum and the sum found in one pass ("online" softmax). The
// task is in README.md, next to this file.
//
// Every softmax in prism reaches its kernel as "softmax of each row of a 2-D view": the front
// end moves the softmax dim to the end and merges the others. Your kernel receives a
// SoftmaxArgs<float> (kernels/args.h):
//   x[r][j] = a.x[r * a.row_stride + j * a.col_stride]    for r < a.rows, j < a.cols
//   y[r][j] = a.out[r * a.cols + j]                        contiguous, arrives uninitialised
//
// Check it:  build/prism check softmax_online
#include "kernels/ops/softmax/args.h"
#include "kernels/registry.h"

using prism::kernels::SoftmaxArgs;

// [[maybe_unused]]: the empty body does not read `a` yet, and -Wextra warns about unused
// parameters. Delete the attribute once your code uses `a`.
void my_softmax_online([[maybe_unused]] const SoftmaxArgs<float>& a) {
  // TODO(exercise): for each row, one pass over x that keeps the running maximum m and the
  // running sum s = sum exp(x_j - m), rescaling s whenever m grows; then a second pass that
  // writes y_j = exp(x_j - m) / s. When the checker passes, delete this TODO comment: ctest
  // then checks your kernel instead of expecting this empty one to fail.
}

PRISM_REGISTER_KERNEL(softmax, my_softmax_online);
