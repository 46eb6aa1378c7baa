#include "nn/init.h"

#include <string>

namespace prism::nn::init {

int64_t fan_in(const Dims& s) {
  if (s.size() < 2) {
    throw Error("init::fan_in: a weight has at least 2 dims, got " + s.str());
  }
  int64_t n = s[1];
  for (int d = 2; d < s.size(); ++d) n *= s[d];
  return n;
}

double kaiming_uniform_bound(int64_t fan_in, double a) {
  if (fan_in <= 0) throw Error("init::kaiming_uniform: fan_in must be positive");
  return std::sqrt(6.0 / ((1.0 + a * a) * static_cast<double>(fan_in)));
}

Tensor uniform(const Dims& shape, double low, double high, DType dtype) {
  return rand(shape, dtype, low, high);
}

Tensor normal(const Dims& shape, double mean, double std, DType dtype) {
  return randn(shape, dtype, mean, std);
}

Tensor kaiming_uniform(const Dims& shape, double a, DType dtype) {
  const double b = kaiming_uniform_bound(fan_in(shape), a);
  return uniform(shape, -b, b, dtype);
}

Tensor bias_uniform(const Dims& shape, int64_t fan_in, DType dtype) {
  if (fan_in <= 0) return zeros(shape, dtype);
  const double b = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return uniform(shape, -b, b, dtype);
}

}  // namespace prism::nn::init
