// DetectNonFinite (tensor/autograd/anomaly.h): the first op whose output, or gradient, holds a
// NaN or an infinity is named, forward and backward; nothing is checked without the guard.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "tensor/autograd/anomaly.h"
#include "tensor/ops.h"
#include "tests/test_util.h"

using namespace prism;
using prism::autograd::DetectNonFinite;
using prism::autograd::NonFiniteError;

namespace {
// The NonFiniteError f throws (op and phase), or empty strings.
template <class F>
std::pair<std::string, std::string> origin_of(F&& f) {
  try {
    f();
  } catch (const NonFiniteError& e) {
    return {e.op, e.phase};
  }
  return {"", ""};
}
}  // namespace

TEST_CASE("non-finite detection: the forward op that overflows is named, not the ones after") {
  Tensor x = from_vector(std::vector<float>{1, 2, 100}, {3}).set_requires_grad(true);
  // exp(100) overflows float32 (e^88.7 is the limit); the mul and the sum after it see inf.
  auto step = [&] { return sum(mul(exp(x), x)); };
  CHECK(std::isinf(step().item<double>()));  // no guard: no check, the inf flows through
  const auto [op, phase] = origin_of([&] {
    DetectNonFinite detect;
    (void)step();
  });
  CHECK(op == "exp");
  CHECK(phase == "forward");
  const std::string msg = prism::testing::error_of([&] {
    DetectNonFinite detect;
    (void)step();
  });
  CHECK(prism::testing::contains(msg,
                                 "exp (forward) produced 1 non-finite values of 3 in its [3] "
                                 "output (the first, at flat index 2, is inf)"));
}

TEST_CASE("non-finite detection: a gradient that overflows in backward is named by its label") {
  // sqrt is finite at 0, its derivative 1 / (2 sqrt(x)) is not.
  Tensor x = from_vector(std::vector<double>{0, 4}, {2}).set_requires_grad(true);
  const auto [op, phase] = origin_of([&] {
    DetectNonFinite detect;
    sum(sqrt(x)).backward();
  });
  CHECK(op == "sqrt.dx");
  CHECK(phase == "backward");
}

TEST_CASE("non-finite detection: finite runs pass, and counting works on any tensor") {
  Tensor x = from_vector(std::vector<double>{1, 2}, {2}).set_requires_grad(true);
  {
    DetectNonFinite detect;
    sum(mul(exp(x), x)).backward();
  }
  CHECK(x.grad().defined());
  int64_t first = -1;
  double value = 0;
  const Tensor t = from_vector(std::vector<double>{1, NAN, -INFINITY, 2}, {2, 2});
  CHECK(autograd::count_non_finite(t, &first, &value) == 2);
  CHECK(first == 1);
  CHECK(std::isnan(value));
  CHECK(autograd::count_non_finite(t.t()) == 2);  // a non-contiguous view
  CHECK(autograd::count_non_finite(arange(0, 5, 1, DType::i64)) == 0);
  CHECK_FALSE(autograd::detecting_non_finite());
}
