// rms_norm (tensor/ops/norm.cpp): both variants against a long-double reference written here
// from the definition, on odd shapes and strided views; gradients against finite differences;
// the weight optional; exact costs on the meta device; errors naming the op. (Every variant
// against the baseline on raw buffers: kernels/ops/rms_norm/opinfo.cpp via the op-description
// tests.)
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tests/tensor/reference.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using ref::Array;
using ref::Layout;
using ref::Shape;
using testing::contains;
using testing::error_of;

// x / sqrt(mean(x^2) + eps) * w over the last dim, in long double.
Array rms_norm_ref(const Array& x, const Array* w, double eps) {
  const int64_t d = x.shape.back();
  const int64_t rows = x.numel() / d;
  Array y(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    long double sq = 0;
    for (int64_t j = 0; j < d; ++j) sq += static_cast<long double>(x[r * d + j]) * x[r * d + j];
    const long double rstd = 1 / std::sqrt(sq / d + eps);
    for (int64_t j = 0; j < d; ++j) {
      long double v = x[r * d + j] * rstd;
      if (w) v *= (*w)[j];
      y[r * d + j] = static_cast<double>(v);
    }
  }
  return y;
}

const char* kVariants[] = {"fused", "naive"};

TEST_CASE("rms_norm matches the reference: variants, odd shapes, strided views") {
  ref::Rng rng(23);
  const std::vector<Shape> shapes = {{1},     {5},         {1, 7},   {7, 1},
                                     {3, 64}, {2, 3, 131}, {13, 67}, {4, 1031}};
  for (const char* variant : kVariants) {
    kernels::Use use("rms_norm", variant);
    for (DType dt : {DType::f32, DType::f64}) {
      for (const Shape& s : shapes) {
        for (Layout l : ref::kAllLayouts) {
          for (bool with_weight : {false, true}) {
            INFO(prism::testing::info_text(variant, " ", dtype_name(dt), " ", ref::shape_str(s),
                                           " ", ref::layout_name(l), with_weight ? " weight" : ""));
            ref::Input x = ref::make_input(s, l, dt, rng, -3, 5);
            ref::Input w = ref::make_input({s.back()}, Layout::stepped, dt, rng, -2, 2);
            Tensor y = rms_norm(x.t, with_weight ? w.t : Tensor());
            CHECK(y.shape() == Dims(s));
            CHECK(y.is_contiguous());
            const Array expect = rms_norm_ref(x.a, with_weight ? &w.a : nullptr, 1e-6);
            const double tol = dt == DType::f32 ? 2e-6 : 1e-12;
            CHECK(ref::mismatch(y, expect, tol, tol) == "");
          }
        }
      }
    }
  }
}

TEST_CASE("rms_norm: a custom eps, a zero row, one column") {
  ref::Rng rng(4);
  ref::Input x = ref::make_input({4, 9}, Layout::contiguous, DType::f64, rng);
  ref::Input w = ref::make_input({9}, Layout::contiguous, DType::f64, rng);
  CHECK(ref::mismatch(rms_norm(x.t, w.t, 0.5), rms_norm_ref(x.a, &w.a, 0.5), 1e-12, 1e-12) == "");
  // A row of zeros stays zeros (rstd = 1 / sqrt(eps) times 0), never NaN.
  CHECK(rms_norm(zeros({2, 3}, DType::f64), Tensor()).to_vector() == std::vector<double>(6, 0.0));
  // One element per row: x / |x| (up to eps), the sign of x.
  Tensor one = rms_norm(full({2, 1}, -4.0, DType::f64), Tensor(), 0.0);
  CHECK(one.to_vector() == std::vector<double>{-1.0, -1.0});
}

TEST_CASE("rms_norm gradients match finite differences (float64, both variants)") {
  ref::Rng rng(6);
  for (const char* variant : kVariants) {
    kernels::Use fwd("rms_norm", variant);
    kernels::Use bwd("rms_norm_backward", variant);
    INFO(variant);
    for (const Shape& s : {Shape{3, 7}, Shape{2, 3, 5}, Shape{1, 1}, Shape{4, 1}}) {
      INFO(ref::shape_str(s));
      Tensor x = ref::make_input(s, Layout::contiguous, DType::f64, rng, -2, 2).t;
      Tensor w = ref::make_input({s.back()}, Layout::contiguous, DType::f64, rng).t;
      x.set_requires_grad();
      w.set_requires_grad();
      CHECK_GRAD([](const std::vector<Tensor>& in) { return rms_norm(in[0], in[1]); }, x, w);
      CHECK_GRAD([](const std::vector<Tensor>& in) { return rms_norm(in[0], Tensor()); }, x);
      if (s.size() == 2) {  // a strided view of x (transpose)
        Tensor xt = ref::make_input({s[1], s[0]}, Layout::contiguous, DType::f64, rng).t;
        xt.set_requires_grad();
        CHECK_GRAD([](const std::vector<Tensor>& in) { return rms_norm(in[0].t(), in[1]); }, xt, w);
      }
    }
  }
}

TEST_CASE("rms_norm backward is one op that gives dx and dweight, and no_grad saves nothing") {
  Tensor x = randn({6, 10}).set_requires_grad();
  Tensor w = randn({10}).set_requires_grad();
  Tensor loss = sum(rms_norm(x, w) * randn({6, 10}));
  profiler::Session session;
  loss.backward();
  Tensor y_no_grad;
  {
    NoGrad no_grad;
    y_no_grad = rms_norm(x, w);
  }
  const profiler::Profile& p = session.stop();
  int backward_ops = 0;
  std::vector<int64_t> forward_allocs;
  for (const auto& r : p.recording.records) {
    if (r.kind != profiler::Kind::op) continue;
    if (std::string(r.op) == "rms_norm_backward") {
      ++backward_ops;
      CHECK(std::string(r.grad_of) == "rms_norm.dx,dw");
      CHECK(r.allocs == 2);  // dx, dweight
    }
    if (std::string(r.op) == "rms_norm") forward_allocs.push_back(r.allocs);
  }
  CHECK(backward_ops == 1);
  CHECK(forward_allocs == std::vector<int64_t>{1});  // under no_grad: y only, no rstd
  CHECK(x.grad().shape() == Dims{6, 10});
  CHECK(w.grad().shape() == Dims{10});
  CHECK_FALSE(y_no_grad.requires_grad());
}

TEST_CASE("rms_norm costs: exact FLOPs and bytes on the meta device") {
  DefaultDevice meta(Device::meta);
  Tensor x = randn({4, 5, 32}).set_requires_grad();  // 20 rows of 32
  Tensor w = ones({32}).set_requires_grad();
  profiler::Session session;
  Tensor y = rms_norm(x, w);
  sum(y).backward();
  const profiler::Profile& p = session.stop();
  CHECK(x.grad().shape() == Dims{4, 5, 32});
  int seen = 0;
  for (const auto& r : p.recording.records) {
    if (r.kind != profiler::Kind::op) continue;
    if (std::string(r.op) == "rms_norm") {
      ++seen;
      CHECK(r.cost.flops == 4 * 640 + 4 * 20);         // 3 + 1 (weight) per element, 4 per row
      CHECK(r.cost.bytes == (2 * 640 + 32 + 20) * 4);  // x, y, weight, rstd
    }
    if (std::string(r.op) == "rms_norm_backward") {
      ++seen;
      CHECK(r.cost.flops == (7 + 2) * 640);                       // dx 6 + 1 (weight), dw 2
      CHECK(r.cost.bytes == (2 * 640 + 20 + 32 + 640 + 32) * 4);  // x g rstd w; dx dw
    }
  }
  CHECK(seen == 2);
}

TEST_CASE("rms_norm errors name the op and the shapes") {
  CHECK(contains(error_of([] {
                   rms_norm(zeros({2, 6}), ones({5}));
                 }),
                 "rms_norm: weight must be [D] = [6] for input [2,6], got [5]"));
  CHECK(contains(error_of([] {
                   rms_norm(zeros({2, 6}), ones({6}, DType::f64));
                 }),
                 "rms_norm: weight is float64 but the input is float32"));
  CHECK(contains(error_of([] {
                   rms_norm(zeros({2, 6}, DType::i64), Tensor());
                 }),
                 "rms_norm: needs a float32 or float64 tensor, got int64"));
  CHECK(contains(error_of([] { rms_norm(scalar(1.0), Tensor()); }),
                 "rms_norm: input must have at least one dim"));
  CHECK(contains(error_of([] {
                   rms_norm(zeros({3, 0}), Tensor());
                 }),
                 "rms_norm: the last dim of input [3,0] is empty"));
  CHECK(contains(error_of([] {
                   rms_norm(zeros({3, 2}), Tensor(), std::nan(""));
                 }),
                 "rms_norm: eps must be a finite number >= 0, got nan"));
}

}  // namespace
}  // namespace prism
