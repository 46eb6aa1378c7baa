// Exercise 12, a reference solution: one loop over the elements, reading p, g, m and v once and
// writing p, m and v once (7 floats of memory traffic per element, the least an in-place update
// can move), 8 elements at a time.
//
// The three weight-decay modes are template choices, so the loop has no branch, and the double
// hyperparameters become float constants once, before it. The loop is written with
// std::experimental::simd (the C++ Parallelism TS 2, in libstdc++ since GCC 11): a plain loop
// calling std::sqrt is not vectorised by GCC, because sqrt of a negative number must set errno,
// and that possible library call is control flow the vectoriser refuses (prism's own kernels
// are compiled with -fno-math-errno, which this file is not: slow/adamw_scalar_sqrt.cpp is that
// plain loop, and README.md has both timings). stdx::sqrt is the vector instruction (vsqrtps);
// v is never negative, so it gives the same result.
#include <cmath>
#include <cstdint>

#if __has_include(<experimental/simd>)
#include <experimental/simd>
#define ADAMW_HAS_SIMD 1
#endif

#include "kernels/ops/optim/args.h"
#include "kernels/registry.h"

using prism::kernels::AdamArgs;

namespace {

// The per-step constants, in float.
struct Constants {
  float b1, one_minus_b1, b2, one_minus_b2, eps, wd, shrink, step, sqrt_bc2;
};

Constants constants(const AdamArgs<float>& a) {
  Constants c;
  c.b1 = static_cast<float>(a.beta1);
  c.one_minus_b1 = static_cast<float>(1 - a.beta1);
  c.b2 = static_cast<float>(a.beta2);
  c.one_minus_b2 = static_cast<float>(1 - a.beta2);
  c.eps = static_cast<float>(a.eps);
  c.wd = static_cast<float>(a.weight_decay);
  c.shrink = static_cast<float>(1 - a.lr * a.weight_decay);  // AdamW: p (1 - lr wd)
  // lr m_hat / (sqrt(v_hat) + eps) = (lr / bc1) m / (sqrt(v) / sqrt(bc2) + eps): the two bias
  // corrections become one factor and one divisor, computed once in double.
  c.step = static_cast<float>(a.lr / a.bias_correction1);
  c.sqrt_bc2 = static_cast<float>(std::sqrt(a.bias_correction2));
  return c;
}

// One element's update, or one vector's: T is float or a simd of floats (whose sqrt is found by
// argument-dependent lookup).
template <bool kL2, bool kDecoupled, class T>
void update(T& p, T g, T& m, T& v, const Constants& c) {
  using std::sqrt;
  if constexpr (kL2) g = g + c.wd * p;
  if constexpr (kDecoupled) p = p * c.shrink;
  m = c.b1 * m + c.one_minus_b1 * g;
  v = c.b2 * v + c.one_minus_b2 * g * g;
  p = p - c.step * m / (sqrt(v) / c.sqrt_bc2 + c.eps);
}

template <bool kL2, bool kDecoupled>
void adam_loop(const AdamArgs<float>& a) {
  const Constants c = constants(a);
  int64_t i = 0;
#ifdef ADAMW_HAS_SIMD
  namespace stdx = std::experimental;
  // 8 floats: one AVX register, the width GCC prefers at -march=native on this machine (the
  // width prism's fused loop gets too). (stdx::native_simd would be 16 wide with AVX-512, and
  // its sqrt trips a false -Wmaybe-uninitialized inside GCC 12's AVX-512 header.)
  using V = stdx::simd<float, stdx::simd_abi::deduce_t<float, 8>>;
  constexpr int64_t kWidth = static_cast<int64_t>(V::size());
  for (; i + kWidth <= a.numel; i += kWidth) {
    V p(a.param + i, stdx::element_aligned), g(a.grad + i, stdx::element_aligned);
    V m(a.m + i, stdx::element_aligned), v(a.v + i, stdx::element_aligned);
    update<kL2, kDecoupled>(p, g, m, v, c);
    p.copy_to(a.param + i, stdx::element_aligned);
    m.copy_to(a.m + i, stdx::element_aligned);
    v.copy_to(a.v + i, stdx::element_aligned);
  }
#endif
  for (; i < a.numel; ++i) update<kL2, kDecoupled>(a.param[i], a.grad[i], a.m[i], a.v[i], c);
}

}  // namespace

void my_adamw(const AdamArgs<float>& a) {
  if (a.weight_decay == 0) {
    adam_loop<false, false>(a);
  } else if (a.decoupled) {
    adam_loop<false, true>(a);
  } else {
    adam_loop<true, false>(a);
  }
}

PRISM_REGISTER_KERNEL(adam_update, my_adamw);
