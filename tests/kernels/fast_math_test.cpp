// The vectorisable float32 functions of kernels/cpu/fast_math.h against double-precision libm,
// in ulps, over the whole float range (a strided sweep of bit patterns) and densely where the risk
// is; and the functors of kernels/ops/elementwise/fast.h against those of
// kernels/ops/elementwise/math.h: float composites within their stated bounds of the exact value,
// double paths bit for bit.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/cpu/fast_math.h"
#include "kernels/ops/elementwise/fast.h"
#include "kernels/ops/elementwise/list.h"
#include "kernels/ops/elementwise/math.h"

namespace prism::kernels {
namespace {

using cpu::fast_erf;
using cpu::fast_exp_full;
using cpu::fast_tanh;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr uint32_t kInfBits = 0x7f800000u;

// The bounds stated in kernels/cpu/fast_math.h. Measured over all 2^32 floats: exp 0.877,
// tanh 0.947, erf 0.986 ulp with the project's flags, where GCC fuses a*b + c into FMAs; without
// FMA (-ffp-contract=off, or a target without it) 0.887, 1.094 and 1.314 ulp.
constexpr double kExpUlps = 1.0, kTanhUlps = 1.5, kErfUlps = 1.5;

// The float ulp at the magnitude of an exact value: 2^(e - 23) for |v| in [2^e, 2^(e+1)), and
// 2^-149, the subnormal spacing, below 2^-126. e is read from the double's exponent bits (a
// frexp / ldexp call per input would cost more than the function under test).
double ulp_of(double v) {
  const int e = static_cast<int>(std::bit_cast<uint64_t>(v) >> 52 & 0x7ff) - 1023;
  return std::bit_cast<double>(static_cast<uint64_t>(std::max(e - 23, -149) + 1023) << 52);
}

// |y - exact| in ulps of the exact value. Where the exact value rounds to an infinity (exp's
// overflow), y must be that infinity: 0 if it is, a huge error if not; likewise a NaN must meet a
// NaN.
double ulp_error(float y, double exact) {
  if (std::isnan(exact) || std::isnan(y)) return std::isnan(exact) && std::isnan(y) ? 0 : 1e30;
  const float rounded = static_cast<float>(exact);
  if (std::isinf(rounded) || std::isinf(y)) return rounded == y ? 0 : 1e30;
  return std::fabs(static_cast<double>(y) - exact) / ulp_of(exact);
}

// The largest error seen and where.
struct Worst {
  double err = 0;
  float at = 0;
  void add(double e, float x) {
    if (e > err) err = e, at = x;
  }
};

// f's error against ref over the float bit patterns [first, last] with a stride, and over their
// negatives unless one_sign.
template <class F, class R>
Worst sweep(F f, R ref, uint32_t first, uint32_t last, uint32_t stride, bool one_sign = false) {
  Worst w;
  for (uint64_t b = first; b <= last; b += stride) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(b));
    w.add(ulp_error(f(x), ref(x)), x);
    if (!one_sign) w.add(ulp_error(f(-x), ref(-x)), -x);
  }
  return w;
}
uint32_t bits(float x) {
  return std::bit_cast<uint32_t>(x);
}

double exact_exp(float x) {
  return std::exp(static_cast<double>(x));
}
double exact_tanh(float x) {
  return std::tanh(static_cast<double>(x));
}
double exact_erf(float x) {
  return std::erf(static_cast<double>(x));
}

// Same value and, for a zero, the same sign; any NaN matches any NaN.
bool same(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// ---- the functions: whole range --------------------------------------------------------------

// Every 251st bit pattern of each sign: 17M inputs per function, 33,000 in every binade, and a
// prime stride, so the samples do not line up with any power-of-two pattern of the mantissa.
constexpr uint32_t kStride = 251;

TEST_CASE("fast_math: fast_exp_full within 1 ulp over the whole float range") {
  const Worst w = sweep(fast_exp_full, exact_exp, 0, kInfBits - 1, kStride);
  MESSAGE("fast_exp_full: max ", w.err, " ulp at x = ", w.at);
  CHECK(w.err <= kExpUlps);
}

TEST_CASE("fast_math: fast_tanh within 1.5 ulp over the whole float range") {
  const Worst w = sweep(fast_tanh, exact_tanh, 0, kInfBits - 1, kStride);
  MESSAGE("fast_tanh: max ", w.err, " ulp at x = ", w.at);
  CHECK(w.err <= kTanhUlps);
}

TEST_CASE("fast_math: fast_erf within 1.5 ulp over the whole float range") {
  const Worst w = sweep(fast_erf, exact_erf, 0, kInfBits - 1, kStride);
  MESSAGE("fast_erf: max ", w.err, " ulp at x = ", w.at);
  CHECK(w.err <= kErfUlps);
}

// ---- the functions: every float where the risk is -------------------------------------------

TEST_CASE("fast_math: fast_exp_full near overflow, underflow and in the subnormal results") {
  // Overflow: finite up to 88.7228317 (0x1.62e42ep+6), inf from the next float, as expf.
  const float last_finite = 88.7228317f;
  CHECK(std::isfinite(fast_exp_full(last_finite)));
  CHECK(fast_exp_full(std::nextafter(last_finite, kInf)) == kInf);
  CHECK(std::isinf(static_cast<float>(exact_exp(std::nextafter(last_finite, kInf)))));
  CHECK(std::isfinite(static_cast<float>(exact_exp(last_finite))));
  CHECK(sweep(fast_exp_full, exact_exp, bits(88.0f), bits(90.0f), 1).err <= kExpUlps);
  // Every result below the normal range: x in [-104.5, -87.3], 2.3M floats.
  const Worst sub = sweep(fast_exp_full, exact_exp, bits(-87.3f), bits(-104.5f), 1, true);
  MESSAGE("fast_exp_full, subnormal results: max ", sub.err, " ulp at x = ", sub.at);
  CHECK(sub.err <= kExpUlps);
  // Underflow: the smallest subnormal, 2^-149, down to x = -103.972077; 0 below, as expf.
  const float last_nonzero = -103.972076f;
  CHECK(fast_exp_full(last_nonzero) == std::ldexp(1.0f, -149));
  CHECK(fast_exp_full(std::nextafter(last_nonzero, -kInf)) == 0.0f);
  CHECK(static_cast<float>(exact_exp(std::nextafter(last_nonzero, -kInf))) == 0.0f);
  // Near 0, where e^x = 1 + x: |x| in [2^-30, 2^-10], every 61st float.
  CHECK(sweep(fast_exp_full, exact_exp, bits(0x1p-30f), bits(0x1p-10f), 61).err <= kExpUlps);
}

TEST_CASE("fast_math: fast_tanh near 0, at the switch of formula and at saturation") {
  // Near 0 (the odd polynomial, no cancellation): |x| in [2^-14, 2^-4], every 61st float.
  CHECK(sweep(fast_tanh, exact_tanh, bits(0x1p-14f), bits(0x1p-4f), 61).err <= kTanhUlps);
  // Tiny and subnormal x: tanh x = x.
  for (float x : {0x1p-149f, 0x1p-130f, 0x1p-126f, 1e-20f, 0x1p-13f}) {
    CHECK(same(fast_tanh(x), x));
    CHECK(same(fast_tanh(-x), -x));
  }
  // Both sides of the switch at |x| = 1: every float of [0.95, 1.05].
  CHECK(sweep(fast_tanh, exact_tanh, bits(0.95f), bits(1.05f), 1).err <= kTanhUlps);
  // Saturation: every float of [8.9, 9.1]; exactly 1 from 9.01091385 (0x1.205968p+3) up.
  CHECK(sweep(fast_tanh, exact_tanh, bits(8.9f), bits(9.1f), 1).err <= kTanhUlps);
  const float one_from = 9.01091385f;
  CHECK(fast_tanh(one_from) == 1.0f);
  CHECK(fast_tanh(std::nextafter(one_from, 0.0f)) < 1.0f);
  for (float x : {10.0f, 20.0f, 1e10f, std::numeric_limits<float>::max()}) {
    CHECK(fast_tanh(x) == 1.0f);
    CHECK(fast_tanh(-x) == -1.0f);
  }
}

TEST_CASE("fast_math: fast_erf near 0, at the switch of formula and at saturation") {
  CHECK(sweep(fast_erf, exact_erf, bits(0x1p-14f), bits(0x1p-4f), 61).err <= kErfUlps);
  // Tiny and subnormal x: erf x = 2x / sqrt(pi), rounded (the exact value, within an ulp).
  for (float x : {0x1p-149f, 0x1p-140f, 0x1p-127f, 0x1p-126f, 1e-20f}) {
    CHECK(ulp_error(fast_erf(x), exact_erf(x)) <= kErfUlps);
    CHECK(ulp_error(fast_erf(-x), exact_erf(-x)) <= kErfUlps);
  }
  CHECK(sweep(fast_erf, exact_erf, bits(0.95f), bits(1.05f), 1).err <= kErfUlps);
  // Saturation: every float of [3.85, 4.05]. The exact value rounds to 1 from 3.9192059 up, the
  // result is 1 from 3.9254 up (in between, 1 - 2^-24: within the bound, fast_math.h says why).
  CHECK(sweep(fast_erf, exact_erf, bits(3.85f), bits(4.05f), 1).err <= kErfUlps);
  for (float x : {3.93f, 4.0f, 10.0f, 1e10f, std::numeric_limits<float>::max()}) {
    CHECK(fast_erf(x) == 1.0f);
    CHECK(fast_erf(-x) == -1.0f);
  }
}

TEST_CASE("fast_math: special values: signed zeros, infinities, NaN") {
  CHECK(same(fast_tanh(0.0f), 0.0f));
  CHECK(same(fast_tanh(-0.0f), -0.0f));
  CHECK(fast_tanh(kInf) == 1.0f);
  CHECK(fast_tanh(-kInf) == -1.0f);
  CHECK(std::isnan(fast_tanh(kNaN)));
  CHECK(std::isnan(fast_tanh(-kNaN)));

  CHECK(same(fast_erf(0.0f), 0.0f));
  CHECK(same(fast_erf(-0.0f), -0.0f));
  CHECK(fast_erf(kInf) == 1.0f);
  CHECK(fast_erf(-kInf) == -1.0f);
  CHECK(std::isnan(fast_erf(kNaN)));
  CHECK(std::isnan(fast_erf(-kNaN)));

  CHECK(fast_exp_full(0.0f) == 1.0f);
  CHECK(fast_exp_full(-0.0f) == 1.0f);
  CHECK(fast_exp_full(kInf) == kInf);
  CHECK(same(fast_exp_full(-kInf), 0.0f));
  CHECK(fast_exp_full(std::numeric_limits<float>::max()) == kInf);
  CHECK(same(fast_exp_full(std::numeric_limits<float>::lowest()), 0.0f));
  CHECK(std::isnan(fast_exp_full(kNaN)));
  CHECK(std::isnan(fast_exp_full(-kNaN)));
  // A NaN with a payload comes back as it went in.
  const float payload = std::bit_cast<float>(0x7fc01234u);
  CHECK(bits(fast_exp_full(payload)) == bits(payload));
  CHECK(bits(fast_tanh(payload)) == bits(payload));
  CHECK(bits(fast_erf(payload)) == bits(payload));
}

// ---- the functors ----------------------------------------------------------------------------

// The float inputs the functors are swept over: every 4099th bit pattern of each sign (the whole
// range, tiny and huge values included, 1M inputs) and every multiple of 2^-12 in [-12, 12],
// where the activations bend and their formulas cancel.
std::vector<float> functor_inputs() {
  std::vector<float> xs;
  for (uint32_t b = 0; b < kInfBits; b += 4099) {
    xs.push_back(std::bit_cast<float>(b));
    xs.push_back(-std::bit_cast<float>(b));
  }
  for (int i = -12 * 4096; i <= 12 * 4096; ++i) xs.push_back(static_cast<float>(i) / 4096);
  return xs;
}
// Upstream gradients for the binary functors, cycled through: a unit, a fraction, a large value,
// each sign.
constexpr float kGrads[] = {1.0f, -0.375f, 1000.0f, -1.0f, 0.001f, -4096.0f};

// How far a float result y is from the exact (double) value, as a fraction of what the bound
// allows; 0 for a match of special values, 1e30 for a mismatch. NaN is judged against the same
// math:: functor in float (`libm`): a NaN where it gives NaN, and only there, is a match; so a NaN
// that math:: itself makes in float (gelu' for |x| > 1.8e19, where x^2 overflows and 0 * inf
// appears) must be reproduced, and any other NaN fails.
double bound_fraction(float y, float libm, double exact, double allowed) {
  if (std::isnan(libm) || std::isnan(y)) return std::isnan(libm) && std::isnan(y) ? 0 : 1e30;
  const float rounded = static_cast<float>(exact);
  if (std::isinf(rounded) || std::isinf(y)) return same(y, rounded) ? 0 : 1e30;
  return std::fabs(static_cast<double>(y) - exact) / allowed;
}

// The worst bound_fraction over the sweep, for a unary or a binary functor pair (Fast, Math):
// the check is that fast's stays <= 1. The same measure of math:: in float (libm's exp and
// tanh in the same formulas) comes along for comparison, not checked: it shares the formulas'
// cancellations, and math::Silu's flush to -0 below x = -88.72 is within the silu bound too.
struct Ratios {
  Worst fast, libm;
};
template <class Fast, class Math, class Allowed>
Ratios unary_ratio(Fast fast, Math math, Allowed allowed) {
  Ratios w;
  for (float x : functor_inputs()) {
    const double e = math(static_cast<double>(x));
    const double a = allowed(static_cast<double>(x), 1.0, e);
    const float libm = math(x);
    w.fast.add(bound_fraction(fast(x), libm, e, a), x);
    w.libm.add(bound_fraction(libm, libm, e, a), x);
  }
  return w;
}
template <class Fast, class Math, class Allowed>
Ratios binary_ratio(Fast fast, Math math, Allowed allowed) {
  Ratios w;
  size_t k = 0;
  for (float x : functor_inputs()) {
    const float g = kGrads[k++ % std::size(kGrads)];
    const double e = math(static_cast<double>(x), static_cast<double>(g));
    const double a = allowed(static_cast<double>(x), static_cast<double>(g), e);
    const float libm = math(x, g);
    w.fast.add(bound_fraction(fast(x, g), libm, e, a), x);
    w.libm.add(bound_fraction(libm, libm, e, a), x);
  }
  return w;
}

constexpr double kU = 0x1p-24;  // float's unit roundoff

TEST_CASE("fast_math: fast::Exp and fast::Tanh are the functions, float32") {
  size_t differ = 0;
  for (float x : functor_inputs()) {
    differ += bits(fast::Exp{}(x)) != bits(fast_exp_full(x));
    differ += bits(fast::Tanh{}(x)) != bits(fast_tanh(x));
  }
  CHECK(differ == 0);
}

TEST_CASE("fast_math: fast::Sigmoid within 3 ulp of the exact value, float32") {
  const Ratios w = unary_ratio(fast::Sigmoid{}, math::Sigmoid{},
                               [](double, double, double e) { return 3 * ulp_of(e); });
  MESSAGE("sigmoid: max ", 3 * w.fast.err, " ulp at x = ", w.fast.at,
          " (math:: in float: ", 3 * w.libm.err, ")");
  CHECK(w.fast.err <= 1);
}

// silu(x) = x / (1 + e^-x), as math::Silu: below x = -88.72, e^-x overflows and the result is
// -0 (math::Silu's too), while the exact value is a tiny negative number, under 2^-121 in
// magnitude; hence the absolute term 2^-121, which is far below an ulp everywhere else.
TEST_CASE("fast_math: fast::Silu within 3 ulp + 2^-121 of the exact value, float32") {
  const Ratios w = unary_ratio(fast::Silu{}, math::Silu{},
                               [](double, double, double e) { return 3 * ulp_of(e) + 0x1p-121; });
  MESSAGE("silu: max ", w.fast.err, " of the bound, at x = ", w.fast.at,
          " (math:: in float: ", w.libm.err, ")");
  CHECK(w.fast.err <= 1);
}

// gelu(x) = 0.5 x (1 + t): for x < 0, t -> -1 and 1 + t cancels, so t's absolute error (a few
// 2^-24) becomes x / 2 times that in the result: a bound in ulps of the result cannot hold there,
// one of the form a ulp(exact) + b 2^-24 |x| does.
TEST_CASE("fast_math: fast::Gelu within 2 ulp + 2^-23 |x| of the exact value, float32") {
  const Ratios w = unary_ratio(fast::Gelu{}, math::Gelu{}, [](double x, double, double e) {
    return 2 * ulp_of(e) + 2 * kU * std::fabs(x);
  });
  MESSAGE("gelu: max ", w.fast.err, " of the bound, at x = ", w.fast.at,
          " (math:: in float: ", w.libm.err, ")");
  CHECK(w.fast.err <= 1);
}

// gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) s (1 + 3 c x^2) crosses 0 near x = -0.75, and both
// 1 + t and 1 - t^2 cancel as |t| -> 1: t's absolute error reaches the result multiplied by
// |d gelu' / dt| = |0.5 - x t s (1 + 3 c x^2)| <= 0.5 + |x| (1 + 0.134 x^2). So the bound is
// absolute, scaled by |g| and that factor.
TEST_CASE("fast_math: fast::GeluBackward within its absolute bound, float32") {
  const Ratios w =
      binary_ratio(fast::GeluBackward{}, math::GeluBackward{}, [](double x, double g, double e) {
        const double dt = 0.5 + std::fabs(x) * (1 + 0.134 * x * x);
        return 2 * ulp_of(e) + 4 * kU * std::fabs(g) * dt;
      });
  MESSAGE("gelu_backward: max ", w.fast.err, " of the bound, at x = ", w.fast.at,
          " (math:: in float: ", w.libm.err, ")");
  CHECK(w.fast.err <= 1);
}

// silu'(x) = s (1 + x (1 - s)) crosses 0 near x = -1.28, where 1 + x (1 - s) cancels: s's
// relative error, times |x| (1 - s) <= |x|, is an absolute error of 1 + x (1 - s). So the bound
// is a ulps(exact) + b 2^-24 |g| s |x|; and |g| |x| 2^-149 for s's rounding where s is
// subnormal (x < -87.3). Elsewhere the roundings of e, 1 + e, 1 / d, 1 + x (1 - s) and the two
// products add up to 4 ulp at worst (measured 3.95 near x = 0, where the result is just above
// 0.5, so its ulp is half that of the values near 1 it is computed from).
TEST_CASE("fast_math: fast::SiluBackward within its absolute bound, float32") {
  const Ratios w =
      binary_ratio(fast::SiluBackward{}, math::SiluBackward{}, [](double x, double g, double e) {
        const double s = 1 / (1 + std::exp(-x));
        return 5 * ulp_of(e) + std::fabs(g) * std::fabs(x) * (4 * kU * s + 0x1p-149);
      });
  MESSAGE("silu_backward: max ", w.fast.err, " of the bound, at x = ", w.fast.at,
          " (math:: in float: ", w.libm.err, ")");
  CHECK(w.fast.err <= 1);
}

// tanh' and sigmoid' take the forward's output y; with no transcendental they are math::'s
// functors, so the float results are math::'s to the bit.
TEST_CASE("fast_math: the forwarded functors are math::'s, float32, bit for bit") {
  const std::vector<float> xs = functor_inputs();
  size_t differ = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float x = xs[i], g = kGrads[i % std::size(kGrads)];
    const float y = std::tanh(x);
    differ += !same(fast::Neg{}(x), math::Neg{}(x));
    differ += !same(fast::Log{}(x), math::Log{}(x));
    differ += !same(fast::Sqrt{}(x), math::Sqrt{}(x));
    differ += !same(fast::Relu{}(x), math::Relu{}(x));
    differ += !same(fast::Add{}(x, g), math::Add{}(x, g));
    differ += !same(fast::Sub{}(x, g), math::Sub{}(x, g));
    differ += !same(fast::Mul{}(x, g), math::Mul{}(x, g));
    differ += !same(fast::Div{}(x, g), math::Div{}(x, g));
    differ += !same(fast::Pow{}(x, g), math::Pow{}(x, g));
    differ += !same(fast::ReluBackward{}(x, g), math::ReluBackward{}(x, g));
    differ += !same(fast::SigmoidBackward{}(y, g), math::SigmoidBackward{}(y, g));
    differ += !same(fast::TanhBackward{}(y, g), math::TanhBackward{}(y, g));
  }
  CHECK(differ == 0);
  CHECK(std::isnan(fast::Relu{}(kNaN)));  // relu lets a NaN through, as math::Relu
}

// Edge inputs: the composites give what math:: gives (NaN where it gives NaN, the same infinity,
// the same signed zero), within a small tolerance elsewhere; a difference below 1e-30 is allowed
// where math:: flushes a tiny value to 0 that fast:: keeps (silu' for x < -88). An infinite g
// is left out: math::SiluBackward's s underflows to 0 for x < -88 and inf * 0 = NaN there, where
// fast:: keeps s > 0 and gives an infinity.
TEST_CASE("fast_math: the float composites at special values agree with math::") {
  const float edges[] = {0.0f,  -0.0f,  kInf,  -kInf,  kNaN,  1e-40f, -1e-40f, 1e-30f,  -1e-30f,
                         88.0f, -88.0f, 90.0f, -90.0f, 1e20f, -1e20f, 3.4e38f, -3.4e38f};
  auto close = [](float a, float b) {
    if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b) || a == 0 || b == 0)
      return same(a, b) || std::fabs(a - b) < 1e-30f;
    return std::fabs(a - b) <= 1e-6f * std::fabs(b);
  };
  for (float x : edges) {
    CAPTURE(x);
    CHECK(close(fast::Exp{}(x), math::Exp{}(x)));
    CHECK(close(fast::Tanh{}(x), math::Tanh{}(x)));
    CHECK(close(fast::Sigmoid{}(x), math::Sigmoid{}(x)));
    CHECK(close(fast::Silu{}(x), math::Silu{}(x)));
    CHECK(close(fast::Gelu{}(x), math::Gelu{}(x)));
    for (float g : {1.0f, -2.0f, 0.0f, kNaN}) {
      CAPTURE(g);
      CHECK(close(fast::GeluBackward{}(x, g), math::GeluBackward{}(x, g)));
      CHECK(close(fast::SiluBackward{}(x, g), math::SiluBackward{}(x, g)));
    }
  }
}

// The double path of every fast:: functor is the math:: functor's, bit for bit.
TEST_CASE("fast_math: every fast:: functor in float64 is math::'s, bit for bit") {
  constexpr double inf64 = std::numeric_limits<double>::infinity();
  constexpr double nan64 = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> xs = {0.0,    -0.0,  1e-310, -1e-310, 1e300,  -1e300, 700.0,
                            -700.0, 750.0, -750.0, inf64,   -inf64, nan64};
  for (int i = -4000; i <= 4000; ++i) xs.push_back(i * 0.00731);
  auto same64 = [](double a, double b) {
    return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b) ||
           (std::isnan(a) && std::isnan(b));
  };
  bool ok = true;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i], g = xs[(i * 7 + 3) % xs.size()];
#define PRISM_CHECK_UNARY(Functor, op, flops) \
  ok = ok && same64(fast::Functor{}(x), math::Functor{}(x));
#define PRISM_CHECK_BINARY(Functor, op, flops) \
  ok = ok && same64(fast::Functor{}(x, g), math::Functor{}(x, g));
    PRISM_UNARY_OPS(PRISM_CHECK_UNARY)
    PRISM_BINARY_OPS(PRISM_CHECK_BINARY)
#undef PRISM_CHECK_UNARY
#undef PRISM_CHECK_BINARY
    if (!ok) {
      CAPTURE(x);
      CAPTURE(g);
      FAIL("a fast:: functor's float64 result differs from math::'s");
    }
  }
  CHECK(ok);
}

}  // namespace
}  // namespace prism::kernels
