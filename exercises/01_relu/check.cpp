// Exercise 01's checks: relu over strided views (checker.h says what a check does).
#include "exercises/checker/checker.h"
#include "exercises/checker/shared_cases.h"
#include "tensor/ops.h"

namespace prism::exercises {
namespace {

using kernels::UnaryArgs;

std::vector<Case> relu_cases() {
  const std::string layout_hint =
      std::string(kStridesHint) +
      " For UnaryArgs, walk the output in order and carry an index per layout dim (up to 8).";
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
