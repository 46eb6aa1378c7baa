// Printing: tensor([[1.0000, 2.0000], ...], shape=[2,2], dtype=float32), with the middle of
// long dims elided, like NumPy and PyTorch, so a big tensor prints as a readable summary.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "tensor/tensor.h"

namespace prism {

namespace {

constexpr int64_t kEdge = 3;       // elements shown at each end of an elided dim
constexpr int64_t kSummarize = 1000;  // elide when the tensor has more elements than this

std::string format_value(double v, DType dt) {
  char buf[64];
  if (dt == DType::i64) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  } else if (std::isfinite(v) && v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-4)) {
    std::snprintf(buf, sizeof buf, "%.4e", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.4f", v);
  }
  return buf;
}

void print_dim(std::ostream& os, const Tensor& t, int d, int64_t offset, bool summarize, int indent) {
  const int64_t n = t.shape()[d];
  const bool elide = summarize && n > 2 * kEdge;
  os << '[';
  for (int64_t i = 0; i < n; ++i) {
    if (elide && i == kEdge) {
      os << (d + 1 == t.dim() ? "..., " : "...,\n" + std::string(static_cast<size_t>(indent + 1), ' '));
      i = n - kEdge;
    }
    int64_t off = offset + i * t.strides()[d];
    if (d + 1 == t.dim()) {
      const void* base = t.storage()->data();
      double v = t.dtype() == DType::f32   ? static_cast<const float*>(base)[off]
                 : t.dtype() == DType::f64 ? static_cast<const double*>(base)[off]
                                           : static_cast<double>(static_cast<const int64_t*>(base)[off]);
      os << format_value(v, t.dtype());
    } else {
      print_dim(os, t, d + 1, off, summarize, indent + 1);
    }
    if (i + 1 < n) os << (d + 1 == t.dim() ? ", " : ",\n" + std::string(static_cast<size_t>(indent + 1), ' '));
  }
  os << ']';
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  if (!t.defined()) return os << "tensor(undefined)";
  os << "tensor(";
  if (t.device() != Device::cpu) {
    os << "<on " << device_name(t.device()) << ">";
  } else if (t.dim() == 0) {
    os << format_value(t.item<double>(), t.dtype());
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
