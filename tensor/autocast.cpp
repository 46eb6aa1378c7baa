// The autocast policy's state: one dtype per thread (tensor/autocast.h).
#include "tensor/autocast.h"

#include "tensor/ops.h"

namespace prism {

namespace {
thread_local DType g_autocast = DType::f32;
}

Autocast::Autocast(DType dtype) : previous_(g_autocast) {
  if (dtype != DType::bf16 && dtype != DType::f32) {
    throw Error(std::string("Autocast: the GEMMs can run in bf16 or f32 (off), not ") +
                dtype_name(dtype));
  }
  g_autocast = dtype;
}

Autocast::~Autocast() {
  g_autocast = previous_;
}

DType autocast_dtype() {
  return g_autocast;
}

namespace detail {

bool autocast_bf16(const Tensor& a, const Tensor& b) {
  return g_autocast == DType::bf16 && a.dtype() == DType::f32 && b.dtype() == DType::f32 &&
         a.device() != Device::cuda && b.device() != Device::cuda;
}

Tensor autocast_operand(const Tensor& t) {
  const bool transposed =
      t.dim() == 2 && t.strides()[0] == 1 && t.strides()[1] != 1 && t.shape()[0] > 1;
  if (transposed) return cast(t.detach().t(), DType::bf16).t();
  return cast(t.detach(), DType::bf16);
}

}  // namespace detail

}  // namespace prism
