// Pooling, optimized variants: windows that tile the input, and planes over the threads.
//
// Idea. In a CNN the pool is nearly always kernel = stride with no padding (2x2, stride 2):
// the windows tile the input without overlapping, so no window needs clipping: output row i
// reads input rows [k i, k i + k) and output column j reads columns [k j, k j + k), a fixed
// pattern, unrolled for k = 2 and vectorised across the windows of a row.
// Any other window shape falls back to the naive kernel.
//
// Threads. Every plane (a channel of an image) is pooled on its own, so all four ops split
// chunks of planes over the threads (kernels/cpu/parallel.h): the same bits on any count. The
// backward ops run the naive loops per chunk. (We also tried, twice, a 2x2 max backward that
// writes each dx element once, in order, instead of zeroing dx and scattering dy into it; the
// memset + scatter was as fast or faster, most of all on planes of odd width, which leave short
// rows and a zero column: docs/PERFORMANCE.md, "Convolution and pooling kernels".)
//
// Ties and NaN follow the naive kernel exactly (first maximum in row-major window order; a
// NaN wins), so the two variants give bit-identical outputs and argmax.
//
// Cost: the same as naive (k^2 compares per output). Measured (`prism lab max_pool2d`):
// docs/PERFORMANCE.md, "Convolution and pooling kernels" and "Conv at one thread (2026-11-25)".
#include <algorithm>
#include <cmath>

#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/pool2d/naive.h"
#include "kernels/ops/pool2d/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
bool tiles(const Pool2dArgs<T>& a) {
  return a.stride == a.kernel && a.padding == 0;
}

// One output row of a 2x2 / stride-2 pool: the common case, with the window unrolled.
// Strictly greater: the first maximum keeps its place (as in the naive scan). Written as
// selects on restrict pointers, which GCC 12 turns into vector compares and blends (16 windows
// at a time with AVX-512, the 64-bit index alongside), faster than the scalar loop this replaced
// (which kept the running max by arithmetic, because the same selects without restrict became
// branches, mispredicted on random data and far slower still; measured: docs/PERFORMANCE.md,
// "Convolution and pooling kernels").
// A NaN is only noted here; the plane is then redone by the naive kernel, whose rule applies.
template <class T>
bool max_row_2x2(const T* __restrict r0, const T* __restrict r1, int64_t base, int64_t w,
                 int64_t wo, T* __restrict y, int64_t* __restrict idx) {
  int nan = 0;
  for (int64_t j = 0; j < wo; ++j) {
    const T v0 = r0[2 * j], v1 = r0[2 * j + 1], v2 = r1[2 * j], v3 = r1[2 * j + 1];
    T m = v0;
    int64_t off = 0;
    if (v1 > m) {
      m = v1;
      off = 1;
    }
    if (v2 > m) {
      m = v2;
      off = w;
    }
    if (v3 > m) {
      m = v3;
      off = w + 1;
    }
    y[j] = m;
    idx[j] = base + 2 * j + off;
    nan |= (v0 != v0) | (v1 != v1) | (v2 != v2) | (v3 != v3);
  }
  return nan != 0;
}

template <class T>
bool max_row_kxk(const T* x, int64_t i, const Pool2dArgs<T>& a, T* y, int64_t* idx) {
  const int64_t k = a.kernel;
  bool saw_nan = false;
  for (int64_t j = 0; j < a.wo; ++j) {
    int64_t at = (i * k) * a.w + j * k;
    T m = x[at];
    for (int64_t r = i * k; r < i * k + k; ++r) {
      for (int64_t c = j * k; c < j * k + k; ++c) {
        const T v = x[r * a.w + c];
        const bool take = v > m;
        m = take ? v : m;
        at = take ? r * a.w + c : at;
        saw_nan |= v != v;
      }
    }
    y[j] = m;
    idx[j] = at;
  }
  return saw_nan;
}

template <class T>
void max_pool2d_tiles(const Pool2dArgs<T>& args) {
  const Pool2dArgs<T> a = args;  // local copy: stores to idx cannot alias the sizes
  for (int64_t pl = 0; pl < a.planes; ++pl) {
    const T* x = a.x + pl * a.h * a.w;
    T* y = a.out + pl * a.ho * a.wo;
    int64_t* idx = a.index + pl * a.ho * a.wo;
    bool saw_nan = false;
    for (int64_t i = 0; i < a.ho; ++i) {
      if (a.kernel == 2) {
        saw_nan |= max_row_2x2(x + 2 * i * a.w, x + (2 * i + 1) * a.w, 2 * i * a.w, a.w, a.wo,
                               y + i * a.wo, idx + i * a.wo);
      } else {
        saw_nan |= max_row_kxk(x, i, a, y + i * a.wo, idx + i * a.wo);
      }
    }
    if (saw_nan) {  // rare: redo this plane with the naive kernel's NaN rule
      Pool2dArgs<T> one = a;
      one.planes = 1;
      one.x = x;
      one.out = y;
      one.index = idx;
      max_pool2d_naive(one);
    }
  }
}

// The optimized variants: chunks of planes over the threads, each chunk pooled by the tiling
// kernel above (max_pool2d, when windows tile the input) or by the naive loops.
template <class T>
void max_pool2d_optimized(const Pool2dArgs<T>& a) {
  over_plane_chunks(a, false, tiles(a) ? &max_pool2d_tiles<T> : &max_pool2d_naive<T>);
}
template <class T>
void max_pool2d_backward_optimized(const Pool2dArgs<T>& a) {
  over_plane_chunks(a, true, &max_pool2d_backward_naive<T>);
}
template <class T>
void avg_pool2d_optimized(const Pool2dArgs<T>& a) {
  over_plane_chunks(a, false, &avg_pool2d_naive<T>);
}
template <class T>
void avg_pool2d_backward_optimized(const Pool2dArgs<T>& a) {
  over_plane_chunks(a, true, &avg_pool2d_backward_naive<T>);
}

}  // namespace

void register_pool_optimized(Registry& r) {
  r.op("max_pool2d", Device::cpu)
      .add<Pool2dArgs>(
          "optimized", VariantTag::optimized,
          "windows that tile the input: no clipping, 2x2 unrolled; planes over threads",
          &max_pool2d_optimized<float>, &max_pool2d_optimized<double>);
  r.op("max_pool2d_backward", Device::cpu)
      .add<Pool2dArgs>("optimized", VariantTag::optimized, "the naive scatter, planes over threads",
                       &max_pool2d_backward_optimized<float>,
                       &max_pool2d_backward_optimized<double>);
  r.op("avg_pool2d", Device::cpu)
      .add<Pool2dArgs>("optimized", VariantTag::optimized, "the naive windows, planes over threads",
                       &avg_pool2d_optimized<float>, &avg_pool2d_optimized<double>);
  r.op("avg_pool2d_backward", Device::cpu)
      .add<Pool2dArgs>("optimized", VariantTag::optimized, "the naive spread, planes over threads",
                       &avg_pool2d_backward_optimized<float>,
                       &avg_pool2d_backward_optimized<double>);
}
PRISM_CPU_KERNELS(220, register_pool_optimized);

}  // namespace prism::kernels::cpu
