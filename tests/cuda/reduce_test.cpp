// Reductions on the GPU against the CPU kernels: sum, mean, max, argmax over one dim, several
// dims and everything, on the shapes that take each path of kernels/ops/reduce/reduce.cu (a warp
// per row, a block per row, rows split into chunks, the column layout with and without chunks),
// transposed inputs, ties and NaN for max/argmax, empty input, and run-to-run determinism.
//
// Tolerances. The CPU reference is its "naive" kernel, which sums in double in row order.
//   naive (GPU): the same loop in the same order: bit for bit.
//   optimized, float32: the GPU also sums in double, in another order; the two double sums
//     differ by ~1e-16 relative, so after rounding to float32 they are at most one float32 ulp
//     apart (two ulp for mean, which divides the rounded sum): rtol 3e-7, and an absolute floor
//     of 1e-9 for sums that cancel to nearly 0.
//   optimized, float64: reordering 1e5 double additions moves the result by ~1e-11 here;
//     rtol 1e-12 and atol 1e-9 (a wrong element or index shows as ~1).
//   max, argmax: no arithmetic, so exact, ties and NaN included.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/cuda/cuda_compare.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using cuda_test::differs;
using cuda_test::gpu;
using cuda_test::kFloatTypes;
using cuda_test::mismatch;

struct Case {
  Dims shape;
  std::vector<int> dims;  // {} = every dim
};

// Each with the path of the optimized kernel it takes (rows of `inner` elements).
const std::vector<Case> kCases = {
    {{1}, {}},            // one element
    {{13}, {0}},          // one short row: a warp
    {{7, 13}, {1}},       // short rows
    {{7, 13}, {0}},       // leading dim: the column layout, one chunk
    {{7, 13}, {}},        // everything
    {{3, 4, 5}, {1}},     // middle dim (strided rows)
    {{3, 4, 5}, {0, 2}},  // two dims that do not merge: a contiguous copy first
    {{1031, 3}, {1}},     // many rows
    {{4, 2003}, {1}},     // rows past 1024: a block per row
    {{3, 40009}, {1}},    // few long rows: split into chunks
    {{100003}, {}},       // a full reduction: one row, many chunks
    {{5003, 37}, {0}},    // leading dim, long: the column layout with chunks
};

double rtol_for(DType dt) {
  return dt == DType::f32 ? 3e-7 : 1e-12;
}
double atol_for(DType dt) {
  return dt == DType::f32 ? 1e-9 : 1e-9;
}

TEST_CASE("cuda sum and mean match the cpu on every path") {
  manual_seed(21);
  for (const char* op : {"sum", "mean"}) {
    auto run = [&](const Tensor& x, const std::vector<int>& dims) {
      return std::string(op) == "sum" ? sum(x, dims) : mean(x, dims);
    };
    cuda_test::for_each_cuda_variant(op, [&](const std::string& variant) {
      for (DType dt : kFloatTypes) {
        for (const Case& c : kCases) {
          for (bool transposed : {false, true}) {
            if (transposed && c.shape.size() < 2) continue;
            INFO(prism::testing::info_text(op, " [", variant, "] ", dtype_name(dt), " ",
                                           c.shape.str(), " dims ", c.dims.size(),
                                           (transposed ? " transposed" : "")));
            Dims base_shape = c.shape;
            if (transposed) std::swap(base_shape[0], base_shape[1]);
            Tensor base = randn(base_shape, dt);
            Tensor x = transposed ? base.transpose(0, 1) : base;
            Tensor xg = transposed ? gpu(base).transpose(0, 1) : gpu(base);
            Tensor expect;
            {
              kernels::Use cpu_naive(op, "naive");  // the double-accumulating CPU loop
              expect = run(x, c.dims);
            }
            Tensor got = run(xg, c.dims);
            CHECK(got.device() == Device::cuda);
            if (variant == "naive") {
              CHECK(differs(expect, got) == "");
            } else {
              CHECK(mismatch(expect, got, rtol_for(dt), atol_for(dt)) == "");
            }
          }
        }
      }
    });
  }
}

// Integers drawn from a narrow range: every row has ties for its maximum.
Tensor tied_values(const Dims& shape, DType dt) {
  Tensor r = rand(shape, DType::f64, 0, 5);
  std::vector<double> v = r.to_vector<double>();
  for (double& e : v) e = std::floor(e);
  Tensor t = from_vector(v, shape);
  return t.to(dt);
}

TEST_CASE("cuda max and argmax return the cpu's value and first index, ties included") {
  manual_seed(22);
  for (const char* op : {"max", "argmax"}) {
    cuda_test::for_each_cuda_variant(op, [&](const std::string& variant) {
      for (DType dt : kFloatTypes) {
        for (const Case& c : kCases) {
          if (c.dims.size() > 1) continue;  // max and argmax take one dim or all
          for (bool ties : {false, true}) {
            INFO(prism::testing::info_text(op, " [", variant, "] ", dtype_name(dt), " ",
                                           c.shape.str(), (ties ? " ties" : "")));
            Tensor x = ties ? tied_values(c.shape, dt) : randn(c.shape, dt);
            Tensor xg = gpu(x);
            if (c.dims.empty()) {
              CHECK(differs(argmax(x), argmax(xg)) == "");
              CHECK(differs(max(x), max(xg)) == "");
            } else {
              const int d = c.dims[0];
              CHECK(differs(argmax(x, d), argmax(xg, d)) == "");
              CHECK(differs(max(x, d, true), max(xg, d, true)) == "");
              if (c.shape.size() >= 2) {  // and on a transposed view
                Tensor xt = x.transpose(0, -1), xtg = xg.transpose(0, -1);
                CHECK(differs(argmax(xt, d), argmax(xtg, d)) == "");
              }
            }
          }
        }
      }
    });
  }
}

TEST_CASE("cuda max and argmax let NaN win, at its first position") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Rows: NaN in the middle, NaN first, two NaNs, all -inf, +inf and a tie for it.
  Tensor x = from_vector(std::vector<double>{1,    7,    nan,  9,    2,     //
                                             nan,  3,    4,    5,    6,     //
                                             1,    nan,  2,    nan,  3,     //
                                             -inf, -inf, -inf, -inf, -inf,  //
                                             1,    inf,  3,    inf,  0},
                         {5, 5});
  for (const char* op : {"max", "argmax"}) {
    cuda_test::for_each_cuda_variant(op, [&](const std::string& variant) {
      for (DType dt : kFloatTypes) {
        INFO(prism::testing::info_text(op, " [", variant, "] ", dtype_name(dt)));
        Tensor xd = x.to(dt), xg = gpu(x.to(dt));
        CHECK(differs(argmax(xd, 1), argmax(xg, 1)) == "");
        CHECK(differs(max(xd, 1), max(xg, 1)) == "");
        CHECK(differs(argmax(xd), argmax(xg)) == "");
      }
    });
  }
}

TEST_CASE("cuda max backward sends the gradient to the first maximum") {
  manual_seed(23);
  for (DType dt : kFloatTypes) {
    Tensor x = tied_values({7, 13}, dt);
    Tensor xc = x.detach().set_requires_grad();
    sum(max(xc, 1)).backward();
    Tensor xg = gpu(x).set_requires_grad();
    sum(max(xg, 1)).backward();
    INFO(dtype_name(dt));
    CHECK(differs(xc.grad(), xg.grad()) == "");
  }
}

TEST_CASE("cuda sum of an empty tensor is zeros") {
  for (DType dt : kFloatTypes) {
    Tensor z = gpu(zeros({0, 3}, dt));
    Tensor s = sum(z, {0});
    CHECK(s.device() == Device::cuda);
    CHECK(differs(zeros({3}, dt), s) == "");
    CHECK(sum(z).item() == 0.0);
  }
}

TEST_CASE("cuda optimized sum gives the same bits on every run") {
  manual_seed(24);
  Tensor x = gpu(randn({1000003}, DType::f32));
  Tensor cols = gpu(randn({20011, 29}, DType::f32));
  cuda_test::ForceVariant force("sum", "optimized");
  const double first = sum(x).item();
  const Tensor first_cols = sum(cols, {0});
  for (int run = 0; run < 5; ++run) {
    CHECK(sum(x).item() == first);
    CHECK(differs(first_cols, sum(cols, {0})) == "");
  }
}

}  // namespace
}  // namespace prism
