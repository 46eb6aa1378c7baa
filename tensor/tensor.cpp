#include "tensor/tensor.h"

#include <numeric>
#include <string>

#include "tensor/autograd/node.h"
#include "tensor/internal.h"
#include "tensor/layout.h"
#include "tensor/ops.h"

namespace prism {

Dims contiguous_strides(const Dims& shape) {
  Dims s = shape;
  int64_t acc = 1;
  for (int i = shape.size() - 1; i >= 0; --i) {
    s[i] = acc;
    // Shapes reach here checked (checked_shape_size) or as views of tensors that exist; the
    // check stays because an overflow here would be undefined behaviour, not just a bad size.
    if (__builtin_mul_overflow(acc, std::max<int64_t>(shape[i], 1), &acc)) {
      throw Error("shape " + shape.str() + " is too large: its strides overflow int64");
    }
  }
  return s;
}

TensorImpl& Tensor::impl() const {
  if (!impl_) throw Error("use of an undefined tensor");
  return *impl_;
}

namespace {
// A dim that must exist. (wrap_dim lets a 0-d tensor take dim 0 or -1, which suits reductions
// over "all of it", but a 0-d tensor has no size to read and no dim to slice.)
int existing_dim(const char* op, int d, int ndim) {
  if (ndim == 0) throw Error(std::string(op) + ": a 0-d tensor has no dim " + std::to_string(d));
  return detail::wrap_dim(op, d, ndim);
}
}  // namespace

int64_t Tensor::size(int d) const {
  return shape()[existing_dim("size", d, dim())];
}

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;  // no elements, so none out of order (whatever the strides)
  int64_t expected = 1;
  for (int i = dim() - 1; i >= 0; --i) {
    if (shape()[i] != 1 && strides()[i] != expected) return false;
    expected *= shape()[i];
  }
  return true;
}

namespace detail {
int64_t element_offset(const Tensor& t, int64_t flat) {
  if (t.device() != Device::cpu) {
    throw Error(std::string("reading elements of a ") + device_name(t.device()) +
                " tensor: copy it to the cpu first");
  }
  int64_t off = t.offset();
  for (int d = t.dim() - 1; d >= 0; --d) {
    int64_t n = t.shape()[d];
    off += (flat % n) * t.strides()[d];
    flat /= n;
  }
  return off;
}
}  // namespace detail

double Tensor::at(std::initializer_list<int64_t> index) const {
  if (static_cast<int>(index.size()) != dim()) {
    throw Error("at: " + std::to_string(index.size()) + " indices for a " + std::to_string(dim()) +
                "-d tensor " + shape().str());
  }
  int64_t flat = 0;
  int d = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= shape()[d]) {
      throw Error("at: index " + std::to_string(i) + " out of range for dim " + std::to_string(d) +
                  " of " + shape().str());
    }
    flat = flat * shape()[d] + i;
    ++d;
  }
  return detail::read_element(*this, flat);
}

// ---- views ---------------------------------------------------------------------------------

namespace {

// A new impl over the same storage with the given geometry; the caller records autograd.
Tensor make_view(const Tensor& base, const Dims& shape, const Dims& strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = base.storage();
  impl->shape = shape;
  impl->strides = strides;
  impl->offset = offset;
  impl->dtype = base.dtype();
  return Tensor(std::move(impl));
}

// Resolves one -1 entry and checks the element count.
Dims infer_shape(const char* op, const Dims& want, int64_t numel, const Dims& from) {
  Dims out = want;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0) throw Error(std::string(op) + ": only one dim can be -1, got " + want.str());
      infer = i;
    } else if (out[i] < 0) {
      throw Error(std::string(op) + ": invalid size " + std::to_string(out[i]) + " in " +
                  want.str());
    } else {
      known *= out[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0) {
      throw Error(std::string(op) + ": cannot view " + from.str() + " (" + std::to_string(numel) +
                  " elements) as " + want.str());
    }
    out[infer] = numel / known;
  }
  if (out.numel() != numel) {
    throw Error(std::string(op) + ": cannot view " + from.str() + " (" + std::to_string(numel) +
                " elements) as " + want.str() + " (" + std::to_string(out.numel()) + " elements)");
  }
  return out;
}

// Strides for viewing (shape, strides) as new_shape without copying, if possible: each run of
// old dims that merges into new dims must itself be contiguous. Returns false otherwise.
bool view_strides(const Dims& shape, const Dims& strides, const Dims& new_shape, Dims& out) {
  out = new_shape;
  if (shape.numel() == 0) {
    out = contiguous_strides(new_shape);
    return true;
  }
  int oi = 0, ni = 0;
  const int on = shape.size(), nn = new_shape.size();
  while (oi < on || ni < nn) {
    // skip size-1 dims on both sides (any stride works for them)
    if (ni < nn && new_shape[ni] == 1) {
      out[ni] = 1;
      ++ni;
      continue;
    }
    if (oi < on && shape[oi] == 1) {
      ++oi;
      continue;
    }
    if (oi >= on || ni >= nn) return false;
    // gather a chunk of old dims [oi, oj) and new dims [ni, nj) with equal products
    int64_t op = shape[oi], np = new_shape[ni];
    int oj = oi + 1, nj = ni + 1;
    while (op != np) {
      if (op < np) {
        if (oj >= on) return false;
        op *= shape[oj++];
      } else {
        if (nj >= nn) return false;
        np *= new_shape[nj++];
      }
    }
    // the old chunk must be contiguous within itself (ignoring size-1 dims)
    int64_t inner_stride = 0;
    bool have = false;
    int64_t expect = 0;
    for (int d = oj - 1; d >= oi; --d) {
      if (shape[d] == 1) continue;
      if (!have) {
        inner_stride = strides[d];
        expect = strides[d] * shape[d];
        have = true;
      } else {
        if (strides[d] != expect) return false;
        expect = strides[d] * shape[d];
      }
    }
    if (!have) inner_stride = 1;
    int64_t s = inner_stride;
    for (int d = nj - 1; d >= ni; --d) {
      out[d] = s;
      s *= new_shape[d];
    }
    oi = oj;
    ni = nj;
  }
  return true;
}

}  // namespace

Tensor Tensor::view(const Dims& want) const {
  Dims shp = infer_shape("view", want, numel(), shape());
  Dims st;
  if (!view_strides(shape(), strides(), shp, st)) {
    throw Error("view: cannot view a tensor of shape " + shape().str() + " and strides " +
                strides().str() + " as " + shp.str() +
                " without copying; use reshape() (which copies) or contiguous() first");
  }
  Tensor out = make_view(*this, shp, st, offset());
  Dims in_shape = shape();
  autograd::record(out, "view", {this}, [in_shape](const Tensor& g, autograd::Grads& grads) {
    grads.set(0, "view.dx", [&] { return g.reshape(in_shape); });
  });
  return out;
}

Tensor Tensor::reshape(const Dims& want) const {
  Dims shp = infer_shape("reshape", want, numel(), shape());
  Dims st;
  if (view_strides(shape(), strides(), shp, st)) return view(shp);
  return contiguous().view(shp);
}

Tensor Tensor::flatten(int start, int end) const {
  if (dim() == 0) return reshape({1});
  int s = detail::wrap_dim("flatten", start, dim()), e = detail::wrap_dim("flatten", end, dim());
  if (s > e)
    throw Error("flatten: start dim " + std::to_string(start) + " is after end dim " +
                std::to_string(end));
  Dims shp;
  for (int i = 0; i < s; ++i) shp.push_back(shape()[i]);
  int64_t p = 1;
  for (int i = s; i <= e; ++i) p *= shape()[i];
  shp.push_back(p);
  for (int i = e + 1; i < dim(); ++i) shp.push_back(shape()[i]);
  return reshape(shp);
}

Tensor Tensor::permute(const Dims& order) const {
  if (order.size() != dim()) {
    throw Error("permute: order " + order.str() + " has " + std::to_string(order.size()) +
                " entries for a " + std::to_string(dim()) + "-d tensor");
  }
  Dims shp, st, inverse = order;
  bool seen[Dims::kMax] = {};
  for (int i = 0; i < dim(); ++i) {
    int d = detail::wrap_dim("permute", static_cast<int>(order[i]), dim());
    if (seen[d]) throw Error("permute: dim " + std::to_string(d) + " repeats in " + order.str());
    seen[d] = true;
    shp.push_back(shape()[d]);
    st.push_back(strides()[d]);
    inverse[d] = i;
  }
  Tensor out = make_view(*this, shp, st, offset());
  autograd::record(out, "permute", {this}, [inverse](const Tensor& g, autograd::Grads& grads) {
    grads.set(0, "permute.dx", [&] { return g.permute(inverse); });
  });
  return out;
}

Tensor Tensor::transpose(int d0, int d1) const {
  Dims order;
  for (int i = 0; i < dim(); ++i) order.push_back(i);
  int a = detail::wrap_dim("transpose", d0, dim()), b = detail::wrap_dim("transpose", d1, dim());
  if (dim() == 0) return *this;
  std::swap(order[a], order[b]);
  return permute(order);
}

Tensor Tensor::t() const {
  if (dim() != 2)
    throw Error("t: expects a 2-d tensor, got " + shape().str() + "; use transpose(d0, d1)");
  return transpose(0, 1);
}

namespace {

// The gradient of any slice-like view: zeros of the base shape with g written into the same
// window. One profiled op ("slice_backward": an allocation and a copy).
Tensor slice_backward(const Tensor& g, const Dims& base_shape, int d, int64_t start, int64_t step) {
  DefaultDevice on(g.device());
  Tensor z = zeros(base_shape, g.dtype());
  Dims st = z.strides();
  int64_t off = start * st[d];
  st[d] *= step;
  detail::copy_into(make_view(z, g.shape(), st, off), g, "slice_backward");
  return z;
}

}  // namespace

Tensor Tensor::slice(int d, int64_t start, int64_t stop, int64_t step) const {
  int dd = existing_dim("slice", d, dim());
  if (step <= 0) throw Error("slice: step must be positive, got " + std::to_string(step));
  int64_t n = shape()[dd];
  auto clampi = [n](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
  int64_t s = clampi(start), e = clampi(stop);
  int64_t len = e > s ? (e - s + step - 1) / step : 0;
  Dims shp = shape(), st = strides();
  shp[dd] = len;
  st[dd] *= step;
  Tensor out = make_view(*this, shp, st, offset() + s * strides()[dd]);
  Dims base = shape();
  autograd::record(out, "slice", {this},
                   [base, dd, s, step](const Tensor& g, autograd::Grads& grads) {
                     grads.set(0, "slice.dx", [&] { return slice_backward(g, base, dd, s, step); });
                   });
  return out;
}

Tensor Tensor::narrow(int d, int64_t start, int64_t length) const {
  int dd = existing_dim("narrow", d, dim());
  if (start < 0 || length < 0 || start + length > shape()[dd]) {
    throw Error("narrow: window [" + std::to_string(start) + ", " + std::to_string(start + length) +
                ") is outside dim " + std::to_string(dd) + " of size " +
                std::to_string(shape()[dd]));
  }
  return slice(dd, start, start + length);
}

Tensor Tensor::select(int d, int64_t index) const {
  int dd = existing_dim("select", d, dim());
  int64_t n = shape()[dd];
  if (index < -n || index >= n) {
    throw Error("select: index " + std::to_string(index) + " is out of range for dim " +
                std::to_string(dd) + " of size " + std::to_string(n));
  }
  if (index < 0) index += n;
  return slice(dd, index, index + 1).squeeze(dd);
}

Tensor Tensor::expand(const Dims& want) const {
  if (want.size() < dim()) {
    throw Error("expand: cannot expand " + shape().str() + " to fewer dims " + want.str());
  }
  Dims shp = want, st = want;
  int off = want.size() - dim();
  for (int i = 0; i < want.size(); ++i) {
    int j = i - off;
    int64_t have = j >= 0 ? shape()[j] : 1;
    int64_t w = want[i] == -1 ? have : want[i];
    if (j < 0 && want[i] == -1)
      throw Error("expand: -1 is not allowed for a new leading dim in " + want.str());
    if (w < 0) throw Error("expand: invalid size " + std::to_string(w) + " in " + want.str());
    if (have != w && have != 1) {
      throw Error("expand: cannot expand " + shape().str() + " to " + want.str() + " (dim " +
                  std::to_string(i) + " has size " + std::to_string(have) + ", not 1)");
    }
    shp[i] = w;
    st[i] = (j < 0 || (have == 1 && w != 1)) ? 0 : strides()[j];
  }
  checked_shape_size(shp, dtype(), "expand");  // a view's numel() must not overflow either
  Tensor out = make_view(*this, shp, st, offset());
  Dims base = shape();
  autograd::record(out, "expand", {this}, [base](const Tensor& g, autograd::Grads& grads) {
    grads.set(0, "expand.dx", [&] { return sum_to(g, base); });
  });
  return out;
}

Tensor Tensor::squeeze(int d) const {
  if (dim() == 0) return *this;
  int dd = detail::wrap_dim("squeeze", d, dim());
  if (shape()[dd] != 1) return *this;
  Dims shp = shape();
  shp.erase(dd);
  return view(shp);
}

Tensor Tensor::squeeze() const {
  Dims shp;
  for (int64_t s : shape()) {
    if (s != 1) shp.push_back(s);
  }
  return shp.size() == dim() ? *this : view(shp);
}

Tensor Tensor::unsqueeze(int d) const {
  int dd = d < 0 ? d + dim() + 1 : d;
  if (dd < 0 || dd > dim()) {
    throw Error("unsqueeze: dim " + std::to_string(d) + " is out of range for a " +
                std::to_string(dim()) + "-d tensor");
  }
  Dims shp = shape();
  shp.insert(dd, 1);
  return view(shp);
}

// ---- copies, autograd, printing --------------------------------------------------------------

Tensor Tensor::contiguous() const {
  return prism::contiguous(*this);
}
Tensor Tensor::clone() const {
  return prism::clone(*this);
}
Tensor Tensor::to(DType dt) const {
  return prism::cast(*this, dt);
}
Tensor Tensor::to(Device device) const {
  return prism::to_device(*this, device);
}

Tensor& Tensor::set_requires_grad(bool on) {
  if (!is_leaf()) {
    throw Error(std::string("set_requires_grad: only leaf tensors can be marked; this one was made "
                            "by op '") +
                grad_fn()->op() + "' (use detach() for a new leaf)");
  }
  if (on && dtype() == DType::i64)
    throw Error("set_requires_grad: int64 tensors cannot require grad");
  impl().requires_grad = on;
  return *this;
}

void Tensor::backward(const Tensor& grad, bool retain_graph) const {
  autograd::run_backward(*this, grad, retain_graph);
}

Tensor Tensor::detach() const {
  return make_view(*this, shape(), strides(), offset());
}

}  // namespace prism
