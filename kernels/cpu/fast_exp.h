// exp() that a compiler can vectorise, for the fused softmax and cross-entropy kernels.
//
// Why: glibc's expf is a function call per element (measured: docs/PERFORMANCE.md, "softmax,
// sum, elementwise, 1 thread"), and a loop that calls it cannot be vectorised at -O3 without
// -ffast-math. Written as plain arithmetic with no branches and no calls, the same function
// inlined into a loop becomes AVX-512 (or AVX2, or SSE) code: 16 exponentials per handful of
// instructions.
//
// The math (Cody and Waite's range reduction, then a polynomial):
//   exp(x) = 2^n * exp(r),  n = round(x / ln 2),  r = x - n ln 2,  |r| <= ln(2) / 2 ~ 0.347
// - n ln 2 is subtracted in two parts (ln2_hi has few mantissa bits, so n * ln2_hi is exact
//   for |n| < 2^8), keeping r accurate even where x is large;
// - exp(r) is its Taylor series to r^7 by Horner's rule: the first omitted term,
//   r^8 / 8! <= 0.347^8 / 40320 ~ 5e-9, is below float32's half-ulp (6e-8), so the result is
//   within about 1 ulp of the true value;
// - 2^n is built in the exponent bits: (n + 127) << 23 is the float 2^n, and adding n << 23
//   to the bits of exp(r) (a number in [0.7, 1.5), a normal float) multiplies it by 2^n.
// - Rounding x / ln 2 to an integer uses the "magic number" 1.5 * 2^23: adding it to a float of
//   magnitude < 2^22 leaves the rounded integer in the low mantissa bits (round to nearest
//   even), with no conversion instruction the vectoriser might refuse.
// Measured against double-precision exp on 20M points of [-86.6, 88.3]: at most 0.93 ulp.
// Range: below -86.6 (2^-125) the result is flushed to 0 (the true value is below 2.5e-38,
// nothing a softmax or a log-sum-exp can see next to the row maximum's exp(0) = 1); above
// 88.3 it is +inf (n would reach 128, past the largest exponent); a NaN stays NaN. Every
// caller in prism passes x - max(row) <= 0.
//
// float64 kernels call std::exp instead: they exist for gradient checks and references, where
// the last digits matter more than speed.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace prism::kernels::cpu {

inline float fast_exp(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693359375f;         // 8 significant bits: n * kLn2Hi is exact
  constexpr float kLn2Lo = -2.12194440e-4f;      // ln 2 - kLn2Hi
  constexpr float kMagic = 12582912.0f;          // 1.5 * 2^23
  constexpr float kLow = -86.6f, kHigh = 88.3f;  // 2^-125 and ~2^127.4
  const float xc = x < kLow ? kLow : (x > kHigh ? kHigh : x);
  const float t = xc * kLog2e + kMagic;  // round(xc / ln 2) sits in t's low mantissa bits
  const float n = t - kMagic;
  float r = xc - n * kLn2Hi;
  r = r - n * kLn2Lo;
  // exp(r) = 1 + r + r^2/2! + ... + r^7/7!, Horner's rule.
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int32_t t_bits, p_bits, magic_bits;
  std::memcpy(&t_bits, &t, sizeof t);
  std::memcpy(&p_bits, &p, sizeof p);
  std::memcpy(&magic_bits, &kMagic, sizeof kMagic);
  const int32_t n_int = t_bits - magic_bits;  // n as an integer
  // In unsigned arithmetic: for a NaN x, p's bits are a NaN's, near INT_MAX, and a signed add
  // would overflow (undefined behaviour); the unsigned sum wraps, and the NaN is returned below.
  const uint32_t bits = static_cast<uint32_t>(p_bits) + (static_cast<uint32_t>(n_int) << 23);
  float y;
  std::memcpy(&y, &bits, sizeof y);
  y = x < kLow ? 0.0f : y;
  y = x > kHigh ? HUGE_VALF : y;
  return x != x ? x : y;  // NaN in, NaN out
}

// The exponential each fused kernel uses for element type T: the vectorisable one for float,
// the library's for double.
template <class T>
inline T kernel_exp(T x) {
  if constexpr (sizeof(T) == sizeof(float)) {
    return fast_exp(x);
  } else {
    return std::exp(x);
  }
}

}  // namespace prism::kernels::cpu
