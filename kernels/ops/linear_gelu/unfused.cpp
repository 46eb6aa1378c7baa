// linear_gelu, unfused variant: y = gelu(x w^T + b) the way three separate ops compute it.
//
// Idea: the chain matmul -> add -> gelu inside one kernel, pass by pass over the whole output:
//   1. z = x w^T            Eigen GEMM into the output buffer (threads for large products)
//   2. z += b               a pass over [rows, out]
//   3. y = gelu(z)          another pass, fast::Gelu (the function prism::gelu uses)
// At transformer sizes the output ([4096 x 3072] floats, 50 MB) is far larger than the caches,
// so passes 2 and 3 each stream it from and back to memory: the traffic the fused variant
// (fused.cpp) saves. With a z buffer (grad mode: backward needs gelu'(z)) the GEMM
// and the bias pass write z and the GELU pass writes y; without one, all three passes run in y.
// It already saves the chain's two intermediate allocations (the tensor-level chain makes three
// buffers, this op one).
// Cost: 2 rows out in FLOPs for the GEMM + 1 (bias) + 8 (GELU, tanh counted as 1) per output.
// Where the time goes, pass by pass, and how it changed with the vectorised tanh (the GELU pass
// was compute-bound on glibc's scalar tanhf, nearly as long as the GEMM): docs/PERFORMANCE.md,
// "Attention and linear+GELU (CPU)".
#include "kernels/cpu/eigen_threads.h"
#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/elementwise/fast.h"
#include "kernels/ops/linear_gelu/gemm.h"
#include "kernels/ops/linear_gelu/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
void linear_gelu_unfused(const LinearGeluArgs<T>& a) {
  T* z = a.z ? a.z : a.y;  // where the pre-activation lives
  const int64_t n = a.rows * a.out;
  eigen_threads_for(a.rows * a.out * a.in);
  linear_block(a, 0, a.rows, 0, a.out, z, a.out);
  if (a.bias) {
    for (int64_t r = 0; r < a.rows; ++r) {
      for (int64_t c = 0; c < a.out; ++c) z[r * a.out + c] += a.bias[c];
    }
  }
  const fast::Gelu gelu;  // the vectorised GELU prism::gelu runs (kernels/ops/elementwise/fast.h)
  for (int64_t i = 0; i < n; ++i) a.y[i] = gelu(z[i]);
}

}  // namespace

void register_linear_gelu_unfused(Registry& r) {
  r.op("linear_gelu", Device::cpu)
      .add<LinearGeluArgs>("unfused", VariantTag::naive,
                           "GEMM, then a bias pass, then a GELU pass over the whole output",
                           &linear_gelu_unfused<float>, &linear_gelu_unfused<double>);
}
PRISM_CPU_KERNELS(270, register_linear_gelu_unfused);

}  // namespace prism::kernels::cpu
