// Exercise 05's checks: softmax of each row in one pass.
#include <cmath>
#include <limits>

#include "exercises/checker/checker.h"
#include "exercises/checker/shared_cases.h"
#include "tensor/ops.h"
#include "kernels/ops/softmax/args.h"

namespace prism::exercises {
namespace {

using kernels::SoftmaxArgs;

// [n, n] with x[i][j] = -inf for j < i: row i's first i entries are masked out.
Tensor masked_before_diagonal(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n * n));
  Tensor r = randn({n, n});
  const std::vector<float> x = r.to_vector<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      v[static_cast<size_t>(i * n + j)] =
          j < i ? -std::numeric_limits<float>::infinity() : x[static_cast<size_t>(i * n + j)];
    }
  }
  return from_vector(v, {n, n});
}

// [rows, cols] of N(0, 1) with the first column of every row at 1e30.
Tensor huge_first(int64_t rows, int64_t cols) {
  std::vector<float> v = randn({rows, cols}).to_vector<float>();
  for (int64_t i = 0; i < rows; ++i) v[static_cast<size_t>(i * cols)] = 1e30f;
  return from_vector(v, {rows, cols});
}

std::vector<Case> softmax_cases() {
  const std::string view_hint =
      std::string(kStridesHint) +
      " In SoftmaxArgs, x[r][j] is x[r * row_stride + j * col_stride]; out is contiguous.";
  return {
      {"[1,1]", {randn({1, 1})}, {1}, ""},
      {"[1,7]", {randn({1, 7})}, {1}, ""},
      {"[7,1] (one column: every output is 1)", {randn({7, 1})}, {1}, ""},
      {"[13,17] over dim 1", {randn({13, 17})}, {1}, ""},
      {"[17,5] over dim 0 (col_stride 5)", {randn({17, 5})}, {0}, view_hint},
      {"[9,13] transposed, over dim 1", {randn({13, 9}).t()}, {1}, view_hint},
      {"[64,1000] logits near 100",
       {randn({64, 1000}) * 10.0 + 100.0},
       {1},
       "exp(100) overflows float32 (the largest float is about exp(88.7)). Keep the running "
       "maximum m and sum exp(x - m): every term is then at most 1."},
      {"[8,8] -inf before the diagonal",
       {masked_before_diagonal(8)},
       {1},
       "masked entries are -inf and exp(-inf) = 0, but while the running maximum is still -inf, "
       "x - m is -inf - (-inf) = NaN. Skip terms equal to -inf (they add 0)."},
      // The extremes a row of logits can hold, each with the mistake it catches.
      {"[3,50] all far below 0 (-1000 and less)",
       {randn({3, 50}) * 5.0 - 1000.0},
       {1},
       "every exp(x - m) underflows to 0 unless m is the row's real maximum: start the running "
       "maximum at -inf (or the first element), not at 0, which no row has to reach."},
      {"[5,33] all equal",
       {full({5, 33}, 7.5)},
       {1},
       "equal logits give equal probabilities, 1/33 each: check the rescaling when a new value "
       "equals the running maximum (x == m is not x > m)."},
      {"[4,20] one huge logit (1e30), the rest near 0",
       {huge_first(4, 20)},
       {1},
       "the huge logit takes all the probability: its exp(x - m) is 1 and every other term is "
       "exp(-1e30) = 0; rescaling the sum by exp(m_old - m_new) must not overflow either."},
      {"[6,16] denormal and zero logits",
       {randn({6, 16}) * 1e-40},
       {1},
       "logits of 1e-40 are below float32's normal range (denormals): every output is about "
       "1/16; a kernel that flushes or divides by them can return 0 or inf."},
      {"[4,100003] long rows", {randn({4, 100003})}, {1}, ""},
      {"[256,1024] over dim 1", {randn({256, 1024})}, {1}, ""},
  };
}

// The hints for a missed performance tier.
const char* const kSoftmax1 =
    "one pass finds the maximum and the running sum together (rescale the sum when the maximum "
    "grows); a second pass writes exp(x - max) / sum. Use expf in float, not exp in double.";
const char* const kSoftmax2 =
    "the exp dominates: evaluate it on 16 floats at once, with a polynomial after a range "
    "reduction (kernels/cpu/fast_exp.h), so the loop vectorises.";

Exercise make_exercise() {
  return {
      "05_softmax_online",
      "exercises/05_softmax_online/softmax_online.cpp",
      "softmax",
      "softmax of each row, with the maximum and the sum found in one pass (SoftmaxArgs)",
      1e-5,
      "outputs are at most 1, so this is an absolute error: float32 rounding is ~1e-7",
      &Guard<SoftmaxArgs>::arm,
      [](const Case& c) { return softmax(c.inputs[0], c.ints[0]); },
      softmax_cases,
      {"256x1024"},
      {"256x1024", "2048x4096", "4096x64"},  // in L2; 32 MB; short rows
      {{"beats naive", "naive", 1.0, kSoftmax1},
       {"within 2x of the best built-in", "best", 2.0, kSoftmax2}},
      {},
      {},
  };
}

const bool registered = add_exercise(make_exercise());

}  // namespace
}  // namespace prism::exercises
