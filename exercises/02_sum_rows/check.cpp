// Exercise 02's checks: the sum of each row of a strided view.
#include <limits>
#include <vector>

#include "exercises/checker/checker.h"
#include "exercises/checker/shared_cases.h"
#include "tensor/ops.h"
#include "kernels/ops/reduce/args.h"

namespace prism::exercises {
namespace {

using kernels::ReduceArgs;

std::vector<Case> sum_cases() {
  const std::string rows_hint =
      std::string(kStridesHint) +
      " In ReduceArgs, element i of row o is x[o * row_stride + i * col_stride].";
  return {
      {"[1], all dims", {randn({1})}, {}, ""},
      {"[7], all dims", {randn({7})}, {}, ""},
      {"[5,13] over dim 1", {randn({5, 13})}, {1}, ""},
      {"[13,5] over dim 0 (col_stride 5)", {randn({13, 5})}, {0}, rows_hint},
      {"[9,17] transposed, over dim 1", {randn({17, 9}).t()}, {1}, rows_hint},
      {"[10,10] every 3rd column, over dim 1",
       {randn({10, 30}).slice(1, 0, 30, 3)},
       {1},
       rows_hint},
      {"[4,6,8] over dims 1 and 2", {randn({4, 6, 8})}, {1, 2}, ""},
      {"[512,2053] over dim 1", {randn({512, 2053})}, {1}, ""},
      {"[3,100003] all 0.1, over dim 1",
       {full({3, 100003}, 0.1)},
       {1},
       "a float32 running sum of 100003 values of 0.1 drifts by about 1e-4: once the sum is "
       "large, every 0.1 added to it is rounded to a multiple of the sum's last bit, and here "
       "the roundings all go the same way. Accumulate in double (a pairwise sum in float cures the "
       "drift, not float32's range: see the row of +-3e38)."},
      // The extremes a row can hold, each with the mistake it catches.
      {"[3,1001] +3e38, +3e38 and -3e38 in each row (sum 3e38)",
       {near_float_max(3, 1001)},
       {1},
       "each row's sum is about 3e38, which fits in float32 (FLT_MAX = 3.4e38), but 3e38 + 3e38 "
       "does not: a float32 running sum, float32 lanes or a float32 pairwise tree reach inf on "
       "the way and stay there (inf - 3e38 = inf). A double holds 6e38 easily (its range reaches "
       "1e308): accumulate in double."},
      {"[4,37] +inf and -inf entries",
       {with_infinities(37)},
       {1},
       "a row that holds +inf sums to +inf (-inf to -inf): a plain sum gets this right. A "
       "compensated (Kahan) sum computes its correction c = (t - s) - y, which is inf - inf = NaN "
       "once the sum is inf; Kahan buys nothing over a double accumulator anyway."},
  };
}

// The hints for a missed performance tier.
const char* const kSum1 =
    "one loop per row over a pointer to its first element: no index arithmetic beyond i * "
    "col_stride in the inner loop.";
const char* const kSum2 =
    "a single sum is one chain of dependent adds, one add per add latency. Keep several partial "
    "sums (8, 16, 32) and add them at the end (kernels/ops/reduce/optimized.cpp).";
// For tier 2 missed only on the views read through a transpose.
const char* const kSum2Transposed =
    "your kernel holds on row-major rows and loses on the transposed view: there col_stride is "
    "not 1 but row_stride is, so walking a row touches a new cache line per element. Swap the "
    "loops: add whole rows (unit stride) into a line of partial sums, one per output "
    "(kernels/ops/reduce/optimized.cpp).";

Exercise make_exercise() {
  return {
      "02_sum_rows",
      "exercises/02_sum_rows/sum_rows.cpp",
      "sum",
      "the sum of each row of a strided [rows, cols] view (ReduceArgs)",
      1e-5,
      "the reference sums in double; a float32 sum done well (pairwise) is within a few 1e-7",
      &Guard<ReduceArgs>::arm,
      [](const Case& c) { return sum(c.inputs[0], c.ints); },
      sum_cases,
      {"64x1024", "1024x256:t"},
      {"64x1024", "4096x4096", "4096x1024:t"},  // in L2; 64 MB; read through a transpose
      {{"as fast as naive", "naive", 1.10, kSum1},
       {"within 1.5x of the best built-in",
        "best",
        1.5,
        kSum2,
        {{{"1024x256:t", "4096x1024:t"}, kSum2Transposed}}}},
      {},
      {},
  };
}

const bool registered = add_exercise(make_exercise());

}  // namespace
}  // namespace prism::exercises
