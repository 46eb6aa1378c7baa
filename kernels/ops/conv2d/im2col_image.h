// One image's im2col and col2im, the fast way: shared by the fused convolution kernels
// (im2col_gemm.cpp) and the im2col / col2im ops that the bf16 autocast policy runs before its
// GEMMs (unfold.cpp).
//
// The patch matrix of an image x [C, H, W] is cols [K, P], K = C kh kw rows (channel, kernel
// row, kernel column), P = Ho Wo columns (output positions): element ((c, p, q), (i, j)) =
// x[c, i s - pad + p, j s - pad + q], 0 where that falls in the padding.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/ops/conv2d/args.h"
#include "kernels/cpu/simd_runs.h"

namespace prism::kernels::cpu {

// A run of n elements copied / zeroed: a register at a time for float and double (simd_runs.h),
// a plain loop for other element types (bfloat16 patches).
template <class T>
inline void copy_elements(const T* src, int64_t n, T* dst) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    copy_run(src, n, dst);
  } else {
    std::copy(src, src + n, dst);
  }
}
template <class T>
inline void zero_elements(T* dst, int64_t n) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    zero_run(dst, n);
  } else {
    std::fill(dst, dst + n, T{});
  }
}

// The output positions j in [0, out) whose input position j*stride + off lies in [0, in):
// the range [lo, hi) (empty when lo == hi).
struct PatchRange {
  int64_t lo, hi;
};
inline PatchRange valid_range(int64_t off, int64_t in, int64_t out, int64_t stride) {
  int64_t lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
  int64_t hi = in - 1 - off >= 0 ? (in - 1 - off) / stride + 1 : 0;
  lo = std::min(lo, out);
  hi = std::max(std::min(hi, out), lo);
  return {lo, hi};
}

// cols [K, P] <- the patches of one image x [C, H, W].
//
// Patch row (c, p, q) is the input window x[c, i s - pad + p, j s - pad + q] over the output
// positions (i, j): rows i in [ir.lo, ir.hi) and columns j in [jr.lo, jr.hi) fall inside the
// input, the rest is padding. Each window row is one run of Wo elements, copied a register at a
// time (simd_runs.h). The loop over i has no branch: a row with padding columns is zeroed whole
// first, then its inside copied over it (one extra store of a few hundred floats, cheaper than
// two short zero runs per window row).
template <class T>
inline void im2col_image(const Conv2dArgs<T>& args, const T* x, T* cols) {
  const Conv2dArgs<T> a = args;  // a local copy: the stores to cols cannot alias the sizes
  const int64_t P = a.ho * a.wo;
  for (int64_t c = 0; c < a.c; ++c) {
    const T* xc = x + c * a.h * a.w;
    for (int64_t p = 0; p < a.kh; ++p) {
      const PatchRange ir = valid_range(p - a.padding, a.h, a.ho, a.stride);
      for (int64_t q = 0; q < a.kw; ++q) {
        T* row = cols + ((c * a.kh + p) * a.kw + q) * P;
        const PatchRange jr = valid_range(q - a.padding, a.w, a.wo, a.stride);
        const int64_t inside = jr.hi - jr.lo;
        zero_elements(row, ir.lo * a.wo);                          // window rows above the input
        zero_elements(row + ir.hi * a.wo, (a.ho - ir.hi) * a.wo);  // and below it
        if (inside < a.wo) zero_elements(row + ir.lo * a.wo, (ir.hi - ir.lo) * a.wo);
        // dst[j] = src[j s] for j in [jr.lo, jr.hi): src is input row i s - pad + p, shifted
        // so that output column j reads input column j s - pad + q.
        const T* src =
            xc + (ir.lo * a.stride - a.padding + p) * a.w + (jr.lo * a.stride - a.padding + q);
        T* dst = row + ir.lo * a.wo + jr.lo;
        for (int64_t i = ir.lo; i < ir.hi; ++i, src += a.stride * a.w, dst += a.wo) {
          if (a.stride == 1) {
            copy_elements(src, inside, dst);
          } else {
            for (int64_t j = 0; j < inside; ++j) dst[j] = src[j * a.stride];
          }
        }
      }
    }
  }
}

// dx [C, H, W] += the patch gradients dcols [K, P] of one image (the reverse of im2col; a
// patch element that came from padding is dropped).
//
// A plain loop, not simd_runs.h's masked runs: each dx row is read, added to and written back
// by runs that lie a row apart (Wo elements of a W-element row), closer than one register. A
// masked load whose register-wide footprint overlaps an earlier masked store still in the store
// buffer cannot take its data from it and waits until the store reaches the cache; on 16
// channels of 13x13 masked runs were several times slower than this loop, which GCC vectorises
// with unmasked 8-wide steps and a scalar tail (measured: docs/PERFORMANCE.md, "Conv at one
// thread (2026-11-25)").
template <class T>
inline void col2im_image_add(const Conv2dArgs<T>& args, const T* dcols, T* dx) {
  const Conv2dArgs<T> a = args;  // a local copy, as in im2col
  const int64_t P = a.ho * a.wo;
  for (int64_t c = 0; c < a.c; ++c) {
    T* dxc = dx + c * a.h * a.w;
    for (int64_t p = 0; p < a.kh; ++p) {
      const PatchRange ir = valid_range(p - a.padding, a.h, a.ho, a.stride);
      for (int64_t q = 0; q < a.kw; ++q) {
        const PatchRange jr = valid_range(q - a.padding, a.w, a.wo, a.stride);
        const int64_t inside = jr.hi - jr.lo;
        const T* src = dcols + ((c * a.kh + p) * a.kw + q) * P + ir.lo * a.wo + jr.lo;
        T* dst =
            dxc + (ir.lo * a.stride - a.padding + p) * a.w + (jr.lo * a.stride - a.padding + q);
        for (int64_t i = ir.lo; i < ir.hi; ++i, src += a.wo, dst += a.stride * a.w) {
          if (a.stride == 1) {
            for (int64_t j = 0; j < inside; ++j) dst[j] += src[j];
          } else {
            for (int64_t j = 0; j < inside; ++j) dst[j * a.stride] += src[j];
          }
        }
      }
    }
  }
}

}  // namespace prism::kernels::cpu
