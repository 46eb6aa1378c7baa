// Template members of Tensor (included at the end of tensor.h).
#pragma once

namespace prism {

template <class T>
T* Tensor::data() const {
  if (dtype() != dtype_for<T>()) {
    throw Error(std::string("data<T>: tensor is ") + dtype_name(dtype()) + ", asked for " +
                dtype_name(dtype_for<T>()));
  }
  return static_cast<T*>(storage()->data()) + offset();
}

namespace detail {
// Reads element number `i` (row-major over the shape) of a CPU tensor as double.
double read_element(const Tensor& t, int64_t flat_index);
}

template <class T>
T Tensor::item() const {
  if (numel() != 1) {
    throw Error("item: tensor has " + std::to_string(numel()) + " elements " + shape().str() +
                ", expected exactly 1");
  }
  return static_cast<T>(detail::read_element(*this, 0));
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  std::vector<T> out(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) out[static_cast<size_t>(i)] = static_cast<T>(detail::read_element(*this, i));
  return out;
}

}  // namespace prism
