// matmul: 2-D, batched with NumPy-broadcast batch dims, and 1-D vectors (promoted, then the
// added dim removed). Strided operands go to the kernel as they are: a transposed view costs
// no copy, which is what backward relies on (dA = g @ B^T, dB = A^T @ g).
//
// Cost (DESIGN.md): 2 m n k FLOPs per batch entry, m n k MACs; bytes = A + B + C.
#include <string>

#include "kernels/costs.h"
#include "kernels/gpu_runtime.h"
#include "kernels/ops/matmul/op.h"
#include "tensor/autocast.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/layout.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_matmul(kernels::ops::matmul);

template <class T>
void run_matmul(const kernels::KernelEntry& k, const Tensor& a, const Tensor& b, const Tensor& c,
                int64_t batch, int64_t abs, int64_t bbs) {
  kernels::MatmulArgs<T> args{};
  const int na = a.dim(), nb = b.dim();
  args.a = a.data<T>();
  args.b = b.data<T>();
  args.c = c.data<T>();
  args.batch = batch;
  args.m = a.shape()[na - 2];
  args.k = a.shape()[na - 1];
  args.n = b.shape()[nb - 1];
  args.a_bs = abs;
  args.a_rs = a.strides()[na - 2];
  args.a_cs = a.strides()[na - 1];
  args.b_bs = bbs;
  args.b_rs = b.strides()[nb - 2];
  args.b_cs = b.strides()[nb - 1];
  k.get<kernels::MatmulArgs, T>()(args);
}

// Both operands at least 2-D; returns [batch..., m, n].
Tensor matmul_nd(const Tensor& a0, const Tensor& b0) {
  const int na = a0.dim(), nb = b0.dim();
  const int64_t m = a0.shape()[na - 2], k = a0.shape()[na - 1];
  const int64_t k2 = b0.shape()[nb - 2], n = b0.shape()[nb - 1];
  if (k != k2) {
    throw Error("matmul: inner dimensions differ: " + a0.shape().str() + " @ " + b0.shape().str());
  }
  // Broadcast the batch dims.
  Dims ba(a0.shape().data(), na - 2), bb(b0.shape().data(), nb - 2);
  Dims batch_shape = detail::broadcast_shapes(kernels::ops::matmul.name, ba, bb);
  Dims ea = batch_shape, eb = batch_shape;
  ea.push_back(m), ea.push_back(k);
  eb.push_back(k), eb.push_back(n);
  Tensor a = a0.detach().expand(ea), b = b0.detach().expand(eb);
  const auto& kern = op_matmul.kernel(a.device(), a.dtype());
  Dims out_shape = batch_shape;
  out_shape.push_back(m), out_shape.push_back(n);
  detail::OpRecordScope rec(
      kernels::ops::matmul.name, kern.name.c_str(), a.device(), {&a0, &b0},
      [&] { return costs::matmul(a0.shape(), b0.shape(), a0.element_size()); });
  int64_t abs = 0, bbs = 0;
  if (!detail::batch_stride(a, abs)) a = a.contiguous(), detail::batch_stride(a, abs);
  if (!detail::batch_stride(b, bbs)) b = b.contiguous(), detail::batch_stride(b, bbs);
  Tensor c = detail::empty_like_shape(out_shape, a.dtype(), a.device());
  const int64_t batch = batch_shape.numel();
  if (c.numel() > 0 && c.device() != Device::meta) {
    if (k == 0 && c.device() == Device::cuda) {
      // An empty sum is zero; kernels need not special-case it (on the GPU: a device memset).
      void* p = a.dtype() == DType::f32 ? static_cast<void*>(c.data<float>())
                                        : static_cast<void*>(c.data<double>());
      kernels::gpu::memset_zero(p, static_cast<size_t>(c.nbytes()));
    } else if (k == 0) {
      // An empty sum is zero; kernels need not special-case it.
      for (int64_t i = 0; i < c.numel(); ++i) {
        if (a.dtype() == DType::f32)
          c.data<float>()[i] = 0;
        else
          c.data<double>()[i] = 0;
      }
    } else if (a.dtype() == DType::f32) {
      run_matmul<float>(kern, a, b, c, batch, abs, bbs);
    } else {
      run_matmul<double>(kern, a, b, c, batch, abs, bbs);
    }
  }
  return c;
}

// Whether the dims before `t`'s last merge into one run of rows with a single stride, so that
// t.reshape({-1, k}) is a view (a contiguous activation [B, T, C] is; a permuted one may not be).
bool rows_merge(const Tensor& t) {
  Dims shape(t.shape().data(), t.dim() - 1), strides(t.strides().data(), t.dim() - 1);
  return detail::make_layout(shape, strides).ndim <= 1;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  detail::check_float(kernels::ops::matmul.name, a);
  detail::check_float(kernels::ops::matmul.name, b);
  detail::check_same_dtype(kernels::ops::matmul.name, a, b);
  detail::check_same_device(kernels::ops::matmul.name, a, b);
  if (a.dim() == 0 || b.dim() == 0) {
    throw Error("matmul: needs tensors of at least 1 dim, got " + a.shape().str() + " @ " +
                b.shape().str() + " (use mul for scalars)");
  }
  const int64_t ka = a.shape().back(), kb = b.dim() == 1 ? b.shape()[0] : b.shape()[b.dim() - 2];
  if (ka != kb) {
    throw Error("matmul: inner dimensions differ: " + a.shape().str() + " @ " + b.shape().str());
  }
  // Under prism::Autocast(DType::bf16): the bf16 GEMM with float32 results (tensor/autocast.h).
  if (detail::autocast_bf16(a, b)) return detail::autocast_matmul(a, b);
  // [batch..., m, k] @ [k, n], a layer's activations times its weight: the batch dims are only
  // more rows, so the product is one GEMM of batch*m rows (the weight packed once, not once per
  // batch entry). Its backward then is one GEMM each as well: dB = A^T g sums over all the rows
  // in its k loop, where the batched form made one [k, n] product per batch entry and a separate
  // sum over them (and handed a transposed weight's gradient back strided, which the leaf then
  // had to copy). The reshapes are views, recorded like any other, so gradients flow through.
  // (k = 0 stays batched: reshape cannot infer the rows of a [-1, 0] view.)
  if (b.dim() == 2 && a.dim() >= 3 && ka > 0 && rows_merge(a)) {
    Dims out_shape(a.shape().data(), a.dim() - 1);
    out_shape.push_back(b.shape()[1]);
    return matmul(a.reshape({-1, ka}), b).reshape(out_shape);
  }
  // NumPy rules for vectors: [k] is a row on the left, a column on the right.
  Tensor a2 = a.dim() == 1 ? a.detach().unsqueeze(0) : a.detach();
  Tensor b2 = b.dim() == 1 ? b.detach().unsqueeze(1) : b.detach();
  Tensor out = matmul_nd(a2, b2);
  if (b.dim() == 1) out = out.squeeze(-1);
  if (a.dim() == 1) out = out.squeeze(out.dim() == 1 ? 0 : -2);
  // dA = g @ B^T and dB = A^T @ g, each summed back over broadcast batch dims. Vectors are
  // handled by giving g the promoted 2-D shape again.
  autograd::record(out, kernels::ops::matmul.name, {&a, &b},
                   {autograd::input(a, 0), autograd::input(b, 1)},
                   [](const Tensor& g0, autograd::Grads& gr) {
                     const Tensor& sa = gr.saved(0);
                     const Tensor& sb = gr.saved(1);
                     Tensor A = sa.dim() == 1 ? sa.unsqueeze(0) : sa;
                     Tensor B = sb.dim() == 1 ? sb.unsqueeze(1) : sb;
                     Tensor g = g0;
                     if (sb.dim() == 1) g = g.unsqueeze(-1);
                     if (sa.dim() == 1) g = g.unsqueeze(g.dim() == 1 ? 0 : -2);
                     // A gradient is made in its operand's layout: for a transposed view (a Linear
                     // layer's weight.t()), dB = (g^T A)^T is computed as a contiguous g^T A and
                     // handed back transposed, so the transpose's own backward turns it into a
                     // plain contiguous gradient again and the leaf keeps it without a copy.
                     gr.set(0, "matmul.dA", [&] {
                       if (detail::is_transposed(A) && A.dim() == 2 && g.dim() == 2)
                         return matmul(B, g.t()).t().reshape(sa.shape());
                       return sum_to(matmul(g, B.transpose(-1, -2)), A.shape()).reshape(sa.shape());
                     });
                     gr.set(1, "matmul.dB", [&] {
                       if (detail::is_transposed(B) && B.dim() == 2 && g.dim() == 2)
                         return matmul(g.t(), A).t().reshape(sb.shape());
                       return sum_to(matmul(A.transpose(-1, -2), g), B.shape()).reshape(sb.shape());
                     });
                   });
  return out;
}

}  // namespace prism
