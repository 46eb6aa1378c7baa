// Exercise 01, a file that ends the process before the checker starts: a static initialiser that
// calls exit(0). The checker's main never runs; `prism check` must still fail
// (tests/cli/course_test.cpp).
#include <cstdlib>

#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"

namespace {
const bool gone = [] {
  std::exit(0);
  return true;
}();
}  // namespace

void my_relu(const prism::kernels::UnaryArgs<float>&) {}

PRISM_REGISTER_KERNEL(relu, my_relu);
