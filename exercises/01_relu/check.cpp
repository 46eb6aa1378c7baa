// Exercise 01's checks: relu over strided views (checker.h says what a check does).
#include <cfloat>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "exercises/checker/checker.h"
#include "exercises/checker/shared_cases.h"
#include "tensor/ops.h"
#include "tensor/random.h"
#include "kernels/ops/elementwise/args.h"

namespace prism::exercises {
namespace {

using kernels::UnaryArgs;

// A [rows, cols] tensor from f(flat index), f drawing on the seeded generator as it likes.
template <class F>
Tensor make(int64_t rows, int64_t cols, F f) {
  std::vector<float> v(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows * cols; ++i) v[static_cast<size_t>(i)] = f(i);
  return from_vector(v, {rows, cols});
}

double normal() {
  return default_generator().normal();
}

// [rows, cols] of N(0, 1) with the given values at the given flat positions.
Tensor with_values(int64_t rows, int64_t cols, const std::vector<std::pair<int64_t, float>>& at) {
  std::vector<float> v = randn({rows, cols}).to_vector<float>();
  for (const auto& [i, x] : at) v[static_cast<size_t>(i)] = x;
  return from_vector(v, {rows, cols});
}

std::vector<Case> relu_cases() {
  const std::string layout_hint =
      std::string(kStridesHint) +
      " For UnaryArgs, walk the output in order and carry an index per layout dim (up to 8).";
  const float inf = std::numeric_limits<float>::infinity();
  return {
      {"[1]", {randn({1})}, {}, ""},
      {"[7]", {randn({7})}, {}, ""},
      {"[13,17] transposed view", {randn({17, 13}).t()}, {}, layout_hint},
      {"[6,10] every 2nd column", {randn({6, 20}).slice(1, 0, 20, 2)}, {}, layout_hint},
      {"[4,6,5] dims reversed (3 strided dims)",
       {randn({5, 6, 4}).permute({2, 1, 0})},
       {},
       layout_hint},
      {"[8,5] one row broadcast (stride 0)",
       {randn({8, 5}).narrow(0, 0, 1).expand({8, 5})},
       {},
       "a stride can be 0 (a broadcast dim: every row reads the same 5 elements). Use the "
       "layout's strides as they are."},
      {"[3,4,5,7] sliced in two dims",
       {randn({3, 8, 5, 14}).slice(1, 0, 8, 2).slice(3, 0, 14, 2)},
       {},
       layout_hint},
      // Empty tensors and the extremes a float can hold, each with the mistake it catches.
      {"[0] empty (numel 0)",
       {randn({0})},
       {},
       "an empty tensor: numel is 0, and x and out have no elements. Test every loop's bound "
       "before its first step: a do/while reads x[0] and writes out[0], neither of which "
       "exists."},
      {"[5,0] empty transposed view (inner dim 0)",
       {randn({0, 5}).t()},
       {},
       "the layout is [5, 0]: the last dim has size 0 and numel is 0. Write nothing, and do not "
       "divide by the last dim's size (numel / shape[last] is 0 / 0)."},
      {"[6,9] -inf and +inf entries",
       {with_values(6, 9, {{0, -inf}, {4, inf}, {13, -inf}, {30, inf}, {53, -inf}})},
       {},
       "relu(-inf) = 0 and relu(+inf) = +inf. A relu computed as x * (x > 0) gives -inf * 0 = NaN "
       "(and +inf * 1 is fine): compare and select instead, !(x <= 0) ? x : 0."},
      {"[7,8] values near +-FLT_MAX (+-3e38)",
       {make(7, 8,
             [](int64_t) {
               // |x| uniform in [1e38, 3.4e38), either sign.
               const double u = default_generator().uniform();
               return static_cast<float>((normal() < 0 ? -1e38 : 1e38) * (1 + 2.4 * u));
             })},
       {},
       "relu(3e38) is 3e38, but (x + |x|) / 2 first forms x + |x| = 6e38, past FLT_MAX (3.4e38): "
       "inf. relu does no arithmetic: compare and select."},
      {"[5,6] denormals (|x| ~ 1e-40) and zeros",
       {make(5, 6,
             [](int64_t i) {
               // +-0, the smallest and the largest denormal, and N(0, 1) 2^-130 (~7e-40).
               const float special[] = {0.0f, -0.0f, FLT_TRUE_MIN, -FLT_TRUE_MIN,
                                        FLT_MIN - FLT_TRUE_MIN};
               return i < 5 ? special[i] : static_cast<float>(std::ldexp(normal(), -130));
             })},
       {},
       "a positive denormal passes through unchanged, and the tolerance is 0: compare with 0 "
       "itself, not with a small threshold (x > 1e-30f), which turns these into 0."},
      {"[1000,1031]", {randn({1000, 1031})}, {}, ""},
  };
}

// The hint for a missed performance tier.
const char* const kRelu1 =
    "walk the output in order with one index per layout dim, and keep the innermost loop over "
    "the last dim free of divisions and function calls, so the compiler can vectorise it.";

Exercise make_exercise() {
  return {
      "01_relu",
      "exercises/01_relu/relu.cpp",
      "relu",
      "relu(x) = max(x, 0) over a strided view (UnaryArgs)",
      0.0,
      "exact: relu compares and copies, nothing is rounded",
      &Guard<UnaryArgs>::arm,
      [](const Case& c) { return relu(c.inputs[0]); },
      relu_cases,
      {"4096", "512x512:t"},
      {"4096", "16777216", "2048x2048:t"},  // in L1; 64 MB each way; a transposed view
      {{"as fast as naive", "naive", 1.10, kRelu1}},
      {},
      {},
  };
}

const bool registered = add_exercise(make_exercise());

}  // namespace
}  // namespace prism::exercises
