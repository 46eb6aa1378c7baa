// Matmul, reference variant: Eigen's GEMM on strided Maps (no copies of transposed views).
//
// Eigen packs panels of A and B into cache-sized blocks and runs a SIMD register-blocked
// microkernel: the yardstick for our own optimized kernel. It uses OpenMP threads when the
// build has OpenMP and the product is large enough to pay for them (eigen_threads.h).
// Cost: 2 m n k FLOPs per batch; bytes = A + B + C.
#include <Eigen/Core>

#include "kernels/cpu/eigen_threads.h"
#include "kernels/cpu/kernel_list.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using DynStride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;

template <class T>
void matmul_eigen(const MatmulArgs<T>& a) {
  eigen_threads_for(a.m * a.n * a.k);
  for (int64_t b = 0; b < a.batch; ++b) {
    // A row-major Map's outer stride is the row stride, its inner stride the column stride.
    Eigen::Map<const RowMajor<T>, 0, DynStride> A(a.a + b * a.a_bs, a.m, a.k,
                                                  DynStride(a.a_rs, a.a_cs));
    Eigen::Map<const RowMajor<T>, 0, DynStride> B(a.b + b * a.b_bs, a.k, a.n,
                                                  DynStride(a.b_rs, a.b_cs));
    Eigen::Map<RowMajor<T>> C(a.c + b * a.m * a.n, a.m, a.n);
    C.noalias() = A * B;
  }
}

}  // namespace

void register_matmul_eigen(Registry& r) {
  r.op("matmul", Device::cpu)
      .add<MatmulArgs>("reference", VariantTag::reference, "Eigen GEMM on strided maps",
                       &matmul_eigen<float>, &matmul_eigen<double>);
}

}  // namespace prism::kernels::cpu
