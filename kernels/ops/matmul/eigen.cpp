// Matmul, reference variant: Eigen's GEMM on Maps of the operands (no copies of transposed
// views).
//
// Eigen packs panels of A and B into cache-sized blocks and runs a SIMD register-blocked
// microkernel: the yardstick for our own optimized kernel. Each operand is mapped with the
// layout it has: row-major (unit column stride), column-major (unit row stride, a transposed
// view), or fully strided. Telling Eigen about a unit stride lets it pack panels with vector
// loads; a Map with two run-time strides packs element by element (measured on the MLP's
// forward matmul on a transposed weight: docs/PERFORMANCE.md, "Matmul ladder").
// It uses OpenMP threads when the product is large enough to pay for them (eigen_threads.h).
// Cost: 2 m n k FLOPs per batch; bytes = A + B + C.
#include <Eigen/Core>

#include "kernels/cpu/eigen_threads.h"
#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/matmul/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
using RowMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using ColMajor = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using DynStride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;

// Calls f with an Eigen Map of the rows x cols matrix at p with row stride rs and column
// stride cs, typed by its layout.
template <class T, class F>
void with_map(const T* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs, F&& f) {
  if (cs == 1 || cols == 1) {
    f(Eigen::Map<const RowMajor<T>, 0, Eigen::OuterStride<>>(
        p, rows, cols, Eigen::OuterStride<>(rows == 1 ? cols : rs)));
  } else if (rs == 1 || rows == 1) {
    f(Eigen::Map<const ColMajor<T>, 0, Eigen::OuterStride<>>(
        p, rows, cols, Eigen::OuterStride<>(cols == 1 ? rows : cs)));
  } else {
    f(Eigen::Map<const RowMajor<T>, 0, DynStride>(p, rows, cols, DynStride(rs, cs)));
  }
}

template <class T>
void matmul_eigen(const MatmulArgs<T>& a) {
  eigen_threads_for(a.m * a.n * a.k);
  for (int64_t b = 0; b < a.batch; ++b) {
    Eigen::Map<RowMajor<T>> C(a.c + b * a.m * a.n, a.m, a.n);
    with_map(a.a + b * a.a_bs, a.m, a.k, a.a_rs, a.a_cs, [&](const auto& A) {
      with_map(a.b + b * a.b_bs, a.k, a.n, a.b_rs, a.b_cs,
               [&](const auto& B) { C.noalias() = A * B; });
    });
  }
}

}  // namespace

void register_matmul_eigen(Registry& r) {
  r.op("matmul", Device::cpu)
      .add<MatmulArgs>("reference", VariantTag::reference, "Eigen GEMM on layout-typed maps",
                       &matmul_eigen<float>, &matmul_eigen<double>);
}
PRISM_CPU_KERNELS(70, register_matmul_eigen);

}  // namespace prism::kernels::cpu
