// Autocast: a scoped, per-thread policy under which the GEMMs run in bfloat16.
//
//   {
//     prism::Autocast bf16(DType::bf16);   // this thread, until the guard goes out of scope
//     Tensor loss = model.forward(x) ...;  // matmul, linear_gelu, conv2d: bf16 GEMMs
//     loss.backward();                     // their gradients too
//   }
//
// Under the policy, matmul (and what is built on it: Linear, attention's projections),
// linear_gelu and conv2d take float32 inputs, cast them to bfloat16 (a `cast` row each in the
// profile), run the bf16 x bf16 -> float32 GEMM (op `matmul_bf16`, fp32 accumulation) and
// return float32. Everything else (softmax, the norms, the losses, elementwise ops, optimizer
// updates) is untouched and stays float32: those are the ops whose sums or exponentials lose
// too much in 8 significant bits, and they are cheap next to the GEMMs anyway.
//
// Backward of such a GEMM, C = A B with A' = bf16(A) and B' = bf16(B) saved:
//   dA = bf16(dC) @ B'^T,  dB = A'^T @ bf16(dC)
// each a bf16 GEMM with a float32 result, handed straight to the float32 input: the float32
// master weights and the optimizer state never see a bf16 value. What backward keeps is the
// bf16 copies, half the bytes of the float32 activations.
//
// Weights are cast once per use (per forward call of the layer): casting a weight of n elements
// costs 6n bytes of traffic against the GEMM's 2 m n FLOPs, and a cache of bf16 weights would
// have to know when the optimizer changed them (once per step): not worth its complexity.
//
// CPU only: on the GPU the policy leaves ops in float32 (no bf16 GEMM there yet).
// Policies nest: Autocast(DType::f32) inside a bf16 scope turns it off for a region.
#pragma once

#include "tensor/tensor.h"

namespace prism {

class Autocast {
 public:
  // dtype: DType::bf16 (GEMMs in bfloat16) or DType::f32 (off); anything else is an Error.
  explicit Autocast(DType dtype);
  ~Autocast();
  Autocast(const Autocast&) = delete;
  Autocast& operator=(const Autocast&) = delete;

 private:
  DType previous_;
};

// The dtype the GEMMs of this thread compute in now: DType::f32 when no policy is on.
DType autocast_dtype();

namespace detail {
// Whether a GEMM on these float32 inputs runs in bfloat16 under the policy now.
bool autocast_bf16(const Tensor& a, const Tensor& b);
// matmul under the policy (matmul's front end calls it): casts, the bf16 GEMM, and a backward
// of bf16 GEMMs with float32 gradients (see above). Same shape rules as matmul.
Tensor autocast_matmul(const Tensor& a, const Tensor& b);
// conv2d under the policy (conv2d's front end calls it after its checks): casts, im2col, the
// bf16 GEMM; backward as bf16 GEMMs and col2im (tensor/ops/conv_bf16.cpp).
Tensor autocast_conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, int stride,
                       int padding);
// The bf16 copy a GEMM under the policy uses: a transposed 2-D view (a Linear's weight.t())
// is cast as the contiguous tensor it views and transposed back, so no copy is made first.
Tensor autocast_operand(const Tensor& t);
}  // namespace detail

}  // namespace prism
