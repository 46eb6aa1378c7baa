// Exercise 02: the sum of each row of a strided view. The task is in README.md, next to this
// file.
//
// Every reduction in prism reaches its kernel as "reduce each row of a 2-D view": the front
// end moves the reduced dims to the end and merges them. Your kernel receives a
// ReduceArgs<float> (kernels/args.h):
//   a.x             pointer to element [0, 0] of the view
//   a.rows        the number of rows (one output per row)
//   a.cols        the length of each row (the number of values summed)
//   a.row_stride  elements between the starts of consecutive rows
//   a.col_stride  elements between consecutive values of one row
//   a.out         the output: contiguous, a.rows elements
//   a.index         unused by sum (null)
// Element i of row o is a.x[o * a.row_stride + i * a.col_stride].
//
// Check it:  build/prism check sum_rows
#include "kernels/ops/reduce/args.h"
#include "kernels/registry.h"

using prism::kernels::ReduceArgs;

// [[maybe_unused]]: the empty body does not read `a` yet, and -Wextra warns about unused
// parameters. Delete the attribute once your code uses `a`.
void my_sum_rows([[maybe_unused]] const ReduceArgs<float>& a) {
  // TODO(exercise): set a.out[o] to the sum of row o for every o in [0, a.rows). Decide what
  // type to accumulate in (README.md, "Accuracy"). When the checker passes, delete this TODO
  // comment: ctest then checks your kernel instead of expecting this empty one to fail.
}

PRISM_REGISTER_KERNEL(sum, my_sum_rows);
