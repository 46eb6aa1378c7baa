// max_pool2d and avg_pool2d: x [N, C, H, W] -> [N, C, Ho, Wo] over kernel x kernel windows,
// Ho = (H + 2 padding - kernel) / stride + 1 (floor), stride 0 meaning "= kernel".
//
// Padding counts as -inf for max and is left out of the average's count (so a corner window
// of a padded average divides by the real elements it covers, not by kernel^2). As in PyTorch,
// padding may be at most kernel / 2, so every window holds at least one real element.
//
// max_pool2d's kernel also writes the int64 position of each maximum; autograd keeps it, and
// max_pool2d_backward sends each output gradient to that one element. avg_pool2d_backward
// spreads each output gradient evenly over its window. Both are ops of their own (profile rows
// "max_pool2d_backward" / "avg_pool2d_backward").
//
// Cost (docs/COSTS.md): kernel^2 FLOPs per output (compares, or adds and the divide); bytes =
// x + y (+ 8 bytes of index per output for max).
#include <string>

#include "kernels/costs.h"
#include "kernels/ops/pool2d/op.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_max_pool(kernels::ops::max_pool2d),
    op_max_pool_bw(kernels::ops::max_pool2d_backward);
detail::OpHandle op_avg_pool(kernels::ops::avg_pool2d),
    op_avg_pool_bw(kernels::ops::avg_pool2d_backward);

struct PoolGeometry {
  int64_t n, c, h, w, ho, wo, kernel, stride, padding;
};

PoolGeometry check_pool(const char* op, const Tensor& x, int kernel, int stride, int padding) {
  detail::check_float(op, x);
  const std::string name = op;
  if (x.dim() != 4) {
    throw Error(name + ": input must be 4-D [N, C, H, W], got " + x.shape().str());
  }
  if (kernel < 1) {
    throw Error(name + ": kernel size must be at least 1, got " + std::to_string(kernel) +
                " (input " + x.shape().str() + ")");
  }
  if (stride < 0) {
    throw Error(name + ": stride must be at least 1 (or 0 for the kernel size), got " +
                std::to_string(stride) + " (input " + x.shape().str() + ")");
  }
  if (padding < 0 || padding > kernel / 2) {
    throw Error(name + ": padding must be between 0 and half the kernel size (" +
                std::to_string(kernel / 2) + " for kernel " + std::to_string(kernel) + "), got " +
                std::to_string(padding) + " (input " + x.shape().str() + ")");
  }
  PoolGeometry g{};
  g.n = x.shape()[0], g.c = x.shape()[1], g.h = x.shape()[2], g.w = x.shape()[3];
  g.kernel = kernel, g.stride = stride == 0 ? kernel : stride, g.padding = padding;
  if (g.kernel > g.h + 2 * g.padding || g.kernel > g.w + 2 * g.padding) {
    throw Error(name + ": kernel " + std::to_string(kernel) + "x" + std::to_string(kernel) +
                " is larger than the padded input " + std::to_string(g.h + 2 * g.padding) + "x" +
                std::to_string(g.w + 2 * g.padding) + " (input " + x.shape().str() + ", padding " +
                std::to_string(padding) + ")");
  }
  g.ho = costs::window_out_size(g.h, g.kernel, g.stride, g.padding);
  g.wo = costs::window_out_size(g.w, g.kernel, g.stride, g.padding);
  return g;
}

template <class T>
void run_pool(const kernels::KernelEntry& k, const PoolGeometry& g, const Tensor& x,
              const Tensor& dy, const Tensor& out, const Tensor& index) {
  kernels::Pool2dArgs<T> a{};
  a.x = x.defined() ? x.data<T>() : nullptr;
  a.dy = dy.defined() ? dy.data<T>() : nullptr;
  a.out = out.data<T>();
  a.index = index.defined() ? index.data<int64_t>() : nullptr;
  a.planes = g.n * g.c, a.h = g.h, a.w = g.w, a.ho = g.ho, a.wo = g.wo;
  a.kernel = g.kernel, a.stride = g.stride, a.padding = g.padding;
  k.get<kernels::Pool2dArgs, T>()(a);
}

void run_pool(const kernels::KernelEntry& k, const PoolGeometry& g, const Tensor& x,
              const Tensor& dy, const Tensor& out, const Tensor& index) {
  if (out.numel() == 0) return;
  if (out.dtype() == DType::f32)
    run_pool<float>(k, g, x, dy, out, index);
  else
    run_pool<double>(k, g, x, dy, out, index);
}

// The shared forward: y (and, for max, the argmax `index`) from x.
Tensor pool_forward(detail::OpHandle& op, const Tensor& x, const PoolGeometry& g, Tensor* index) {
  Tensor xc = x.detach().contiguous();
  const auto& k = op.kernel(x.device(), x.dtype());
  detail::OpRecordScope rec(op.name(), k.name.c_str(), x.device(), {&x}, [&] {
    return costs::pool2d(x.shape(), g.kernel, g.stride, g.padding, index != nullptr,
                         x.element_size());
  });
  const Dims out_shape{g.n, g.c, g.ho, g.wo};
  Tensor out = detail::empty_like_shape(out_shape, x.dtype(), x.device());
  if (index) *index = detail::empty_like_shape(out_shape, DType::i64, x.device());
  run_pool(k, g, xc, Tensor(), out, index ? *index : Tensor());
  return out;
}

// The shared backward: dx [N, C, H, W] from dy (and the saved argmax for max).
Tensor pool_backward(detail::OpHandle& op, const Tensor& dy0, const Dims& x_shape,
                     const PoolGeometry& g, const Tensor& index) {
  Tensor dy = dy0.contiguous();
  const auto& k = op.kernel(dy.device(), dy.dtype());
  detail::OpRecordScope rec(op.name(), k.name.c_str(), dy.device(), {&dy0}, [&] {
    return index.defined() ? costs::max_pool2d_backward(x_shape, g.kernel, g.stride, g.padding,
                                                        dy.element_size())
                           : costs::avg_pool2d_backward(x_shape, g.kernel, g.stride, g.padding,
                                                        dy.element_size());
  });
  Tensor dx = detail::empty_like_shape(x_shape, dy.dtype(), dy.device());
  run_pool(k, g, Tensor(), dy, dx, index);
  return dx;
}

}  // namespace

Tensor max_pool2d(const Tensor& x, int kernel, int stride, int padding) {
  const PoolGeometry g = check_pool(kernels::ops::max_pool2d.name, x, kernel, stride, padding);
  Tensor index;
  Tensor out = pool_forward(op_max_pool, x, g, &index);
  autograd::record(out, kernels::ops::max_pool2d.name, {&x}, {autograd::internal(index, "indices")},
                   [xs = x.shape(), g](const Tensor& dy, autograd::Grads& gr) {
                     gr.set(0, "max_pool2d.dx",
                            [&] { return pool_backward(op_max_pool_bw, dy, xs, g, gr.saved(0)); });
                   });
  return out;
}

Tensor avg_pool2d(const Tensor& x, int kernel, int stride, int padding) {
  const PoolGeometry g = check_pool(kernels::ops::avg_pool2d.name, x, kernel, stride, padding);
  Tensor out = pool_forward(op_avg_pool, x, g, nullptr);
  autograd::record(out, kernels::ops::avg_pool2d.name, {&x},
                   [xs = x.shape(), g](const Tensor& dy, autograd::Grads& gr) {
                     gr.set(0, "avg_pool2d.dx",
                            [&] { return pool_backward(op_avg_pool_bw, dy, xs, g, Tensor()); });
                   });
  return out;
}

}  // namespace prism
