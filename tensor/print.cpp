// Printing: tensor([[1.0000, 2.0000], ...], shape=[2,2], dtype=float32), with the middle of
// long dims elided, like NumPy and PyTorch, so a big tensor prints as a readable summary.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include "tensor/tensor.h"

namespace prism {

namespace {

constexpr int64_t kEdge = 3;          // elements shown at each end of an elided dim
constexpr int64_t kSummarize = 1000;  // elide when the tensor has more elements than this

std::string format_float(double v) {
  char buf[64];
  if (std::isfinite(v) && v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-4)) {
    std::snprintf(buf, sizeof buf, "%.4e", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.4f", v);
  }
  return buf;
}

// The element at storage offset `off`. int64 is printed from the integer itself: through a
// double, values beyond 2^53 would print rounded.
std::string format_at(const Tensor& t, int64_t off) {
  const void* base = t.storage()->data();
  switch (t.dtype()) {
    case DType::f32:
      return format_float(static_cast<const float*>(base)[off]);
    case DType::f64:
      return format_float(static_cast<const double*>(base)[off]);
    case DType::i64:
      return std::to_string(static_cast<const int64_t*>(base)[off]);
    case DType::bf16:
      return format_float(to_float(static_cast<const BFloat16*>(base)[off]));
    case DType::i8:
      return std::to_string(static_cast<const int8_t*>(base)[off]);
    case DType::i32:
      return std::to_string(static_cast<const int32_t*>(base)[off]);
  }
  return "?";
}

void print_dim(std::ostream& os, const Tensor& t, int d, int64_t offset, bool summarize,
               int indent) {
  const int64_t n = t.shape()[d];
  const bool elide = summarize && n > 2 * kEdge;
  os << '[';
  for (int64_t i = 0; i < n; ++i) {
    if (elide && i == kEdge) {
      os << (d + 1 == t.dim() ? "..., "
                              : "...,\n" + std::string(static_cast<size_t>(indent + 1), ' '));
      i = n - kEdge;
    }
    int64_t off = offset + i * t.strides()[d];
    if (d + 1 == t.dim()) {
      os << format_at(t, off);
    } else {
      print_dim(os, t, d + 1, off, summarize, indent + 1);
    }
    if (i + 1 < n)
      os << (d + 1 == t.dim() ? ", " : ",\n" + std::string(static_cast<size_t>(indent + 1), ' '));
  }
  os << ']';
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  if (t.device() == Device::cuda) {  // print the values from a cpu copy, then say where they live
    std::ostringstream values;
    values << t.detach().to(Device::cpu);
    std::string s = values.str();
    s.insert(s.size() - 1, t.requires_grad() ? ", device=cuda, requires_grad" : ", device=cuda");
    return os << s;
  }
  os << "tensor(";
  if (t.device() != Device::cpu) {
    os << "<on " << device_name(t.device()) << ">";
  } else if (t.dim() == 0) {
    os << format_at(t, t.offset());
  } else {
    print_dim(os, t, 0, t.offset(), t.numel() > kSummarize, 7);
  }
  os << ", shape=" << t.shape().str() << ", dtype=" << dtype_name(t.dtype());
  if (t.requires_grad()) os << ", requires_grad";
  return os << ')';
}

std::string Tensor::str() const {
  std::ostringstream s;
  s << *this;
  return s.str();
}

}  // namespace prism
