// The exercises: which op each implements, the cases that check it, and what gets timed.
//
// Case order: the smallest shapes first (a failure there is the easiest to debug), then views
// with strides, then edge sizes, then large-ish shapes and values chosen to expose one
// specific mistake (each case's hint says which).
//
// Every view here is cut from a storage that holds at least as many elements past the view's
// first as the view has, so a kernel that ignores strides reads wrong values but never reads
// past an allocation: the wrong kernels run in the test suite, also under AddressSanitizer.
#include <cmath>
#include <limits>
#include <utility>

#include "exercises/checker/checker.h"
#include "tensor/ops.h"

namespace prism::exercises {
namespace {

using kernels::Conv2dArgs;
using kernels::MatmulArgs;
using kernels::ReduceArgs;
using kernels::SoftmaxArgs;
using kernels::UnaryArgs;

const char* const kStridesHint =
    "the input is a view, so its elements are not at x[0], x[1], ...: read each one at the "
    "offset its strides give (sum over dims of index * stride).";

// ---- 01 relu ------------------------------------------------------------------------------

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

// ---- 02 sum_rows ----------------------------------------------------------------------------

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
       "the roundings all go the same way. Accumulate in double, or sum pairwise."},
  };
}

// ---- 03, 04 matmul ------------------------------------------------------------------------

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
  };
}

// ---- 05 softmax ---------------------------------------------------------------------------

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
      {"[4,100003] long rows", {randn({4, 100003})}, {1}, ""},
      {"[256,1024] over dim 1", {randn({256, 1024})}, {1}, ""},
  };
}

// ---- 06 conv2d ------------------------------------------------------------------------------

Case conv_case(std::string label, Dims x, Dims w, bool bias, int stride, int padding,
               std::string hint) {
  return {std::move(label),
          {randn(x), randn(w), bias ? randn({w[0]}) : Tensor()},
          {stride, padding},
          std::move(hint)};
}

std::vector<Case> conv_cases() {
  const std::string pad_hint =
      "with padding, a patch can reach outside the image; those positions read 0. Write a 0 "
      "into the patch matrix there (and never read x outside [0,h) x [0,w)).";
  const std::string stride_hint =
      "with stride s, output (i, j) reads the patch whose corner is (i*s - padding, j*s - "
      "padding).";
  return {
      conv_case("x [1,1,1,1] w [1,1,1,1]", {1, 1, 1, 1}, {1, 1, 1, 1}, true, 1, 0, ""),
      conv_case("x [1,1,5,5] w [1,1,3,3]", {1, 1, 5, 5}, {1, 1, 3, 3}, true, 1, 0, ""),
      conv_case("x [2,3,7,7] w [4,3,3,3] no bias", {2, 3, 7, 7}, {4, 3, 3, 3}, false, 1, 0,
                "there is no bias: args.bias is null."),
      conv_case("x [2,3,7,7] w [4,3,3,3] padding 1", {2, 3, 7, 7}, {4, 3, 3, 3}, true, 1, 1,
                pad_hint),
      conv_case("x [2,3,8,9] w [5,3,3,2] stride 2", {2, 3, 8, 9}, {5, 3, 3, 2}, true, 2, 0,
                stride_hint),
      conv_case("x [1,2,7,5] w [3,2,3,3] stride 2 padding 1", {1, 2, 7, 5}, {3, 2, 3, 3}, true, 2,
                1, pad_hint),
      conv_case("x [2,4,6,6] w [3,4,1,1] (1x1)", {2, 4, 6, 6}, {3, 4, 1, 1}, true, 1, 0, ""),
      conv_case("x [1,1,5,5] w [1,1,5,5] padding 2", {1, 1, 5, 5}, {1, 1, 5, 5}, true, 1, 2,
                pad_hint),
      conv_case("x [8,16,13,13] w [32,16,3,3]", {8, 16, 13, 13}, {32, 16, 3, 3}, true, 1, 0, ""),
  };
}

// ---- the hints for a missed performance tier --------------------------------------------------

const char* const kRelu1 =
    "walk the output in order with one index per layout dim, and keep the innermost loop over "
    "the last dim free of divisions and function calls, so the compiler can vectorise it.";
const char* const kSum1 =
    "one loop per row over a pointer to its first element: no index arithmetic beyond i * "
    "col_stride in the inner loop.";
const char* const kSum2 =
    "a single sum is one chain of dependent adds. Keep several partial sums (8, 16, 32) and add "
    "them at the end; when col_stride is not 1 but row_stride is, swap the loops and add whole "
    "rows into a line of partial sums (kernels/cpu/reduce_optimized.cpp).";
const char* const kLoop1 =
    "order the loops i-k-j: the inner loop then walks a row of B and a row of C with unit "
    "stride, instead of a column of B.";
const char* const kLoop2 =
    "hoist a[i][p] out of the inner loop, and when B is transposed (b_cs != 1) switch to the "
    "i-j-k dot product, whose inner loop is then the unit-stride one.";
const char* const kTile2 =
    "keep a tile of C (e.g. 8 x 32) in registers across the whole k loop: each loaded value of "
    "B then feeds 8 FMAs, and C is loaded and stored once per tile instead of once per k.";
const char* const kTile3 =
    "pack the panels of A and B into contiguous buffers in the order the tile reads them (that "
    "also makes a transposed B cost nothing), and block k so a panel of B stays in L2 "
    "(kernels/cpu/matmul_optimized.cpp).";
const char* const kSoftmax1 =
    "one pass finds the maximum and the running sum together (rescale the sum when the maximum "
    "grows); a second pass writes exp(x - max) / sum. Use expf in float, not exp in double.";
const char* const kSoftmax2 =
    "the exp dominates: evaluate it on 16 floats at once, with a polynomial after a range "
    "reduction (kernels/cpu/fast_exp.h), so the loop vectorises.";
const char* const kConv1 =
    "unfold each image's patches into a [C kh kw, Ho Wo] matrix once, then compute all outputs "
    "as one matrix product per image.";
const char* const kConv2 =
    "the product decides: order its loops i-k-j (exercise 03) or tile it (exercise 04), or call "
    "a fast GEMM on the unfolded matrix.";

// ---- the list ------------------------------------------------------------------------------

std::vector<Exercise> make_exercises() {
  std::vector<Exercise> v;

  v.push_back({
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
  });

  v.push_back({
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
       {"within 1.5x of the best built-in", "best", 1.5, kSum2}},
      {},
      {},
  });

  const char* const matmul_tol_why =
      "float32 sums of k products in another order differ by about 1e-6 of the largest entry; an "
      "indexing mistake is off by O(1)";
  v.push_back({
      "03_matmul_loop_order",
      "exercises/03_matmul_loop_order/matmul_loop_order.cpp",
      "matmul",
      "matmul with the loops in i-k-j order (MatmulArgs)",
      1e-4,
      matmul_tol_why,
      &Guard<MatmulArgs>::arm,
      [](const Case& c) { return matmul(c.inputs[0], c.inputs[1]); },
      matmul_cases,
      {"128"},
      {"128", "512", "512:nt"},  // in L2; past L2 (3 MB); B transposed
      {{"beats naive", "naive", 1.0, kLoop1},
       {"as fast as prism's i-k-j loop", "reordered", 1.10, kLoop2}},
      {},
      {},
  });
  v.push_back({
      "04_matmul_tiled",
      "exercises/04_matmul_tiled/matmul_tiled.cpp",
      "matmul",
      "matmul in tiles: a tile of C in registers, a panel of B in cache (MatmulArgs)",
      1e-4,
      matmul_tol_why,
      &Guard<MatmulArgs>::arm,
      [](const Case& c) { return matmul(c.inputs[0], c.inputs[1]); },
      matmul_cases,
      {"128"},
      {"128", "512", "512:nt"},  // in L2; past L2 (3 MB); B transposed
      {{"beats naive", "naive", 1.0, kLoop1},
       {"beats cache blocking alone", "blocked", 1.0, kTile2},
       {"within 2x of the best built-in", "best", 2.0, kTile3}},
      {},
      {},
  });

  v.push_back({
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
  });

  v.push_back({
      "06_conv2d_im2col",
      "exercises/06_conv2d_im2col/conv2d_im2col.cpp",
      "conv2d",
      "conv2d as im2col (unfold the patches) and one matrix product per image (Conv2dArgs)",
      1e-4,
      "float32 sums of C kh kw products in another order differ by about 1e-6 of the largest "
      "output",
      &Guard<Conv2dArgs>::arm,
      [](const Case& c) {
        return conv2d(c.inputs[0], c.inputs[1], c.inputs[2], c.ints[0], c.ints[1]);
      },
      conv_cases,
      {"8x16x13x13x32x3:s1p0"},  // LeNet's second layer: x [N,16,13,13], w [32,16,3,3]
      {"8x16x13x13x32x3:s1p0", "64x16x13x13x32x3:s1p0",
       "8x64x28x28x64x3"},  // + a ResNet-like layer
      {{"beats naive", "naive", 1.0, kConv1},
       {"within 2x of prism's im2col", "im2col", 2.0, kConv2}},
      {},
      {},
  });
  return v;
}

}  // namespace

namespace {
// The exercises added from their own folders (add_exercise), in the order their programs'
// static initialisers ran: a function-local static, so it exists before the first add.
std::vector<Exercise>& added_exercises() {
  static std::vector<Exercise> v;
  return v;
}
}  // namespace

bool add_exercise(Exercise ex) {
  added_exercises().push_back(std::move(ex));
  return true;
}

const std::vector<Exercise>& all_exercises() {
  static const std::vector<Exercise> v = [] {
    std::vector<Exercise> all = make_exercises();
    for (Exercise& e : added_exercises()) all.push_back(std::move(e));
    return all;
  }();
  return v;
}

}  // namespace prism::exercises
