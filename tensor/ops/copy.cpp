// Copies: contiguous(), clone(), cast(), and the copy into a view that concat and slice
// gradients use. All go through the "copy" kernel, so every materialised view shows up in the
// profile as what it is: memory traffic.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/costs.h"
#include "kernels/gpu_runtime.h"
#include "kernels/ops/copy/op.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/autograd/node.h"
#include "tensor/dispatch.h"
#include "tensor/internal.h"
#include "tensor/layout.h"
#include "tensor/ops.h"

namespace prism {

namespace detail {

OpHandle g_copy(kernels::ops::copy);

namespace {
template <class T>
void run_copy(const kernels::KernelEntry& k, const Tensor& dst, const Tensor& src) {
  kernels::CopyArgs<T> a{};
  a.src = src.data<T>();
  a.dst = dst.data<T>();
  a.ndim = merge_dims_copy(src.shape(), src.strides(), dst.strides(), a.shape, a.src_stride,
                           a.dst_stride);
  k.get<kernels::CopyArgs, T>()(a);
}
}  // namespace

void run_copy_kernel(const kernels::KernelEntry& k, const Tensor& dst, const Tensor& src) {
  visit_dtype(src.dtype(), [&](auto v) { run_copy<decltype(v)>(k, dst, src); });
}

void copy_into(const Tensor& dst, const Tensor& src, const char* op) {
  if (!(dst.shape() == src.shape())) {
    throw Error(std::string(op) + ": copy between shapes " + src.shape().str() + " and " +
                dst.shape().str());
  }
  check_same_dtype(op, dst, src);
  check_same_device(op, dst, src);
  const auto& k = g_copy.kernel(src.device(), src.dtype());
  OpRecordScope rec(op, k.name.c_str(), src.device(), {&src},
                    [&] { return costs::copy(src.numel(), src.element_size()); });
  run_copy_kernel(k, dst, src);
}

}  // namespace detail

namespace {
// A fresh contiguous copy, recorded as `op`, with identity gradient.
Tensor copy_op(const Tensor& x, const char* op) {
  Tensor out;
  {
    // One record around the allocation and the copy kernel.
    const auto& k = detail::g_copy.kernel(x.device(), x.dtype());
    detail::OpRecordScope rec(op, k.name.c_str(), x.device(), {&x},
                              [&] { return costs::copy(x.numel(), x.element_size()); });
    out = detail::empty_like_shape(x.shape(), x.dtype(), x.device());
    detail::run_copy_kernel(k, out, x);
  }
  autograd::record(out, op, {&x}, [](const Tensor& g, autograd::Grads& grads) {
    grads.set(0, "copy.dx", [&] { return g; });
  });
  return out;
}
}  // namespace

Tensor contiguous(const Tensor& x) {
  detail::check_defined("contiguous", x);
  if (x.is_contiguous()) return x;
  return copy_op(x, "contiguous");
}

Tensor clone(const Tensor& x) {
  detail::check_defined("clone", x);
  return copy_op(x, "clone");
}

void copy_into(const Tensor& dst, const Tensor& src) {
  detail::check_defined("copy_into", dst);
  detail::check_defined("copy_into", src);
  if (grad_enabled() && src.requires_grad()) {
    throw Error("copy_into: src " + src.shape().str() +
                " requires grad, but an in-place write records no gradient; use NoGrad");
  }
  detail::copy_into(dst, src, "copy_into");
}

Tensor to_device(const Tensor& x, Device device) {
  detail::check_defined("to", x);
  if (x.device() == device) return x;
  if (x.device() == Device::meta || device == Device::meta) {
    throw Error(std::string("to: cannot copy between ") + device_name(x.device()) + " and " +
                device_name(device) + " (a meta tensor has no data)");
  }
  if (x.device() == Device::cuda || device == Device::cuda) kernels::gpu::require("to");
  const Tensor src = x.contiguous();  // copied where it lives, so the transfer is one block
  Tensor out;
  {
    // Recorded on the GPU side of the copy, so the GPU timer brackets the transfer.
    const char* op = (device == Device::cuda ? kernels::ops::to_cuda : kernels::ops::to_cpu).name;
    detail::OpRecordScope rec(op, "", Device::cuda, {&src},
                              [&] { return costs::copy(src.numel(), src.element_size()); });
    out = detail::empty_like_shape(src.shape(), src.dtype(), device);
    const auto nbytes = static_cast<size_t>(src.numel() * src.element_size());
    const char* from_bytes =
        static_cast<const char*>(src.storage()->data()) + src.offset() * src.element_size();
    if (device == Device::cuda) {
      kernels::gpu::copy_to_device(out.storage()->data(), from_bytes, nbytes);
    } else {
      kernels::gpu::copy_to_host(out.storage()->data(), from_bytes, nbytes);
    }
  }
  const Device from = x.device();
  autograd::record(out,
                   (device == Device::cuda ? kernels::ops::to_cuda : kernels::ops::to_cpu).name,
                   {&x}, [from](const Tensor& g, autograd::Grads& grads) {
                     grads.set(0, "to.dx", [&] { return to_device(g, from); });
                   });
  return out;
}

namespace {
// One element of cast(): bfloat16 goes through float32 (exact one way; round to nearest even the
// other, kernels/bfloat16.h); a float64 rounds to float32 first, then to bfloat16, which can
// differ from rounding once in the rare case where the first rounding makes a tie. A value that
// an integer type cannot hold (NaN, infinity, out of range after truncation toward zero) is an
// error naming the element, never a wrapped or undefined result.
template <class D, class S>
D convert_element(S v, int64_t i) {
  if constexpr (std::is_same_v<S, BFloat16>) {
    return convert_element<D>(to_float(v), i);
  } else if constexpr (std::is_same_v<D, BFloat16>) {
    return to_bf16(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<D>) {
    constexpr double lo = static_cast<double>(std::numeric_limits<D>::min());  // -2^(bits-1)
    if constexpr (std::is_floating_point_v<S>) {
      const double t = std::trunc(static_cast<double>(v));
      if (!(t >= lo && t < -lo)) {
        throw Error("cast: element " + std::to_string(i) + " is " + std::to_string(v) + ", which " +
                    dtype_name(dtype_for<D>()) + " cannot hold");
      }
    } else if (static_cast<double>(v) < lo || static_cast<double>(v) >= -lo) {
      throw Error("cast: element " + std::to_string(i) + " is " + std::to_string(v) + ", which " +
                  dtype_name(dtype_for<D>()) + " cannot hold");
    }
    return static_cast<D>(v);
  } else {
    return static_cast<D>(v);
  }
}
}  // namespace

Tensor cast(const Tensor& x, DType dtype) {
  detail::check_defined("cast", x);
  if (x.dtype() == dtype) return x;
  if (x.device() == Device::cuda) {
    // No conversion kernel on the GPU yet: a round trip through the cpu, visible in the
    // profile as to_cpu and to_cuda records around the cast.
    return cast(x.to(Device::cpu), dtype).to(Device::cuda);
  }
  detail::check_cpu_or_meta("cast", x);
  Tensor out;
  {
    detail::OpRecordScope rec("cast", "", x.device(), {&x}, [&] {
      return costs::cast(x.numel(), x.element_size(), dtype_size(dtype));
    });
    out = detail::empty_like_shape(x.shape(), dtype, x.device());
    const int64_t n = x.device() == Device::meta ? 0 : x.numel();  // meta: nothing to convert
    Tensor src = x.is_contiguous() ? x : contiguous(x);
    visit_dtype(src.dtype(), [&](auto from) {
      visit_dtype(dtype, [&](auto to) {
        using S = decltype(from);
        using D = decltype(to);
        const S* in = src.data<S>();
        D* dst = out.data<D>();
        for (int64_t i = 0; i < n; ++i) dst[i] = convert_element<D>(in[i], i);
      });
    });
  }
  if (is_floating(dtype) && is_floating(x.dtype())) {  // an integer result has no gradient
    DType from = x.dtype();
    autograd::record(out, "cast", {&x}, [from](const Tensor& g, autograd::Grads& grads) {
      grads.set(0, "cast.dx", [&] { return cast(g, from); });
    });
  }
  return out;
}

}  // namespace prism
