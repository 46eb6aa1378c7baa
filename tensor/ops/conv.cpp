// conv2d: x [N, C, H, W] (*) weight [O, C, kh, kw] (+ bias [O]) -> y [N, O, Ho, Wo], with
// Ho = (H + 2 padding - kh) / stride + 1 and Wo likewise (kernels/args.h, Conv2dArgs, has the
// sum). Like every framework's "convolution", it is a cross-correlation: the kernel is not
// flipped.
//
// Kernels want contiguous NCHW buffers, so a strided x, weight or bias is copied first (a
// `contiguous` row in the profile, before the conv2d row). Variants other than naive get a
// scratch buffer (im2col's patch matrix), allocated inside the record as a temporary: the
// profile's allocation columns show what im2col trades for speed.
//
// Backward is two ops of its own, so the profile shows the input's and the weight's gradients
// as separate rows: conv2d_backward_input (dx, "conv2d.dx") and conv2d_backward_weight (dw,
// "conv2d.dw"), each with the forward's multiply-adds. The bias gradient is sum(dy) over
// N, H, W: two "sum" rows ("conv2d.db"), over H, W and then over N.
//
// Cost (docs/COSTS.md): 2 N O Ho Wo C kh kw FLOPs (+ N O Ho Wo for the bias add), half as
// many MACs without the bias; bytes = x + weight (+ bias) + y.
#include <omp.h>

#include <algorithm>
#include <string>

#include "kernels/costs.h"
#include "kernels/ops/conv2d/op.h"
#include "tensor/autocast.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_conv2d(kernels::ops::conv2d);
detail::OpHandle op_conv2d_bw_input(kernels::ops::conv2d_backward_input);
detail::OpHandle op_conv2d_bw_weight(kernels::ops::conv2d_backward_weight);

// Sizes of one convolution, shared by the forward and both gradients.
struct Geometry {
  int64_t n, c, h, w, o, kh, kw, ho, wo, stride, padding;
};

Geometry geometry(const Dims& x, const Dims& weight, int64_t stride, int64_t padding) {
  Geometry g{};
  g.n = x[0], g.c = x[1], g.h = x[2], g.w = x[3];
  g.o = weight[0], g.kh = weight[2], g.kw = weight[3];
  g.stride = stride, g.padding = padding;
  g.ho = costs::window_out_size(g.h, g.kh, stride, padding);
  g.wo = costs::window_out_size(g.w, g.kw, stride, padding);
  return g;
}

std::string both(const Tensor& x, const Tensor& weight) {
  return "input " + x.shape().str() + ", weight " + weight.shape().str();
}

void check_conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, int stride,
                  int padding) {
  const char* op = kernels::ops::conv2d.name;
  detail::check_float(op, x);
  detail::check_float(op, weight);
  detail::check_same_dtype(op, x, weight);
  detail::check_same_device(op, x, weight);
  if (x.dim() != 4) {
    throw Error("conv2d: input must be 4-D [N, C, H, W], got " + x.shape().str());
  }
  if (weight.dim() != 4) {
    throw Error("conv2d: weight must be 4-D [O, C, kh, kw], got " + weight.shape().str());
  }
  if (weight.shape()[1] != x.shape()[1]) {
    throw Error("conv2d: input has " + std::to_string(x.shape()[1]) +
                " channels but the weight expects " + std::to_string(weight.shape()[1]) + " (" +
                both(x, weight) + ")");
  }
  if (bias.defined()) {
    detail::check_float(op, bias);
    detail::check_same_dtype(op, x, bias);
    detail::check_same_device(op, x, bias);
    if (bias.dim() != 1 || bias.shape()[0] != weight.shape()[0]) {
      throw Error("conv2d: bias must be 1-D [" + std::to_string(weight.shape()[0]) +
                  "] (one per output channel of weight " + weight.shape().str() + "), got " +
                  bias.shape().str());
    }
  }
  if (stride < 1) {
    throw Error("conv2d: stride must be at least 1, got " + std::to_string(stride) + " (" +
                both(x, weight) + ")");
  }
  if (padding < 0) {
    throw Error("conv2d: padding must be at least 0, got " + std::to_string(padding) + " (" +
                both(x, weight) + ")");
  }
  const int64_t kh = weight.shape()[2], kw = weight.shape()[3];
  if (kh == 0 || kw == 0)
    throw Error("conv2d: weight has an empty kernel: " + weight.shape().str());
  const int64_t ph = x.shape()[2] + 2 * int64_t{padding}, pw = x.shape()[3] + 2 * int64_t{padding};
  if (kh > ph || kw > pw) {
    throw Error("conv2d: kernel " + std::to_string(kh) + "x" + std::to_string(kw) +
                " is larger than the padded input " + std::to_string(ph) + "x" +
                std::to_string(pw) + " (" + both(x, weight) + ", padding " +
                std::to_string(padding) + ")");
  }
}

// Runs one of the three conv kernels. Null pointers are the inputs that op does not read.
template <class T>
void run_conv(const kernels::KernelEntry& k, const Geometry& g, const Tensor& x,
              const Tensor& weight, const Tensor& bias, const Tensor& dy, const Tensor& out,
              const Tensor& workspace) {
  kernels::Conv2dArgs<T> a{};
  a.x = x.defined() ? x.data<T>() : nullptr;
  a.weight = weight.defined() ? weight.data<T>() : nullptr;
  a.bias = bias.defined() ? bias.data<T>() : nullptr;
  a.dy = dy.defined() ? dy.data<T>() : nullptr;
  a.out = out.data<T>();
  a.workspace = workspace.defined() ? workspace.data<T>() : nullptr;
  a.workspace_size = workspace.defined() ? workspace.numel() : 0;
  a.n = g.n, a.c = g.c, a.h = g.h, a.w = g.w;
  a.o = g.o, a.kh = g.kh, a.kw = g.kw;
  a.ho = g.ho, a.wo = g.wo;
  a.stride = g.stride, a.padding = g.padding;
  k.get<kernels::Conv2dArgs, T>()(a);
}

// Elements of scratch for a non-naive variant. On the GPU, patch matrices for a chunk of images
// per GEMM, to fill its SMs (kernels/ops/conv2d/im2col_gemm.cu): as many as fit in 2^25 elements
// (128 MB in float32), at least one. On the CPU, one image's patch matrix per thread that will
// run (and dw's partial sums), as kernels/args.h's conv_im2col_workspace says.
int64_t workspace_elements(const Geometry& g, Device dev, bool weight_grad) {
  const int64_t per = g.c * g.kh * g.kw * g.ho * g.wo;
  if (dev == Device::cuda) {
    return per * std::clamp<int64_t>((int64_t{1} << 25) / std::max<int64_t>(1, per), 1,
                                     std::max<int64_t>(g.n, 1));
  }
  const int64_t chunks = kernels::conv_chunks(g.n, g.o * per, weight_grad).count;
  const int64_t workers = omp_in_parallel() ? 1 : std::min<int64_t>(omp_get_max_threads(), chunks);
  // Patch matrices even for a pointwise conv, which needs none: Conv2dArgs promises every
  // variant (a learner's too) at least one image's patches.
  return kernels::conv_im2col_workspace(g.n, g.c, g.kh, g.kw, g.ho, g.wo, g.o, false, weight_grad,
                                        std::max<int64_t>(workers, 1));
}

// Allocates the output, the scratch a non-naive variant may use (tagged temporary; on the meta
// device, the scratch of the variant the CPU would run), and runs the kernel k of `op`. Call
// inside the op's record.
Tensor conv_call(detail::OpHandle& op, const kernels::KernelEntry& k, const Geometry& g,
                 const Dims& out_shape, DType dt, Device dev, const Tensor& x, const Tensor& weight,
                 const Tensor& bias, const Tensor& dy) {
  Tensor out = detail::empty_like_shape(out_shape, dt, dev);
  if (out.numel() == 0) return out;
  Tensor workspace;
  const bool weight_grad = !weight.defined();  // conv2d_backward_weight reads x and dy only
  const int64_t scratch = workspace_elements(g, dev, weight_grad);
  if (op.planned(k, dt).tag != kernels::VariantTag::naive && scratch > 0) {
    AllocRole role(MemRole::temporary);
    workspace = detail::empty_like_shape(Dims{scratch}, dt, dev);
  }
  if (dt == DType::f32)
    run_conv<float>(k, g, x, weight, bias, dy, out, workspace);
  else
    run_conv<double>(k, g, x, weight, bias, dy, out, workspace);
  return out;
}

// dx [N, C, H, W] from dy and the forward's weight (contiguous).
Tensor conv2d_backward_input(const Tensor& dy0, const Tensor& weight, const Dims& x_shape,
                             const Geometry& g) {
  Tensor dy = dy0.contiguous();
  const auto& k = op_conv2d_bw_input.kernel(dy.device(), dy.dtype());
  detail::OpRecordScope rec(op_conv2d_bw_input.name(), k.name.c_str(), dy.device(), {&dy0, &weight},
                            [&] {
                              return costs::conv2d_backward_input(x_shape, weight.shape(), g.stride,
                                                                  g.padding, dy.element_size());
                            });
  return conv_call(op_conv2d_bw_input, k, g, x_shape, dy.dtype(), dy.device(), Tensor(), weight,
                   Tensor(), dy);
}

// dw [O, C, kh, kw] from dy and the forward's input (contiguous).
Tensor conv2d_backward_weight(const Tensor& dy0, const Tensor& x, const Dims& w_shape,
                              const Geometry& g) {
  Tensor dy = dy0.contiguous();
  const auto& k = op_conv2d_bw_weight.kernel(dy.device(), dy.dtype());
  detail::OpRecordScope rec(op_conv2d_bw_weight.name(), k.name.c_str(), dy.device(), {&dy0, &x},
                            [&] {
                              return costs::conv2d_backward_weight(x.shape(), w_shape, g.stride,
                                                                   g.padding, dy.element_size());
                            });
  return conv_call(op_conv2d_bw_weight, k, g, w_shape, dy.dtype(), dy.device(), x, Tensor(),
                   Tensor(), dy);
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, int stride, int padding) {
  check_conv2d(x, weight, bias, stride, padding);
  // Under prism::Autocast(DType::bf16): im2col and the bf16 GEMM (tensor/ops/conv_bf16.cpp).
  if (detail::autocast_bf16(x, weight)) {
    return detail::autocast_conv2d(x, weight, bias, stride, padding);
  }
  // The kernels read contiguous buffers; a view is copied here (its own "contiguous" row).
  Tensor xc = x.detach().contiguous();
  Tensor wc = weight.detach().contiguous();
  Tensor bc = bias.defined() ? bias.detach().contiguous() : Tensor();
  const Geometry g = geometry(x.shape(), weight.shape(), stride, padding);
  const auto& k = op_conv2d.kernel(x.device(), x.dtype());
  Tensor out;
  {
    detail::OpRecordScope rec(op_conv2d.name(), k.name.c_str(), x.device(), {&x, &weight, &bias},
                              [&] {
                                return costs::conv2d(x.shape(), weight.shape(), bias.defined(),
                                                     stride, padding, x.element_size());
                              });
    out = conv_call(op_conv2d, k, g, Dims{g.n, g.o, g.ho, g.wo}, x.dtype(), x.device(), xc, wc, bc,
                    Tensor());
  }
  // dx needs the weight and dw needs the input: keep each only if the other needs a gradient
  // (the first layer of a network never keeps its weight for a dx nobody asked for).
  Tensor saved_x = weight.requires_grad() ? xc : Tensor();
  Tensor saved_w = x.requires_grad() ? wc : Tensor();
  autograd::record(
      out, kernels::ops::conv2d.name, {&x, &weight, &bias},
      {autograd::input(saved_x, 0), autograd::input(saved_w, 1)},
      [xs = x.shape(), ws = weight.shape(), g](const Tensor& dy, autograd::Grads& gr) {
        gr.set(0, "conv2d.dx", [&] { return conv2d_backward_input(dy, gr.saved(1), xs, g); });
        gr.set(1, "conv2d.dw", [&] { return conv2d_backward_weight(dy, gr.saved(0), ws, g); });
        // Summing H, W first reads dy in memory order; sum over {0, 2, 3} at once would
        // first copy dy to [O, N, H, W] order (3-4x slower for a LeNet conv).
        gr.set(2, "conv2d.db", [&] { return sum(sum(dy, {2, 3}), {0}); });
      });
  return out;
}

}  // namespace prism
