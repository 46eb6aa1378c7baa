// Optimizer updates on the GPU (the math is in kernels/args.h, beside SgdArgs and AdamArgs):
// in place, on contiguous buffers of `numel` elements.
//
// "fused" (tag fused): one kernel per update, one thread per element (grid-stride): read p, g
// and the state once, write p and the state once. Adam moves 7 numbers per element.
//
// "per_tensor" (tag naive): the same math as a framework without fusion runs it, one kernel
// per elementary tensor op, each a full pass over its arrays, with temporaries in the workspace
// the front end allocated (kernels/ops/optim/per_tensor.cpp lists the passes: ten for Adam with
// weight decay). About 2.9x the memory traffic of the fused kernel, plus a launch per pass.
//
// Both do the same IEEE operations in the same order as the CPU kernels, each rounded on its
// own: every product, sum, quotient and square root is written with a CUDA intrinsic that
// rounds to nearest and is never contracted into a fused multiply-add (__fmul_rn, __fadd_rn,
// ...; nvcc would otherwise turn a*b + c into one FMA, which rounds once instead of twice, the
// GPU twin of the -ffp-contract=off the CPU files are compiled with). So the two GPU variants
// and the two CPU variants all agree bit for bit.
//
// Cost: SGD 2-8 FLOPs per element over 12-20 bytes (float32), Adam 13-15 FLOPs over 28 bytes:
// memory-bound on any GPU, so the figure to watch is GB/s. `prism lab adam_update --device
// cuda` (and sgd_update) prints it; fused runs near the device's bandwidth and several times as
// fast as per_tensor (measured: docs/PERFORMANCE.md, "GPU (CUDA)").
#include <cmath>
#include <cstdint>

#include "kernels/cuda/cuda_common.h"
#include "kernels/cuda/kernel_list.h"
#include "kernels/ops/optim/args.h"

namespace prism::kernels::cuda {
namespace {

// Correctly rounded, never contracted: one IEEE operation each.
__device__ inline float mul(float a, float b) {
  return __fmul_rn(a, b);
}
__device__ inline double mul(double a, double b) {
  return __dmul_rn(a, b);
}
__device__ inline float add(float a, float b) {
  return __fadd_rn(a, b);
}
__device__ inline double add(double a, double b) {
  return __dadd_rn(a, b);
}
__device__ inline float sub(float a, float b) {
  return __fsub_rn(a, b);
}
__device__ inline double sub(double a, double b) {
  return __dsub_rn(a, b);
}
__device__ inline float div(float a, float b) {
  return __fdiv_rn(a, b);
}
__device__ inline double div(double a, double b) {
  return __ddiv_rn(a, b);
}
__device__ inline float root(float a) {
  return __fsqrt_rn(a);
}
__device__ inline double root(double a) {
  return __dsqrt_rn(a);
}

// ---- fused -----------------------------------------------------------------------------------

template <class T, bool kDecay, bool kMomentum, bool kNesterov>
__global__ void sgd_kernel(T* __restrict__ param, const T* __restrict__ grad,
                           T* __restrict__ velocity, int64_t n, T lr, T mu, T wd) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    T g = grad[i];
    if constexpr (kDecay) g = add(g, mul(wd, param[i]));  // L2 penalty wd/2 |p|^2
    if constexpr (kMomentum) {
      const T v = add(mul(mu, velocity[i]), g);
      velocity[i] = v;
      g = kNesterov ? add(g, mul(mu, v)) : v;  // Nesterov: look ahead along the new velocity
    }
    param[i] = sub(param[i], mul(lr, g));
  }
}

template <class T, bool kDecay, bool kMomentum, bool kNesterov>
void launch_sgd(const SgdArgs<T>& a) {
  sgd_kernel<T, kDecay, kMomentum, kNesterov><<<grid_for(a.numel), kBlock, 0, stream()>>>(
      a.param, a.grad, a.velocity, a.numel, static_cast<T>(a.lr), static_cast<T>(a.momentum),
      static_cast<T>(a.weight_decay));
  PRISM_CUDA_CHECK_LAUNCH("sgd_update (fused)");
}

template <class T, bool kDecay>
void sgd_with_decay(const SgdArgs<T>& a) {
  if (!a.velocity) {
    launch_sgd<T, kDecay, false, false>(a);
  } else if (a.nesterov) {
    launch_sgd<T, kDecay, true, true>(a);
  } else {
    launch_sgd<T, kDecay, true, false>(a);
  }
}

template <class T>
void sgd_fused(const SgdArgs<T>& a) {
  if (a.numel == 0) return;
  if (a.weight_decay != 0) {
    sgd_with_decay<T, true>(a);
  } else {
    sgd_with_decay<T, false>(a);
  }
}

// Adam's scalars, converted to T once on the host exactly as the CPU kernels convert them.
template <class T>
struct AdamScalars {
  T b1, one_minus_b1, b2, one_minus_b2, eps, wd, decay, step_size, bc2_sqrt;
  explicit AdamScalars(const AdamArgs<T>& a)
      : b1(static_cast<T>(a.beta1)),
        one_minus_b1(static_cast<T>(1 - a.beta1)),
        b2(static_cast<T>(a.beta2)),
        one_minus_b2(static_cast<T>(1 - a.beta2)),
        eps(static_cast<T>(a.eps)),
        wd(static_cast<T>(a.weight_decay)),
        decay(static_cast<T>(1 - a.lr * a.weight_decay)),  // AdamW's shrink factor
        step_size(static_cast<T>(a.lr / a.bias_correction1)),
        bc2_sqrt(static_cast<T>(std::sqrt(a.bias_correction2))) {}
};

template <class T, bool kL2, bool kShrink>
__global__ void adam_kernel(T* __restrict__ param, const T* __restrict__ grad,
                            T* __restrict__ m_state, T* __restrict__ v_state, int64_t n,
                            AdamScalars<T> s) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    T p = param[i];
    T g = grad[i];
    if constexpr (kL2) g = add(g, mul(s.wd, p));  // L2: through the moments
    if constexpr (kShrink) p = mul(p, s.decay);   // decoupled: the weight itself
    const T m = add(mul(s.b1, m_state[i]), mul(s.one_minus_b1, g));
    const T v = add(mul(s.b2, v_state[i]), mul(mul(s.one_minus_b2, g), g));
    m_state[i] = m;
    v_state[i] = v;
    const T denom = add(div(root(v), s.bc2_sqrt), s.eps);
    param[i] = sub(p, div(mul(s.step_size, m), denom));
  }
}

template <class T, bool kL2, bool kShrink>
void launch_adam(const AdamArgs<T>& a) {
  adam_kernel<T, kL2, kShrink><<<grid_for(a.numel), kBlock, 0, stream()>>>(
      a.param, a.grad, a.m, a.v, a.numel, AdamScalars<T>(a));
  PRISM_CUDA_CHECK_LAUNCH("adam_update (fused)");
}

template <class T>
void adam_fused(const AdamArgs<T>& a) {
  if (a.numel == 0) return;
  if (a.weight_decay == 0) {
    launch_adam<T, false, false>(a);
  } else if (a.decoupled) {
    launch_adam<T, false, true>(a);
  } else {
    launch_adam<T, true, false>(a);
  }
}

// ---- per_tensor: one kernel per elementary tensor op -----------------------------------------

// out[i] = a[i] + s * b[i]   (out may be a: an in-place op)
template <class T>
struct Axpy {
  T* out;
  const T* a;
  const T* b;
  T s;
  __device__ void operator()(int64_t i) const { out[i] = add(a[i], mul(s, b[i])); }
};
// out[i] = a[i] - s * b[i]
template <class T>
struct Axmy {
  T* out;
  const T* a;
  const T* b;
  T s;
  __device__ void operator()(int64_t i) const { out[i] = sub(a[i], mul(s, b[i])); }
};
// y[i] = s * y[i]
template <class T>
struct Scale {
  T* y;
  T s;
  __device__ void operator()(int64_t i) const { y[i] = mul(s, y[i]); }
};
// y[i] = y[i] + x[i]
template <class T>
struct AddInPlace {
  T* y;
  const T* x;
  __device__ void operator()(int64_t i) const { y[i] = add(y[i], x[i]); }
};
// out[i] = a[i] + out[i]   (the Nesterov step: g + (mu v), with mu v already in out)
template <class T>
struct AddInto {
  T* out;
  const T* a;
  __device__ void operator()(int64_t i) const { out[i] = add(a[i], out[i]); }
};
// out[i] = s * y[i]
template <class T>
struct ScaledCopy {
  T* out;
  const T* y;
  T s;
  __device__ void operator()(int64_t i) const { out[i] = mul(s, y[i]); }
};
// v[i] = v[i] + (s * g[i]) * g[i]   (addcmul)
template <class T>
struct AddScaledSquare {
  T* v;
  const T* g;
  T s;
  __device__ void operator()(int64_t i) const { v[i] = add(v[i], mul(mul(s, g[i]), g[i])); }
};
// out[i] = sqrt(v[i])
template <class T>
struct Root {
  T* out;
  const T* v;
  __device__ void operator()(int64_t i) const { out[i] = root(v[i]); }
};
// y[i] = y[i] / s
template <class T>
struct DivScalar {
  T* y;
  T s;
  __device__ void operator()(int64_t i) const { y[i] = div(y[i], s); }
};
// y[i] = y[i] + s
template <class T>
struct AddScalar {
  T* y;
  T s;
  __device__ void operator()(int64_t i) const { y[i] = add(y[i], s); }
};
// p[i] = p[i] - (s * m[i]) / d[i]   (addcdiv)
template <class T>
struct AddcDiv {
  T* p;
  const T* m;
  const T* d;
  T s;
  __device__ void operator()(int64_t i) const { p[i] = sub(p[i], div(mul(s, m[i]), d[i])); }
};

template <class F>
__global__ void each_element(int64_t n, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    f(i);
  }
}

// One pass: one kernel over every element.
template <class F>
void pass(int64_t n, const F& f, const char* name) {
  each_element<F><<<grid_for(n), kBlock, 0, stream()>>>(n, f);
  PRISM_CUDA_CHECK_LAUNCH(name);
}

// SGD: g = grad + wd p (temporary); v *= mu; v += g; step = g + mu v (temporary, Nesterov);
// p -= lr * step.
template <class T>
void sgd_per_tensor(const SgdArgs<T>& a) {
  const int64_t n = a.numel;
  if (n == 0) return;
  const char* name = "sgd_update (per_tensor)";
  const T lr = static_cast<T>(a.lr), mu = static_cast<T>(a.momentum);
  const T wd = static_cast<T>(a.weight_decay);
  T* scratch = a.workspace;
  const T* g = a.grad;
  if (a.weight_decay != 0) {
    T* gd = scratch;
    scratch += n;
    pass(n, Axpy<T>{gd, a.grad, a.param, wd}, name);
    g = gd;
  }
  const T* step = g;
  if (a.velocity) {
    pass(n, Scale<T>{a.velocity, mu}, name);
    pass(n, AddInPlace<T>{a.velocity, g}, name);
    step = a.velocity;
    if (a.nesterov) {
      T* look = scratch;
      pass(n, ScaledCopy<T>{look, a.velocity, mu}, name);
      pass(n, AddInto<T>{look, g}, name);
      step = look;
    }
  }
  pass(n, Axmy<T>{a.param, a.param, step, lr}, name);
}

template <class T>
void adam_per_tensor(const AdamArgs<T>& a) {
  const int64_t n = a.numel;
  if (n == 0) return;
  const char* name = "adam_update (per_tensor)";
  const AdamScalars<T> s(a);
  T* denom = a.workspace;
  const T* g = a.grad;
  if (a.weight_decay != 0 && !a.decoupled) {
    T* gd = a.workspace + n;
    pass(n, Axpy<T>{gd, a.grad, a.param, s.wd}, name);
    g = gd;
  }
  if (a.weight_decay != 0 && a.decoupled) pass(n, Scale<T>{a.param, s.decay}, name);
  pass(n, Scale<T>{a.m, s.b1}, name);
  pass(n, Axpy<T>{a.m, a.m, g, s.one_minus_b1}, name);
  pass(n, Scale<T>{a.v, s.b2}, name);
  pass(n, AddScaledSquare<T>{a.v, g, s.one_minus_b2}, name);
  pass(n, Root<T>{denom, a.v}, name);
  pass(n, DivScalar<T>{denom, s.bc2_sqrt}, name);
  pass(n, AddScalar<T>{denom, s.eps}, name);
  pass(n, AddcDiv<T>{a.param, a.m, denom, s.step_size}, name);
}

}  // namespace

void register_optim(Registry& r) {
  r.op("sgd_update", Device::cuda)
      .add<SgdArgs>("fused", VariantTag::fused, "one in-place kernel over param, grad, velocity",
                    &sgd_fused<float>, &sgd_fused<double>);
  r.op("sgd_update", Device::cuda)
      .add<SgdArgs>("per_tensor", VariantTag::naive,
                    "one kernel per tensor op, temporaries for g + wd p and the Nesterov step",
                    &sgd_per_tensor<float>, &sgd_per_tensor<double>);
  r.op("adam_update", Device::cuda)
      .add<AdamArgs>("fused", VariantTag::fused, "one in-place kernel over param, grad, m, v",
                     &adam_fused<float>, &adam_fused<double>);
  r.op("adam_update", Device::cuda)
      .add<AdamArgs>("per_tensor", VariantTag::naive,
                     "one kernel per tensor op (10 with decay), a temporary for the denominator",
                     &adam_per_tensor<float>, &adam_per_tensor<double>);
}
PRISM_CUDA_KERNELS(100, register_optim);

}  // namespace prism::kernels::cuda
