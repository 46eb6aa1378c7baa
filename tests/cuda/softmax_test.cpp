// softmax and log_softmax on the GPU against the CPU kernels: every CUDA variant (naive, online),
// over the first, a middle and the last dim, rows short enough for a warp and long enough for
// a block, transposed inputs, large logits, rows of -inf, and the backward of both.
//
// Tolerance: float32 softmax 1e-6 relative plus 1e-9 absolute: the CPU's online kernel uses its
// own vectorised exp (kernels/cpu/fast_exp.h, ~1 ulp) and the GPU expf (2 ulp), each followed by
// a few roundings; the naive kernels exponentiate in double on both sides. log_softmax has an
// absolute error of a few ulp of |x - max| + log(sum) (up to ~20 here), so it gets 4e-6
// absolute. float64: 1e-12. Backward adds one reduction per row: 4e-6 absolute in float32.
#include <doctest/doctest.h>

#include <limits>
#include <string>
#include <vector>

#include "tensor/ops.h"
#include "tensor/random.h"
#include "tests/cuda/cuda_compare.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using cuda_test::gpu;
using cuda_test::kFloatTypes;
using cuda_test::mismatch;

const std::vector<Dims> kShapes = {{1}, {13}, {7, 13}, {3, 4, 5}, {5, 1031}, {3, 4099}, {2, 1}};

struct Tol {
  double rtol, atol;
};
Tol tol_for(bool log, DType dt) {
  if (dt == DType::f64) return {1e-12, 1e-12};
  return {1e-6, log ? 4e-6 : 1e-9};
}

Tensor run(bool log, const Tensor& x, int dim) {
  return log ? log_softmax(x, dim) : softmax(x, dim);
}

TEST_CASE("cuda softmax and log_softmax match the cpu over every dim") {
  manual_seed(31);
  for (const char* op : {"softmax", "log_softmax"}) {
    const bool log = std::string(op) == "log_softmax";
    cuda_test::for_each_cuda_variant(op, [&](const std::string& variant) {
      for (DType dt : kFloatTypes) {
        for (const Dims& shape : kShapes) {
          const int nd = shape.size();
          for (int d = -nd; d < nd; ++d) {
            for (bool transposed : {false, true}) {
              if (transposed && nd < 2) continue;
              INFO(prism::testing::info_text(op, " [", variant, "] ", dtype_name(dt), " ",
                                             shape.str(), " dim ", d,
                                             (transposed ? " transposed" : "")));
              Dims base_shape = shape;
              if (transposed) std::swap(base_shape[0], base_shape[nd - 1]);
              Tensor base = randn(base_shape, dt, 0, 3);
              Tensor x = transposed ? base.transpose(0, -1) : base;
              Tensor xg = transposed ? gpu(base).transpose(0, -1) : gpu(base);
              const Tol tol = tol_for(log, dt);
              CHECK(mismatch(run(log, x, d), run(log, xg, d), tol.rtol, tol.atol) == "");
            }
          }
        }
      }
    });
  }
}

TEST_CASE("cuda softmax handles large logits and rows of -inf like the cpu") {
  const double inf = std::numeric_limits<double>::infinity();
  // Logits near 1000 (a careless exp overflows), a row of -inf (NaN out), one -inf entry.
  Tensor x = from_vector(std::vector<double>{1000, 1001, 999.5, 1000.25,  //
                                             -inf, -inf, -inf, -inf,      //
                                             0.5, -inf, 2, 1},
                         {3, 4});
  for (const char* op : {"softmax", "log_softmax"}) {
    const bool log = std::string(op) == "log_softmax";
    cuda_test::for_each_cuda_variant(op, [&](const std::string& variant) {
      for (DType dt : kFloatTypes) {
        INFO(prism::testing::info_text(op, " [", variant, "] ", dtype_name(dt)));
        Tensor xd = x.to(dt);
        const Tol tol = tol_for(log, dt);
        CHECK(mismatch(run(log, xd, 1), run(log, gpu(xd), 1), tol.rtol, tol.atol) == "");
      }
    });
  }
}

// d/dx sum(w * softmax(x)) on both devices, through softmax_backward / log_softmax_backward.
TEST_CASE("cuda softmax backward matches the cpu") {
  manual_seed(32);
  for (const char* op : {"softmax", "log_softmax"}) {
    const bool log = std::string(op) == "log_softmax";
    const char* bw = log ? "log_softmax_backward" : "softmax_backward";
    cuda_test::for_each_cuda_variant(bw, [&](const std::string& variant) {
      for (DType dt : kFloatTypes) {
        for (const Dims& shape : kShapes) {
          const int nd = shape.size();
          for (int d : {0, nd - 1}) {
            INFO(prism::testing::info_text(bw, " [", variant, "] ", dtype_name(dt), " ",
                                           shape.str(), " dim ", d));
            Tensor x = randn(shape, dt, 0, 2);
            Tensor w = randn(shape, dt);
            Tensor xc = x.detach().set_requires_grad();
            sum(mul(run(log, xc, d), w)).backward();
            Tensor xg = gpu(x).set_requires_grad();
            sum(mul(run(log, xg, d), gpu(w))).backward();
            REQUIRE(xg.grad().defined());
            const double atol = dt == DType::f32 ? 4e-6 : 1e-12;
            CHECK(mismatch(xc.grad(), xg.grad(), dt == DType::f32 ? 1e-5 : 1e-12, atol) == "");
          }
        }
      }
    });
  }
}

}  // namespace
}  // namespace prism
