// Exercise 06's checks: conv2d as im2col and a matrix product.
#include <limits>
#include <utility>
#include <vector>

#include "exercises/checker/checker.h"
#include "exercises/checker/shared_cases.h"
#include "tensor/ops.h"
#include "kernels/ops/conv2d/args.h"

namespace prism::exercises {
namespace {

using kernels::Conv2dArgs;

Case conv_case(std::string label, Dims x, Dims w, bool bias, int stride, int padding,
               std::string hint) {
  return {std::move(label),
          {randn(x), randn(w), bias ? randn({w[0]}) : Tensor()},
          {stride, padding},
          std::move(hint)};
}

// x [2, 2, 6, 7] of N(0, 1) with one infinity per image, in a corner: +inf at x[0][0][0][0] and
// -inf at x[1][1][5][6]. Each output reads that pixel at most once (one filter position), so
// it is +-inf (times a weight, plus numbers) where its window covers the corner and a number
// elsewhere: never inf - inf. With padding 1 the windows that cover a corner also hang over
// the padding beside it.
Tensor corner_infinities() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = randn({2, 2, 6, 7}).to_vector<float>();
  v.front() = inf;
  v.back() = -inf;
  return from_vector(v, {2, 2, 6, 7});
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
      // An extreme every convolution must pass through unchanged.
      {"x [2,2,6,7] with +inf and -inf in corners, w [3,2,3,3] padding 1",
       {corner_infinities(), randn({3, 2, 3, 3}), randn({3})},
       {1, 1},
       "an output whose window covers the infinite pixel is +-inf (a weight times inf, plus "
       "numbers), every other output a number. The padding beside a corner must add nothing: "
       "write 0 there, not a pixel read from inside the image times 0 (0 * inf = NaN)."},
      conv_case("x [8,16,13,13] w [32,16,3,3]", {8, 16, 13, 13}, {32, 16, 3, 3}, true, 1, 0, ""),
  };
}

// The hints for a missed performance tier.
const char* const kConv1 =
    "unfold each image's patches into a [C kh kw, Ho Wo] matrix once, then compute all outputs "
    "as one matrix product per image.";
const char* const kConv2 =
    "the product decides: order its loops i-k-j (exercise 03) or tile it (exercise 04), or call "
    "a fast GEMM on the unfolded matrix.";

Exercise make_exercise() {
  return {
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
  };
}

const bool registered = add_exercise(make_exercise());

}  // namespace
}  // namespace prism::exercises
