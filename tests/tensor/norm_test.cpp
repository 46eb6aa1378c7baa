// layer_norm (tensor/ops/norm.cpp): both variants against a float64 reference written here from
// the definition, on odd shapes and strided views; gradients against finite differences;
// weight and bias optional; the meta device; errors. (nn::LayerNorm running the op:
// tests/nn/fused_ops_test.cpp.)
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

// (x - mean) / sqrt(var + eps) * w + b over the last dim, in long double.
Array layer_norm_ref(const Array& x, const Array* w, const Array* b, double eps) {
  const int64_t d = x.shape.back();
  const int64_t rows = x.numel() / d;
  Array y(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    long double sum = 0;
    for (int64_t j = 0; j < d; ++j) sum += x[r * d + j];
    const long double mean = sum / d;
    long double sq = 0;
    for (int64_t j = 0; j < d; ++j) sq += (x[r * d + j] - mean) * (x[r * d + j] - mean);
    const long double rstd = 1 / std::sqrt(sq / d + eps);
    for (int64_t j = 0; j < d; ++j) {
      long double v = (x[r * d + j] - mean) * rstd;
      if (w) v *= (*w)[j];
      if (b) v += (*b)[j];
      y[r * d + j] = static_cast<double>(v);
    }
  }
  return y;
}

const char* kVariants[] = {"one_pass", "two_pass"};

TEST_CASE("layer_norm matches the reference: variants, odd shapes, strided views") {
  ref::Rng rng(17);
  const std::vector<Shape> shapes = {{1},     {5},         {1, 7},   {7, 1},
                                     {3, 64}, {2, 3, 131}, {13, 67}, {4, 1031}};
  for (const char* variant : kVariants) {
    kernels::Use use("layer_norm", variant);
    for (DType dt : {DType::f32, DType::f64}) {
      for (const Shape& s : shapes) {
        for (Layout l : ref::kAllLayouts) {
          for (bool affine : {false, true}) {
            const std::string ctx = std::string(variant) + " " + dtype_name(dt) + " " +
                                    ref::shape_str(s) + " " + ref::layout_name(l) +
                                    (affine ? " affine" : "");
            INFO(ctx);
            ref::Input x = ref::make_input(s, l, dt, rng, -3, 5);
            ref::Input w = ref::make_input({s.back()}, Layout::contiguous, dt, rng, -2, 2);
            ref::Input b = ref::make_input({s.back()}, Layout::stepped, dt, rng, -1, 1);
            Tensor y = affine ? layer_norm(x.t, w.t, b.t) : layer_norm(x.t, Tensor(), Tensor());
            CHECK(y.shape() == Dims(s));
            CHECK(y.is_contiguous());
            Array expect =
                layer_norm_ref(x.a, affine ? &w.a : nullptr, affine ? &b.a : nullptr, 1e-5);
            const double tol = dt == DType::f32 ? 2e-5 : 1e-11;
            CHECK(ref::mismatch(y, expect, tol, tol) == "");
          }
        }
      }
    }
  }
}

TEST_CASE("layer_norm: weight alone, bias alone, a custom eps, one column") {
  ref::Rng rng(3);
  ref::Input x = ref::make_input({4, 9}, Layout::contiguous, DType::f64, rng);
  ref::Input w = ref::make_input({9}, Layout::contiguous, DType::f64, rng);
  ref::Input b = ref::make_input({9}, Layout::contiguous, DType::f64, rng);
  CHECK(ref::mismatch(layer_norm(x.t, w.t, Tensor(), 0.1), layer_norm_ref(x.a, &w.a, nullptr, 0.1),
                      1e-12, 1e-12) == "");
  CHECK(ref::mismatch(layer_norm(x.t, Tensor(), b.t, 0.0), layer_norm_ref(x.a, nullptr, &b.a, 0),
                      1e-12, 1e-12) == "");
  // One element per row: the variance is 0, so the output is the bias.
  Tensor one = layer_norm(ones({3, 1}, DType::f64) * 5.0, Tensor(), full({1}, 0.25, DType::f64));
  CHECK(one.to_vector() == std::vector<double>{0.25, 0.25, 0.25});
}

TEST_CASE("layer_norm gradients match finite differences (float64, both variants)") {
  ref::Rng rng(5);
  for (const char* variant : kVariants) {
    kernels::Use use("layer_norm", variant);
    INFO(variant);
    for (const Shape& s : {Shape{3, 7}, Shape{2, 3, 5}, Shape{1, 1}, Shape{4, 1}}) {
      INFO(ref::shape_str(s));
      Tensor x = ref::make_input(s, Layout::contiguous, DType::f64, rng, -2, 2).t;
      Tensor w = ref::make_input({s.back()}, Layout::contiguous, DType::f64, rng).t;
      Tensor b = ref::make_input({s.back()}, Layout::contiguous, DType::f64, rng).t;
      x.set_requires_grad();
      w.set_requires_grad();
      b.set_requires_grad();
      CHECK_GRAD([](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2]); }, x,
                 w, b);
      CHECK_GRAD(
          [](const std::vector<Tensor>& in) { return layer_norm(in[0], Tensor(), Tensor()); }, x);
      // A strided view of x (transpose), weight only.
      if (s.size() == 2) {
        Tensor xt = ref::make_input({s[1], s[0]}, Layout::contiguous, DType::f64, rng).t;
        Tensor wt = ref::make_input({s[1]}, Layout::contiguous, DType::f64, rng).t;
        xt.set_requires_grad();
        wt.set_requires_grad();
        CHECK_GRAD(
            [](const std::vector<Tensor>& in) { return layer_norm(in[0].t(), in[1], Tensor()); },
            xt, wt);
      }
    }
  }
}

TEST_CASE("layer_norm backward is one op that gives dx, dweight and dbias") {
  Tensor x = randn({6, 10}).set_requires_grad();
  Tensor w = randn({10}).set_requires_grad();
  Tensor b = randn({10}).set_requires_grad();
  Tensor loss = sum(layer_norm(x, w, b) * randn({6, 10}));
  profiler::Session session;
  loss.backward();
  const profiler::Profile& p = session.stop();
  int forward_like = 0, backward_ops = 0;
  for (const auto& r : p.recording.records) {
    if (r.kind != profiler::Kind::op) continue;
    if (std::string(r.op) == "layer_norm_backward") {
      ++backward_ops;
      CHECK(std::string(r.grad_of) == "layer_norm.dx,dw,db");
      CHECK(r.allocs == 3);  // dx, dweight, dbias
    }
    if (std::string(r.op) == "layer_norm") ++forward_like;
  }
  CHECK(backward_ops == 1);
  CHECK(forward_like == 0);
  CHECK(x.grad().shape() == Dims{6, 10});
  CHECK(w.grad().shape() == Dims{10});
  CHECK(b.grad().shape() == Dims{10});
  // dbias is the column sum of the output gradient: check it against that.
  Tensor g = randn({6, 10});
  Tensor b2 = zeros({10}).set_requires_grad();
  sum(layer_norm(x.detach(), Tensor(), b2) * g).backward();
  CHECK(ref::mismatch(b2.grad(), ref::of(sum(g, {0})), 1e-6, 1e-6) == "");
}

TEST_CASE("layer_norm under no_grad saves no statistics") {
  Tensor x = randn({8, 16}).set_requires_grad();
  profiler::Session session;
  Tensor y1 = layer_norm(x, Tensor(), Tensor());  // grad mode: y, mean, rstd
  Tensor y2;
  {
    NoGrad no_grad;
    y2 = layer_norm(x, Tensor(), Tensor());  // y only
  }
  const profiler::Profile& p = session.stop();
  std::vector<int64_t> allocs;
  for (const auto& r : p.recording.records) {
    if (r.kind == profiler::Kind::op && std::string(r.op) == "layer_norm")
      allocs.push_back(r.allocs);
  }
  CHECK(allocs == std::vector<int64_t>{3, 1});
  CHECK(y1.requires_grad());
  CHECK_FALSE(y2.requires_grad());
  CHECK(y1.to_vector() == y2.to_vector());
}

TEST_CASE("layer_norm on the meta device: shapes, costs, no data") {
  DefaultDevice meta(Device::meta);
  Tensor x = randn({4, 5, 32}).set_requires_grad();
  Tensor w = ones({32}).set_requires_grad();
  Tensor b = zeros({32}).set_requires_grad();
  profiler::Session session;
  Tensor y = layer_norm(x, w, b);
  sum(y).backward();
  const profiler::Profile& p = session.stop();
  CHECK(y.shape() == Dims{4, 5, 32});
  CHECK(y.device() == Device::meta);
  CHECK(x.grad().shape() == Dims{4, 5, 32});
  CHECK(w.grad().shape() == Dims{32});
  bool saw_forward = false, saw_backward = false;
  for (const auto& r : p.recording.records) {
    if (r.kind != profiler::Kind::op) continue;
    if (std::string(r.op) == "layer_norm") {
      saw_forward = true;
      CHECK(std::string(r.variant) == "meta");
      CHECK(r.cost.flops == 8 * 640 + 5 * 20);
    }
    saw_backward = saw_backward || std::string(r.op) == "layer_norm_backward";
  }
  CHECK(saw_forward);
  CHECK(saw_backward);
}

TEST_CASE("layer_norm errors name the op and the shapes") {
  CHECK(contains(error_of([] {
                   layer_norm(zeros({2, 6}), ones({5}), Tensor());
                 }),
                 "layer_norm: weight must be [D] = [6] for input [2,6], got [5]"));
  CHECK(contains(error_of([] {
                   layer_norm(zeros({2, 6}), Tensor(), ones({6, 1}));
                 }),
                 "layer_norm: bias must be [D] = [6] for input [2,6], got [6,1]"));
  CHECK(contains(error_of([] {
                   layer_norm(zeros({2, 6}), ones({6}, DType::f64), Tensor());
                 }),
                 "layer_norm: weight is float64 but the input is float32"));
  CHECK(contains(error_of([] {
                   layer_norm(zeros({2, 6}, DType::i64), Tensor(), Tensor());
                 }),
                 "layer_norm: needs a float32 or float64 tensor, got int64"));
  CHECK(contains(error_of([] { layer_norm(scalar(1.0), Tensor(), Tensor()); }),
                 "layer_norm: input must have at least one dim"));
  CHECK(contains(error_of([] {
                   layer_norm(zeros({3, 0}), Tensor(), Tensor());
                 }),
                 "layer_norm: the last dim of input [3,0] is empty"));
  CHECK(contains(error_of([] {
                   layer_norm(zeros({3, 2}), Tensor(), Tensor(), -1.0);
                 }),
                 "layer_norm: eps must be a finite number >= 0, got -1"));
  Tensor meta_w;
  {
    DefaultDevice meta(Device::meta);
    meta_w = ones({6});
  }
  CHECK(contains(error_of([&] {
                   layer_norm(zeros({2, 6}), meta_w, Tensor());
                 }),
                 "layer_norm: tensors are on different devices"));
}

}  // namespace
}  // namespace prism
