// Exercise 13: the sum of each row on OpenMP threads, with the same bits at every thread count.
// The task is in README.md, next to this file.
//
// The op and its arguments are exercise 02's: your kernel receives a ReduceArgs<float>
// (kernels/args.h), the view [rows, cols] of the input,
//   a.x           pointer to element [0, 0] of the view
//   a.rows        the number of rows (one output per row)
//   a.cols        the length of each row (the number of values summed)
//   a.row_stride  elements between the starts of consecutive rows
//   a.col_stride  elements between consecutive values of one row
//   a.out         the output: contiguous, a.rows elements
// and computes, for every o < rows,
//   out[o] = sum_{i < cols} x[o * row_stride + i * col_stride].
// New here: it runs on OpenMP threads (the checker uses 2), and must be fast both for many short
// rows and for one long row, and give the same bits on every run and at every thread count. The
// way (README.md): cut each row into chunks of a fixed length, sum the chunks in parallel into
// partial sums kept in double, then add each row's partials in chunk order.
//
// Check it:  build/prism check sum_threads
#include <omp.h>

#include "kernels/ops/reduce/args.h"
#include "kernels/registry.h"

using prism::kernels::ReduceArgs;

// [[maybe_unused]]: the empty body does not read `a` yet, and -Wextra warns about unused
// parameters. Delete the attribute once your code uses `a`.
void my_sum_threads([[maybe_unused]] const ReduceArgs<float>& a) {
  // TODO(exercise): set a.out[o] to the sum of row o for every o in [0, a.rows), sharing the
  // work between OpenMP threads (`#pragma omp parallel for`). Fix the order of the additions by
  // the data, not by the thread count. When the checker passes, delete this TODO comment: ctest
  // then checks your kernel instead of expecting this empty one to fail.
}

PRISM_REGISTER_KERNEL(sum, my_sum_threads);
