// bfloat16: the upper half of an IEEE float32.
//
//   float32   s eeeeeeee mmmmmmmmmmmmmmmmmmmmmmm   (1 + 8 + 23 bits)
//   bfloat16  s eeeeeeee mmmmmmm                    (1 + 8 +  7 bits)
//
// Same sign and exponent, so the same range (about 1e-38 to 3e38); 8 significant bits instead
// of 24, so rounding to nearest errs by at most half a unit in the last place: a relative
// 2^-8 = 0.39% (float32: 2^-24). Values past the largest bfloat16 plus half an ulp round to
// infinity, as IEEE rounding does. Converting back to float32 is exact: append 16 zero bits.
// Converting to bfloat16 rounds to nearest, ties to even, like every IEEE operation: add 0x7FFF
// plus the lowest kept bit, then truncate. NaN stays NaN (the addition could carry a NaN's
// payload into the exponent and make it infinity, so NaN is handled first and made quiet).
//
// A struct, not a bare uint16_t, so the registry and Tensor::data<T>() can tell the dtype apart
// from a 16-bit integer. Arithmetic is never done in bfloat16 here: kernels widen to float32,
// compute, and round the result once.
#pragma once

#include <cstdint>
#include <cstring>

namespace prism {

struct BFloat16 {
  uint16_t bits = 0;
};

inline BFloat16 to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return {static_cast<uint16_t>((u >> 16) | 0x0040u)};
  const uint32_t lsb = (u >> 16) & 1u;
  return {static_cast<uint16_t>((u + 0x7FFFu + lsb) >> 16)};
}

inline float to_float(BFloat16 b) {
  const uint32_t u = static_cast<uint32_t>(b.bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

}  // namespace prism
