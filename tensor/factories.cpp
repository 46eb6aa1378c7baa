// Factories: new tensors filled with a constant, a range, data, or random numbers.
//
// Each factory is a profiled op (its buffer is an allocation worth seeing), with no kernel
// variants: the fill is a plain loop and the cost is the bytes written.
#include <cmath>
#include <string>
#include <vector>

#include <type_traits>

#include "kernels/gpu_runtime.h"
#include "tensor/dispatch.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace prism {

namespace {

// Before the profile record opens: a bad shape is the caller's error, not a measured op.
void check_shape(const char* op, const Dims& shape, DType dt) {
  checked_shape_size(shape, dt, op);
}

profiler::Cost fill_cost(const Dims& shape, DType dt) {
  return {0, 0, shape.numel() * dtype_size(dt)};
}

// Writes f(0), ..., f(n-1), converted to dt, into the host buffer p.
template <class F>
void fill_values(void* p, int64_t n, DType dt, F& f) {
  visit_dtype(dt, [&](auto v) {
    using T = decltype(v);
    T* out = static_cast<T*>(p);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, BFloat16>) {
        out[i] = to_bf16(static_cast<float>(f(i)));
      } else {
        out[i] = static_cast<T>(f(i));
      }
    }
  });
}

// Allocates on the default device inside a record named `op` and fills element i with f(i)
// (a meta tensor is not filled: it has no data).
template <class F>
Tensor filled(const char* op, const Dims& shape, DType dt, F&& f) {
  check_shape(op, shape, dt);
  const Device device = default_device();
  detail::OpRecordScope rec(op, "", device, {}, [&] { return fill_cost(shape, dt); });
  Tensor t = detail::empty_like_shape(shape, dt, device);
  if (device == Device::meta) return t;
  const int64_t n = t.numel();
  if (device == Device::cuda) {
    // Filled on the host, then copied over: factories run at set-up time (weights, constants),
    // and the values (random streams above all) are then the same as on the cpu.
    std::vector<unsigned char> host(static_cast<size_t>(n * dtype_size(dt)));
    fill_values(host.data(), n, dt, f);
    kernels::gpu::copy_to_device(t.storage()->data(), host.data(), host.size());
    return t;
  }
  fill_values(t.storage()->data(), n, dt, f);
  return t;
}

template <class T>
Tensor from_values(const std::vector<T>& v, const Dims& shape) {
  if (static_cast<int64_t>(v.size()) != shape.numel()) {
    throw Error("from_vector: " + std::to_string(v.size()) + " values for shape " + shape.str() +
                " (" + std::to_string(shape.numel()) + " elements)");
  }
  return filled("from_vector", shape, dtype_for<T>(),
                [&](int64_t i) { return v[static_cast<size_t>(i)]; });
}

}  // namespace

Tensor empty(const Dims& shape, DType dtype) {
  check_shape("empty", shape, dtype);
  detail::OpRecordScope rec("empty", "", default_device(), {}, [] { return profiler::Cost{}; });
  return detail::empty_like_shape(shape, dtype, default_device());
}

Tensor full(const Dims& shape, double value, DType dtype) {
  return filled("full", shape, dtype, [value](int64_t) { return value; });
}
Tensor zeros(const Dims& shape, DType dtype) {
  if (default_device() != Device::cuda) {
    return filled("zeros", shape, dtype, [](int64_t) { return 0.0; });
  }
  // All bits zero is 0 in every dtype, so on the GPU one memset on prism's stream does what a
  // host fill and a copy did. zeros is not only set-up work: backward makes gradients with it
  // (slice.dx, ...), and the host fill and copy took 52% of a transformer training step on an
  // H200 (122 of 257 ms over 20 steps, 6 GB/s).
  check_shape("zeros", shape, dtype);
  detail::OpRecordScope rec("zeros", "", Device::cuda, {}, [&] { return fill_cost(shape, dtype); });
  Tensor t = detail::empty_like_shape(shape, dtype, Device::cuda);
  const int64_t n = t.numel();
  if (n > 0) {
    kernels::gpu::memset_zero(t.storage()->data(), static_cast<size_t>(n * dtype_size(dtype)));
  }
  return t;
}
Tensor ones(const Dims& shape, DType dtype) {
  return filled("ones", shape, dtype, [](int64_t) { return 1.0; });
}
Tensor scalar(double value, DType dtype) {
  return full(Dims{}, value, dtype);
}
Tensor zeros_like(const Tensor& t) {
  DefaultDevice on(t.device());
  return zeros(t.shape(), t.dtype());
}
Tensor ones_like(const Tensor& t) {
  DefaultDevice on(t.device());
  return ones(t.shape(), t.dtype());
}

Tensor arange(double start, double end, double step, DType dtype) {
  if (step == 0) throw Error("arange: step must not be zero");
  double span = (end - start) / step;
  int64_t n = span > 0 ? static_cast<int64_t>(std::ceil(span)) : 0;
  return filled("arange", Dims{n}, dtype,
                [=](int64_t i) { return start + static_cast<double>(i) * step; });
}
Tensor arange(int64_t n, DType dtype) {
  return arange(0.0, static_cast<double>(n), 1.0, dtype);
}

Tensor from_vector(const std::vector<float>& v, const Dims& s) {
  return from_values(v, s);
}
Tensor from_vector(const std::vector<double>& v, const Dims& s) {
  return from_values(v, s);
}
Tensor from_vector(const std::vector<int64_t>& v, const Dims& s) {
  return from_values(v, s);
}

Tensor rand(const Dims& shape, DType dtype, double low, double high) {
  if (dtype == DType::i64) throw Error("rand: needs a float dtype");
  if (!(low < high)) throw Error("rand: low must be below high");
  Generator& g = default_generator();
  return filled("rand", shape, dtype, [&](int64_t) {
    // u < 1, but low + (high - low) * u can still round to `high`, in float32 for any
    // u >= 1 - 2^-25. Step such a value down to the largest one below high.
    double v = low + (high - low) * g.uniform();
    if (dtype == DType::f32) {
      float f = static_cast<float>(v);
      while (static_cast<double>(f) >= high) f = std::nextafter(f, -INFINITY);
      return static_cast<double>(f);
    }
    return v < high ? v : std::nextafter(high, low);
  });
}

Tensor randn(const Dims& shape, DType dtype, double mean, double std) {
  if (dtype == DType::i64) throw Error("randn: needs a float dtype");
  if (std < 0) throw Error("randn: std must be non-negative");
  Generator& g = default_generator();
  return filled("randn", shape, dtype, [&](int64_t) { return mean + std * g.normal(); });
}

}  // namespace prism

namespace prism {

Tensor bernoulli(const Dims& shape, double p, DType dtype) {
  if (!(p >= 0 && p <= 1)) throw Error("bernoulli: p must be in [0, 1], got " + std::to_string(p));
  Generator& g = default_generator();
  return filled("bernoulli", shape, dtype, [&](int64_t) { return g.uniform() < p ? 1.0 : 0.0; });
}

}  // namespace prism
