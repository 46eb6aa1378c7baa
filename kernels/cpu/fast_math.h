// tanh, erf and a full-range exp for float32 that a compiler can vectorise, for the elementwise
// kernels (kernels/ops/elementwise/fast.h): GELU, tanh, sigmoid, SiLU and their gradients.
//
// Why: a loop that calls std::tanh or std::exp per element is a loop of function calls (with
// glibc's tanhf, GELU ran at a few percent of the memory roof: docs/PERFORMANCE.md, "softmax,
// sum, elementwise, 1 thread"); GCC will not vectorise it without -ffast-math. Each function
// below is plain arithmetic: no calls, no branches, no tables, and a choice between two formulas
// is a ternary on values both already computed, which the vectoriser turns into a blend.
// Inlined into a `#pragma omp simd` loop, they become SIMD code (GCC 12 with -march=native on an
// AVX-512 Rocket Lake: 8 floats per instruction, as GCC prefers 256-bit vectors there).
//
// All three share one method: reduce the argument to a short interval, approximate there by a
// polynomial, and undo the reduction exactly (a power of two, a sign). The polynomials' error is
// far below float's rounding, so what is left is the rounding of a handful of float operations.
//
// Where the coefficients come from: each was fitted for this file by Lawson's algorithm
// (iteratively reweighted least squares, which converges to the minimax polynomial that Remez's
// exchange gives) in long double, on 3000 Chebyshev nodes of the interval, weighted so that the
// quantity minimised is the error of the final function (relative error for exp, tanh and small
// erf; absolute error of erf where it is 1 - erfc). Then the coefficients were rounded to float
// one at a time, lowest degree first, refitting the higher ones after each rounding so that they
// absorb its error. The fit error quoted for each polynomial is the minimax error after that
// rounding, in exact arithmetic; the measured error includes float rounding.
//
// How the errors were measured: against the double-precision std:: function (an exact value
// for this purpose), in ulps of the float binade of the exact value (2^-149 below the normal
// range), twice, because GCC fuses a*b + c into an FMA where the target has one (-march=native
// here) and each fusion saves a rounding: with the project's flags over all 2^32 float bit
// patterns, and with -ffp-contract=off (as on a target without FMA) over every 3rd pattern.
// Where the two differ, both figures are given. tests/kernels/fast_math_test.cpp asserts the
// bounds on a strided sweep of the whole range and on dense sweeps where the risk is.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace prism::kernels::cpu {

namespace fast_math_detail {

constexpr uint32_t kSignBit = 0x80000000u;

// |x| and the sign bit of x, as bit operations: no call to fabs / copysign, and -0 keeps its sign.
inline float abs_value(float x) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(x) & ~kSignBit);
}
inline uint32_t sign_bit(float x) {
  return std::bit_cast<uint32_t>(x) & kSignBit;
}
inline float with_sign(float magnitude, uint32_t sign) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(magnitude) | sign);
}

// c[0] + c[1] x + ... + c[N-1] x^(N-1) by Horner's rule, expanded at compile time: each step is
// one multiply-add, and no loop is left for the vectoriser of the caller's loop to deal with.
template <size_t K = 0, size_t N>
inline float horner(float x, const float (&c)[N]) {
  if constexpr (K + 1 == N) {
    return c[K];
  } else {
    return horner<K + 1>(x, c) * x + c[K];
  }
}

// exp(x + x_lo) for x + x_lo in [-104, 89] (the callers clamp; past those ends the result is 0
// or inf anyway), where x_lo is a small correction to x (erf passes the low part of -a^2) or -0.
//   exp(x) = 2^n exp(r),  n = round(x / ln 2),  r = x - n ln 2,  |r| <= ln(2) / 2 ~ 0.347
// - n: x log2(e) + 1.5 * 2^23 leaves round(x / ln 2) in the low mantissa bits of t (the "magic
//   number" trick of fast_exp.h; |x / ln 2| < 2^22, round to nearest even).
// - r: ln 2 = kLn2Hi + kLn2Lo, kLn2Hi with 16 significant bits, so n kLn2Hi (|n| <= 150, 8
//   bits) is exact and rh = x - n kLn2Hi is exact too (Sterbenz: x and n kLn2Hi are within a
//   factor 2 of each other). rl = n kLn2Lo - x_lo gathers the small parts; r = rh - rl.
// - exp(r) = 1 + r + r^2 q(r), q of degree 4 fitted to (exp(r) - 1 - r) / r^2 on |r| <= 0.34658
//   for the relative error of exp (fit error 3.1e-9, 0.05 ulp). The sum is formed as
//   1 + (rh + (r^2 q - rl)): the linear term uses the exact rh and its small correction inside,
//   so r's own rounding never reaches the result (it only feeds r^2 q, 20 times less
//   sensitive); what is left is the rounding of the inner sum (at most 1/4 ulp of the result)
//   and of the final add (1/2 ulp).
// - 2^n is applied as two multiplications by 2^n1 and 2^n2, n1 = floor(n / 2), n2 = n - n1,
//   each in [-75, 64] so each is a normal float built in the exponent bits ((k + 127) << 23).
//   p 2^n1 is exact (p is in [0.7, 1.42], so it stays normal); the second product is rounded
//   once, also when it lands in the subnormal range (one rounding, no double rounding), and
//   overflows to inf on its own for n = 128.
// x_lo defaults to -0, not +0: x + (-0) is x for every x, +0 included, so the compiler drops
// that add where there is no correction.
inline float exp_reduced(float x, float x_lo = -0.0f) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;  // 0x1.62e4p-1: 16 significant bits
  constexpr float kLn2Lo = 1.42860677e-6f;      // ln 2 - kLn2Hi, rounded to float
  constexpr float kMagic = 12582912.0f;         // 1.5 * 2^23
  constexpr float kQ[] = {4.99999940e-01f, 1.66665226e-01f, 4.16682921e-02f, 8.36853217e-03f,
                          1.38182961e-03f};
  const float t = (x + x_lo) * kLog2e + kMagic;
  const float n = t - kMagic;
  const float rh = x - n * kLn2Hi;  // exact
  const float rl = n * kLn2Lo - x_lo;
  const float r = rh - rl;
  const float p = 1.0f + (rh + ((r * r) * horner(r, kQ) - rl));
  const int32_t n_int = std::bit_cast<int32_t>(t) - std::bit_cast<int32_t>(kMagic);
  const int32_t n1 = n_int >> 1;  // floor(n / 2): an arithmetic shift (defined since C++20)
  const int32_t n2 = n_int - n1;
  const float scale1 = std::bit_cast<float>((n1 + 127) << 23);
  const float scale2 = std::bit_cast<float>((n2 + 127) << 23);
  return (p * scale1) * scale2;
}

}  // namespace fast_math_detail

// e^x over the whole float range, into the subnormals (fast_exp of fast_exp.h flushes results
// below 2^-125 to 0, which a softmax never sees but an `exp` op would).
//
// The math: fast_math_detail::exp_reduced above (Cody-Waite reduction, degree-6 polynomial,
// 2^n applied in two steps so that subnormal results are rounded once).
// Special values and limits:
// - x > 88.7228317 (0x1.62e42ep+6, the largest float whose e^x rounds to a finite float):
//   +inf, exactly where expf overflows (an explicit select: the next float's e^x is only 2.7e-7
//   above the overflow threshold, closer than the polynomial's error could be trusted with);
//   +inf gives +inf.
// - x < -104: +0 (e^-104 < 2^-150, half the smallest subnormal); -inf gives +0. Between
//   -104 and -103.972084 the result rounds to 0 by itself, as the true value does (the nearest
//   float to the threshold is 7e-6 away from it in relative terms, far beyond the error).
// - x = +-0: 1. NaN: NaN (the same NaN).
// Measured: at most 0.877 ulp over all floats (at -27.34; 0.887 without FMA; 0.75 ulp for
// subnormal results), overflowing to inf and underflowing to 0 at the same floats as the
// rounded exact value. Bound: 1 ulp.
inline float fast_exp_full(float x) {
  constexpr float kOverflow = 88.7228317f;  // e^x is finite up to here, inf beyond
  constexpr float kUnderflow = -104.0f;     // e^x rounds to 0 below here
  // Clamp so exp_reduced sees a sane argument; `x > lo ? x : lo` also maps a NaN to lo, so no
  // NaN bits reach the integer arithmetic. The selects below restore the true limits.
  float xc = x > kUnderflow ? x : kUnderflow;
  xc = xc < 89.0f ? xc : 89.0f;
  float y = fast_math_detail::exp_reduced(xc);
  y = x > kOverflow ? std::bit_cast<float>(0x7f800000u) : y;
  y = x < kUnderflow ? 0.0f : y;
  return x != x ? x : y;
}

// tanh(x), for a = |x| and the sign put back (tanh is odd):
//   a < 1:   tanh a = a + a s h(s),  s = a^2, h of degree 6 fitted to (tanh(a) / a - 1) / s on
//            s in [0, 1] for the relative error of tanh (fit error 4.7e-9, 0.08 ulp). Written as
//            a plus a correction, the leading term is exact: no cancellation near 0, and for
//            tiny a (below about 2^-12) a s h rounds away and the result is a itself, as it
//            should be (tanh a = a - a^3 / 3 + ...). Subnormal inputs come back unchanged.
//   a >= 1:  tanh a = 1 - 2 / (e + 1),  e = exp(2a). Here q = 2 / (e + 1) <= 1 - tanh(1) = 0.24,
//            so the subtraction loses nothing (the result is >= 0.76) and q's few ulps of
//            relative error shrink by q / (1 - q) <= 0.31 in the result. The switch at 1 rather
//            than lower is what buys that (at 0.625, q reaches 0.45 and the error 1.3 ulp).
// Saturation: tanh a rounds to 1 for a >= 9.0109 (1 - tanh a < 2^-25); 2a is clamped to 20, where
// q = 4e-9 is far below that, so e never overflows and 1 - q is exactly 1 for all a >= ~9.01.
// Special values: tanh(+-0) = +-0 (sign kept), tanh(+-inf) = +-1, NaN gives NaN.
// Measured: at most 0.947 ulp over all floats (at 1.00013, in the exp form); without FMA,
// 1.094 ulp (at 0.9075: the polynomial's correction, 26% of the result there, is rounded a few
// more times). Bound: 1.5 ulp.
inline float fast_tanh(float x) {
  using namespace fast_math_detail;
  constexpr float kH[] = {-3.33332956e-01f, 1.33323461e-01f, -5.38798496e-02f, 2.14867033e-02f,
                          -7.94607960e-03f, 2.30129389e-03f, -3.58420512e-04f};
  const float a = abs_value(x);
  const float s = a * a;
  const float small = a + (a * s) * horner(s, kH);
  const float e = exp_reduced(a < 10.0f ? 2.0f * a : 20.0f);
  const float large = 1.0f - 2.0f / (e + 1.0f);
  const float y = with_sign(a < 1.0f ? small : large, sign_bit(x));
  return x != x ? x : y;
}

// erf(x) = (2 / sqrt(pi)) integral_0^x e^(-t^2) dt, for a = |x| and the sign put back (odd):
//   a < 1:   erf a = a + a P(s),  s = a^2, P of degree 6 fitted to erf(a) / a - 1 on s in [0, 1]
//            for the relative error of erf (fit error 1.4e-9, 0.02 ulp). P(0) = 2 / sqrt(pi) - 1
//            = 0.128: keeping the 1 out of the polynomial keeps the leading term exact, where a
//            rounded float 2 / sqrt(pi) alone would cost up to 0.44 ulp everywhere. For tiny a,
//            erf a = 2a / sqrt(pi) (1 - a^2 / 3 + ...) = a + 0.128 a: two roundings, also for
//            subnormal a.
//   a >= 1:  erf a = 1 - erfc a,  erfc a = e^(-a^2) Q(a - 2.5), Q of degree 8 fitted to
//            erfcx(a) = e^(a^2) erfc(a) on a in [1, 4] for the absolute error of erfc (weight
//            e^(-a^2); fit error 2.4e-9, 0.04 ulp of 1). erfc <= 0.157 here, so the result is
//            >= 0.84 and erfc's relative error (from e^(-a^2), Q and their product) shrinks by
//            0.157 / 0.84 in the result. Centring Q at 2.5 keeps its coefficients decreasing,
//            so Horner's rule in a - 2.5 (exact) loses nothing.
//            a^2 itself is formed exactly, as hi + lo (Dekker's split: ah = a with its low 12
//            mantissa bits cleared, so ah^2 needs at most 24 bits; a^2 = ah^2 + (a - ah)(a + ah)),
//            and lo goes into exp's reduction as a correction: rounding a^2 to a float would
//            cost e^(-a^2) up to half an ulp of a^2 in relative error (without the split, the
//            error reaches 1.04 ulp at a = 1.02).
// Saturation: erf a rounds to 1 for a >= 3.9192; a is clamped to 4, where erfc = 1.5e-8 is below
// half an ulp of 1. The result is exactly 1 from a = 3.9254 up (between the two, 1 - 2^-24: erfc
// is accurate there in absolute terms, 0.04 ulp of 1, not relative to its own tiny size).
// Special values: erf(+-0) = +-0 (sign kept), erf(+-inf) = +-1, NaN gives NaN.
// Measured: at most 0.986 ulp over all floats (at 0.9954, just below the switch); without FMA,
// 1.314 ulp (at 0.9943: P's last Horner step cancels, 0.128 - 0.285, and every unfused step
// rounds). Bound: 1.5 ulp.
inline float fast_erf(float x) {
  using namespace fast_math_detail;
  constexpr float kP[] = {1.28379166e-01f, -3.76126260e-01f, 1.12835787e-01f, -2.68533472e-02f,
                          5.18716220e-03f, -7.99785310e-04f, 7.80690316e-05f};
  constexpr float kQ[] = {2.10807607e-01f,  -7.43421763e-02f, 2.49146558e-02f,
                          -8.13223049e-03f, 2.30244780e-03f,  -6.61255734e-04f,
                          5.43196453e-04f,  2.25009528e-04f,  1.06834210e-04f};
  const float a = abs_value(x);
  const float small = a + a * horner(a * a, kP);
  const float ac = a < 4.0f ? a : 4.0f;  // also maps a NaN to 4: the last line returns it
  const float ah = std::bit_cast<float>(std::bit_cast<uint32_t>(ac) & 0xfffff000u);
  const float square_lo = (ac - ah) * (ac + ah);  // ac^2 = ah^2 + square_lo
  const float erfc = exp_reduced(-(ah * ah), -square_lo) * horner(ac - 2.5f, kQ);
  const float y = with_sign(a < 1.0f ? small : 1.0f - erfc, sign_bit(x));
  return x != x ? x : y;
}

}  // namespace prism::kernels::cpu
