// Exercise 01, a kernel that never returns (a loop whose end condition is wrong). `prism check`
// must stop it at its time limit and name the case it was in (tests/cli/course_test.cpp).
#include <chrono>
#include <thread>

#include "kernels/ops/elementwise/args.h"
#include "kernels/registry.h"

void my_relu(const prism::kernels::UnaryArgs<float>& a) {
  for (int64_t i = 0; i < a.numel; i += 0) std::this_thread::sleep_for(std::chrono::seconds(1));
}

PRISM_REGISTER_KERNEL(relu, my_relu);
