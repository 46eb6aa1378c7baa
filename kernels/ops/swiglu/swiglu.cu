// swiglu and its gradient on the GPU (the math is in kernels/args.h beside SwiGluArgs; the CPU
// kernels, kernels/ops/swiglu/swiglu.cpp, are the baseline these are checked against).
//
// Every element is independent, so both variants use one thread per element in a grid-stride
// loop over the [rows, cols] output, thread i at (i / cols, i % cols): consecutive threads write
// consecutive addresses (coalesced) and read gate and up through their strides, coalesced too
// when the column stride is 1 (the halves of a [rows, 2 hidden] projection).
//
// "naive": the composition, one launch per elementwise op, the output buffers holding the
// intermediates. Forward: out = silu(gate), then out = out * up (two passes over DRAM, 5
// tensor-sized streams). Backward: dup = silu(gate), dup = g * dup, dgate = g * up,
// dgate = silu_backward(gate, dgate) (four launches, 10 streams).
// "fused": one launch each. Forward reads gate and up and writes out (3 streams); backward
// computes 1 + e^-gate once per element and writes dgate and dup together (5 streams).
// The expressions and their order are the CPU's (kernels/ops/elementwise/math.cuh has the
// functors). Unlike one CPU thread, where a scalar expf per element costs more than the memory
// traffic (kernels/ops/swiglu/swiglu.cpp), a GPU's exp is cheap next to DRAM, so both should be
// bandwidth-bound and fused should approach 5/3 (forward) and 2 (backward) times naive; it
// comes close forward and passes 2 backward (`prism lab swiglu --device cuda`, and
// swiglu_backward; measured: docs/PERFORMANCE.md, "GPU (CUDA)").
#include <cstdint>

#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/ops/elementwise/math.cuh"
#include "kernels/ops/swiglu/args.h"

namespace prism::kernels::cuda {
namespace {

// Offset of element (r, j) = (i / cols, i % cols) in a strided [rows, cols] view.
__device__ inline int64_t strided_at(int64_t i, int64_t cols, int64_t row_stride,
                                     int64_t col_stride) {
  return (i / cols) * row_stride + (i % cols) * col_stride;
}

// ---- forward ---------------------------------------------------------------------------------

template <class T>
__global__ void silu_of_gate(SwiGluArgs<T> a) {  // naive pass 1: out = silu(gate)
  const math::Silu silu;
  PRISM_GRID_STRIDE(i, a.rows * a.cols) {
    a.out[i] = silu(a.gate[strided_at(i, a.cols, a.gate_rs, a.gate_cs)]);
  }
}

template <class T>
__global__ void times_up(SwiGluArgs<T> a) {  // naive pass 2: out = out * up
  PRISM_GRID_STRIDE(i, a.rows * a.cols) {
    a.out[i] = a.out[i] * a.up[strided_at(i, a.cols, a.up_rs, a.up_cs)];
  }
}

template <class T>
__global__ void swiglu_fused_elements(SwiGluArgs<T> a) {
  const math::Silu silu;
  PRISM_GRID_STRIDE(i, a.rows * a.cols) {
    const T z = a.gate[strided_at(i, a.cols, a.gate_rs, a.gate_cs)];
    a.out[i] = silu(z) * a.up[strided_at(i, a.cols, a.up_rs, a.up_cs)];
  }
}

template <class T>
void swiglu_naive(const SwiGluArgs<T>& a) {
  const int64_t n = a.rows * a.cols;
  if (n == 0) return;
  silu_of_gate<T><<<grid_for(n), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("swiglu (naive, silu)");
  times_up<T><<<grid_for(n), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("swiglu (naive, times up)");
}

template <class T>
void swiglu_fused(const SwiGluArgs<T>& a) {
  const int64_t n = a.rows * a.cols;
  if (n == 0) return;
  swiglu_fused_elements<T><<<grid_for(n), kBlock, 0, stream()>>>(a);
  PRISM_CUDA_CHECK_LAUNCH("swiglu (fused)");
}

// ---- backward --------------------------------------------------------------------------------

template <class T>
__device__ T gate_at(const SwiGluBackwardArgs<T>& a, int64_t i) {
  return a.gate[strided_at(i, a.cols, a.gate_rs, a.gate_cs)];
}

template <class T>
__device__ T up_at(const SwiGluBackwardArgs<T>& a, int64_t i) {
  return a.up[strided_at(i, a.cols, a.up_rs, a.up_cs)];
}

template <class T>
__global__ void dup_silu(SwiGluBackwardArgs<T> a) {  // naive pass 1: dup = silu(gate)
  const math::Silu silu;
  PRISM_GRID_STRIDE(i, a.rows * a.cols) a.dup[i] = silu(gate_at(a, i));
}

template <class T>
__global__ void dup_times_g(SwiGluBackwardArgs<T> a) {  // naive pass 2: dup = g * dup
  PRISM_GRID_STRIDE(i, a.rows * a.cols) a.dup[i] = a.g[i] * a.dup[i];
}

template <class T>
__global__ void dgate_g_up(SwiGluBackwardArgs<T> a) {  // naive pass 3: dgate = g * up
  PRISM_GRID_STRIDE(i, a.rows * a.cols) a.dgate[i] = a.g[i] * up_at(a, i);
}

template <class T>
__global__ void dgate_silu_backward(SwiGluBackwardArgs<T> a) {  // pass 4: dgate *= silu'(gate)
  const math::SiluBackward silu_backward;
  PRISM_GRID_STRIDE(i, a.rows * a.cols) a.dgate[i] = silu_backward(gate_at(a, i), a.dgate[i]);
}

// kDgate, kDup: which gradients are written, fixed per launch so no thread branches on it.
template <class T, bool kDgate, bool kDup>
__global__ void swiglu_backward_fused_elements(SwiGluBackwardArgs<T> a) {
  PRISM_GRID_STRIDE(i, a.rows * a.cols) {
    const T z = gate_at(a, i);
    const T d = math::silu_denominator(z);  // 1 + e^-z: one exp, for both gradients
    const T g = a.g[i];
    if (kDup) a.dup[i] = g * (z / d);
    if (kDgate) {
      const T s = T(1) / d;
      a.dgate[i] = (g * up_at(a, i)) * s * (T(1) + z * (T(1) - s));
    }
  }
}

template <class T>
void swiglu_backward_naive(const SwiGluBackwardArgs<T>& a) {
  const int64_t n = a.rows * a.cols;
  if (n == 0) return;
  const unsigned grid = grid_for(n);
  if (a.dup) {
    dup_silu<T><<<grid, kBlock, 0, stream()>>>(a);
    PRISM_CUDA_CHECK_LAUNCH("swiglu_backward (naive, silu)");
    dup_times_g<T><<<grid, kBlock, 0, stream()>>>(a);
    PRISM_CUDA_CHECK_LAUNCH("swiglu_backward (naive, dup)");
  }
  if (a.dgate) {
    dgate_g_up<T><<<grid, kBlock, 0, stream()>>>(a);
    PRISM_CUDA_CHECK_LAUNCH("swiglu_backward (naive, g up)");
    dgate_silu_backward<T><<<grid, kBlock, 0, stream()>>>(a);
    PRISM_CUDA_CHECK_LAUNCH("swiglu_backward (naive, dgate)");
  }
}

template <class T>
void swiglu_backward_fused(const SwiGluBackwardArgs<T>& a) {
  const int64_t n = a.rows * a.cols;
  if (n == 0 || (!a.dgate && !a.dup)) return;
  const unsigned grid = grid_for(n);
  if (a.dgate && a.dup) {
    swiglu_backward_fused_elements<T, true, true><<<grid, kBlock, 0, stream()>>>(a);
  } else if (a.dgate) {
    swiglu_backward_fused_elements<T, true, false><<<grid, kBlock, 0, stream()>>>(a);
  } else {
    swiglu_backward_fused_elements<T, false, true><<<grid, kBlock, 0, stream()>>>(a);
  }
  PRISM_CUDA_CHECK_LAUNCH("swiglu_backward (fused)");
}

}  // namespace

void register_swiglu(Registry& r) {
  r.op("swiglu", Device::cuda)
      .add<SwiGluArgs>("fused", VariantTag::fused, "one thread per element, one launch",
                       &swiglu_fused<float>, &swiglu_fused<double>);
  r.op("swiglu", Device::cuda)
      .add<SwiGluArgs>("naive", VariantTag::naive,
                       "silu(gate) into out, then out *= up: two launches", &swiglu_naive<float>,
                       &swiglu_naive<double>);
  r.op("swiglu_backward", Device::cuda)
      .add<SwiGluBackwardArgs>("fused", VariantTag::fused,
                               "one thread per element writes dgate and dup, one launch",
                               &swiglu_backward_fused<float>, &swiglu_backward_fused<double>);
  r.op("swiglu_backward", Device::cuda)
      .add<SwiGluBackwardArgs>("naive", VariantTag::naive,
                               "the composition's backward: four launches",
                               &swiglu_backward_naive<float>, &swiglu_backward_naive<double>);
}
PRISM_CUDA_KERNELS(70, register_swiglu);

}  // namespace prism::kernels::cuda
