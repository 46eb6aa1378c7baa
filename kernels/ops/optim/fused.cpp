// Optimizer updates, fused variant (the default): one loop over the elements, updating the
// parameter and its state in place (the math is in kernels/args.h, beside SgdArgs and
// AdamArgs).
//
// Idea: everything an update needs for element i (param, grad, momentum / moments) is at index
// i of contiguous buffers, so one pass reads each buffer once and writes param and state once:
// Adam moves 7 numbers per element (read p, g, m, v; write p, m, v). A framework that composes
// the same math from whole-tensor ops makes one pass per op and a temporary for each result
// that has nowhere else to go: kernels/ops/optim/per_tensor.cpp is that, for comparison
// (20 numbers per element for Adam without weight decay: eight passes, three of them over a
// temporary).
//
// Both variants do the same IEEE operations in the same order on the same values, so their
// results agree bit for bit (tests/kernels/optim_variants_test.cpp). Each line below is written
// in the order the per-tensor passes apply it (b1 * m, then + (1 - b1) * g, ...), and both files
// are compiled with -ffp-contract=off (kernels/CMakeLists.txt) so that neither turns a*b + c
// into a fused multiply-add, which rounds once instead of twice.
//
// Cost: SGD 2-8 FLOPs per element over 12-20 bytes (float32), Adam 13-15 FLOPs over 28 bytes:
// memory-bound on any machine, so the figure to watch is GB/s (docs/COSTS.md has the formulas;
// the measured figures, against per_tensor: docs/PERFORMANCE.md, "Fused vs unfused (CPU)").
// Before each loop was written branch-free with restrict pointers and compiled with
// -fno-math-errno it was not vectorised (sqrt's errno, aliasing), and Adam's fused loop was
// slower than the per-tensor passes (same section).
#include <cmath>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/optim/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T, bool kDecay, bool kMomentum, bool kNesterov>
void sgd_loop(const SgdArgs<T>& a) {
  const T lr = static_cast<T>(a.lr);
  const T mu = static_cast<T>(a.momentum);
  const T wd = static_cast<T>(a.weight_decay);
  T* __restrict param = a.param;
  const T* __restrict grad = a.grad;
  T* __restrict velocity = a.velocity;
  parallel_for(a.numel, kChunkSgd, [=](int64_t i0, int64_t i1) {
#pragma omp simd
    for (int64_t i = i0; i < i1; ++i) {
      T g = grad[i];
      if constexpr (kDecay) g = g + wd * param[i];  // L2 penalty wd/2 |p|^2 has gradient wd p
      if constexpr (kMomentum) {
        const T v = mu * velocity[i] + g;
        velocity[i] = v;
        g = kNesterov ? g + mu * v : v;  // Nesterov: look ahead along the new velocity
      }
      param[i] = param[i] - lr * g;
    }
  });
}

template <class T, bool kDecay>
void sgd_with_decay(const SgdArgs<T>& a) {
  if (!a.velocity) {
    sgd_loop<T, kDecay, false, false>(a);
  } else if (a.nesterov) {
    sgd_loop<T, kDecay, true, true>(a);
  } else {
    sgd_loop<T, kDecay, true, false>(a);
  }
}

template <class T>
void sgd_fused(const SgdArgs<T>& a) {
  if (a.weight_decay != 0) {
    sgd_with_decay<T, true>(a);
  } else {
    sgd_with_decay<T, false>(a);
  }
}

// One loop per weight-decay mode, so no branch is left inside the loop and the compiler
// vectorises it (with -fno-math-errno, kernels/CMakeLists.txt: sqrt need not set errno).
template <class T, bool kL2, bool kShrink>
void adam_loop(const AdamArgs<T>& a) {
  const T b1 = static_cast<T>(a.beta1), one_minus_b1 = static_cast<T>(1 - a.beta1);
  const T b2 = static_cast<T>(a.beta2), one_minus_b2 = static_cast<T>(1 - a.beta2);
  const T eps = static_cast<T>(a.eps);
  const T wd = static_cast<T>(a.weight_decay);
  const T decay = static_cast<T>(1 - a.lr * a.weight_decay);  // AdamW's shrink factor
  const T step_size = static_cast<T>(a.lr / a.bias_correction1);
  const T bc2_sqrt = static_cast<T>(std::sqrt(a.bias_correction2));
  T* __restrict param = a.param;
  const T* __restrict grad = a.grad;
  T* __restrict m_state = a.m;
  T* __restrict v_state = a.v;
  parallel_for(a.numel, kChunkOptimizer, [=](int64_t i0, int64_t i1) {
#pragma omp simd
    for (int64_t i = i0; i < i1; ++i) {
      T p = param[i];
      T g = grad[i];
      if constexpr (kL2) g = g + wd * p;     // L2: the penalty's gradient goes through the moments
      if constexpr (kShrink) p = p * decay;  // decoupled: decay the weight, not the moments
      const T m = b1 * m_state[i] + one_minus_b1 * g;
      const T v = b2 * v_state[i] + one_minus_b2 * g * g;
      m_state[i] = m;
      v_state[i] = v;
      const T denom = std::sqrt(v) / bc2_sqrt + eps;
      param[i] = p - step_size * m / denom;
    }
  });
}

template <class T>
void adam_fused(const AdamArgs<T>& a) {
  if (a.weight_decay == 0) {
    adam_loop<T, false, false>(a);
  } else if (a.decoupled) {
    adam_loop<T, false, true>(a);
  } else {
    adam_loop<T, true, false>(a);
  }
}

}  // namespace

void register_optim_fused(Registry& r) {
  r.op("sgd_update", Device::cpu)
      .add<SgdArgs>("fused", VariantTag::fused, "one in-place loop over param, grad, velocity",
                    &sgd_fused<float>, &sgd_fused<double>);
  r.op("adam_update", Device::cpu)
      .add<AdamArgs>("fused", VariantTag::fused, "one in-place loop over param, grad, m, v",
                     &adam_fused<float>, &adam_fused<double>);
}
PRISM_CPU_KERNELS(230, register_optim_fused);

}  // namespace prism::kernels::cpu
