// rope (tensor/ops/rope.cpp): both variants against a long-double reference written here from
// the definition, on odd shapes, strided views (a head's q inside a fused qkv projection, the
// layouts of tests/tensor/reference.h) and far positions; what the rotation must keep (each
// row's norm, scores that depend on relative position only); gradients against finite
// differences; exact costs on the meta device; errors naming the op. (Every variant against the
// baseline on raw buffers: kernels/ops/rope/opinfo.cpp via the op-description tests.)
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "profiler/session.h"
#include "tests/tensor/reference.h"
#include "tests/test_util.h"

namespace prism {
namespace {

using ref::Array;
using ref::Layout;
using ref::Shape;
using testing::contains;
using testing::error_of;

// Each row at position pos0 + t (t its index in dim -2) with pairs (i, i + D/2) turned by
// (pos0 + t) base^(-2i/D), in long double.
Array rope_ref(const Array& x, int64_t pos0, double base) {
  const int64_t d = x.shape.back(), t = x.shape[x.shape.size() - 2], h = d / 2;
  const int64_t rows = d == 0 ? 0 : x.numel() / d;
  Array y(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const long double p = pos0 + r % t;
    for (int64_t i = 0; i < h; ++i) {
      const long double angle = p * std::pow(static_cast<long double>(base), -2.0L * i / d);
      const long double c = std::cos(angle), s = std::sin(angle);
      const long double x0 = x[r * d + i], x1 = x[r * d + i + h];
      y[r * d + i] = static_cast<double>(x0 * c - x1 * s);
      y[r * d + i + h] = static_cast<double>(x1 * c + x0 * s);
    }
  }
  return y;
}

const char* kVariants[] = {"naive", "optimized"};

TEST_CASE("rope matches the reference: variants, odd shapes, strided views, far positions") {
  ref::Rng rng(31);
  const std::vector<Shape> shapes = {{1, 2},         {7, 2},       {3, 13, 6},
                                     {2, 3, 17, 64}, {1, 1, 1, 2}, {5, 31, 130}};
  for (const char* variant : kVariants) {
    kernels::Use use("rope", variant);
    for (DType dt : {DType::f32, DType::f64}) {
      for (const Shape& s : shapes) {
        for (Layout l : ref::kAllLayouts) {
          for (int64_t pos0 : {int64_t{0}, int64_t{1000}}) {
            INFO(prism::testing::info_text(variant, " ", dtype_name(dt), " ", ref::shape_str(s),
                                           " ", ref::layout_name(l), " pos0 ", pos0));
            ref::Input x = ref::make_input(s, l, dt, rng, -3, 3);
            Tensor y = rope(x.t, pos0);
            CHECK(y.shape() == Dims(s));
            CHECK(y.is_contiguous());
            // float32: the table's cosines rounded to float, and angles up to 1000 radians.
            const double tol = dt == DType::f32 ? 4e-6 : 1e-12;
            CHECK(ref::mismatch(y, rope_ref(x.a, pos0, 10000), tol, tol) == "");
          }
        }
      }
    }
  }
}

TEST_CASE("rope reads a head's q inside a fused qkv projection in place") {
  // [B, T, 3, H, D] permuted to [3, B, H, T, D]: q is select(0, 0), strides (T 3 H D, D, 3 H D).
  const int64_t b = 2, t = 5, h = 3, d = 8;
  Tensor qkv = randn({b, t, 3, h, d}, DType::f64);
  Tensor q = qkv.permute({2, 0, 3, 1, 4}).select(0, 0);
  CHECK_FALSE(q.is_contiguous());
  for (const char* variant : kVariants) {
    kernels::Use use("rope", variant);
    INFO(variant);
    CHECK(ref::mismatch(rope(q, 7), rope_ref(ref::of(q.contiguous()), 7, 10000), 1e-12, 1e-12) ==
          "");
  }
}

TEST_CASE("rope keeps each row's norm, and q.k depends on the positions' difference only") {
  for (const char* variant : kVariants) {
    kernels::Use use("rope", variant);
    INFO(variant);
    Tensor x = randn({2, 9, 16}, DType::f64);
    Tensor y = rope(x, 3);
    CHECK(ref::mismatch(sum(y * y, {-1}), ref::of(sum(x * x, {-1})), 1e-12, 1e-12) == "");
    // One query vector q and one key vector k, placed at positions (p, s) and (p + 40, s + 40):
    // R(p)q . R(s)k = q . R(s - p)k, the same both times.
    Tensor q = randn({1, 16}, DType::f64), k = randn({1, 16}, DType::f64);
    for (int64_t p : {0, 5, 11}) {
      for (int64_t s : {0, 2, 17}) {
        const double near = sum(rope(q, p) * rope(k, s)).item<double>();
        const double far = sum(rope(q, p + 40) * rope(k, s + 40)).item<double>();
        CHECK(near == doctest::Approx(far).epsilon(1e-12));
      }
    }
    // Position 0 turns nothing.
    CHECK(ref::mismatch(rope(q, 0), ref::of(q), 0, 0) == "");
  }
}

TEST_CASE("rope gradients match finite differences (float64, both variants)") {
  ref::Rng rng(8);
  for (const char* variant : kVariants) {
    kernels::Use fwd("rope", variant);
    kernels::Use bwd("rope_backward", variant);
    INFO(variant);
    for (const Shape& s : {Shape{3, 4}, Shape{2, 5, 6}, Shape{2, 2, 3, 8}, Shape{1, 2}}) {
      INFO(ref::shape_str(s));
      Tensor x = ref::make_input(s, Layout::contiguous, DType::f64, rng, -2, 2).t;
      x.set_requires_grad();
      CHECK_GRAD([](const std::vector<Tensor>& in) { return rope(in[0], 5); }, x);
      // A strided input: the transpose of a [D, T] tensor is a [T, D] view.
      Tensor xt = ref::make_input({s.back(), s[s.size() - 2]}, Layout::contiguous, DType::f64, rng)
                      .t.set_requires_grad();
      CHECK_GRAD([](const std::vector<Tensor>& in) { return rope(in[0].t(), 2); }, xt);
    }
  }
}

TEST_CASE("rope costs: exact FLOPs and bytes on the meta device, one op each way") {
  DefaultDevice meta(Device::meta);
  Tensor x = randn({2, 3, 5, 8}).set_requires_grad();  // 240 elements
  profiler::Session session;
  sum(rope(x, 4)).backward();
  const profiler::Profile& p = session.stop();
  CHECK(x.grad().shape() == Dims{2, 3, 5, 8});
  int forward = 0, backward = 0;
  for (const auto& r : p.recording.records) {
    if (r.kind != profiler::Kind::op) continue;
    const std::string op = r.op;
    if (op != "rope" && op != "rope_backward") continue;
    (op == "rope" ? forward : backward) += 1;
    CHECK(r.cost.flops == 3 * 240);
    CHECK(r.cost.macs == 0);
    CHECK(r.cost.bytes == 2 * 240 * 4);
    if (op == "rope_backward") CHECK(std::string(r.grad_of) == "rope.dx");
  }
  CHECK(forward == 1);
  CHECK(backward == 1);
}

TEST_CASE("rope: empty rows and an empty batch give empty results") {
  CHECK(rope(zeros({3, 0})).shape() == Dims{3, 0});
  CHECK(rope(zeros({0, 4, 6})).shape() == Dims{0, 4, 6});
}

TEST_CASE("rope errors name the op and what was wrong") {
  CHECK(contains(error_of([] {
                   rope(zeros({4, 5}));
                 }),
                 "rope: x [4,5] has an odd last dim (5); rope turns pairs of entries"));
  CHECK(contains(error_of([] { rope(zeros({6})); }),
                 "rope: x [6] must be [T, D], [N, T, D] or [B, H, T, D]"));
  CHECK(contains(error_of([] {
                   rope(zeros({1, 2, 3, 4, 6}));
                 }),
                 "rope: x [1,2,3,4,6] must be [T, D], [N, T, D] or [B, H, T, D]"));
  CHECK(contains(error_of([] {
                   rope(zeros({2, 4}, DType::i64));
                 }),
                 "rope: needs a float32 or float64 tensor, got int64"));
  CHECK(contains(error_of([] {
                   rope(zeros({2, 4}), -1);
                 }),
                 "rope: the first position -1 is not in [0, 2^31)"));
  CHECK(contains(error_of([] { rope(zeros({2, 4}), 0, 0.0); }), "rope: base 0"));
  CHECK(contains(error_of([] { rope(zeros({2, 4}), 0, std::nan("")); }), "must be finite"));
}

}  // namespace
}  // namespace prism
