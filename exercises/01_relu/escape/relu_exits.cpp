// Exercise 01, a kernel that ends the process: exit(0) in the middle of the check. The checker
// never writes its verdict, so `prism check` must count it as failing (tests/cli/course_test.cpp),
// never as the 0 the process returned.
#include <cstdlib>

#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"

void my_relu(const prism::kernels::UnaryArgs<float>&) {
  std::exit(0);
}

PRISM_REGISTER_KERNEL(relu, my_relu);
