// conv2d under the bf16 autocast policy (tensor/autocast.h): im2col, then the bf16 GEMM.
//
//   xb = bf16(x), wb = bf16(weight)                     two `cast` rows
//   patches[n] = im2col(xb[n])   [K, P]                 K = C kh kw, P = Ho Wo (an `im2col` row)
//   y[n] = wb [O, K] @ patches[n] + bias                 one batched `matmul_bf16`, float32 sums
// Backward, with gb = bf16(dy):
//   dx = col2im(wb^T @ gb[n])                             matmul_bf16, then `col2im` (float32 adds)
//   dw = sum_n gb[n] @ patches[n]^T                       patches recomputed from the saved xb
//   db = sum of dy over N, H, W                           float32, as without the policy
// Backward keeps xb and wb (2 bytes an element), not the patches (kh kw times larger): the
// unfolding is recomputed, as the fused float32 kernels do (kernels/ops/conv2d/im2col_gemm.cpp).
#include "kernels/costs.h"
#include "kernels/ops/conv2d/op.h"
#include "tensor/autocast.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_im2col(kernels::ops::im2col);
detail::OpHandle op_col2im(kernels::ops::col2im);

struct ConvShape {
  int64_t n, c, h, w, o, kh, kw, ho, wo, stride, padding;
  int64_t k() const { return c * kh * kw; }
  int64_t p() const { return ho * wo; }
};

template <class T>
kernels::Conv2dArgs<T> conv_args(const ConvShape& s) {
  kernels::Conv2dArgs<T> a{};
  a.n = s.n, a.c = s.c, a.h = s.h, a.w = s.w;
  a.o = s.o, a.kh = s.kh, a.kw = s.kw, a.ho = s.ho, a.wo = s.wo;
  a.stride = s.stride, a.padding = s.padding;
  return a;
}

// [N, C, H, W] (contiguous, float32 or bf16) -> patches [N, K, P] in the same dtype.
Tensor unfold(const Tensor& x, const ConvShape& s) {
  const auto& k = op_im2col.kernel(x.device(), x.dtype());
  detail::OpRecordScope rec(kernels::ops::im2col.name, k.name.c_str(), x.device(), {&x}, [&] {
    return costs::im2col(s.n, s.k(), s.p(), x.numel(), x.element_size());
  });
  Tensor out = detail::empty_like_shape(Dims{s.n, s.k(), s.p()}, x.dtype(), x.device());
  if (out.numel() == 0 || out.device() == Device::meta) return out;
  if (x.dtype() == DType::bf16) {
    auto a = conv_args<BFloat16>(s);
    a.x = x.data<BFloat16>(), a.out = out.data<BFloat16>();
    k.get<kernels::Conv2dArgs, BFloat16>()(a);
  } else {
    auto a = conv_args<float>(s);
    a.x = x.data<float>(), a.out = out.data<float>();
    k.get<kernels::Conv2dArgs, float>()(a);
  }
  return out;
}

// Patch gradients [N, K, P] (float32) -> dx [N, C, H, W].
Tensor fold(const Tensor& dcols0, const ConvShape& s) {
  const Tensor dcols = dcols0.contiguous();
  const auto& k = op_col2im.kernel(dcols.device(), DType::f32);
  detail::OpRecordScope rec(
      kernels::ops::col2im.name, k.name.c_str(), dcols.device(), {&dcols},
      [&] { return costs::col2im(s.n, s.k(), s.p(), s.n * s.c * s.h * s.w, 4); });
  Tensor dx = detail::empty_like_shape(Dims{s.n, s.c, s.h, s.w}, DType::f32, dcols.device());
  if (dx.numel() == 0 || dx.device() == Device::meta) return dx;
  auto a = conv_args<float>(s);
  a.dy = dcols.data<float>(), a.out = dx.data<float>();
  k.get<kernels::Conv2dArgs, float>()(a);
  return dx;
}

}  // namespace

namespace detail {

Tensor autocast_conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, int stride,
                       int padding) {
  ConvShape s{};
  s.n = x.shape()[0], s.c = x.shape()[1], s.h = x.shape()[2], s.w = x.shape()[3];
  s.o = weight.shape()[0], s.kh = weight.shape()[2], s.kw = weight.shape()[3];
  s.stride = stride, s.padding = padding;
  s.ho = costs::window_out_size(s.h, s.kh, stride, padding);
  s.wo = costs::window_out_size(s.w, s.kw, stride, padding);
  const Tensor xb = cast(x.detach(), DType::bf16);       // contiguous
  const Tensor wb = cast(weight.detach(), DType::bf16);  // contiguous [O, C, kh, kw]
  Tensor out;
  {
    Tensor patches = unfold(xb, s);  // freed once the product is made
    out = matmul_bf16(wb.reshape({s.o, s.k()}), patches).reshape({s.n, s.o, s.ho, s.wo});
  }
  if (bias.defined()) out = add(out, bias.detach().reshape({1, s.o, 1, 1}));
  // dx needs the weight and dw the input: keep each only if the other needs a gradient.
  const Tensor saved_x = weight.requires_grad() ? xb : Tensor();
  const Tensor saved_w = x.requires_grad() ? wb : Tensor();
  autograd::record(
      out, kernels::ops::conv2d.name, {&x, &weight, &bias},
      {autograd::internal(saved_x, "input as bf16"), autograd::internal(saved_w, "weight as bf16")},
      [s, ws = weight.shape()](const Tensor& dy, autograd::Grads& gr) {
        const Tensor gb = cast(dy.contiguous(), DType::bf16).reshape({s.n, s.o, s.p()});
        gr.set(0, "conv2d.dx", [&] {
          // W^T [K, O] @ dy[n] [O, P] for every image, then each patch element home.
          return fold(matmul_bf16(gr.saved(1).reshape({s.o, s.k()}).t(), gb), s);
        });
        gr.set(1, "conv2d.dw", [&] {
          const Tensor patches = unfold(gr.saved(0), s);
          return sum(matmul_bf16(gb, patches.transpose(-1, -2)), {0}).reshape(ws);
        });
        gr.set(2, "conv2d.db", [&] { return sum(sum(dy, {2, 3}), {0}); });
      });
  return out;
}

}  // namespace detail

}  // namespace prism
