// Tensor: a typed, shaped, strided view of a shared Storage, with autograd metadata.
//
// A Tensor is a cheap handle (one shared_ptr) to a TensorImpl. Copying a Tensor copies the
// handle, not the data: `Tensor b = a;` makes b and a the same tensor. Views (reshape,
// transpose, narrow, expand, ...) make a new TensorImpl over the same Storage with other
// shape / strides / offset, and allocate no tensor memory. `contiguous()` and `clone()` copy.
//
// Element (i0, i1, ...) lives at storage[offset + sum_d i_d * strides[d]] (strides in elements).
#pragma once

#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/bfloat16.h"
#include "kernels/dims.h"
#include "tensor/storage.h"

namespace prism {

namespace autograd {
class Node;
}

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Dims shape;
  Dims strides;
  int64_t offset = 0;  // in elements
  DType dtype = DType::f32;
  bool requires_grad = false;        // set by the user on leaves; true on outputs of tracked ops
  std::shared_ptr<TensorImpl> grad;  // accumulated by backward (leaves)
  std::shared_ptr<autograd::Node> grad_fn;  // the op that made this tensor, if tracked
};

class Tensor {
 public:
  Tensor() = default;  // undefined: holds no data (an absent gradient, an optional input)
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }

  // ---- metadata --------------------------------------------------------------------------
  const Dims& shape() const { return impl().shape; }
  const Dims& strides() const { return impl().strides; }
  int64_t offset() const { return impl().offset; }
  int dim() const { return impl().shape.size(); }
  int64_t size(int d) const;  // negative d counts from the end
  int64_t numel() const { return impl().shape.numel(); }
  DType dtype() const { return impl().dtype; }
  Device device() const { return impl().storage->device(); }
  int64_t element_size() const { return dtype_size(dtype()); }
  int64_t nbytes() const { return numel() * element_size(); }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return impl().storage; }
  bool shares_storage_with(const Tensor& other) const { return storage() == other.storage(); }

  // ---- element access ----------------------------------------------------------------------
  // Pointer to element (0, ..., 0) in the tensor's own memory (a device pointer for a cuda
  // tensor); the dtype must match T (an Error otherwise).
  template <class T>
  T* data() const;
  // The single value of a one-element tensor, converted to T (a cuda tensor is copied to the
  // cpu first, which waits for the GPU).
  template <class T = double>
  T item() const;
  // All elements in row-major order, converted to T (cuda: copied to the cpu first).
  template <class T = double>
  std::vector<T> to_vector() const;
  // One element by index, converted to double (cpu tensors only).
  double at(std::initializer_list<int64_t> index) const;

  // ---- views: share storage, allocate nothing ------------------------------------------------
  Tensor view(const Dims& shape) const;     // needs compatible strides (an Error otherwise)
  Tensor reshape(const Dims& shape) const;  // view when possible, else contiguous() + view
  Tensor flatten(int start = 0, int end = -1) const;
  Tensor transpose(int d0, int d1) const;
  Tensor t() const;  // 2-D transpose
  Tensor permute(const Dims& order) const;
  Tensor narrow(int d, int64_t start, int64_t length) const;
  // Python-style slice along d: [start, stop) with step > 0; negative indices count from the end.
  Tensor slice(int d, int64_t start, int64_t stop, int64_t step = 1) const;
  Tensor select(int d, int64_t index) const;  // drops dim d
  Tensor expand(const Dims& shape) const;     // size-1 dims grow with stride 0
  Tensor squeeze(int d) const;
  Tensor squeeze() const;  // all size-1 dims
  Tensor unsqueeze(int d) const;

  // ---- copies ----------------------------------------------------------------------------------
  Tensor contiguous() const;  // itself if already contiguous, else a profiled copy
  Tensor clone() const;       // always a copy
  Tensor to(DType dtype) const;
  // A copy on `device` (itself if already there): a profiled op, "to_cuda" or "to_cpu",
  // counted as bytes moved; gradients flow back to the source device.
  Tensor to(Device device) const;

  // ---- autograd ------------------------------------------------------------------------------
  bool requires_grad() const { return impl().requires_grad; }
  // Marks a leaf as a trainable input; returns *this for chaining.
  Tensor& set_requires_grad(bool on = true);
  bool is_leaf() const { return impl().grad_fn == nullptr; }
  Tensor grad() const { return Tensor(impl().grad); }  // undefined until backward reaches it
  void zero_grad() const { impl().grad.reset(); }
  const std::shared_ptr<autograd::Node>& grad_fn() const { return impl().grad_fn; }
  // Backpropagates from this tensor. A scalar needs no `grad`; anything else must be given one
  // of its own shape. The graph is freed afterwards unless retain_graph is true.
  void backward(const Tensor& grad = Tensor(), bool retain_graph = false) const;
  // A tensor sharing this one's data but cut from the graph (requires_grad false).
  Tensor detach() const;
  // The version counter of this tensor's memory: how many in-place modifications it has had
  // (0 when allocated). Shared by every view of the same storage (detach() included); a clone
  // starts again at 0. A backward that would read a saved tensor whose version moved since the
  // forward throws instead (docs/DESIGN.md, "Autograd").
  int64_t version() const { return static_cast<int64_t>(storage()->version()); }
  // Counts one in-place modification. The in-place ops (sgd_update_, adam_update_) call it; call
  // it yourself after writing into a tensor through data<T>().
  void bump_version() const { storage()->bump_version(); }

  // ---- misc ------------------------------------------------------------------------------------
  std::string str() const;  // the printed form, as in operator<<
  TensorImpl& impl() const;
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Row-major strides of a contiguous tensor of this shape.
Dims contiguous_strides(const Dims& shape);

template <class T>
constexpr DType dtype_for();
template <>
constexpr DType dtype_for<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_for<double>() {
  return DType::f64;
}
template <>
constexpr DType dtype_for<int64_t>() {
  return DType::i64;
}
template <>
constexpr DType dtype_for<BFloat16>() {
  return DType::bf16;
}
template <>
constexpr DType dtype_for<int8_t>() {
  return DType::i8;
}
template <>
constexpr DType dtype_for<int32_t>() {
  return DType::i32;
}

// Calls f(T{}) with T the element type of `t`: the one switch over dtypes that code generic in
// the element type goes through, e.g. visit_dtype(x.dtype(), [&](auto v) { using T =
// decltype(v); ... x.data<T>() ... }).
template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::f64:
      return f(double{});
    case DType::i64:
      return f(int64_t{});
    case DType::bf16:
      return f(BFloat16{});
    case DType::i8:
      return f(int8_t{});
    case DType::i32:
      return f(int32_t{});
    case DType::f32:
      break;
  }
  return f(float{});
}

}  // namespace prism

#include "tensor/tensor_inl.h"
