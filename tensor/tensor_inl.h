// Template members of Tensor (included at the end of tensor.h).
#pragma once

#include <type_traits>

namespace prism {

template <class T>
T* Tensor::data() const {
  if (dtype() != dtype_for<T>()) {
    throw Error(std::string("data<T>: tensor is ") + dtype_name(dtype()) + ", asked for " +
                dtype_name(dtype_for<T>()));
  }
  T* base = static_cast<T*>(storage()->data());
  return base ? base + offset() : nullptr;  // meta tensors have no data
}

namespace detail {
// Storage offset (in elements) of element number `flat_index`, row-major over the shape;
// throws for tensors whose data is not in host memory.
int64_t element_offset(const Tensor& t, int64_t flat_index);

// Element number `flat_index` converted to T straight from its stored type (an int64 label
// above 2^53 keeps every digit when read as int64).
template <class T>
T read_as(const Tensor& t, int64_t flat_index) {
  const int64_t off = element_offset(t, flat_index);
  const void* base = t.storage()->data();
  return visit_dtype(t.dtype(), [&](auto v) -> T {
    using S = decltype(v);
    const S x = static_cast<const S*>(base)[off];
    if constexpr (std::is_same_v<S, BFloat16>) {
      return static_cast<T>(to_float(x));
    } else {
      return static_cast<T>(x);
    }
  });
}

inline double read_element(const Tensor& t, int64_t flat_index) {
  return read_as<double>(t, flat_index);
}
}  // namespace detail

template <class T>
T Tensor::item() const {
  if (numel() != 1) {
    throw Error("item: tensor has " + std::to_string(numel()) + " elements " + shape().str() +
                ", expected exactly 1");
  }
  if (device() == Device::cuda) return detach().to(Device::cpu).item<T>();
  return detail::read_as<T>(*this, 0);
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  if (device() == Device::cuda) return detach().to(Device::cpu).to_vector<T>();
  std::vector<T> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) out[static_cast<size_t>(i)] = detail::read_as<T>(*this, i);
  return out;
}

}  // namespace prism
