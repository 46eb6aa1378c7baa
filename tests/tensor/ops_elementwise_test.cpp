// Elementwise ops against the float64 reference: every unary and binary op, on odd shapes
// (0-d, size 1, primes, empty), non-contiguous inputs and NumPy broadcasting, in both float
// dtypes.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/tensor/reference.h"

namespace prism {
namespace {

using ref::Array;
using ref::Input;
using ref::Layout;
using ref::Shape;

const std::vector<Shape> kShapes = {{},        {1},          {7}, {7, 13},  {3, 1, 5},
                                    {1, 1, 1}, {2, 3, 4, 5}, {0}, {2, 0, 3}};
constexpr DType kFloatTypes[] = {DType::f32, DType::f64};

struct UnaryCase {
  const char* name;
  Tensor (*op)(const Tensor&);
  double (*f)(double);
  double lo, hi;  // input range where the op is defined and well conditioned
};

const UnaryCase kUnary[] = {
    {"neg", [](const Tensor& x) { return neg(x); }, [](double x) { return -x; }, -3, 3},
    {"operator-", [](const Tensor& x) { return -x; }, [](double x) { return -x; }, -3, 3},
    {"exp", [](const Tensor& x) { return prism::exp(x); }, [](double x) { return std::exp(x); }, -4,
     4},
    {"log", [](const Tensor& x) { return prism::log(x); }, [](double x) { return std::log(x); },
     0.05, 5},
    {"sqrt", [](const Tensor& x) { return prism::sqrt(x); }, [](double x) { return std::sqrt(x); },
     0, 5},
    {"relu", [](const Tensor& x) { return relu(x); }, ref::relu, -3, 3},
    {"gelu", [](const Tensor& x) { return gelu(x); }, ref::gelu, -4, 4},
    {"tanh", [](const Tensor& x) { return prism::tanh(x); }, [](double x) { return std::tanh(x); },
     -4, 4},
    {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, ref::sigmoid, -6, 6},
    {"silu", [](const Tensor& x) { return silu(x); }, [](double x) { return x * ref::sigmoid(x); },
     -8, 8},
};

TEST_CASE("unary ops match the float64 reference on odd shapes and layouts") {
  ref::Rng rng(11);
  for (const UnaryCase& c : kUnary) {
    for (DType dt : kFloatTypes) {
      for (const Shape& s : kShapes) {
        for (Layout l : ref::kAllLayouts) {
          const std::string ctx = std::string(c.name) + " " + dtype_name(dt) + " " +
                                  ref::shape_str(s) + " " + ref::layout_name(l);
          INFO(ctx);
          Input in = ref::make_input(s, l, dt, rng, c.lo, c.hi);
          REQUIRE(ref::mismatch(in.t, in.a, 0, 0) == "");  // the view holds what we think
          Tensor y = c.op(in.t);
          CHECK(y.dtype() == dt);
          CHECK(y.is_contiguous());
          CHECK_FALSE(y.shares_storage_with(in.t));
          // A few ulps of the result; the absolute floor covers cancellation near zero (gelu).
          ref::Tol tol = ref::tol_for(dt, 4e-6, 1e-6);
          CHECK(ref::mismatch(y, ref::map(in.a, c.f), tol.rtol, tol.atol) == "");
        }
      }
    }
  }
}

TEST_CASE("gelu is the tanh approximation (spot values)") {
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), values from Python's math module.
  Tensor x = from_vector(std::vector<double>{1.0, -1.0, 2.0, -3.0, 0.0}, {5});
  std::vector<double> expect = {0.8411919906082768, -0.15880800939172324, 1.954597694087775,
                                -0.0036373920817729943, 0.0};
  std::vector<double> got = gelu(x).to_vector<double>();
  for (size_t i = 0; i < expect.size(); ++i)
    CHECK(got[i] == doctest::Approx(expect[i]).epsilon(1e-14));
  // The exact erf form differs (gelu_erf(1) = 0.8413447...): make sure we are not using it.
  CHECK(std::fabs(got[0] - 0.8413447460685429) > 1e-4);
}

TEST_CASE("silu is x sigmoid(x) (spot values), finite at extreme inputs") {
  // x / (1 + e^-x), values from Python's math module.
  Tensor x = from_vector(std::vector<double>{1.0, -1.0, 2.0, -3.0, 0.0}, {5});
  const std::vector<double> expect = {0.7310585786300049, -0.2689414213699951, 1.7615941559557646,
                                      -0.14227761953270035, 0.0};
  const std::vector<double> got = silu(x).to_vector<double>();
  for (size_t i = 0; i < expect.size(); ++i) {
    CHECK(got[i] == doctest::Approx(expect[i]).epsilon(1e-14));
  }
  for (DType dt : kFloatTypes) {
    INFO(std::string(dtype_name(dt)));
    // silu -> 0 below and -> x above, with no inf * 0 = NaN on the way (sigmoid's two branches).
    Tensor big = ref::to_tensor(Array({4}, {-1000, -100, 100, 1000}), dt);
    const std::vector<double> s = silu(big).to_vector<double>();
    CHECK(s[0] == 0.0);
    CHECK(std::fabs(s[1]) < 1e-40);
    CHECK(s[2] == 100.0);
    CHECK(s[3] == 1000.0);
    // Its gradient, 1 above and 0 below, through silu_backward.
    Tensor leaf = big.detach().set_requires_grad();
    sum(silu(leaf)).backward();
    const std::vector<double> d = leaf.grad().to_vector<double>();
    CHECK(d[0] == 0.0);
    CHECK(d[3] == 1.0);
    for (double v : d) CHECK_FALSE(std::isnan(v));
  }
}

TEST_CASE("sigmoid, tanh and exp are stable at extreme inputs") {
  for (DType dt : kFloatTypes) {
    INFO(std::string(dtype_name(dt)));
    Tensor x = ref::to_tensor(Array({4}, {-1000, -100, 100, 1000}), dt);
    std::vector<double> s = sigmoid(x).to_vector<double>();
    CHECK(s[0] == 0.0);
    CHECK(s[1] == doctest::Approx(0.0));
    CHECK(s[2] == 1.0);
    CHECK(s[3] == 1.0);
    for (double v : s) CHECK_FALSE(std::isnan(v));
    std::vector<double> t = prism::tanh(x).to_vector<double>();
    CHECK(t == std::vector<double>{-1, -1, 1, 1});
    std::vector<double> g = gelu(x).to_vector<double>();
    CHECK(g[0] == doctest::Approx(0.0));
    CHECK(g[3] == 1000.0);
    for (double v : g) CHECK_FALSE(std::isnan(v));
    CHECK(prism::exp(x).to_vector<double>()[0] == 0.0);
  }
  // relu keeps exact zeros and positives; log(0) is -inf, sqrt of a negative is NaN.
  Tensor z = from_vector(std::vector<float>{0.0f, -0.0f, 2.5f, -2.5f}, {4});
  CHECK(relu(z).to_vector<double>() == std::vector<double>{0, 0, 2.5, 0});
  CHECK(std::isinf(prism::log(z).to_vector<double>()[0]));
  CHECK(std::isnan(prism::sqrt(z).to_vector<double>()[3]));
  // A NaN passes through relu (as in PyTorch): turned into 0 it would hide a diverged layer.
  const std::vector<double> r =
      relu(from_vector(std::vector<float>{NAN, -INFINITY, INFINITY}, {3})).to_vector<double>();
  CHECK(std::isnan(r[0]));
  CHECK(r[1] == 0.0);
  CHECK(std::isinf(r[2]));
}

struct BinaryCase {
  const char* name;
  Tensor (*op)(const Tensor&, const Tensor&);
  double (*f)(double, double);
  double a_lo, a_hi, b_lo, b_hi;
  bool b_random_sign;  // b in +-[b_lo, b_hi): keeps a divisor away from zero
};

const BinaryCase kBinary[] = {
    {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); },
     [](double a, double b) { return a + b; }, -2, 2, -2, 2, false},
    {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); },
     [](double a, double b) { return a - b; }, -2, 2, -2, 2, false},
    {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); },
     [](double a, double b) { return a * b; }, -2, 2, -2, 2, false},
    {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); },
     [](double a, double b) { return a / b; }, -2, 2, 0.5, 2, true},
    {"pow", [](const Tensor& a, const Tensor& b) { return prism::pow(a, b); },
     [](double a, double b) { return std::pow(a, b); }, 0.1, 3, -2, 2, false},
    {"operator+", [](const Tensor& a, const Tensor& b) { return a + b; },
     [](double a, double b) { return a + b; }, -2, 2, -2, 2, false},
    {"operator-", [](const Tensor& a, const Tensor& b) { return a - b; },
     [](double a, double b) { return a - b; }, -2, 2, -2, 2, false},
    {"operator*", [](const Tensor& a, const Tensor& b) { return a * b; },
     [](double a, double b) { return a * b; }, -2, 2, -2, 2, false},
    {"operator/", [](const Tensor& a, const Tensor& b) { return a / b; },
     [](double a, double b) { return a / b; }, -2, 2, 0.5, 2, true},
};

struct ShapePair {
  Shape a, b;
};

// Same shapes, NumPy broadcasting in every direction, 0-d operands and empty results.
const ShapePair kPairs[] = {
    {{7, 13}, {7, 13}},  {{3, 1, 5}, {4, 1}},
    {{4, 1}, {3, 1, 5}}, {{}, {7, 13}},
    {{7, 13}, {}},       {{}, {}},
    {{13}, {7, 13}},     {{7, 1}, {1}},
    {{5, 1}, {1, 7}},    {{1, 1, 1}, {2, 3, 4, 5}},
    {{1}, {}},           {{0, 3}, {3}},
    {{2, 0, 3}, {1, 3}}, {{0}, {1}},
};

const std::pair<Layout, Layout> kLayoutPairs[] = {
    {Layout::contiguous, Layout::contiguous}, {Layout::transposed, Layout::stepped},
    {Layout::expanded, Layout::transposed},   {Layout::stepped, Layout::expanded},
    {Layout::transposed, Layout::transposed},
};

TEST_CASE("binary ops match the float64 reference with broadcasting and strided inputs") {
  ref::Rng rng(12);
  for (const BinaryCase& c : kBinary) {
    for (DType dt : kFloatTypes) {
      for (const ShapePair& sp : kPairs) {
        for (auto [la, lb] : kLayoutPairs) {
          const std::string ctx = std::string(c.name) + " " + dtype_name(dt) + " " +
                                  ref::shape_str(sp.a) + " " + ref::layout_name(la) + " with " +
                                  ref::shape_str(sp.b) + " " + ref::layout_name(lb);
          INFO(ctx);
          Input a = ref::make_input(sp.a, la, dt, rng, c.a_lo, c.a_hi);
          Input b = ref::make_input(sp.b, lb, dt, rng, c.b_lo, c.b_hi, c.b_random_sign);
          Tensor y = c.op(a.t, b.t);
          CHECK(y.is_contiguous());
          ref::Tol tol = ref::tol_for(dt, 4e-6, 1e-6);
          CHECK(ref::mismatch(y, ref::zip(a.a, b.a, c.f), tol.rtol, tol.atol) == "");
        }
      }
    }
  }
}

TEST_CASE("scalar overloads: tensor op double and double op tensor") {
  ref::Rng rng(13);
  for (DType dt : kFloatTypes) {
    INFO(std::string(dtype_name(dt)));
    Input x = ref::make_input({3, 7}, Layout::transposed, dt, rng, 0.5, 2);
    ref::Tol tol = ref::tol_for(dt, 4e-6, 1e-6);
    auto check = [&](const Tensor& y, double (*f)(double)) {
      CHECK(y.dtype() == dt);
      CHECK(ref::mismatch(y, ref::map(x.a, f), tol.rtol, tol.atol) == "");
    };
    check(x.t + 2.5, [](double v) { return v + 2.5; });
    check(x.t - 2.5, [](double v) { return v - 2.5; });
    check(x.t * -3.0, [](double v) { return v * -3.0; });
    check(x.t / 4.0, [](double v) { return v / 4.0; });
    check(2.5 + x.t, [](double v) { return 2.5 + v; });
    check(2.5 - x.t, [](double v) { return 2.5 - v; });
    check(-3.0 * x.t, [](double v) { return -3.0 * v; });
    check(1.0 / x.t, [](double v) { return 1.0 / v; });
    check(prism::pow(x.t, 3.0), [](double v) { return v * v * v; });
    check(prism::pow(x.t, 0.5), [](double v) { return std::sqrt(v); });
    check(prism::pow(x.t, -1.0), [](double v) { return 1.0 / v; });
  }
}

TEST_CASE("binary ops refuse shapes that do not broadcast and mixed dtypes") {
  Tensor a = zeros({3, 4}), b = zeros({5, 4}), c = zeros({3, 4}, DType::f64);
  CHECK_THROWS_AS(add(a, b), Error);
  CHECK_THROWS_WITH_AS(mul(zeros({3, 1, 5}), zeros({4, 2})), doctest::Contains("mul"), Error);
  CHECK_THROWS_AS(add(a, c), Error);
  CHECK_THROWS_AS(exp(zeros({2}, DType::i64)), Error);
}

TEST_CASE("an output broadcast from expanded inputs is a fresh tensor") {
  // Writing through the result must not touch the inputs, even when both are stride-0 views.
  Tensor a = from_vector(std::vector<float>{1, 2, 3}, {3, 1}).expand({3, 4});
  Tensor b = from_vector(std::vector<float>{10, 20, 30, 40}, {4}).expand({3, 4});
  Tensor y = add(a, b);
  y.data<float>()[0] = -1;
  CHECK(a.to_vector<double>()[0] == 1);
  CHECK(b.to_vector<double>()[0] == 10);
  CHECK(y.to_vector<double>()[11] == 43);
}

}  // namespace
}  // namespace prism
