// Reductions: sum, mean, max, argmax over any set of dims, with keepdim.
//
// Every reduction runs as "reduce each row of a 2-D view [rows, cols]": the kept dims are
// moved to the front and the reduced dims to the back (a free permute), and each group must
// merge into one strided dim. When it cannot (say, reducing dims 0 and 2 of a 3-d tensor), the
// input is copied with contiguous() first, and the profile shows that copy.
//
// Gradients: sum spreads g back over the reduced dims (a broadcast view, no copy); mean also
// divides by the count; max sends g to the position of the maximum only.
#include <algorithm>
#include <string>

#include "kernels/costs.h"
#include "kernels/gpu_runtime.h"
#include "kernels/ops/reduce/op.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/internal.h"
#include "tensor/layout.h"
#include "tensor/ops.h"

namespace prism {

namespace {

using detail::OpHandle;
OpHandle op_sum(kernels::ops::sum), op_mean(kernels::ops::mean), op_max(kernels::ops::max),
    op_argmax(kernels::ops::argmax);

struct Plan {
  Tensor view;  // x with kept dims first, reduced dims last (maybe a contiguous copy)
  int64_t rows = 1, cols = 1, row_stride = 1, col_stride = 1;
  Dims out_shape;   // without the reduced dims
  Dims keep_shape;  // reduced dims kept with size 1
};

Plan plan_reduce(const char* op, const Tensor& x, const std::vector<int>& dims_in) {
  const int nd = x.dim();
  bool reduced[Dims::kMax] = {};
  if (dims_in.empty()) {
    for (int d = 0; d < nd; ++d) reduced[d] = true;
  }
  for (int d : dims_in) {
    int w = detail::wrap_dim(op, d, nd);
    if (nd > 0 && reduced[w])
      throw Error(std::string(op) + ": dim " + std::to_string(d) + " appears twice");
    if (nd > 0) reduced[w] = true;
  }
  Plan p;
  Dims order;
  int nkept = 0;
  for (int d = 0; d < nd; ++d) {
    if (!reduced[d]) {
      order.push_back(d);
      p.out_shape.push_back(x.shape()[d]);
      p.keep_shape.push_back(x.shape()[d]);
      ++nkept;
    } else {
      p.keep_shape.push_back(1);
    }
  }
  for (int d = 0; d < nd; ++d) {
    if (reduced[d]) order.push_back(d);
  }
  Tensor v = x.detach().permute(order);
  if (!detail::as_2d(v, nkept, p.rows, p.row_stride, p.cols, p.col_stride)) {
    v = v.contiguous();
    detail::as_2d(v, nkept, p.rows, p.row_stride, p.cols, p.col_stride);
  }
  p.view = v;
  return p;
}

template <class T>
void run_reduce(const kernels::KernelEntry& k, const Plan& p, const Tensor& out, int64_t* index) {
  kernels::ReduceArgs<T> a{};
  a.x = p.view.data<T>();
  a.rows = p.rows;
  a.cols = p.cols;
  a.row_stride = p.row_stride;
  a.col_stride = p.col_stride;
  a.out = out.defined() ? out.data<T>() : nullptr;
  a.index = index;
  k.get<kernels::ReduceArgs, T>()(a);
}

// Runs the reduction op; returns values (undefined for argmax) and, if asked, indices.
Tensor reduce_forward(OpHandle& op, const Tensor& x, const Plan& p, bool keepdim, bool want_values,
                      Tensor* indices) {
  const auto& k = op.kernel(x.device(), x.dtype());
  const Dims& shape = keepdim ? p.keep_shape : p.out_shape;
  detail::OpRecordScope rec(op.name(), k.name.c_str(), x.device(), {&x}, [&] {
    if (&op == &op_mean) return costs::mean(x.numel(), shape.numel(), x.element_size());
    const int64_t out_bytes = (want_values ? x.element_size() : 0) + (indices ? 8 : 0);
    return costs::reduce(x.numel(), shape.numel(), x.element_size(), out_bytes);
  });
  Tensor out = want_values ? detail::empty_like_shape(shape, x.dtype(), x.device()) : Tensor();
  int64_t* idx = nullptr;
  if (indices) {
    *indices = detail::empty_like_shape(shape, DType::i64, x.device());
    idx = indices->data<int64_t>();
  }
  if (x.numel() == 0) {
    // Only sum gets here with no elements (mean, max and argmax refuse empty input first): an
    // empty sum is 0, as in NumPy. Kernels are never handed zero-length rows (Eigen's strided
    // maps of them crashed).
    if (out.defined() && out.numel() > 0 && x.device() == Device::cpu) {
      if (out.dtype() == DType::f32)
        std::fill_n(out.data<float>(), out.numel(), 0.0f);
      else
        std::fill_n(out.data<double>(), out.numel(), 0.0);
    } else if (out.defined() && out.numel() > 0 && x.device() == Device::cuda) {
      // All-zero bits are 0.0 in IEEE float32 and float64.
      kernels::gpu::memset_zero(out.storage()->data(), static_cast<size_t>(out.nbytes()));
    }
    return out;
  }
  if (x.dtype() == DType::f32)
    run_reduce<float>(k, p, out, idx);
  else
    run_reduce<double>(k, p, out, idx);
  return out;
}

void check_nonempty(const char* op, const Tensor& x, const Plan& p) {
  if (p.cols == 0 || x.numel() == 0) {
    throw Error(std::string(op) + ": cannot reduce an empty tensor " + x.shape().str() +
                " (the result has no defined value)");
  }
}

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int>& dims, bool keepdim) {
  detail::check_float(kernels::ops::sum.name, x);
  Plan p = plan_reduce(kernels::ops::sum.name, x, dims);
  Tensor out = reduce_forward(op_sum, x, p, keepdim, true, nullptr);
  autograd::record(out, kernels::ops::sum.name, {&x},
                   [ks = p.keep_shape, xs = x.shape()](const Tensor& g, autograd::Grads& gr) {
                     gr.set(0, "sum.dx", [&] { return g.reshape(ks).expand(xs); });
                   });
  return out;
}

Tensor mean(const Tensor& x, const std::vector<int>& dims, bool keepdim) {
  detail::check_float(kernels::ops::mean.name, x);
  Plan p = plan_reduce(kernels::ops::mean.name, x, dims);
  check_nonempty(kernels::ops::mean.name, x, p);
  Tensor out = reduce_forward(op_mean, x, p, keepdim, true, nullptr);
  autograd::record(
      out, kernels::ops::mean.name, {&x},
      [ks = p.keep_shape, xs = x.shape(), n = p.cols](const Tensor& g, autograd::Grads& gr) {
        gr.set(0, "mean.dx", [&] { return (g / static_cast<double>(n)).reshape(ks).expand(xs); });
      });
  return out;
}

Tensor max(const Tensor& x, int dim, bool keepdim) {
  detail::check_float(kernels::ops::max.name, x);
  Plan p = plan_reduce(kernels::ops::max.name, x, {dim});
  check_nonempty(kernels::ops::max.name, x, p);
  Tensor idx;
  Tensor out = reduce_forward(op_max, x, p, keepdim, true, &idx);
  const int d = detail::wrap_dim(kernels::ops::max.name, dim, x.dim());
  autograd::record(out, kernels::ops::max.name, {&x}, {autograd::internal(idx, "indices")},
                   [ks = p.keep_shape, xs = x.shape(), d](const Tensor& g, autograd::Grads& gr) {
                     gr.set(0, "max.dx", [&] {
                       DefaultDevice on(g.device());
                       Tensor z = zeros(xs, g.dtype());
                       if (xs.size() == 0) return add(z, g.reshape(xs));
                       detail::scatter_add_into(z, d, gr.saved(0).reshape(ks), g.reshape(ks));
                       return z;
                     });
                   });
  return out;
}

Tensor max(const Tensor& x) {
  detail::check_float(kernels::ops::max.name, x);
  return max(x.reshape({-1}), 0, false);
}

Tensor argmax(const Tensor& x, int dim, bool keepdim) {
  detail::check_float(kernels::ops::argmax.name, x);
  Plan p = plan_reduce(kernels::ops::argmax.name, x, {dim});
  check_nonempty(kernels::ops::argmax.name, x, p);
  Tensor idx;
  reduce_forward(op_argmax, x, p, keepdim, false, &idx);
  return idx;
}

Tensor argmax(const Tensor& x) {
  detail::check_float(kernels::ops::argmax.name, x);
  return argmax(x.reshape({-1}), 0, false);
}

Tensor sum_to(const Tensor& x, const Dims& shape) {
  if (x.shape() == shape) return x;
  const int extra = x.dim() - shape.size();
  if (extra < 0) {
    throw Error("sum_to: cannot sum " + x.shape().str() + " to the larger rank " + shape.str());
  }
  std::vector<int> dims;
  for (int d = 0; d < x.dim(); ++d) {
    if (d < extra) {
      dims.push_back(d);
    } else if (shape[d - extra] == 1 && x.shape()[d] != 1) {
      dims.push_back(d);
    } else if (shape[d - extra] != x.shape()[d]) {
      throw Error("sum_to: " + x.shape().str() + " does not broadcast from " + shape.str());
    }
  }
  if (dims.empty()) return x.reshape(shape);
  return sum(x, dims, true).reshape(shape);
}

}  // namespace prism
