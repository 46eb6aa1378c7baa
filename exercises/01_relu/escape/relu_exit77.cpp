// Exercise 01, a kernel that exits with 77, the code the checker gives when an exercise cannot run
// on this machine. Without the checker's verdict of this run it must read as failing, not as
// "cannot run here" (tests/cli/course_test.cpp).
#include <unistd.h>

#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"

void my_relu(const prism::kernels::UnaryArgs<float>&) {
  _exit(77);
}

PRISM_REGISTER_KERNEL(relu, my_relu);
