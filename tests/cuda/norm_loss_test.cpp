// layer_norm and cross_entropy on the GPU against the CPU kernels: every CUDA variant, forward
// and backward, rows for a warp and for a block, transposed inputs, rows with a large mean, with
// and without weight and bias, mean and sum reductions, strided labels, and the error for a
// label out of range (which the GPU kernels must find on the device).
//
// References: layer_norm's is the CPU "two_pass" kernel (statistics in double, as both GPU
// variants compute them); the CPU one_pass keeps its 64 Welford lanes in float32, which on rows
// of mean 1000 is itself only good to ~1e-4.
// Tolerances, float32: outputs of order 1 from the same double statistics, normalised in float
// (nvcc may fuse a multiply-add the CPU rounds twice): 1e-5 relative and absolute. The
// gradients' sums are float32 on the CPU (over up to 4099 columns, or the rows for dweight) and
// double on the GPU: 1e-4 relative, 2e-5 absolute. cross_entropy's loss is a double sum of
// per-row float32 terms on both sides: 1e-5. float64: 1e-10 (gradients) to 1e-12.
#include <doctest/doctest.h>

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
using testing::contains;
using testing::error_of;

// ---- layer_norm ------------------------------------------------------------------------------

// {70, 37} and {40, 1031}: more than 32 rows, so backward's dweight and dbias column sums are
// split into row chunks and folded by a second kernel.
const std::vector<Dims> kNormShapes = {{1, 1},    {7, 13}, {3, 5, 37}, {4, 1031},
                                       {2, 4099}, {1, 2},  {70, 37},   {40, 1031}};

struct Affine {
  bool weight, bias;
};
const Affine kAffine[] = {{false, false}, {true, false}, {false, true}, {true, true}};

Tensor maybe(bool on, const Tensor& t) {
  return on ? t : Tensor();
}

TEST_CASE("cuda layer_norm matches the cpu, with and without weight and bias") {
  manual_seed(41);
  cuda_test::for_each_cuda_variant("layer_norm", [&](const std::string& variant) {
    for (DType dt : kFloatTypes) {
      for (const Dims& shape : kNormShapes) {
        const int64_t d = shape[shape.size() - 1];
        for (const Affine& af : kAffine) {
          for (bool transposed : {false, true}) {
            for (double offset : {0.0, 1000.0}) {
              // The mean of d values near `offset` carries a rounding error of about
              // sqrt(d) * eps * offset whatever the order of the sum, and every output
              // (x - mean) / std inherits it: float64 on GPU and CPU (other summation trees)
              // differ by ~1e-11 at offset 1000 and d = 4099, seen on an H200. float32's
              // tolerance is far above that already.
              const double tol = dt == DType::f32 ? 1e-5 : 1e-12 * (1 + offset);
              INFO(prism::testing::info_text("layer_norm [", variant, "] ", dtype_name(dt), " ",
                                             shape.str(), (af.weight ? " weight" : ""),
                                             (af.bias ? " bias" : ""),
                                             (transposed ? " transposed" : ""), " mean ", offset));
              Dims base_shape = shape;
              if (transposed) std::swap(base_shape[0], base_shape[shape.size() - 1]);
              Tensor base = randn(base_shape, dt, offset, 1);
              Tensor x = transposed ? base.transpose(0, -1) : base;
              Tensor xg = transposed ? gpu(base).transpose(0, -1) : gpu(base);
              Tensor w = randn({d}, dt), b = randn({d}, dt);
              Tensor expect;
              {
                kernels::Use cpu_ref("layer_norm", "two_pass");
                expect = layer_norm(x, maybe(af.weight, w), maybe(af.bias, b));
              }
              Tensor got = layer_norm(xg, maybe(af.weight, gpu(w)), maybe(af.bias, gpu(b)));
              CHECK(got.device() == Device::cuda);
              CHECK(mismatch(expect, got, tol, tol) == "");
            }
          }
        }
      }
    }
  });
}

TEST_CASE("cuda layer_norm backward gives the cpu's dx, dweight and dbias") {
  manual_seed(42);
  cuda_test::for_each_cuda_variant("layer_norm_backward", [&](const std::string& variant) {
    for (DType dt : kFloatTypes) {
      const double rtol = dt == DType::f32 ? 1e-4 : 1e-10;
      const double atol = dt == DType::f32 ? 2e-5 : 1e-10;
      for (const Dims& shape : kNormShapes) {
        const int64_t d = shape[shape.size() - 1];
        for (const Affine& af : kAffine) {
          for (bool transposed : {false, true}) {
            INFO(prism::testing::info_text("layer_norm_backward [", variant, "] ", dtype_name(dt),
                                           " ", shape.str(), (af.weight ? " weight" : ""),
                                           (af.bias ? " bias" : ""),
                                           (transposed ? " transposed" : "")));
            Dims base_shape = shape;
            if (transposed) std::swap(base_shape[0], base_shape[shape.size() - 1]);
            Tensor base = randn(base_shape, dt, 0.5, 2);
            Tensor w0 = randn({d}, dt), b0 = randn({d}, dt), g = randn(shape, dt);
            // cpu
            Tensor xc = base.detach().set_requires_grad();
            Tensor wc = w0.detach().set_requires_grad(), bc = b0.detach().set_requires_grad();
            Tensor xcv = transposed ? xc.transpose(0, -1) : xc;
            sum(mul(layer_norm(xcv, maybe(af.weight, wc), maybe(af.bias, bc)), g)).backward();
            // gpu
            Tensor xg = gpu(base).set_requires_grad();
            Tensor wg = gpu(w0).set_requires_grad(), bg = gpu(b0).set_requires_grad();
            Tensor xgv = transposed ? xg.transpose(0, -1) : xg;
            sum(mul(layer_norm(xgv, maybe(af.weight, wg), maybe(af.bias, bg)), gpu(g))).backward();
            CHECK(mismatch(xc.grad(), xg.grad(), rtol, atol) == "");
            if (af.weight) CHECK(mismatch(wc.grad(), wg.grad(), rtol, atol) == "");
            if (af.bias) CHECK(mismatch(bc.grad(), bg.grad(), rtol, atol) == "");
          }
        }
      }
    }
  });
}

// ---- cross_entropy ---------------------------------------------------------------------------

const std::vector<Dims> kLogitShapes = {{1, 1}, {7, 13}, {5, 1031}, {3, 4099}, {257, 3}};

// 2 * rows labels in [0, classes): the tests use every other one (a strided view).
Tensor labels(int64_t rows, int64_t classes) {
  Tensor r = rand({2 * rows}, DType::f64, 0, static_cast<double>(classes));
  std::vector<int64_t> v;
  for (double e : r.to_vector<double>()) v.push_back(static_cast<int64_t>(e));
  return from_vector(v, {2 * rows});
}

TEST_CASE("cuda cross_entropy forward and backward match the cpu") {
  manual_seed(43);
  cuda_test::for_each_cuda_variant("cross_entropy", [&](const std::string& variant) {
    for (DType dt : kFloatTypes) {
      const double tol = dt == DType::f32 ? 1e-5 : 1e-12;
      for (const Dims& shape : kLogitShapes) {
        for (Reduction red : {Reduction::mean, Reduction::sum}) {
          for (bool transposed : {false, true}) {
            INFO(prism::testing::info_text("cross_entropy [", variant, "] ", dtype_name(dt), " ",
                                           shape.str(), (red == Reduction::mean ? " mean" : " sum"),
                                           (transposed ? " transposed" : "")));
            Tensor base = randn(transposed ? Dims{shape[1], shape[0]} : shape, dt, 0, 3);
            Tensor all = labels(shape[0], shape[1]);
            Tensor t = all.slice(0, 0, 2 * shape[0], 2);
            Tensor tg = gpu(all).slice(0, 0, 2 * shape[0], 2);
            Tensor xc = base.detach().set_requires_grad();
            Tensor lc = cross_entropy(transposed ? xc.t() : xc, t, red);
            Tensor xg = gpu(base).set_requires_grad();
            Tensor lg = cross_entropy(transposed ? xg.t() : xg, tg, red);
            CHECK(lg.device() == Device::cuda);
            CHECK(mismatch(lc, lg, tol, tol) == "");
            lc.backward();
            lg.backward();
            // The gradient is (p - onehot) * scale, scale 1 (sum) or 1 / rows (mean): where p is
            // close to 1 the subtraction keeps p's absolute rounding error, a few ulp of 1
            // (float32: 6e-8 each), whatever p's relative accuracy; the two devices' exp differ
            // by that much (seen on an H200: 1.2e-7 at p = 0.99991, sum).
            const double scale = red == Reduction::mean ? 1.0 / static_cast<double>(shape[0]) : 1.0;
            const double grad_atol = (dt == DType::f32 ? 4.8e-7 : 1e-14) * scale;
            CHECK(mismatch(xc.grad(), xg.grad(), tol, grad_atol) == "");
          }
        }
      }
    }
  });
}

TEST_CASE("cuda cross_entropy refuses a label out of range with the cpu's message") {
  Tensor x = randn({4, 13}, DType::f32);
  for (int64_t bad : {13, -1, 1000}) {
    Tensor t = from_vector(std::vector<int64_t>{0, 12, bad, bad}, {4});
    const std::string on_cpu = error_of([&] { cross_entropy(x, t); });
    CHECK(contains(on_cpu, "at position 2 is out of range [0, 13)"));
    cuda_test::for_each_cuda_variant("cross_entropy", [&](const std::string& variant) {
      INFO(prism::testing::info_text("cross_entropy [", variant, "] label ", bad));
      CHECK(error_of([&] { cross_entropy(gpu(x), gpu(t)); }) == on_cpu);
    });
  }
}

}  // namespace
}  // namespace prism
