// Exercise 01, a typical mistake: reading x as if it were contiguous.
//
// out[i] = relu(x[i]) is right only when x's elements sit one after another. For a transposed
// or sliced view, x[i] is some other element, so the result is a permutation or a mix of the
// right values: no crash, no NaN, just wrong numbers. The test suite checks that the checker
// catches it on the first view it sees.
// checker-expects: transposed view +FAIL +error
#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"

using prism::kernels::UnaryArgs;

void my_relu(const UnaryArgs<float>& a) {
  for (int64_t i = 0; i < a.numel; ++i)
    a.out[i] = a.x[i] > 0.0f ? a.x[i] : 0.0f;  // ignores a.layout
}

PRISM_REGISTER_KERNEL(relu, my_relu);
