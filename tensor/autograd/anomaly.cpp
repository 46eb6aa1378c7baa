#include "tensor/autograd/anomaly.h"
#include "tensor/ops.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tensor/autograd/grad_mode.h"

namespace prism::autograd {

namespace {
thread_local bool t_detecting = false;
thread_local bool t_in_check = false;  // the check's own copies must not check themselves

// Whether any of n values is NaN or infinite: an all-ones exponent field. Written on the bits
// (no branch, no std::isfinite call) so the compiler vectorises it: prism train runs this over
// every gradient of every step, where it costs about what reading the gradients once does.
template <class T, class Bits>
bool any_non_finite(const T* p, int64_t n) {
  static_assert(sizeof(T) == sizeof(Bits));
  constexpr Bits kExponent = sizeof(T) == 4 ? Bits(0x7f800000u) : Bits(0x7ff0000000000000ull);
  Bits hit = 0;
  for (int64_t i = 0; i < n; ++i) {
    Bits b;
    std::memcpy(&b, p + i, sizeof b);
    hit |= Bits((b & kExponent) == kExponent);
  }
  return hit != 0;
}

template <class T>
int64_t scan(const Tensor& host, int64_t* first, double* first_value) {
  const T* p = host.data<T>();
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  if (!any_non_finite<T, Bits>(p, host.numel())) return 0;  // the common case, fast
  int64_t count = 0;
  for (int64_t i = 0, n = host.numel(); i < n; ++i) {
    if (!std::isfinite(p[i])) {
      if (count++ == 0) {
        if (first) *first = i;
        if (first_value) *first_value = static_cast<double>(p[i]);
      }
    }
  }
  return count;
}

const char* describe(double v) {
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}
}  // namespace

DetectNonFinite::DetectNonFinite() : saved_(t_detecting) {
  t_detecting = true;
}
DetectNonFinite::~DetectNonFinite() {
  t_detecting = saved_;
}

bool detecting_non_finite() {
  return t_detecting && !t_in_check;
}

int64_t count_non_finite(const Tensor& t, int64_t* first, double* first_value) {
  if (!t.defined() || t.device() == Device::meta) return 0;
  if (!is_floating(t.dtype())) return 0;  // integers are finite
  struct InCheck {
    bool saved = t_in_check;
    InCheck() { t_in_check = true; }
    ~InCheck() { t_in_check = saved; }
  } in_check;
  NoGrad no_grad;
  // A contiguous cpu tensor is read where it is; anything else is first copied to one.
  // bfloat16 is read as float32: the conversion is exact and keeps NaN and infinity.
  const Tensor host = t.dtype() == DType::bf16 ? cast(t.detach().to(Device::cpu), DType::f32)
                      : t.device() == Device::cpu && t.is_contiguous()
                          ? t
                          : t.detach().to(Device::cpu).contiguous();
  return host.dtype() == DType::f32 ? scan<float>(host, first, first_value)
                                 : scan<double>(host, first, first_value);
}

void check_finite(const Tensor& t, const char* op, const char* phase) {
  int64_t first = -1;
  double value = 0;
  const int64_t n = count_non_finite(t, &first, &value);
  if (n == 0) return;
  throw NonFiniteError(
      std::string(op) + " (" + phase + ") produced " + std::to_string(n) +
          " non-finite values of " + std::to_string(t.numel()) + " in its " + t.shape().str() +
          " " + (std::string(phase) == "forward" ? "output" : "gradient") +
          " (the first, at flat index " + std::to_string(first) + ", is " + describe(value) + ")",
      op, phase);
}

}  // namespace prism::autograd
