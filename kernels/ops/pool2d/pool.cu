// max_pool2d / avg_pool2d and their gradients on the GPU: one thread per output element.
//
// Forward: thread (plane, i, j) scans its window, rows [i s - pad, i s - pad + k) and columns
// likewise, clipped to the input, exactly as the CPU's naive kernel (kernels/ops/pool2d/naive.cpp):
//   max: the first maximum in row-major order wins a tie, the first NaN wins over everything;
//        index = h_in * W + w_in within the plane.
//   avg: sum / (number of real elements in the window).
// Backward, written as a gather so that no two threads write one element (no atomics, and the
// same summation order as the CPU, hence the same rounding): thread (plane, r, c) of dx visits
// the outputs whose windows contain (r, c),
//   i in [ceil((r + pad - k + 1) / s), floor((r + pad) / s)] intersected with [0, Ho)
// (and j likewise), and adds dy[i, j] where the saved argmax is (r, c) (max), or
// dy[i, j] / count(i, j) (avg). With s >= k that is at most one window per element.
// Cost: k^2 per output forward; backward ceil(k / s)^2 window visits per input element.
// Memory-bound: each input element is read about (k / s)^2 times. Passed the CUDA test suite
// on an NVIDIA H200 (2026-11-26); not timed alone.
#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/ops/pool2d/args.h"

namespace prism::kernels::cuda {
namespace {

struct Window {
  int64_t lo, hi;
};
__device__ __forceinline__ Window window(int64_t i, int64_t in, int64_t k, int64_t s, int64_t pad) {
  const int64_t start = i * s - pad;
  return {start > 0 ? start : 0, start + k < in ? start + k : in};
}

// The outputs along one dim whose windows cover input position r: [lo, hi).
__device__ __forceinline__ Window covering(int64_t r, int64_t out, int64_t k, int64_t s,
                                           int64_t pad) {
  const int64_t num = r + pad - k + 1;
  const int64_t lo = num <= 0 ? 0 : (num + s - 1) / s;
  const int64_t last = (r + pad) / s;
  return {lo, last + 1 < out ? last + 1 : out};
}

template <class T>
__global__ void max_pool2d_kernel(const Pool2dArgs<T> a) {
  PRISM_GRID_STRIDE(o, a.planes * a.ho * a.wo) {
    const int64_t j = o % a.wo, i = (o / a.wo) % a.ho, pl = o / (a.wo * a.ho);
    const T* x = a.x + pl * a.h * a.w;
    const Window wh = window(i, a.h, a.kernel, a.stride, a.padding);
    const Window ww = window(j, a.w, a.kernel, a.stride, a.padding);
    int64_t best = wh.lo * a.w + ww.lo;  // padding <= k / 2: the window has a real element
    T best_v = x[best];
    int64_t first_nan = -1;
    for (int64_t r = wh.lo; r < wh.hi; ++r) {
      for (int64_t c = ww.lo; c < ww.hi; ++c) {
        const int64_t pos = r * a.w + c;
        const T v = x[pos];
        if (v > best_v) best = pos, best_v = v;
        if (first_nan < 0 && isnan(v)) first_nan = pos;
      }
    }
    if (first_nan >= 0) best = first_nan;  // a NaN propagates, as in PyTorch
    a.out[o] = x[best];
    a.index[o] = best;
  }
}

template <class T>
__global__ void max_pool2d_backward_kernel(const Pool2dArgs<T> a) {
  PRISM_GRID_STRIDE(e, a.planes * a.h * a.w) {
    const int64_t c = e % a.w, r = (e / a.w) % a.h, pl = e / (a.w * a.h);
    const Window wi = covering(r, a.ho, a.kernel, a.stride, a.padding);
    const Window wj = covering(c, a.wo, a.kernel, a.stride, a.padding);
    const T* dy = a.dy + pl * a.ho * a.wo;
    const int64_t* idx = a.index + pl * a.ho * a.wo;
    const int64_t me = r * a.w + c;
    T acc = 0;
    for (int64_t i = wi.lo; i < wi.hi; ++i) {
      for (int64_t j = wj.lo; j < wj.hi; ++j) {
        if (idx[i * a.wo + j] == me) acc += dy[i * a.wo + j];
      }
    }
    a.out[e] = acc;
  }
}

template <class T>
__global__ void avg_pool2d_kernel(const Pool2dArgs<T> a) {
  PRISM_GRID_STRIDE(o, a.planes * a.ho * a.wo) {
    const int64_t j = o % a.wo, i = (o / a.wo) % a.ho, pl = o / (a.wo * a.ho);
    const T* x = a.x + pl * a.h * a.w;
    const Window wh = window(i, a.h, a.kernel, a.stride, a.padding);
    const Window ww = window(j, a.w, a.kernel, a.stride, a.padding);
    T sum = 0;
    for (int64_t r = wh.lo; r < wh.hi; ++r) {
      for (int64_t c = ww.lo; c < ww.hi; ++c) sum += x[r * a.w + c];
    }
    a.out[o] = sum / static_cast<T>((wh.hi - wh.lo) * (ww.hi - ww.lo));
  }
}

template <class T>
__global__ void avg_pool2d_backward_kernel(const Pool2dArgs<T> a) {
  PRISM_GRID_STRIDE(e, a.planes * a.h * a.w) {
    const int64_t c = e % a.w, r = (e / a.w) % a.h, pl = e / (a.w * a.h);
    const Window wi = covering(r, a.ho, a.kernel, a.stride, a.padding);
    const Window wj = covering(c, a.wo, a.kernel, a.stride, a.padding);
    const T* dy = a.dy + pl * a.ho * a.wo;
    T acc = 0;
    for (int64_t i = wi.lo; i < wi.hi; ++i) {
      const Window wh = window(i, a.h, a.kernel, a.stride, a.padding);
      for (int64_t j = wj.lo; j < wj.hi; ++j) {
        const Window ww = window(j, a.w, a.kernel, a.stride, a.padding);
        acc += dy[i * a.wo + j] / static_cast<T>((wh.hi - wh.lo) * (ww.hi - ww.lo));
      }
    }
    a.out[e] = acc;
  }
}

template <class T>
void max_pool2d(const Pool2dArgs<T>& a) {
  const int64_t n = a.planes * a.ho * a.wo;
  if (n == 0) return;
  max_pool2d_kernel<T><<<grid_for(n), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("max_pool2d_kernel");
}

template <class T>
void max_pool2d_backward(const Pool2dArgs<T>& a) {
  const int64_t n = a.planes * a.h * a.w;
  if (n == 0) return;
  max_pool2d_backward_kernel<T><<<grid_for(n), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("max_pool2d_backward_kernel");
}

template <class T>
void avg_pool2d(const Pool2dArgs<T>& a) {
  const int64_t n = a.planes * a.ho * a.wo;
  if (n == 0) return;
  avg_pool2d_kernel<T><<<grid_for(n), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("avg_pool2d_kernel");
}

template <class T>
void avg_pool2d_backward(const Pool2dArgs<T>& a) {
  const int64_t n = a.planes * a.h * a.w;
  if (n == 0) return;
  avg_pool2d_backward_kernel<T><<<grid_for(n), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("avg_pool2d_backward_kernel");
}

}  // namespace

void register_pool(Registry& r) {
  r.op("max_pool2d", Device::cuda)
      .add<Pool2dArgs>("naive", VariantTag::naive, "one thread per output scans its window",
                       &max_pool2d<float>, &max_pool2d<double>);
  r.op("max_pool2d_backward", Device::cuda)
      .add<Pool2dArgs>("naive", VariantTag::naive,
                       "one thread per dx element gathers dy where the argmax is it (no atomics)",
                       &max_pool2d_backward<float>, &max_pool2d_backward<double>);
  r.op("avg_pool2d", Device::cuda)
      .add<Pool2dArgs>("naive", VariantTag::naive,
                       "one thread per output sums its window, divides by its real count",
                       &avg_pool2d<float>, &avg_pool2d<double>);
  r.op("avg_pool2d_backward", Device::cuda)
      .add<Pool2dArgs>("naive", VariantTag::naive,
                       "one thread per dx element gathers dy / count of its windows",
                       &avg_pool2d_backward<float>, &avg_pool2d_backward<double>);
}
PRISM_CUDA_KERNELS(170, register_pool);

}  // namespace prism::kernels::cuda
