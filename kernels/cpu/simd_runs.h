// Short runs: copy and zero n contiguous elements, a register (simd::Vec) at a time, the
// last partial register by a masked load / store.
//
// Why. conv's im2col and col2im move each patch row in runs of Wo elements (11 for a 3x3 conv on
// 13x13): thousands of runs per image, each shorter than a cache line. std::copy and std::fill
// become calls to memmove / memset, whose set-up (a call, a size dispatch) costs more than the
// 11 elements; a scalar loop costs a step per element. A masked vector instruction moves the
// whole run at once (AVX-512: one vmovups with a lane mask), and its masked-off lanes touch no
// memory, so a run may end anywhere, even at the end of an allocation.
//
// A run of at most one register takes the masked path alone, before any loop: GCC turns the
// register-at-a-time loops into memset / memmove calls, and a call for 0 bytes, made twice per
// patch row for the (usually empty) padding runs, cost more than the copy itself (measured on
// im2col: docs/PERFORMANCE.md, "Conv at one thread (2026-11-25)").
//
// No add (dst += src) here, on purpose: a read-modify-write run that lies closer than a
// register to the previous one (col2im's rows, Wo of W elements apart) loads through the
// footprint of a masked store still in the store buffer, which cannot forward to it: the load
// waits for the store to reach the cache (several times slower than a plain loop; see
// kernels/ops/conv2d/im2col_image.h's col2im_image_add).
//
// Measured on the CNN's second conv (16->32 channels, 3x3 on 13x13, batch 64, 1 thread): im2col
// became several times as fast an image (docs/PERFORMANCE.md, "Conv at one thread
// (2026-11-25)").
#pragma once

#include <cstdint>

#include "kernels/ops/matmul/simd.h"

namespace prism::kernels::cpu {

// dst[0, n) = src[0, n).
template <class T>
inline void copy_run(const T* src, int64_t n, T* dst) {
  using V = simd::Vec<T>;
  constexpr int L = V::lanes;
  if (n <= L) {
    if (n > 0) V::store_first(dst, static_cast<int>(n), V::load_first(src, static_cast<int>(n)));
    return;
  }
  int64_t j = 0;
  for (; j + L <= n; j += L) V::store(dst + j, V::load(src + j));
  if (j < n) {
    const int tail = static_cast<int>(n - j);
    V::store_first(dst + j, tail, V::load_first(src + j, tail));
  }
}

// dst[0, n) = 0.
template <class T>
inline void zero_run(T* dst, int64_t n) {
  using V = simd::Vec<T>;
  constexpr int L = V::lanes;
  if (n <= L) {
    if (n > 0) V::store_first(dst, static_cast<int>(n), V::zero());
    return;
  }
  int64_t j = 0;
  for (; j + L <= n; j += L) V::store(dst + j, V::zero());
  if (j < n) V::store_first(dst + j, static_cast<int>(n - j), V::zero());
}

}  // namespace prism::kernels::cpu
