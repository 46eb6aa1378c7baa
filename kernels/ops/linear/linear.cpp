// linear, both CPU variants: one product with a ReLU folded into an operand and a bias or a ReLU
// mask folded into the result (kernels/args.h, LinearArgs), as the ops it replaces would run it
// (unfused) and inside the optimized matmul's blocks (fused).
//
// Why fuse at all, when the GEMM is nearly all of a linear layer's time: on one core the passes
// cost little, a few microseconds per [64, 256] layer. On two, each pass is an op below its
// grain, so it runs on one core and reads a result that both cores wrote: half of it crosses
// between the caches, serially. In the 784-256-256-10 MLP's step at batch 64 the bias adds, the
// ReLUs, their gradients and the bias-gradient sums took longer at 2 threads than at 1. Fused,
// each core applies them to the block it just computed or packed. Measured (`prism lab linear
// --sizes 64x256x256{,:dx,:dw} --threads 1,2`): at 1 thread fused and unfused are close, at 2
// threads fused scales much better in all three directions (docs/PERFORMANCE.md, "Threads
// (2026-11-25)", "The fused linear layer").
//
// unfused: the same engine (kernels/ops/matmul/engine.h) without prologue or epilogue, between
// passes:
//   1. a ReLU'd copy of each flagged operand into the workspace   (the relu op's output)
//   2. C = A @ B                                                  (matmul)
//   3. C += bias, row by row                                      (add)
//   4. C = relu'(mask) C                                          (relu_backward)
//   5. row sums of A (the bias gradient, from dW's g^T)           (sum)
// fused: all in the engine's blocks, no workspace.
// Cost (docs/COSTS.md): 2 m n k FLOPs + 1 per ReLU'd operand element + 1 per output for a bias
// and 1 for a mask + m (k - 1) for the row sums; bytes = A + B + C (+ bias + mask + sums).
#include <algorithm>
#include <stdexcept>

#include "kernels/cpu/kernel_list.h"
#include "kernels/ops/elementwise/math.h"
#include "kernels/ops/matmul/engine.h"
#include "kernels/ops/linear/args.h"

namespace prism::kernels::cpu {
namespace {

template <class T>
void linear_fused(const LinearArgs<T>& a) {
  linear_gemm(a);
}

// A contiguous rows x cols copy of a strided matrix, through math::Relu.
template <class T>
T* relu_copy(const T* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, T* dst) {
  const math::Relu relu;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = relu(src[i * rs + j * cs]);
  }
  return dst;
}

template <class T>
void linear_unfused(const LinearArgs<T>& a) {
  if (a.workspace_size < linear_workspace(a.m, a.n, a.k, a.relu_a, a.relu_b)) {
    throw std::invalid_argument("linear (unfused): workspace too small for the ReLU'd operands");
  }
  LinearArgs<T> g = a;  // the plain product
  g.relu_a = g.relu_b = false;
  g.bias = g.mask = nullptr;
  g.row_sums = nullptr;
  T* ws = a.workspace;
  if (a.relu_a) {
    g.a = relu_copy(a.a, a.m, a.k, a.a_rs, a.a_cs, ws);
    g.a_rs = a.k, g.a_cs = 1;
    ws += a.m * a.k;
  }
  if (a.relu_b) {
    g.b = relu_copy(a.b, a.k, a.n, a.b_rs, a.b_cs, ws);
    g.b_rs = a.n, g.b_cs = 1;
  }
  linear_gemm(g);
  const math::ReluBackward relu_grad;
  if (a.bias) {
    for (int64_t i = 0; i < a.m; ++i) {
      for (int64_t j = 0; j < a.n; ++j) a.c[i * a.n + j] += a.bias[j];
    }
  }
  if (a.row_sums) {  // the sum op's pass: A's rows, in order of p
    for (int64_t i = 0; i < a.m; ++i) {
      T s = 0;
      for (int64_t p = 0; p < a.k; ++p) s += g.a[i * g.a_rs + p * g.a_cs];
      a.row_sums[i] = s;
    }
  }
  if (a.mask) {
    for (int64_t i = 0; i < a.m; ++i) {
      for (int64_t j = 0; j < a.n; ++j) {
        a.c[i * a.n + j] = relu_grad(a.mask[i * a.mask_rs + j * a.mask_cs], a.c[i * a.n + j]);
      }
    }
  }
}

}  // namespace

void register_linear(Registry& r) {
  r.op("linear", Device::cpu)
      .add<LinearArgs>("unfused", VariantTag::naive,
                       "ReLU'd operand copies, the optimized GEMM, then bias, mask and row-sum "
                       "passes",
                       &linear_unfused<float>, &linear_unfused<double>);
  r.op("linear", Device::cpu)
      .add<LinearArgs>("fused", VariantTag::fused,
                       "the optimized GEMM with the ReLU on its packed operand, the bias and "
                       "mask on each finished block, row sums from the packed A",
                       &linear_fused<float>, &linear_fused<double>);
}
PRISM_CPU_KERNELS(285, register_linear);

}  // namespace prism::kernels::cpu
