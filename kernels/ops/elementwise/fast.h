// The elementwise ops of kernels/ops/elementwise/list.h with the vectorisable float32 math of
// kernels/cpu/fast_math.h: one functor per name, with the call signatures of
// kernels/ops/elementwise/math.h (namespace math), for kernels whose contiguous loop should
// become SIMD code:
//   #pragma omp simd
//   for (int64_t i = 0; i < n; ++i) out[i] = fast::Gelu{}(x[i]);
//
// What differs from math::, and what does not:
// - float: exp, tanh, sigmoid, GELU, SiLU and the GELU / SiLU gradients use fast_exp_full and
//   fast_tanh (within 1 and 1.5 ulp) instead of libm calls, so their loops vectorise.
// - double: every functor is math::'s, exactly (the double kernels serve gradient checks and
//   references, where libm's last digits matter more than speed).
// - Ops without a transcendental (neg, relu, add, sub, mul, div and the relu / sigmoid / tanh
//   gradients, which take the forward's output) are the math:: functors themselves, as are
//   log, sqrt and pow, which keep their libm calls in float too.
// - NaN propagation is math::'s: a NaN input gives a NaN (relu lets it through), and so do
//   the NaNs math:: makes itself in float: gelu' for |x| > 1.8e19, where x^2 overflows and
//   (1 - t^2) = 0 meets inf.
//
// Which loops vectorise (GCC 12, the project's -O3 -march=native -fopenmp, checked with
// -fopt-info-vec-optimized on `#pragma omp simd` loops over contiguous float arrays): all of
// Neg, Exp, Tanh, Relu, Sigmoid, Gelu, Silu, Add, Sub, Mul, Div, ReluBackward, SigmoidBackward,
// TanhBackward, GeluBackward and SiluBackward. Log, Pow and Sqrt do not: the first two are libm
// calls, and sqrt keeps a call for errno on negative inputs unless -fno-math-errno is given.
//
// Accuracy of the float functors against the exact value (the math:: functor in double),
// measured on every 29th float bit pattern of each sign plus every multiple of 2^-16 in
// [-16, 16]; tests/kernels/fast_math_test.cpp asserts the bounds on a similar sweep. Without
// FMA contraction the figures move by a percent at most.
// - exp, tanh: fast_exp_full, fast_tanh (1 and 1.5 ulp bounds; see fast_math.h).
// - sigmoid: at most 2.40 ulp, everywhere, subnormal tail included. Bound: 3 ulp. (math::Sigmoid
//   in float, with libm's expf, has the same worst cases: the rounding of 1 + e dominates.)
// - silu: at most 2.29 ulp for x >= -88.72; below, -0 as math::Silu. Bound: 3 ulp + 2^-121.
// - gelu: |error| <= 2 ulp(exact) + 2^-23 |x|, used to at most 42%. The |x| term: for x < 0,
//   1 + tanh(u) cancels (tanh(u) -> -1), so tanh's absolute error, a few 2^-24, is multiplied by
//   x / 2 and is no longer small next to the small result; math::Gelu in float has the same
//   cancellation (its worst is 46% of the same bound).
// - gelu_backward: |error| <= 2 ulp(exact) + 2^-22 |g| (0.5 + |x| (1 + 0.134 x^2)), used to at
//   most 42%. gelu' crosses 0 (at x = -0.75), where no relative bound can hold, and t's error
//   enters through 1 + t and 1 - t^2 times |d gelu' / dt| <= 0.5 + |x| (1 + 3 c x^2).
// - silu_backward: |error| <= 5 ulp(exact) + |g| |x| (2^-22 s + 2^-149), s = sigmoid(x), used to
//   at most 79% (3.93 ulp near x = 0). silu' crosses 0 at x = -1.28, where s's error times |x|
//   is absolute; 2^-149 |g| |x| covers a subnormal s (x < -87.3).
// - tanh_backward, sigmoid_backward and the rest: math::'s functors, bit for bit.
#pragma once

#include <type_traits>

#include "kernels/cpu/fast_math.h"
#include "kernels/ops/elementwise/math.h"

namespace prism::kernels::fast {

// ---- ops that are math::'s functors in both dtypes --------------------------------------------

using Neg = math::Neg;
using Log = math::Log;
using Sqrt = math::Sqrt;
using Relu = math::Relu;
using Add = math::Add;
using Sub = math::Sub;
using Mul = math::Mul;
using Div = math::Div;
using Pow = math::Pow;
using ReluBackward = math::ReluBackward;
using SigmoidBackward = math::SigmoidBackward;  // g y (1 - y): y is the saved output
using TanhBackward = math::TanhBackward;        // g (1 - y^2): likewise

// ---- ops with a fast float path ---------------------------------------------------------------

namespace detail {
template <class T>
constexpr bool kIsFloat = std::is_same_v<T, float>;
// e^-|x|, in (0, 1] for every x: it neither overflows nor needs a sign test.
inline float exp_minus_abs(float x) {
  return cpu::fast_exp_full(x < 0.0f ? x : -x);
}
// sigmoid(x) = numerator / (1 + e^-|x|), see Sigmoid.
inline float sigmoid_numerator(float x, float e) {
  return x >= 0.0f ? 1.0f : e;
}
}  // namespace detail

struct Exp {
  template <class T>
  T operator()(T x) const {
    if constexpr (detail::kIsFloat<T>) {
      return cpu::fast_exp_full(x);
    } else {
      return math::Exp{}(x);
    }
  }
};

struct Tanh {
  template <class T>
  T operator()(T x) const {
    if constexpr (detail::kIsFloat<T>) {
      return cpu::fast_tanh(x);
    } else {
      return math::Tanh{}(x);
    }
  }
};

// sigmoid(x) = 1 / (1 + e^-x) = e^x / (1 + e^x). Both forms in one, with no branch and no
// overflow: e = e^-|x| is in (0, 1], d = 1 + e is in (1, 2], and
//   sigmoid(x) = 1 / d  (x >= 0),   e / d  (x < 0)
// so a select picks the numerator and one division does the rest. For x -> -inf the result is
// e itself to within rounding, correct into the subnormals as math::Sigmoid's e / (1 + e) is;
// sigmoid(-inf) = 0, sigmoid(+inf) = 1, NaN gives NaN (e is NaN).
struct Sigmoid {
  template <class T>
  T operator()(T x) const {
    if constexpr (detail::kIsFloat<T>) {
      const float e = detail::exp_minus_abs(x);
      return detail::sigmoid_numerator(x, e) / (1.0f + e);
    } else {
      return math::Sigmoid{}(x);
    }
  }
};

// silu(x) = x / (1 + e^-x): math::Silu's formula with fast_exp_full. One division and no
// select; its comment explains the limits: below x = -88.72, e^-x overflows and the result is
// -0, as in math::Silu (the true value is then below 2^-121 in magnitude). silu(-inf) = NaN,
// silu(+inf) = inf, as math::Silu. (The x e / (1 + e) form, e = e^-|x|, would keep that tiny
// tail, but with one more rounding: 3.2 ulp at worst instead of 2.3.)
struct Silu {
  template <class T>
  T operator()(T x) const {
    if constexpr (detail::kIsFloat<T>) {
      return x / (1.0f + cpu::fast_exp_full(-x));
    } else {
      return math::Silu{}(x);
    }
  }
};

// GELU, tanh approximation: math::Gelu's formula, 0.5 x (1 + tanh(s (x + c x^3))), with
// fast_tanh.
struct Gelu {
  template <class T>
  T operator()(T x) const {
    if constexpr (detail::kIsFloat<T>) {
      constexpr float s = math::kGeluS<float>, c = math::kGeluC<float>;
      return 0.5f * x * (1.0f + cpu::fast_tanh(s * (x + c * x * x * x)));
    } else {
      return math::Gelu{}(x);
    }
  }
};

// gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) s (1 + 3 c x^2), t = tanh(s (x + c x^3)): math::
// GeluBackward's formula with fast_tanh.
struct GeluBackward {
  template <class T>
  T operator()(T x, T g) const {
    if constexpr (detail::kIsFloat<T>) {
      constexpr float s = math::kGeluS<float>, c = math::kGeluC<float>;
      const float t = cpu::fast_tanh(s * (x + c * x * x * x));
      const float dt = (1.0f - t * t) * s * (1.0f + 3.0f * c * x * x);
      return g * (0.5f * (1.0f + t) + 0.5f * x * dt);
    } else {
      return math::GeluBackward{}(x, g);
    }
  }
};

// silu'(x) = s + x s (1 - s) = s (1 + x (1 - s)), s = sigmoid(x). With e = e^-|x| and d = 1 + e,
// both s and 1 - s are quotients of d: s = (1 or e) / d and 1 - s = (e or 1) / d. Taking 1 - s
// that way rather than subtracting avoids the cancellation of 1 - s for large x, where math::
// SiluBackward's 1 - s is left with s's rounding error alone. Multiplying by g last keeps a
// subnormal s (x < -87.3) from being rounded twice, once after a small g.
struct SiluBackward {
  template <class T>
  T operator()(T x, T g) const {
    if constexpr (detail::kIsFloat<T>) {
      const float e = detail::exp_minus_abs(x);
      const float inv_d = 1.0f / (1.0f + e);
      const bool positive = x >= 0.0f;
      const float s = (positive ? 1.0f : e) * inv_d;
      const float one_minus_s = (positive ? e : 1.0f) * inv_d;
      return g * (s * (1.0f + x * one_minus_s));
    } else {
      return math::SiluBackward{}(x, g);
    }
  }
};

}  // namespace prism::kernels::fast
