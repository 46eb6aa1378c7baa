// Helpers for the CUDA suites that call kernels directly on raw buffers (matmul, linear_gelu,
// conv, pooling, attention): device copies of host vectors, random inputs, and the comparison
// of a CUDA kernel's output with the CPU kernel's on the same Args. Tensor-level checks use
// cuda_compare.h.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/gpu_runtime.h"
#include "kernels/registry.h"

namespace prism::cuda_kernel_test {

// A device copy of a host vector (at least one element is allocated, so an empty vector still
// has a valid pointer). Freed when it goes out of scope.
template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(const std::vector<T>& host)
      : n_(host.size()), bytes_(std::max<size_t>(1, host.size()) * sizeof(T)) {
    p_ = static_cast<T*>(kernels::gpu::allocate(bytes_));
    if (n_ > 0) kernels::gpu::copy_to_device(p_, host.data(), n_ * sizeof(T));
  }
  ~DeviceArray() { kernels::gpu::release(p_, bytes_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* get() const { return p_; }
  // Waits for the queued kernels (copy_to_host synchronises).
  std::vector<T> to_host() const {
    std::vector<T> h(n_);
    if (n_ > 0) kernels::gpu::copy_to_host(h.data(), p_, n_ * sizeof(T));
    return h;
  }

 private:
  T* p_ = nullptr;
  size_t n_;
  size_t bytes_;
};

template <class T>
std::vector<T> random_vector(size_t n, std::mt19937& rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(u(rng));
  return v;
}

// The largest |got - want| over the elements, relative to max(1, max |want|): the error a
// kernel makes compared with the size of what it computes. NaN anywhere counts as infinite.
template <class T>
double scaled_error(const std::vector<T>& got, const std::vector<T>& want) {
  REQUIRE(got.size() == want.size());
  double scale = 1, err = 0;
  for (T w : want) scale = std::max(scale, std::abs(static_cast<double>(w)));
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
    if (std::isnan(d)) return INFINITY;
    err = std::max(err, d);
  }
  return err / scale;
}

// Every CUDA variant of an op (so a variant added later is tested too).
inline std::vector<const kernels::KernelEntry*> entries_of(const char* op) {
  std::vector<const kernels::KernelEntry*> out;
  for (const auto& e : kernels::registry().at(op, Device::cuda).entries()) out.push_back(&e);
  return out;
}

}  // namespace prism::cuda_kernel_test
