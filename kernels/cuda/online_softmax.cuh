// The online max and sum of exponentials of a row, on the GPU: the statistics pass of the
// "online" softmax, log_softmax and the fused cross-entropy (kernels/ops/softmax/softmax.cu,
// kernels/ops/cross_entropy/cross_entropy.cu; the CPU version is kernels/cpu/online_softmax.h).
//
// Milakov & Gimelshein (2018): keep the sum relative to the largest value seen so far and
// rescale it when a larger one arrives,
//   m_new = max(m, x),  s = s * exp(m - m_new) + exp(x - m_new)
// so one read of the row gives m = max_j x_j and s = sum_j exp(x_j - m). Each thread of a row
// group keeps its own (m, s) over its elements; two partial results merge the same way,
//   m = max(m_a, m_b),  s = s_a exp(m_a - m) + s_b exp(m_b - m)
// which is what group_reduce (kernels/cuda/row_reduce.cuh) applies up the tree.
//
// Special values, the same as the CPU kernels give: -inf entries add exp(-inf) = 0; a row that
// is all -inf keeps m = -inf and s = 0 (its softmax is then NaN, as in every framework); a NaN
// entry makes s NaN; a +inf entry makes s NaN too (the CPU computes exp(inf - inf) for it).
#pragma once

#include <cuda_runtime.h>

#include <limits>

#include "kernels/cuda/row_reduce.cuh"
#include "kernels/ops/elementwise/math.cuh"

namespace prism::kernels::cuda {

template <class T>
struct MaxSum {
  T m;  // the largest element seen (-inf before any)
  T s;  // sum of exp(x - m) over the elements seen
};

template <class T>
__device__ MaxSum<T> shfl_down(MaxSum<T> a, int delta) {
  return {cuda::shfl_down(a.m, delta), cuda::shfl_down(a.s, delta)};
}
template <class T>
__device__ MaxSum<T> shfl_from(MaxSum<T> a, int lane) {
  return {cuda::shfl_from(a.m, lane), cuda::shfl_from(a.s, lane)};
}

template <class T>
__device__ MaxSum<T> max_sum_empty() {
  return {-std::numeric_limits<T>::infinity(), T(0)};
}

// One element into a running (m, s).
template <class T>
__device__ MaxSum<T> max_sum_add(MaxSum<T> a, T x) {
  if (x > a.m) {
    // exp(x - x) is 1 for the new maximum itself, except x = +inf, where it is NaN: the value
    // the CPU gets for such a row. (x - x is not folded to 0: nvcc keeps IEEE semantics.)
    a.s = a.s * math::dexp(a.m - x) + math::dexp(x - x);
    a.m = x;
  } else if (x != -std::numeric_limits<T>::infinity()) {
    a.s += math::dexp(x - a.m);  // x <= m, or x is NaN (then s becomes NaN)
  }
  return a;
}

// Two partial results (disjoint sets of elements) into one.
struct MaxSumMerge {
  template <class T>
  __device__ MaxSum<T> operator()(MaxSum<T> a, MaxSum<T> b) const {
    const T m = a.m > b.m ? a.m : b.m;  // m is never NaN: a NaN is never "larger"
    if (m == -std::numeric_limits<T>::infinity()) return {m, a.s + b.s};  // 0, or NaN if seen
    return {m, a.s * math::dexp(a.m - m) + b.s * math::dexp(b.m - m)};
  }
};

// The row's (m, s) for the kThreads threads of a row group: thread t takes elements t,
// t + kThreads, ... of x[j * stride], j < n; every thread gets the result.
template <int kThreads, class T>
__device__ MaxSum<T> row_max_sum(const T* x, int64_t n, int64_t stride) {
  MaxSum<T> acc = max_sum_empty<T>();
  for (int64_t j = threadIdx.x; j < n; j += kThreads) acc = max_sum_add(acc, x[j * stride]);
  return group_reduce<kThreads>(acc, MaxSumMerge{});
}

}  // namespace prism::kernels::cuda
