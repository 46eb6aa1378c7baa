// Exercise 01: relu over a strided view. The task is in README.md, next to this file.
//
// Your kernel receives a UnaryArgs<float> (kernels/args.h):
//   a.x       pointer to the input's first element
//   a.layout  the input's shape and strides, in elements: a.layout.ndim dims (1 to 8), sizes
//             a.layout.shape[d], strides a.layout.stride[d]. The front end has already merged
//             every pair of dims it could, so a contiguous input arrives as ndim 1, stride 1.
//   a.out     the output: contiguous, a.numel elements, in row-major order
//   a.numel   the number of elements
// Element i of the output is relu of element i of x in row-major order over layout.shape.
//
// Check it:  build/prism check relu
#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"

using prism::kernels::UnaryArgs;

// [[maybe_unused]]: the empty body does not read `a` yet, and -Wextra warns about unused
// parameters. Delete the attribute once your code uses `a`.
void my_relu([[maybe_unused]] const UnaryArgs<float>& a) {
  // TODO(exercise): set a.out[i] = max(x_i, 0) for every i in [0, a.numel), where x_i is
  // element i of x in row-major order. Start with the contiguous case (ndim 1, stride 1), run
  // the checker, then handle any layout. Delete this TODO line when the checker passes: ctest
  // then checks your kernel instead of expecting this empty one to fail.
}

PRISM_REGISTER_KERNEL(relu, my_relu);
