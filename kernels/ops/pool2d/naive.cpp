// max_pool2d / avg_pool2d and their gradients, naive variant: one loop over each window.
//
// Every plane (one channel of one image) is pooled on its own. The window of output (i, j)
// covers rows [i*s - pad, i*s - pad + k) and columns likewise, clipped to the input: padding
// never wins a max and is not counted in an average (kernels/args.h, Pool2dArgs).
//   max: y = the largest x in the window; index = where it was (h_in * W + w_in), so backward
//        sends dy to that one element: dx[index] += dy (windows may overlap when s < k).
//   avg: y = sum / count over the window's real elements; backward spreads dy / count evenly.
// The first maximum wins a tie; a NaN in the window wins over everything (it propagates, as in
// PyTorch), so a NaN input is not silently hidden by the max.
//
// Each kernel works on a local copy of its arguments: through the caller's reference, every
// store to an int64_t output (the argmax) might change the int64_t sizes as far as the compiler
// knows, so it would reload them after each store.
//
// Cost: k^2 FLOPs per output (compares, or adds + the divide); backward 1 add per dy (max) or
// k^2 per dy (avg). Memory-bound: each input element is read about (k/s)^2 times.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/pool2d/naive.h"
#include "kernels/ops/pool2d/args.h"

namespace prism::kernels::cpu {
namespace {

// The clipped window of output position i along a dim of size `in`: [lo, hi).
struct Window {
  int64_t lo, hi;
};
Window window(int64_t i, int64_t in, int64_t kernel, int64_t stride, int64_t padding) {
  const int64_t start = i * stride - padding;
  return {std::max<int64_t>(start, 0), std::min(start + kernel, in)};
}

}  // namespace

// Every naive kernel is shared with the optimized variants (optimized.cpp), which run it
// on chunks of planes over the threads, and max_pool2d_naive also for overlapping or padded
// windows.

template <class T>
void avg_pool2d_naive(const Pool2dArgs<T>& args) {
  const Pool2dArgs<T> a = args;  // a local copy keeps the sizes in registers (see the top)
  for (int64_t pl = 0; pl < a.planes; ++pl) {
    const T* x = a.x + pl * a.h * a.w;
    T* y = a.out + pl * a.ho * a.wo;
    for (int64_t i = 0; i < a.ho; ++i) {
      const Window wh = window(i, a.h, a.kernel, a.stride, a.padding);
      for (int64_t j = 0; j < a.wo; ++j) {
        const Window ww = window(j, a.w, a.kernel, a.stride, a.padding);
        T sum = 0;
        for (int64_t r = wh.lo; r < wh.hi; ++r) {
          for (int64_t c = ww.lo; c < ww.hi; ++c) sum += x[r * a.w + c];
        }
        y[i * a.wo + j] = sum / static_cast<T>((wh.hi - wh.lo) * (ww.hi - ww.lo));
      }
    }
  }
}

template <class T>
void avg_pool2d_backward_naive(const Pool2dArgs<T>& args) {
  const Pool2dArgs<T> a = args;  // a local copy keeps the sizes in registers (see the top)
  std::fill(a.out, a.out + a.planes * a.h * a.w, T(0));
  for (int64_t pl = 0; pl < a.planes; ++pl) {
    T* dx = a.out + pl * a.h * a.w;
    const T* dy = a.dy + pl * a.ho * a.wo;
    for (int64_t i = 0; i < a.ho; ++i) {
      const Window wh = window(i, a.h, a.kernel, a.stride, a.padding);
      for (int64_t j = 0; j < a.wo; ++j) {
        const Window ww = window(j, a.w, a.kernel, a.stride, a.padding);
        const T g = dy[i * a.wo + j] / static_cast<T>((wh.hi - wh.lo) * (ww.hi - ww.lo));
        for (int64_t r = wh.lo; r < wh.hi; ++r) {
          for (int64_t c = ww.lo; c < ww.hi; ++c) dx[r * a.w + c] += g;
        }
      }
    }
  }
}

template <class T>
void max_pool2d_naive(const Pool2dArgs<T>& args) {
  const Pool2dArgs<T> a = args;  // a local copy keeps the sizes in registers (see the top)
  for (int64_t pl = 0; pl < a.planes; ++pl) {
    const T* x = a.x + pl * a.h * a.w;
    T* y = a.out + pl * a.ho * a.wo;
    int64_t* idx = a.index + pl * a.ho * a.wo;
    for (int64_t i = 0; i < a.ho; ++i) {
      const Window wh = window(i, a.h, a.kernel, a.stride, a.padding);
      for (int64_t j = 0; j < a.wo; ++j) {
        const Window ww = window(j, a.w, a.kernel, a.stride, a.padding);
        int64_t best = wh.lo * a.w + ww.lo;  // the window holds at least one real element
        T best_v = x[best];
        bool saw_nan = false;
        for (int64_t r = wh.lo; r < wh.hi; ++r) {
          for (int64_t c = ww.lo; c < ww.hi; ++c) {
            // "Is this the new max?" is a coin flip on real data: written as two selects the
            // compiler emits a conditional move and a max instruction instead of a branch that
            // mispredicts half the time (that branch made this loop several times slower:
            // docs/PERFORMANCE.md, "Convolution and pooling kernels").
            const int64_t pos = r * a.w + c;
            const T v = x[pos];
            const bool take = v > best_v;
            best = take ? pos : best;
            best_v = take ? v : best_v;
            saw_nan |= std::isnan(v);
          }
        }
        if (saw_nan) {  // rare: the first NaN of the window is the result
          for (int64_t r = wh.hi - 1; r >= wh.lo; --r) {
            for (int64_t c = ww.hi - 1; c >= ww.lo; --c) {
              if (std::isnan(x[r * a.w + c])) best = r * a.w + c;
            }
          }
          best_v = x[best];
        }
        y[i * a.wo + j] = best_v;
        idx[i * a.wo + j] = best;
      }
    }
  }
}

template <class T>
void max_pool2d_backward_naive(const Pool2dArgs<T>& args) {
  const Pool2dArgs<T> a = args;  // a local copy keeps the sizes in registers (see the top)
  std::fill(a.out, a.out + a.planes * a.h * a.w, T(0));
  for (int64_t pl = 0; pl < a.planes; ++pl) {
    T* dx = a.out + pl * a.h * a.w;
    const T* dy = a.dy + pl * a.ho * a.wo;
    const int64_t* idx = a.index + pl * a.ho * a.wo;
    for (int64_t k = 0; k < a.ho * a.wo; ++k) dx[idx[k]] += dy[k];
  }
}

template void max_pool2d_naive<float>(const Pool2dArgs<float>&);
template void max_pool2d_naive<double>(const Pool2dArgs<double>&);
template void max_pool2d_backward_naive<float>(const Pool2dArgs<float>&);
template void max_pool2d_backward_naive<double>(const Pool2dArgs<double>&);
template void avg_pool2d_naive<float>(const Pool2dArgs<float>&);
template void avg_pool2d_naive<double>(const Pool2dArgs<double>&);
template void avg_pool2d_backward_naive<float>(const Pool2dArgs<float>&);
template void avg_pool2d_backward_naive<double>(const Pool2dArgs<double>&);

void register_pool_naive(Registry& r) {
  r.op("max_pool2d", Device::cpu)
      .add<Pool2dArgs>("naive", VariantTag::naive, "scan each window, keep the argmax",
                       &max_pool2d_naive<float>, &max_pool2d_naive<double>);
  r.op("max_pool2d_backward", Device::cpu)
      .add<Pool2dArgs>("naive", VariantTag::naive, "dx[argmax] += dy",
                       &max_pool2d_backward_naive<float>, &max_pool2d_backward_naive<double>);
  r.op("avg_pool2d", Device::cpu)
      .add<Pool2dArgs>("naive", VariantTag::naive, "sum each window, divide by its real count",
                       &avg_pool2d_naive<float>, &avg_pool2d_naive<double>);
  r.op("avg_pool2d_backward", Device::cpu)
      .add<Pool2dArgs>("naive", VariantTag::naive, "spread dy / count over each window",
                       &avg_pool2d_backward_naive<float>, &avg_pool2d_backward_naive<double>);
}
PRISM_CPU_KERNELS(210, register_pool_naive);

}  // namespace prism::kernels::cpu
