// softmax and log_softmax against the float64 reference: over the first, a middle and the last
// dim (negative dims too), strided inputs, 0-d and empty tensors, and logits large enough to
// overflow a careless exp().
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "tests/tensor/reference.h"

namespace prism {
namespace {

using ref::Array;
using ref::Input;
using ref::Layout;
using ref::Shape;

constexpr DType kFloatTypes[] = {DType::f32, DType::f64};

const std::vector<Shape> kShapes = {{},        {1},       {13},         {7, 13},
                                    {3, 1, 5}, {3, 4, 5}, {2, 3, 4, 5}, {1, 7}};

// Tolerance: softmax is relative to its value; log_softmax has an absolute error of a few ulps
// of |x - max| + log(sum), so it gets an absolute floor as large as its relative part.
ref::Tol tol_for(bool log, DType dt) {
  if (dt == DType::f64) return {1e-12, log ? 1e-12 : 1e-14};
  return {4e-6, log ? 4e-6 : 1e-7};
}

template <class F>
void for_each_variant(const char* op, F&& fn) {
  for (const auto& e : kernels::registry().at(op, Device::cpu).entries()) {
    kernels::Use use(op, e.name);
    fn(e.name);
  }
}

TEST_CASE("softmax and log_softmax match the reference over every dim") {
  ref::Rng rng(41);
  for (const char* op : {"softmax", "log_softmax"}) {
    const bool log = std::string(op) == "log_softmax";
    for_each_variant(op, [&](const std::string& variant) {
      for (DType dt : kFloatTypes) {
        for (const Shape& s : kShapes) {
          for (Layout l : ref::kAllLayouts) {
            Input in = ref::make_input(s, l, dt, rng, -4, 4);
            const int nd = std::max(static_cast<int>(s.size()), 1);
            for (int d = -nd; d < nd; ++d) {
              const std::string ctx = std::string(op) + " [" + variant + "] " + dtype_name(dt) +
                                      " " + ref::shape_str(s) + " " + ref::layout_name(l) +
                                      " dim " + std::to_string(d);
              INFO(ctx);
              Tensor y = log ? log_softmax(in.t, d) : softmax(in.t, d);
              CHECK(y.dtype() == dt);
              Array expect = log ? ref::log_softmax(in.a, d) : ref::softmax(in.a, d);
              ref::Tol tol = tol_for(log, dt);
              CHECK(ref::mismatch(y, expect, tol.rtol, tol.atol) == "");
            }
          }
        }
      }
    });
  }
}

TEST_CASE("softmax rows sum to one and the default dim is the last") {
  ref::Rng rng(42);
  Input in = ref::make_input({3, 4, 5}, Layout::contiguous, DType::f64, rng);
  Tensor y = softmax(in.t);
  CHECK(ref::mismatch(y, ref::softmax(in.a, 2), 1e-12, 1e-14) == "");
  CHECK(ref::mismatch(sum(y, {-1}), Array({3, 4}, 1.0), 0, 1e-14) == "");
  CHECK(ref::mismatch(sum(softmax(in.t, 1), {1}), Array({3, 5}, 1.0), 0, 1e-14) == "");
  CHECK(ref::mismatch(log_softmax(in.t), ref::log_softmax(in.a, 2), 1e-12, 1e-12) == "");
  // exp(log_softmax) is softmax.
  CHECK(ref::mismatch(prism::exp(log_softmax(in.t, 0)), ref::of(softmax(in.t, 0)), 1e-12, 1e-15) ==
        "");
}

TEST_CASE("softmax of large logits does not overflow") {
  // exp(1000) is inf in both dtypes; subtracting the row max first keeps everything finite.
  for (const char* op : {"softmax", "log_softmax"}) {
    const bool log = std::string(op) == "log_softmax";
    for_each_variant(op, [&](const std::string& variant) {
      for (DType dt : kFloatTypes) {
        INFO((std::string(op) + " [" + variant + "] " + dtype_name(dt)));
        Array x({2, 3}, {1000, 1001, 1002, -1000, 1000, 0});
        for (int d : {0, 1}) {
          Tensor y =
              log ? log_softmax(ref::to_tensor(x, dt), d) : softmax(ref::to_tensor(x, dt), d);
          for (double v : y.to_vector<double>()) {
            CHECK(std::isfinite(v));
            if (!log) CHECK(v >= 0);
            if (!log) CHECK(v <= 1);
          }
          Array expect = log ? ref::log_softmax(x, d) : ref::softmax(x, d);
          ref::Tol tol = tol_for(log, dt);
          CHECK(ref::mismatch(y, expect, tol.rtol, tol.atol) == "");
        }
        // All-equal huge logits: uniform.
        Tensor u = softmax(ref::to_tensor(Array({4}, 1000), dt));
        CHECK(u.to_vector<double>() == std::vector<double>{0.25, 0.25, 0.25, 0.25});
        // Very negative logits (the row max itself is -1000): still a distribution.
        Tensor n = softmax(ref::to_tensor(Array({2}, {-1000, -1001}), dt));
        CHECK(sum(n).item<double>() == doctest::Approx(1.0).epsilon(1e-6));
      }
    });
  }
}

TEST_CASE("softmax of a 0-d tensor is 1, of an empty tensor is empty") {
  for (DType dt : kFloatTypes) {
    CHECK(softmax(scalar(3.5, dt)).item<double>() == 1.0);
    CHECK(log_softmax(scalar(3.5, dt)).item<double>() == 0.0);
    CHECK(softmax(scalar(3.5, dt)).dim() == 0);
    Tensor e = softmax(zeros({0, 3}, dt), 1);
    CHECK(e.shape() == Dims{0, 3});
    Tensor e2 = log_softmax(zeros({2, 0}, dt), 0);
    CHECK(e2.shape() == Dims{2, 0});
  }
  CHECK_THROWS_AS(softmax(zeros({2, 3}), 2), Error);
  CHECK_THROWS_AS(log_softmax(zeros({2, 3}), -3), Error);
  CHECK_THROWS_AS(softmax(zeros({2}, DType::i64)), Error);
}

}  // namespace
}  // namespace prism
