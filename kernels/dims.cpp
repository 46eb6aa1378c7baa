// Dims' text form and the checked size of a shape (kernels/dims.h).
#include "kernels/dims.h"

#include <algorithm>
#include <ostream>

namespace prism {

std::string Dims::str() const {
  std::string s = "[";
  for (int i = 0; i < n_; ++i) {
    if (i) s += ',';  // (not `(i ? "," : "") + ...`: GCC 12 warns, wrongly, -Wrestrict)
    s += std::to_string(d_[i]);
  }
  return s + "]";
}

std::ostream& operator<<(std::ostream& os, const Dims& d) {
  return os << d.str();
}

namespace {
std::string shape_text(const int64_t* shape, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}
}  // namespace

ShapeSize checked_shape_size(const int64_t* shape, int n, int64_t element_size,
                             const std::string& what) {
  int64_t span = element_size;  // prod max(d, 1) * element_size: the largest stride in bytes
  int64_t numel = 1;
  bool overflow = false;
  for (int i = 0; i < n; ++i) {
    if (shape[i] < 0) {
      throw Error(what + ": negative size " + std::to_string(shape[i]) + " in shape " +
                  shape_text(shape, n));
    }
    overflow = overflow || __builtin_mul_overflow(span, std::max<int64_t>(shape[i], 1), &span);
    if (!overflow) numel *= shape[i];  // numel <= span / element_size: no overflow here
  }
  if (overflow || span > kMaxTensorBytes) {
    throw Error(what + ": shape " + shape_text(shape, n) + " is too large: with " +
                std::to_string(element_size) +
                "-byte elements its size or strides exceed prism's limit of 2^50 bytes (1 PiB) "
                "per tensor");
  }
  return {numel, numel * element_size};
}

}  // namespace prism
