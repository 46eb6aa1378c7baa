#include "kernels/costs.h"

namespace prism::costs {

namespace {
[[noreturn]] void overflow() {
  throw Error(
      "a FLOP, MAC or byte count exceeds 2^63 - 1: the shapes are too large to count in int64");
}
}  // namespace

Count operator*(Count a, Count b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a.v_, b.v_, &r)) overflow();
  return r;
}
Count operator+(Count a, Count b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a.v_, b.v_, &r)) overflow();
  return r;
}
Count operator-(Count a, Count b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a.v_, b.v_, &r)) overflow();
  return r;
}

int64_t window_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding) {
  return (in + 2 * padding - kernel) / stride + 1;
}

}  // namespace prism::costs
