// Indexing and joining: gather, index_select, concat (and scatter_add, gather's gradient).
#include <string>

#include "kernels/ops/copy/op.h"
#include "kernels/ops/index/op.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/internal.h"
#include "tensor/layout.h"
#include "tensor/ops.h"

namespace prism {

namespace {

detail::OpHandle op_gather(kernels::ops::gather), op_scatter_add(kernels::ops::scatter_add);
detail::OpHandle op_index_select(kernels::ops::index_select), op_index_add(kernels::ops::index_add);

void check_index(const char* op, const Tensor& index) {
  detail::check_defined(op, index);
  if (index.dtype() != DType::i64) {
    throw Error(std::string(op) + ": index must be int64, got " + dtype_name(index.dtype()));
  }
}

template <class T>
void run_index_select(const kernels::KernelEntry& k, const Tensor& x, const Tensor& index,
                      const Tensor& out, int64_t outer, int64_t n, int64_t inner, int dim) {
  kernels::IndexSelectArgs<T> a{};
  a.x = x.data<T>();
  a.index = index.data<int64_t>();
  a.out = out.data<T>();
  a.outer = outer;
  a.n = n;
  a.inner = inner;
  a.count = index.numel();
  a.dim = dim;
  k.get<kernels::IndexSelectArgs, T>()(a);
}

// Splits x's shape around `dim` into [outer, n, inner].
void split3(const Dims& shape, int dim, int64_t& outer, int64_t& n, int64_t& inner) {
  outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= shape[d];
  n = shape[dim];
  for (int d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
}

}  // namespace

namespace detail {

void scatter_add_into(const Tensor& dst, int dim, const Tensor& index, const Tensor& src) {
  const auto& k = op_scatter_add.kernel(src.device(), src.dtype());
  OpRecordScope rec(
      kernels::ops::scatter_add.name, k.name.c_str(), src.device(), {&index, &src},
      [&] { return costs::scatter_add(index.numel(), src.numel(), src.element_size()); });
  Tensor s = src.contiguous();
  auto run = [&](auto tag) {
    using T = decltype(tag);
    kernels::GatherArgs<T> a{};
    a.x = s.data<T>();
    a.index = index.data<int64_t>();
    a.out = dst.data<T>();
    a.ndim = index.dim();
    a.dim = dim;
    for (int d = 0; d < index.dim(); ++d) {
      a.shape[d] = index.shape()[d];
      a.x_stride[d] = dst.strides()[d];
      a.index_stride[d] = index.strides()[d];
    }
    a.dim_size = dst.shape()[dim];
    k.get<kernels::GatherArgs, T>()(a);
  };
  if (src.dtype() == DType::f32)
    run(float{});
  else
    run(double{});
}

}  // namespace detail

Tensor gather(const Tensor& x, int dim, const Tensor& index) {
  detail::check_defined(kernels::ops::gather.name, x);
  check_index(kernels::ops::gather.name, index);
  detail::check_same_device(kernels::ops::gather.name, x, index);
  if (index.dim() != x.dim()) {
    throw Error("gather: index " + index.shape().str() + " must have as many dims as the input " +
                x.shape().str());
  }
  const int d = detail::wrap_dim(kernels::ops::gather.name, dim, x.dim());
  if (x.dim() == 0) throw Error("gather: needs at least a 1-d input");
  for (int i = 0; i < x.dim(); ++i) {
    if (i != d && index.shape()[i] > x.shape()[i]) {
      throw Error("gather: index " + index.shape().str() + " is larger than the input " +
                  x.shape().str() + " in dim " + std::to_string(i));
    }
  }
  const auto& k = op_gather.kernel(x.device(), x.dtype());
  Tensor out;
  {
    detail::OpRecordScope rec(
        kernels::ops::gather.name, k.name.c_str(), x.device(), {&x, &index},
        [&] { return costs::gather(index.numel(), index.numel(), x.element_size()); });
    out = detail::empty_like_shape(index.shape(), x.dtype(), x.device());
    auto run = [&](auto tag) {
      using T = decltype(tag);
      kernels::GatherArgs<T> a{};
      a.x = x.data<T>();
      a.index = index.data<int64_t>();
      a.out = out.data<T>();
      a.ndim = index.dim();
      a.dim = d;
      for (int i = 0; i < index.dim(); ++i) {
        a.shape[i] = index.shape()[i];
        a.x_stride[i] = x.strides()[i];
        a.index_stride[i] = index.strides()[i];
      }
      a.dim_size = x.shape()[d];
      k.get<kernels::GatherArgs, T>()(a);
    };
    visit_dtype(x.dtype(), run);
  }
  autograd::record(out, kernels::ops::gather.name, {&x}, {autograd::input(index, 1, "index")},
                   [xs = x.shape(), d](const Tensor& g, autograd::Grads& gr) {
                     gr.set(0, "gather.dx", [&] {
                       DefaultDevice on(g.device());
                       Tensor z = zeros(xs, g.dtype());
                       detail::scatter_add_into(z, d, gr.saved(0), g);
                       return z;
                     });
                   });
  return out;
}

Tensor index_select(const Tensor& x, int dim, const Tensor& index) {
  detail::check_defined(kernels::ops::index_select.name, x);
  check_index(kernels::ops::index_select.name, index);
  detail::check_same_device(kernels::ops::index_select.name, x, index);
  if (index.dim() > 1) {
    throw Error("index_select: index must be 0-d or 1-d, got " + index.shape().str());
  }
  if (x.dim() == 0) throw Error("index_select: needs at least a 1-d input");
  const int d = detail::wrap_dim(kernels::ops::index_select.name, dim, x.dim());
  int64_t outer, n, inner;
  split3(x.shape(), d, outer, n, inner);
  Dims out_shape = x.shape();
  out_shape[d] = index.numel();
  const auto& k = op_index_select.kernel(x.device(), x.dtype());
  Tensor out;
  {
    detail::OpRecordScope rec(
        kernels::ops::index_select.name, k.name.c_str(), x.device(), {&x, &index},
        [&] { return costs::gather(index.numel(), out_shape.numel(), x.element_size()); });
    Tensor xc = x.contiguous();
    Tensor ic = index.contiguous();
    out = detail::empty_like_shape(out_shape, x.dtype(), x.device());
    visit_dtype(x.dtype(),
                [&](auto v) { run_index_select<decltype(v)>(k, xc, ic, out, outer, n, inner, d); });
  }
  autograd::record(
      out, kernels::ops::index_select.name, {&x}, {autograd::input(index, 1, "index")},
      [xs = x.shape(), d](const Tensor& g, autograd::Grads& gr) {
        gr.set(0, "index_select.dx", [&] {
          const Tensor& idx = gr.saved(0);
          int64_t o, nn, in;
          split3(xs, d, o, nn, in);
          Tensor gc = g.contiguous();
          Tensor ic = idx.contiguous();
          const auto& kk = op_index_add.kernel(g.device(), g.dtype());
          detail::OpRecordScope rec(
              kernels::ops::index_add.name, kk.name.c_str(), g.device(), {&g, &idx},
              [&] { return costs::scatter_add(idx.numel(), g.numel(), g.element_size()); });
          // The rows are added into the table's .grad when it already has one (a
          // tied embedding: the LM head's GEMM wrote it first): a sparse update of
          // idx.numel() rows instead of zero-filling and then adding a whole
          // [vocab, D] table (154 MB each for GPT-2 small).
          Tensor z = gr.accumulation_target(0);
          if (!z.defined()) {
            DefaultDevice on(g.device());
            z = zeros(xs, g.dtype());
          }
          if (g.dtype() == DType::f32)
            run_index_select<float>(kk, gc, ic, z, o, nn, in, d);
          else
            run_index_select<double>(kk, gc, ic, z, o, nn, in, d);
          return z;
        });
      });
  return out;
}

Tensor concat(const std::vector<Tensor>& xs, int dim) {
  if (xs.empty()) throw Error("concat: needs at least one tensor");
  const Tensor& first = xs.front();
  detail::check_defined("concat", first);
  if (first.dim() == 0) throw Error("concat: cannot concatenate 0-d tensors; unsqueeze them first");
  const int d = detail::wrap_dim("concat", dim, first.dim());
  Dims out_shape = first.shape();
  out_shape[d] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& t = xs[i];
    detail::check_defined("concat", t);
    detail::check_same_dtype("concat", first, t);
    detail::check_same_device("concat", first, t);
    bool ok = t.dim() == first.dim();
    for (int j = 0; ok && j < t.dim(); ++j) ok = j == d || t.shape()[j] == first.shape()[j];
    if (!ok) {
      throw Error("concat: tensor " + std::to_string(i) + " has shape " + t.shape().str() +
                  ", which differs from " + first.shape().str() + " outside dim " +
                  std::to_string(d));
    }
    out_shape[d] += t.shape()[d];
  }
  Tensor out;
  {
    detail::OpRecordScope rec("concat", "", first.device(), {&first},
                              [&] { return costs::copy(out_shape.numel(), first.element_size()); });
    out = detail::empty_like_shape(out_shape, first.dtype(), first.device());
    int64_t at = 0;
    for (const Tensor& t : xs) {
      Tensor window = out.detach().narrow(d, at, t.shape()[d]);
      detail::run_copy_kernel(detail::g_copy.kernel(t.device(), t.dtype()), window, t);
      at += t.shape()[d];
    }
  }
  std::vector<int64_t> sizes;
  for (const Tensor& t : xs) sizes.push_back(t.shape()[d]);
  autograd::record(out, "concat", xs, [sizes, d](const Tensor& g, autograd::Grads& gr) {
    int64_t at = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      gr.set(static_cast<int>(i), "concat.dx", [&] { return g.narrow(d, at, sizes[i]); });
      at += sizes[i];
    }
  });
  return out;
}

}  // namespace prism
