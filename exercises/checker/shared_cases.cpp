#include "exercises/checker/shared_cases.h"

#include <limits>
#include <vector>

#include "tensor/ops.h"
#include "kernels/ops/matmul/args.h"

namespace prism::exercises {
namespace {

// A [m, k] of N(0, 1) with +inf at (1, 3) and -inf at (m - 2, k - 2), for a B of positive
// entries: row 1 of C is then +inf and row m - 2 is -inf (inf times a positive number, plus
// numbers), every other row finite. No entry of C meets both infinities, so none is NaN.
Tensor with_infinities(int64_t m, int64_t k) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = randn({m, k}).to_vector<float>();
  v[static_cast<size_t>(1 * k + 3)] = inf;
  v[static_cast<size_t>((m - 2) * k + k - 2)] = -inf;
  return from_vector(v, {m, k});
}

}  // namespace

extern const char* const kStridesHint =
    "the input is a view, so its elements are not at x[0], x[1], ...: read each one at the "
    "offset its strides give (sum over dims of index * stride).";

std::vector<Case> matmul_cases() {
  const std::string view_hint =
      std::string(kStridesHint) +
      " In MatmulArgs, A[i][p] is a[i * a_rs + p * a_cs] and B[p][j] is b[p * b_rs + j * b_cs].";
  const std::string edge_hint =
      "these sizes are not multiples of a typical tile or block, so each tiled loop ends "
      "with a partial tile (std::min(size - start, T) rows or columns): compute and store "
      "only its real rows and columns.";
  return {
      {"[1,1] @ [1,1]", {randn({1, 1}), randn({1, 1})}, {}, ""},
      {"[1,7] @ [7,1]", {randn({1, 7}), randn({7, 1})}, {}, ""},
      {"[7,1] @ [1,5] (k = 1)", {randn({7, 1}), randn({1, 5})}, {}, ""},
      {"[13,17] @ [17,19]",
       {randn({13, 17}), randn({17, 19})},
       {},
       "m, k and n all differ: C is m x n, so its row length is n (not k)."},
      {"[13,17]^T view @ [17,19]^T view",
       {randn({17, 13}).t(), randn({19, 17}).t()},
       {},
       view_hint},
      {"[20,15] every 2nd column @ [15,9]",
       {randn({20, 30}).slice(1, 0, 30, 2), randn({15, 9})},
       {},
       view_hint},
      {"batch [3,5,7] @ [3,7,4]",
       {randn({3, 5, 7}), randn({3, 7, 4})},
       {},
       "batch > 1: matrix b of the batch starts at a + b * a_bs, b + b * b_bs, c + b * m * n."},
      {"batch [1,5,6] @ [3,6,4] (A shared: a_bs = 0)",
       {randn({3, 5, 6}).narrow(0, 0, 1), randn({3, 6, 4})},
       {},
       "A is broadcast over the batch, so a_bs is 0: use the batch strides as given."},
      {"[64,64] @ [64,64]", {randn({64, 64}), randn({64, 64})}, {}, ""},
      {"[65,129] @ [129,67]", {randn({65, 129}), randn({129, 67})}, {}, edge_hint},
      {"[257,129] @ [129,263]", {randn({257, 129}), randn({129, 263})}, {}, edge_hint},
      {"[31,520] @ [520,33] (long k)", {randn({31, 520}), randn({520, 33})}, {}, edge_hint},
      // An extreme every matmul must pass through unchanged.
      {"[6,9] @ [9,7], A with +inf and -inf, B in [0.5, 1.5]",
       {with_infinities(6, 9), rand({9, 7}, DType::f32, 0.5, 1.5)},
       {},
       "inf times a positive number is inf, and inf plus numbers stays inf: rows 1 and 4 of C are "
       "+inf and -inf, the others numbers. A NaN comes from 0 * inf or inf - inf: a zero you "
       "multiplied in (a padded element of a panel, an accumulator cleared by multiplying it by "
       "0) or a formula that subtracts products."},
  };
}

extern const char* const kMatmulToleranceWhy =
    "float32 sums of k products in another order differ by about 1e-6 of the largest entry; an "
    "indexing mistake is off by O(1)";

extern const char* const kTransposedB =
    "your kernel holds where B is row-major and loses where B is transposed (b_cs != 1): there "
    "the i-k-j inner loop walks B down a column, a cache line per element, while naive's i-j-k "
    "dot product runs along B's rows. When b_cs != 1, switch to the i-j-k order: a dot product "
    "of a row of A with a row of B^T, both unit stride.";

extern const char* const kLoop1 =
    "order the loops i-k-j: the inner loop then walks a row of B and a row of C with unit "
    "stride, instead of a column of B.";

Tensor near_float_max(int64_t rows, int64_t cols) {
  std::vector<float> v = randn({rows, cols}).to_vector<float>();
  for (int64_t o = 0; o < rows; ++o) {
    float* row = v.data() + o * cols;
    row[0] = row[64] = 3e38f;
    row[128] = -3e38f;
  }
  return from_vector(v, {rows, cols});
}

Tensor with_infinities(int64_t cols) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = randn({4, cols}).to_vector<float>();
  v[static_cast<size_t>(cols / 3)] = inf;
  v[static_cast<size_t>(cols + cols - 1)] = -inf;
  v[static_cast<size_t>(3 * cols)] = inf;
  v[static_cast<size_t>(3 * cols + cols / 2)] = inf;
  return from_vector(v, {4, cols});
}

}  // namespace prism::exercises
