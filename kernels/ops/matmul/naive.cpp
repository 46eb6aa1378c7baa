// Matmul, naive variant: the textbook triple loop, C[i][j] = sum_p A[i][p] * B[p][j].
//
// Idea: the clearest correct loop, the lesson's starting point. The inner loop walks B down a
// column (stride n for a row-major B), touching a new cache line for every multiply-add once B
// is larger than the cache, which is why it reaches only a few GFLOP/s (see docs/PERFORMANCE.md
// and `prism lab matmul`).
// Cost: 2 m n k FLOPs (m n k multiply-adds) per batch; bytes = A + B + C.
#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/matmul/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
void matmul_naive(const MatmulArgs<T>& a) {
  for (int64_t b = 0; b < a.batch; ++b) {
    const T* A = a.a + b * a.a_bs;
    const T* B = a.b + b * a.b_bs;
    T* C = a.c + b * a.m * a.n;
    for (int64_t i = 0; i < a.m; ++i) {
      for (int64_t j = 0; j < a.n; ++j) {
        T acc = 0;
        for (int64_t p = 0; p < a.k; ++p)
          acc += A[i * a.a_rs + p * a.a_cs] * B[p * a.b_rs + j * a.b_cs];
        C[i * a.n + j] = acc;
      }
    }
  }
}

}  // namespace

void register_matmul_naive(Registry& r) {
  r.op("matmul", Device::cpu)
      .add<MatmulArgs>("naive", VariantTag::naive, "ijk triple loop", &matmul_naive<float>,
                       &matmul_naive<double>);
}
PRISM_CPU_KERNELS(60, register_matmul_naive);

}  // namespace prism::kernels::cpu
