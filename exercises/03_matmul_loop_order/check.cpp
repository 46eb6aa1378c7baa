// Exercise 03's checks: matmul in i-k-j order (the cases are shared with exercise 04).
#include "exercises/checker/checker.h"
#include "exercises/checker/shared_cases.h"
#include "tensor/ops.h"
#include "kernels/ops/matmul/args.h"

namespace prism::exercises {
namespace {

using kernels::MatmulArgs;

// The hint for the second performance tier (the first is shared with exercise 04).
const char* const kLoop2 =
    "hoist a[i][p] out of the inner loop: the compiler cannot prove that writes to C leave it "
    "unchanged, so it reloads it on every iteration and vectorises less.";

Exercise make_exercise() {
  return {
      "03_matmul_loop_order",
      "exercises/03_matmul_loop_order/matmul_loop_order.cpp",
      "matmul",
      "matmul with the loops in i-k-j order (MatmulArgs)",
      1e-4,
      kMatmulToleranceWhy,
      &Guard<MatmulArgs>::arm,
      [](const Case& c) { return matmul(c.inputs[0], c.inputs[1]); },
      matmul_cases,
      {"128", "128:nt"},
      {"128", "512", "512:nt"},  // in L2; past L2 (3 MB); B transposed
      {{"beats naive", "naive", 1.0, kLoop1, {{{"512:nt", "128:nt"}, kTransposedB}}},
       {"as fast as prism's i-k-j loop",
        "reordered",
        1.10,
        kLoop2,
        {{{"512:nt", "128:nt"}, kTransposedB}}}},
      {},
      {},
  };
}

const bool registered = add_exercise(make_exercise());

}  // namespace
}  // namespace prism::exercises
