// matmul_bf16: bfloat16 A @ bfloat16 B -> float32 C, summed in float32 (kernels/args.h,
// MatmulBf16Args), and the autocast form of matmul built on it (tensor/autocast.h).
//
// Shapes as matmul's: [..., m, k] @ [..., k, n] with NumPy-broadcast batch dims; operands go to
// the kernel through their strides, so transposed views cost no copy.
// Cost (docs/COSTS.md): 2 m n k FLOPs per batch entry; bytes = 2 (A + B) + 4 C.
#include <string>

#include "kernels/costs.h"
#include "kernels/ops/matmul/op.h"
#include "kernels/ops/matmul_bf16/op.h"
#include "tensor/autocast.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/layout.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_matmul_bf16(kernels::ops::matmul_bf16);

std::string shapes(const Tensor& a, const Tensor& b) {
  return a.shape().str() + " " + dtype_name(a.dtype()) + " @ " + b.shape().str() + " " +
         dtype_name(b.dtype());
}

// The GEMM itself, no autograd. Both operands bf16, at least 2-D, inner dims checked.
Tensor gemm_bf16(const Tensor& a0, const Tensor& b0) {
  const int na = a0.dim(), nb = b0.dim();
  const int64_t m = a0.shape()[na - 2], k = a0.shape()[na - 1], n = b0.shape()[nb - 1];
  Dims ba(a0.shape().data(), na - 2), bb(b0.shape().data(), nb - 2);
  Dims batch_shape = detail::broadcast_shapes(kernels::ops::matmul_bf16.name, ba, bb);
  Dims ea = batch_shape, eb = batch_shape, out_shape = batch_shape;
  ea.push_back(m), ea.push_back(k);
  eb.push_back(k), eb.push_back(n);
  out_shape.push_back(m), out_shape.push_back(n);
  Tensor a = a0.detach().expand(ea), b = b0.detach().expand(eb);
  // The registry files this op's kernels under their float32 accumulator (kernels/args.h).
  const auto& kern = op_matmul_bf16.kernel(a.device(), DType::f32);
  detail::OpRecordScope rec(kernels::ops::matmul_bf16.name, kern.name.c_str(), a.device(),
                            {&a0, &b0}, [&] { return costs::matmul_bf16(ea, eb); });
  int64_t abs = 0, bbs = 0;
  if (!detail::batch_stride(a, abs)) a = a.contiguous(), detail::batch_stride(a, abs);
  if (!detail::batch_stride(b, bbs)) b = b.contiguous(), detail::batch_stride(b, bbs);
  Tensor c = detail::empty_like_shape(out_shape, DType::f32, a.device());
  if (c.numel() == 0 || c.device() == Device::meta) return c;
  if (k == 0) {  // an empty sum is zero; kernels need not special-case it
    for (int64_t i = 0; i < c.numel(); ++i) c.data<float>()[i] = 0;
    return c;
  }
  kernels::MatmulBf16Args<float> args{};
  args.a = a.data<BFloat16>();
  args.b = b.data<BFloat16>();
  args.c = c.data<float>();
  args.batch = batch_shape.numel();
  args.m = m, args.k = k, args.n = n;
  const int ea_dim = a.dim(), eb_dim = b.dim();  // after expanding to the common batch
  args.a_bs = abs, args.a_rs = a.strides()[ea_dim - 2], args.a_cs = a.strides()[ea_dim - 1];
  args.b_bs = bbs, args.b_rs = b.strides()[eb_dim - 2], args.b_cs = b.strides()[eb_dim - 1];
  kern.get<kernels::MatmulBf16Args, float>()(args);
  return c;
}

void check_gemm_shapes(const char* op, const Tensor& a, const Tensor& b) {
  if (a.dim() < 2 || b.dim() < 2) {
    throw Error(std::string(op) + ": needs operands of at least 2 dims, got " + shapes(a, b));
  }
  if (a.shape().back() != b.shape()[b.dim() - 2]) {
    throw Error(std::string(op) + ": inner dimensions differ: " + shapes(a, b));
  }
}

// dA = g @ B^T and dB = A^T @ g for C = A @ B, as bf16 GEMMs with float32 results (g is bf16),
// each summed back over broadcast batch dims. A transposed 2-D operand (a Linear's weight.t())
// gets its gradient as the transpose of a contiguous product, as matmul's backward does.
Tensor grad_a(const Tensor& g, const Tensor& A, const Tensor& B) {
  if (detail::is_transposed(A) && g.dim() == 2) return gemm_bf16(B, g.t()).t();
  return sum_to(gemm_bf16(g, B.transpose(-1, -2)), A.shape());
}
Tensor grad_b(const Tensor& g, const Tensor& A, const Tensor& B) {
  if (detail::is_transposed(B) && g.dim() == 2) return gemm_bf16(g.t(), A).t();
  return sum_to(gemm_bf16(A.transpose(-1, -2), g), B.shape());
}

}  // namespace

Tensor matmul_bf16(const Tensor& a, const Tensor& b) {
  detail::check_defined(kernels::ops::matmul_bf16.name, a);
  detail::check_defined(kernels::ops::matmul_bf16.name, b);
  if (a.dtype() != DType::bf16 || b.dtype() != DType::bf16) {
    throw Error("matmul_bf16: needs bf16 operands, got " + shapes(a, b) +
                " (cast them, or run matmul under prism::Autocast)");
  }
  detail::check_same_device(kernels::ops::matmul_bf16.name, a, b);
  if (a.device() == Device::cuda)
    throw Error("matmul_bf16: no CUDA kernel yet (" + shapes(a, b) + ")");
  check_gemm_shapes(kernels::ops::matmul_bf16.name, a, b);
  Tensor out = gemm_bf16(a, b);
  // Used directly on bf16 tensors, the gradients must be bf16 too (an input's gradient has its
  // dtype): the float32 products are rounded once.
  autograd::record(out, kernels::ops::matmul_bf16.name, {&a, &b},
                   {autograd::input(a, 0), autograd::input(b, 1)},
                   [](const Tensor& g0, autograd::Grads& gr) {
                     const Tensor g = cast(g0, DType::bf16);
                     gr.set(0, "matmul_bf16.dA",
                            [&] { return cast(grad_a(g, gr.saved(0), gr.saved(1)), DType::bf16); });
                     gr.set(1, "matmul_bf16.dB",
                            [&] { return cast(grad_b(g, gr.saved(0), gr.saved(1)), DType::bf16); });
                   });
  return out;
}

namespace detail {

Tensor autocast_matmul(const Tensor& a, const Tensor& b) {
  // NumPy rules for vectors, as matmul: [k] is a row on the left, a column on the right.
  const Tensor a2 = a.dim() == 1 ? a.detach().unsqueeze(0) : a.detach();
  const Tensor b2 = b.dim() == 1 ? b.detach().unsqueeze(1) : b.detach();
  check_gemm_shapes(kernels::ops::matmul.name, a2, b2);
  const Tensor ab = autocast_operand(a2), bb = autocast_operand(b2);
  Tensor out = gemm_bf16(ab, bb);
  if (b.dim() == 1) out = out.squeeze(-1);
  if (a.dim() == 1) out = out.squeeze(out.dim() == 1 ? 0 : -2);
  // The bf16 copies are what backward keeps: half the bytes of the float32 inputs.
  autograd::record(
      out, kernels::ops::matmul.name, {&a, &b},
      {autograd::internal(ab, "A as bf16"), autograd::internal(bb, "B as bf16")},
      [sa = a.shape(), sb = b.shape(), a1 = a.dim() == 1, b1 = b.dim() == 1](const Tensor& g0,
                                                                             autograd::Grads& gr) {
        Tensor g = g0;
        if (b1) g = g.unsqueeze(-1);
        if (a1) g = g.unsqueeze(g.dim() == 1 ? 0 : -2);
        const Tensor gb = cast(g, DType::bf16);  // rounded once, used by both products
        gr.set(0, "matmul.dA", [&] { return grad_a(gb, gr.saved(0), gr.saved(1)).reshape(sa); });
        gr.set(1, "matmul.dB", [&] { return grad_b(gb, gr.saved(0), gr.saved(1)).reshape(sb); });
      });
  return out;
}

}  // namespace detail

}  // namespace prism
