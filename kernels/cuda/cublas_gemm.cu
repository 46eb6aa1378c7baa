// The row-major, strided GEMM on cuBLAS (see cublas_gemm.h for the layout mapping).
#include <mutex>
#include <optional>
#include <string>

#include "kernels/cuda/cublas_gemm.h"

namespace prism::kernels::cuda {

cublasHandle_t cublas_handle() {
  static std::once_flag once;
  static cublasHandle_t handle = nullptr;
  std::call_once(once, [] {
    PRISM_CUBLAS_CHECK(cublasCreate(&handle));
    PRISM_CUBLAS_CHECK(cublasSetStream(handle, stream()));
  });
  return handle;
}

void check_cublas(cublasStatus_t status, const char* what, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error(std::string("cuBLAS error in ") + what + " (" + file + ":" + std::to_string(line) +
              "): " + cublasGetStatusName(status));
}

namespace {

// dst[b, r, c] = src[b bs + r rs + c cs]: a strided operand made contiguous [batch, rows, cols].
template <class T>
__global__ void pack_strided(const T* __restrict__ src, T* __restrict__ dst, int64_t batch,
                             int64_t rows, int64_t cols, int64_t bs, int64_t rs, int64_t cs) {
  const int64_t total = batch * rows * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = i % cols, r = (i / cols) % rows, b = i / (cols * rows);
    dst[i] = src[b * bs + r * rs + c * cs];
  }
}

// C_b = beta C_b over the m x n elements of each batch entry (row stride ldc, batch stride
// c_bs): the product with an empty inner dimension, as BLAS defines it. With beta == 0 the
// elements are set to 0 without being read (C may hold garbage or NaN).
template <class T>
__global__ void scale_c_kernel(T* __restrict__ c, int64_t batch, int64_t m, int64_t n, int64_t ldc,
                               int64_t c_bs, T beta) {
  const int64_t total = batch * m * n;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total;
       e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t j = e % n, i = (e / n) % m, b = e / (n * m);
    T* p = c + b * c_bs + i * ldc + j;
    *p = beta == T(0) ? T(0) : beta * *p;
  }
}

// How cuBLAS sees an operand X [rows, cols]: it wants op(M) = X^T (see the header).
struct CublasView {
  bool ok = false;
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 1;
};

CublasView view_of(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  CublasView v;
  // A stride along a dim of size 1 is never used, so it may be anything; cuBLAS only insists
  // that ld covers the stored matrix's leading extent.
  const int64_t need_n = cols > 1 ? cols : 1, need_t = rows > 1 ? rows : 1;
  if (cs == 1 || cols == 1) {  // X^T is column-major [cols, rows] with ld = rs
    const int64_t ld = rows == 1 ? need_n : rs;
    if (ld >= need_n) return {true, CUBLAS_OP_N, ld};
  }
  if (rs == 1 || rows == 1) {  // X is column-major [rows, cols] with ld = cs: op = T
    const int64_t ld = cols == 1 ? need_t : cs;
    if (ld >= need_t) return {true, CUBLAS_OP_T, ld};
  }
  return v;
}

cublasStatus_t gemm_call(cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                         int64_t k, const float* alpha, const float* a, int64_t lda, int64_t sa,
                         const float* b, int64_t ldb, int64_t sb, const float* beta, float* c,
                         int64_t ldc, int64_t sc, int64_t batch) {
  return cublasSgemmStridedBatched_64(cublas_handle(), ta, tb, m, n, k, alpha, a, lda, sa, b, ldb,
                                      sb, beta, c, ldc, sc, batch);
}
cublasStatus_t gemm_call(cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n,
                         int64_t k, const double* alpha, const double* a, int64_t lda, int64_t sa,
                         const double* b, int64_t ldb, int64_t sb, const double* beta, double* c,
                         int64_t ldc, int64_t sc, int64_t batch) {
  return cublasDgemmStridedBatched_64(cublas_handle(), ta, tb, m, n, k, alpha, a, lda, sa, b, ldb,
                                      sb, beta, c, ldc, sc, batch);
}

// The operand as cuBLAS can read it: itself, or a contiguous copy in `scratch` (a broadcast
// batch, bs == 0, is copied once and stays broadcast).
template <class T>
GemmOperand<T> usable(GemmOperand<T> x, int64_t batch, int64_t rows, int64_t cols,
                      std::optional<DeviceBuffer>& scratch, CublasView& v) {
  v = view_of(rows, cols, x.rs, x.cs);
  if (v.ok) return x;
  const int64_t copies = x.bs == 0 ? 1 : batch;
  const int64_t total = copies * rows * cols;
  scratch.emplace(static_cast<size_t>(total) * sizeof(T));
  T* dst = scratch->as<T>();
  pack_strided<T>
      <<<grid_for(total), kBlock, 0, stream()>>>(x.p, dst, copies, rows, cols, x.bs, x.rs, x.cs);
  PRISM_CUDA_CHECK_LAUNCH("pack_strided (gemm operand made contiguous)");
  GemmOperand<T> packed{dst, cols, 1, x.bs == 0 ? 0 : rows * cols};
  v = view_of(rows, cols, packed.rs, packed.cs);
  return packed;
}

}  // namespace

template <class T>
void gemm(int64_t batch, int64_t m, int64_t n, int64_t k, T alpha, GemmOperand<T> a,
          GemmOperand<T> b, T beta, T* c, int64_t ldc, int64_t c_bs) {
  if (batch <= 0 || m <= 0 || n <= 0) return;
  if (k <= 0) {
    // An empty sum. Not handed to cuBLAS: an [m, 0] operand has no valid leading dimension
    // (its row stride is 0), and what cuBLAS does with k == 0 is not documented.
    scale_c_kernel<T>
        <<<grid_for(batch * m * n), kBlock, 0, stream()>>>(c, batch, m, n, ldc, c_bs, beta);
    PRISM_CUDA_CHECK_LAUNCH("scale_c_kernel (gemm with k == 0)");
    return;
  }
  std::optional<DeviceBuffer> a_copy, b_copy;  // only for operands cuBLAS cannot read
  CublasView va, vb;
  const GemmOperand<T> A = usable(a, batch, m, k, a_copy, va);
  const GemmOperand<T> B = usable(b, batch, k, n, b_copy, vb);
  // C^T [n, m] = op(B-as-stored) [n, k] x op(A-as-stored) [k, m].
  PRISM_CUBLAS_CHECK(gemm_call(vb.op, va.op, n, m, k, &alpha, B.p, vb.ld, B.bs, A.p, va.ld, A.bs,
                               &beta, c, ldc, c_bs, batch));
}

template void gemm<float>(int64_t, int64_t, int64_t, int64_t, float, GemmOperand<float>,
                          GemmOperand<float>, float, float*, int64_t, int64_t);
template void gemm<double>(int64_t, int64_t, int64_t, int64_t, double, GemmOperand<double>,
                           GemmOperand<double>, double, double*, int64_t, int64_t);

}  // namespace prism::kernels::cuda
