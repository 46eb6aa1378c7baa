// Packing for the optimized matmul: copy a block of A or B, whatever its strides, into the
// contiguous sliver layout the microkernel reads with unit stride (microkernel.h).
//
// Both operands pack the same way. A block is `width` lines (A: rows, B: columns) of `kc`
// elements along the shared dimension k; it is cut into slivers of W lines (A: W = MR,
// B: W = NR), and sliver s stores element (w, p) at dst[s*kc*W + p*W + w]: for each step p the
// W values the microkernel needs are adjacent. The last sliver is zero-padded to W lines, so the
// microkernel never needs an edge case inside its loop.
//
//   A (m x k) block:  line w = row,    src(w, p) = a[w * a_rs + p * a_cs]   (W = MR)
//   B (k x n) block:  line w = column, src(w, p) = b[p * b_rs + w * b_cs]   (W = NR)
//
// Which loop is fast depends on which stride is 1:
//   line stride 1  (A transposed, i.e. A^T @ B; B row-major): each step p is W adjacent source
//                  elements, a straight vector copy;
//   k stride 1     (A row-major; B transposed, A @ B^T): each line is contiguous along p, so the
//                  copy is a transpose: with AVX-512, 16 x 16 floats (8 x 8 doubles) at a time
//                  loaded as 16 line segments and transposed in registers, measured close to a
//                  plain copy of the same block and well ahead of the blocked element-by-element
//                  loop below (docs/PERFORMANCE.md, "Matmul ladder"); otherwise in blocks of 16
//                  steps, so that the source lines and the destination rows being written stay
//                  in L1;
//   neither        an element-by-element gather.
// So a transposed view costs only its packing: kc * W element copies per sliver, reused by
// every tile of the other operand (mc / MR or nc / NR microkernel calls).
//
// With kRelu, each element is stored as max(0, x) (the linear op's prologue,
// kernels/ops/matmul/engine.h), math::Relu's exact result (NaN passes, -0 becomes +0), at no extra
// pass over the block.
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace prism::kernels::cpu {

#if defined(__AVX512F__)
// The shuffles, through their masked forms with every lane selected: the same instructions, but
// GCC 12's unmasked intrinsics pass an undefined vector as the merge source and then warn
// (-Wmaybe-uninitialized) about it in its own header.
inline __m512 unpacklo(__m512 a, __m512 b) {
  return _mm512_mask_unpacklo_ps(a, 0xFFFF, a, b);
}
inline __m512 unpackhi(__m512 a, __m512 b) {
  return _mm512_mask_unpackhi_ps(a, 0xFFFF, a, b);
}
inline __m512d unpacklo(__m512d a, __m512d b) {
  return _mm512_mask_unpacklo_pd(a, 0xFF, a, b);
}
inline __m512d unpackhi(__m512d a, __m512d b) {
  return _mm512_mask_unpackhi_pd(a, 0xFF, a, b);
}
template <int kImm>
__m512 shuffle_blocks(__m512 a, __m512 b) {
  return _mm512_mask_shuffle_f32x4(a, 0xFFFF, a, b, kImm);
}
template <int kImm>
__m512d shuffle_blocks(__m512d a, __m512d b) {
  return _mm512_mask_shuffle_f64x2(a, 0xFF, a, b, kImm);
}

// In-register transposes: on entry r[i] holds line i (L consecutive steps p), on return r[j]
// holds step j of the L lines. Each is log2(L) rounds of shuffles (64 for 16 x 16 floats,
// 32 for 8 x 8 doubles), about 4 elements per cycle against 1-2 for scalar copies.
//
// 16 x 16 floats. Round 1 interleaves line pairs (unpacklo/hi_ps), round 2 line quads
// (unpacklo/hi_pd), so that afterwards t[4i + c] holds, in its 128-bit block q, step 4q + c of
// lines 4i..4i+3. Rounds 3 and 4 gather block q of t[c], t[4 + c], t[8 + c], t[12 + c] into
// one register with two 128-bit-block shuffles.
inline void transpose_in_registers(__m512 (&r)[16]) {
  __m512 t[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = unpacklo(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = unpackhi(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 4; ++i) {
    const __m512d lo0 = _mm512_castps_pd(t[4 * i]), lo1 = _mm512_castps_pd(t[4 * i + 2]);
    const __m512d hi0 = _mm512_castps_pd(t[4 * i + 1]), hi1 = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(unpacklo(lo0, lo1));
    r[4 * i + 1] = _mm512_castpd_ps(unpackhi(lo0, lo1));
    r[4 * i + 2] = _mm512_castpd_ps(unpacklo(hi0, hi1));
    r[4 * i + 3] = _mm512_castpd_ps(unpackhi(hi0, hi1));
  }
  for (int c = 0; c < 4; ++c) {
    const __m512 s0 = shuffle_blocks<0x88>(r[c], r[4 + c]);  // blocks 0, 2 of each
    const __m512 s1 = shuffle_blocks<0xDD>(r[c], r[4 + c]);  // blocks 1, 3 of each
    const __m512 s2 = shuffle_blocks<0x88>(r[8 + c], r[12 + c]);
    const __m512 s3 = shuffle_blocks<0xDD>(r[8 + c], r[12 + c]);
    t[c] = shuffle_blocks<0x88>(s0, s2);
    t[4 + c] = shuffle_blocks<0x88>(s1, s3);
    t[8 + c] = shuffle_blocks<0xDD>(s0, s2);
    t[12 + c] = shuffle_blocks<0xDD>(s1, s3);
  }
  for (int i = 0; i < 16; ++i) r[i] = t[i];
}

// 8 x 8 doubles: round 1 (unpacklo/hi_pd) leaves in t[2i + c], block q, step 2q + c of lines
// 2i, 2i+1; rounds 2 and 3 gather block q of t[c], t[2 + c], t[4 + c], t[6 + c].
inline void transpose_in_registers(__m512d (&r)[8]) {
  __m512d t[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = unpacklo(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = unpackhi(r[2 * i], r[2 * i + 1]);
  }
  for (int c = 0; c < 2; ++c) {
    const __m512d s0 = shuffle_blocks<0x88>(t[c], t[2 + c]);
    const __m512d s1 = shuffle_blocks<0xDD>(t[c], t[2 + c]);
    const __m512d s2 = shuffle_blocks<0x88>(t[4 + c], t[6 + c]);
    const __m512d s3 = shuffle_blocks<0xDD>(t[4 + c], t[6 + c]);
    r[c] = shuffle_blocks<0x88>(s0, s2);
    r[2 + c] = shuffle_blocks<0x88>(s1, s3);
    r[4 + c] = shuffle_blocks<0xDD>(s0, s2);
    r[6 + c] = shuffle_blocks<0xDD>(s1, s3);
  }
}

template <class T>
struct TransposeVec;
template <>
struct TransposeVec<float> {
  using V = __m512;
  static constexpr int lanes = 16;
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V zero() { return _mm512_setzero_ps(); }
  static void store(float* p, int n, V v) { _mm512_mask_storeu_ps(p, (1u << n) - 1, v); }
  // math::Relu: 0 where x <= 0 (an ordered compare, so NaN stays), else x.
  static V relu(V v) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, zero(), _CMP_LE_OQ), v, zero());
  }
};
template <>
struct TransposeVec<double> {
  using V = __m512d;
  static constexpr int lanes = 8;
  static V load(const double* p) { return _mm512_loadu_pd(p); }
  static V zero() { return _mm512_setzero_pd(); }
  static void store(double* p, int n, V v) { _mm512_mask_storeu_pd(p, (1u << n) - 1, v); }
  static V relu(V v) {
    return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(v, zero(), _CMP_LE_OQ), v, zero());
  }
};

// Packs steps [0, steps) (a multiple of the vector width L) of a sliver of W lines, the first
// `lines` of them real and the rest zero, whose steps are contiguous (k stride 1): L x L blocks
// transposed in registers. Returns the steps done; the caller finishes the rest.
template <int W, bool kRelu, class T>
int64_t pack_transposed_simd(const T* base, int64_t line_stride, int64_t lines, int64_t kc,
                             T* dst) {
  using TV = TransposeVec<T>;
  constexpr int L = TV::lanes;
  const int64_t steps = kc / L * L;
  for (int64_t p0 = 0; p0 < steps; p0 += L) {
    for (int g = 0; g < W; g += L) {  // lines g .. g+L of the sliver
      const int width = std::min(L, W - g);
      typename TV::V r[L];
      for (int i = 0; i < L; ++i) {
        r[i] = g + i < lines ? TV::load(base + (g + i) * line_stride + p0) : TV::zero();
      }
      transpose_in_registers(r);
      for (int j = 0; j < L; ++j) {
        TV::store(dst + (p0 + j) * W + g, width, kRelu ? TV::relu(r[j]) : r[j]);
      }
    }
  }
  return steps;
}
#endif

// The value packed: x, or max(0, x) as math::Relu computes it.
template <bool kRelu, class T>
inline T packed_value(T x) {
  if constexpr (kRelu) return !(x <= T(0)) ? x : T(0);
  return x;
}

template <int W, bool kRelu = false, class T>
void pack_slivers(const T* src, int64_t line_stride, int64_t k_stride, int64_t width, int64_t kc,
                  T* dst) {
  for (int64_t s0 = 0; s0 < width; s0 += W, dst += kc * W) {
    // The last sliver may have fewer than W real lines; the rest of it is zeros.
    const int64_t lines = std::min<int64_t>(W, width - s0);
    const T* base = src + s0 * line_stride;
    if (line_stride == 1 && lines == W) {
      for (int64_t p = 0; p < kc; ++p) {
        const T* s = base + p * k_stride;
        T* d = dst + p * W;
#pragma GCC unroll 8
        for (int w = 0; w < W; ++w) d[w] = packed_value<kRelu>(s[w]);
      }
    } else if (k_stride == 1) {
      int64_t done = 0;
#if defined(__AVX512F__)
      done = pack_transposed_simd<W, kRelu>(base, line_stride, lines, kc, dst);
#endif
      constexpr int64_t kBlock = 16;
      for (int64_t p0 = done; p0 < kc; p0 += kBlock) {
        const int64_t p1 = std::min(kc, p0 + kBlock);
        for (int64_t w = 0; w < lines; ++w) {
          const T* s = base + w * line_stride;
          for (int64_t p = p0; p < p1; ++p) dst[p * W + w] = packed_value<kRelu>(s[p]);
        }
        for (int64_t p = p0; p < p1; ++p) std::fill(dst + p * W + lines, dst + (p + 1) * W, T(0));
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        T* d = dst + p * W;
        for (int64_t w = 0; w < lines; ++w) {
          d[w] = packed_value<kRelu>(base[w * line_stride + p * k_stride]);
        }
        std::fill(d + lines, d + W, T(0));
      }
    }
  }
}

}  // namespace prism::kernels::cpu
