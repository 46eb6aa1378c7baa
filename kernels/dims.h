// Dims: a shape or a stride list, stored inline (at most kMaxDims entries).
//
// Every view creates a new shape and stride list; keeping them inline means a view allocates
// nothing at all, not even a small vector (tests/tensor/views_test.cpp counts).
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <vector>

#include "kernels/args.h"
#include "kernels/types.h"

namespace prism {

class Dims {
 public:
  static constexpr int kMax = kernels::kMaxDims;

  Dims() = default;
  Dims(std::initializer_list<int64_t> d) { assign(d.begin(), d.end()); }
  explicit Dims(const std::vector<int64_t>& d) { assign(d.begin(), d.end()); }
  Dims(const int64_t* d, int n) { assign(d, d + n); }

  int size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int64_t operator[](int i) const { return d_[i]; }
  int64_t& operator[](int i) { return d_[i]; }
  const int64_t* data() const { return d_; }
  const int64_t* begin() const { return d_; }
  const int64_t* end() const { return d_ + n_; }
  int64_t back() const { return d_[n_ - 1]; }

  void push_back(int64_t v) {
    check_room(n_ + 1);
    d_[n_++] = v;
  }
  void insert(int at, int64_t v) {
    check_room(n_ + 1);
    for (int i = n_; i > at; --i) d_[i] = d_[i - 1];
    d_[at] = v;
    ++n_;
  }
  void erase(int at) {
    for (int i = at; i + 1 < n_; ++i) d_[i] = d_[i + 1];
    --n_;
  }

  // Product of the entries (the element count, for a shape); 1 for an empty (scalar) shape.
  int64_t numel() const {
    int64_t p = 1;
    for (int i = 0; i < n_; ++i) p *= d_[i];
    return p;
  }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  std::string str() const;  // "[2,3]"

  friend bool operator==(const Dims& a, const Dims& b) {
    return a.n_ == b.n_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  template <class It>
  void assign(It first, It last) {
    check_room(static_cast<int>(last - first));
    n_ = 0;
    for (; first != last; ++first) d_[n_++] = *first;
  }
  static void check_room(int n) {
    if (n > kMax) {
      throw Error("tensors have at most " + std::to_string(kMax) + " dims, asked for " +
                  std::to_string(n));
    }
  }

  int64_t d_[kMax] = {};
  int n_ = 0;
};

// The text form, "[2,3]", as Dims::str(): `std::cout << t.shape()` prints it, and so does a
// failed test CHECK comparing shapes (doctest prints a value through its operator<<).
std::ostream& operator<<(std::ostream& os, const Dims& d);

// The sizes of a shape that may come from outside the program (a file header, a flag, a
// caller), checked: every entry is non-negative, and the element count and the byte size of
// the contiguous layout stay within prism's limit per tensor. The strides count too: a shape
// with a 0 in it holds no elements, but its strides are still products of the other entries, so
// [0, 2^40, 2^40] is too large (unchecked, that is signed overflow: undefined behaviour). The
// condition checked, in overflow-checked arithmetic, is
//   prod_i max(shape[i], 1) * element_size <= kMaxTensorBytes = 2^50 (1 PiB),
// which bounds numel, nbytes and every stride at once. Why 2^50 and not 2^63: no machine holds
// a tensor of a pebibyte (the meta device counts such shapes without holding them), and the
// headroom keeps every total the profiler and the memory tracker add up (bytes live, allocated,
// per module) far from int64's limit. A failure throws an Error that starts with `what`
// ("empty", "safetensors 'w.st': tensor 'fc.weight'") and names the shape.
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 50;
struct ShapeSize {
  int64_t numel = 0;
  int64_t nbytes = 0;
};
ShapeSize checked_shape_size(const int64_t* shape, int n, int64_t element_size,
                             const std::string& what);
inline ShapeSize checked_shape_size(const Dims& shape, DType dtype, const std::string& what) {
  return checked_shape_size(shape.data(), shape.size(), dtype_size(dtype), what);
}

}  // namespace prism
