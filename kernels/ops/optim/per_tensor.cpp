// Optimizer updates, "per_tensor" variant (tag naive): the same math as the fused loop
// (kernels/ops/optim/fused.cpp), done the way a framework without fusion does it: one full
// pass over the arrays per elementary tensor op, each reading and writing whole arrays, with a
// temporary array for every intermediate that is not state. For Adam (PyTorch's
// single-tensor, for-each-free path is this sequence of in-place tensor ops):
//
//   g     = grad + wd * p           (Adam's L2 decay only)       temporary, read 2 write 1
//   p    *= 1 - lr wd               (AdamW's decay only)         read 1 write 1
//   m    *= b1                                                   read 1 write 1
//   m    += (1 - b1) * g                                         read 2 write 1
//   v    *= b2                                                   read 1 write 1
//   v    += (1 - b2) * g * g        (addcmul)                    read 2 write 1
//   denom = sqrt(v)                                              temporary, read 1 write 1
//   denom /= sqrt(1 - b2^t)                                      read 1 write 1
//   denom += eps                                                 read 1 write 1
//   p    -= (lr / (1 - b1^t)) * m / denom   (addcdiv)            read 3 write 1
//
// Without weight decay that is 20 array accesses per element where the fused loop makes 7
// (read p, g, m, v; write p, m, v): about 2.9x the memory traffic, which for a memory-bound
// update is about the time it takes. The temporaries live in the workspace the front end
// allocated (args.h, adam_per_tensor_workspace), so the profile's allocation columns show them.
//
// Each pass applies its op to values rounded exactly as the fused loop rounds them, so the two
// variants agree bit for bit (both files are compiled with -ffp-contract=off; see
// kernels/ops/optim/fused.cpp).
//
// Threads: every pass is its own parallel_for (kernels/cpu/parallel.h) in chunks of
// kChunkElementwise (65536) elements: a pass does one or two FLOPs an element, like add, whose
// measured crossover that chunk is half of (docs/PERFORMANCE.md, "Threads (2026-11-25)").
// Splitting each pass, not the whole sequence chunk by chunk, is what keeps this variant
// unfused: a chunk taken through all ten passes would stay in L1 and cost the fused loop's
// traffic. So at 2 threads the comparison with the fused loop is still fusion alone, not fusion
// plus threads; for that reason this variant, though tagged naive (the op's unfused baseline),
// is threaded, unlike the project's other naive kernels. Elements are independent, so the bits
// are the same at any thread count.
//
// Measured, Adam's time against the fused loop's follows its traffic, while SGD with momentum,
// weight decay and Nesterov loses more than its 3.2x traffic, because each step also allocates
// two array-sized temporaries, fresh pages the kernel must fault in (docs/PERFORMANCE.md,
// "Fused vs unfused (CPU)").
#include <cmath>

#include "kernels/cpu/kernel_list.h"
#include "kernels/cpu/parallel.h"
#include "kernels/ops/optim/args.h"

namespace prism::kernels::cpu {
namespace {

// One whole-array pass of an elementary op, f(i) for every i in [0, n): the pass is cut into
// chunks of kChunkElementwise elements over the threads, as an ATen tensor op splits its loop, and
// the next pass starts only when every thread has finished this one (the region's join), so
// each pass still streams whole arrays. Elements are independent: the bits do not depend on the
// thread count.
template <class F>
void pass(int64_t n, F&& f) {
  parallel_for(n, kChunkElementwise, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) f(i);
  });
}

// SGD: g = grad + wd p (temporary); v *= mu; v += g; step = g + mu v (temporary, Nesterov);
// p -= lr * step.
template <class T>
void sgd_per_tensor(const SgdArgs<T>& a) {
  const int64_t n = a.numel;
  const T lr = static_cast<T>(a.lr);
  const T mu = static_cast<T>(a.momentum);
  const T wd = static_cast<T>(a.weight_decay);
  T* scratch = a.workspace;
  T* p = a.param;
  const T* grad = a.grad;
  const T* g = grad;
  if (a.weight_decay != 0) {
    T* gd = scratch;
    scratch += n;
    pass(n, [=](int64_t i) { gd[i] = grad[i] + wd * p[i]; });
    g = gd;
  }
  const T* step = g;
  if (a.velocity) {
    T* v = a.velocity;
    pass(n, [=](int64_t i) { v[i] = mu * v[i]; });
    pass(n, [=](int64_t i) { v[i] = v[i] + g[i]; });
    step = v;
    if (a.nesterov) {
      T* look = scratch;
      pass(n, [=](int64_t i) { look[i] = mu * v[i]; });
      pass(n, [=](int64_t i) { look[i] = g[i] + look[i]; });
      step = look;
    }
  }
  pass(n, [=](int64_t i) { p[i] = p[i] - lr * step[i]; });
}

template <class T>
void adam_per_tensor(const AdamArgs<T>& a) {
  const int64_t n = a.numel;
  const T b1 = static_cast<T>(a.beta1), one_minus_b1 = static_cast<T>(1 - a.beta1);
  const T b2 = static_cast<T>(a.beta2), one_minus_b2 = static_cast<T>(1 - a.beta2);
  const T eps = static_cast<T>(a.eps);
  const T wd = static_cast<T>(a.weight_decay);
  const T decay = static_cast<T>(1 - a.lr * a.weight_decay);
  const T step_size = static_cast<T>(a.lr / a.bias_correction1);
  const T bc2_sqrt = static_cast<T>(std::sqrt(a.bias_correction2));
  T* p = a.param;
  T* m = a.m;
  T* v = a.v;
  T* denom = a.workspace;
  const T* grad = a.grad;
  const T* g = grad;
  if (a.weight_decay != 0 && !a.decoupled) {
    T* gd = a.workspace + n;
    pass(n, [=](int64_t i) { gd[i] = grad[i] + wd * p[i]; });
    g = gd;
  }
  if (a.weight_decay != 0 && a.decoupled) {
    pass(n, [=](int64_t i) { p[i] = p[i] * decay; });
  }
  pass(n, [=](int64_t i) { m[i] = b1 * m[i]; });
  pass(n, [=](int64_t i) { m[i] = m[i] + one_minus_b1 * g[i]; });
  pass(n, [=](int64_t i) { v[i] = b2 * v[i]; });
  pass(n, [=](int64_t i) { v[i] = v[i] + one_minus_b2 * g[i] * g[i]; });
  pass(n, [=](int64_t i) { denom[i] = std::sqrt(v[i]); });
  pass(n, [=](int64_t i) { denom[i] = denom[i] / bc2_sqrt; });
  pass(n, [=](int64_t i) { denom[i] = denom[i] + eps; });
  pass(n, [=](int64_t i) { p[i] = p[i] - step_size * m[i] / denom[i]; });
}

}  // namespace

void register_optim_per_tensor(Registry& r) {
  r.op("sgd_update", Device::cpu)
      .add<SgdArgs>("per_tensor", VariantTag::naive,
                    "one pass per tensor op, temporaries for g + wd p and the Nesterov step",
                    &sgd_per_tensor<float>, &sgd_per_tensor<double>);
  r.op("adam_update", Device::cpu)
      .add<AdamArgs>("per_tensor", VariantTag::naive,
                     "one pass per tensor op (10 with decay), a temporary for the denominator",
                     &adam_per_tensor<float>, &adam_per_tensor<double>);
}
PRISM_CPU_KERNELS(240, register_optim_per_tensor);

}  // namespace prism::kernels::cpu
