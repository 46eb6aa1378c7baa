// A plain float64 reference for the tensor ops, for tests only.
//
// Everything here works on `ref::Array`, a row-major shape plus a std::vector<double>, and is
// written from the ops' mathematical definitions with the simplest loops possible: no strides,
// no kernels, no registry. The tests build the same input in both worlds (a library Tensor,
// possibly a transposed / sliced / expanded view, and the equivalent Array), run the op in
// each, and compare with a tolerance that suits the op (`mismatch`).
//
// Sums (sum, mean, matmul, softmax) accumulate in long double, so the reference is more
// accurate than any float64 kernel it checks.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tensor/ops.h"

namespace prism::ref {

using Shape = std::vector<int64_t>;

inline int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

inline std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(s[i]);
  }
  out += ']';
  return out;
}

// Multi-index <-> flat row-major index.
inline std::vector<int64_t> unravel(int64_t flat, const Shape& s) {
  std::vector<int64_t> idx(s.size());
  for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
    idx[d] = flat % s[d];
    flat /= s[d];
  }
  return idx;
}

inline int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
  int64_t flat = 0;
  for (size_t d = 0; d < s.size(); ++d) flat = flat * s[d] + idx[d];
  return flat;
}

// A negative dim counts from the end; a 0-d array accepts 0 and -1.
inline int wrap(int d, int ndim) {
  const int n = ndim == 0 ? 1 : ndim;
  return d < 0 ? d + n : d;
}

struct Array {
  Shape shape;
  std::vector<double> v;

  Array() = default;
  Array(Shape s, std::vector<double> values) : shape(std::move(s)), v(std::move(values)) {}
  explicit Array(Shape s, double fill = 0)
      : shape(std::move(s)), v(static_cast<size_t>(numel_of(shape)), fill) {}

  int64_t numel() const { return static_cast<int64_t>(v.size()); }
  int dim() const { return static_cast<int>(shape.size()); }
  double& operator[](int64_t i) { return v[static_cast<size_t>(i)]; }
  double operator[](int64_t i) const { return v[static_cast<size_t>(i)]; }
  double at(const std::vector<int64_t>& idx) const {
    return v[static_cast<size_t>(ravel(idx, shape))];
  }
  double& at(const std::vector<int64_t>& idx) { return v[static_cast<size_t>(ravel(idx, shape))]; }

 private:
  static int64_t numel_of(const Shape& s) { return ref::numel(s); }
};

// ---- random inputs ----------------------------------------------------------------------------

// splitmix64: tiny, and the same numbers on every platform (unlike <random>'s distributions).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform(double lo = 0, double hi = 1) {
    return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
  }
  int64_t integer(int64_t lo, int64_t hi) {  // [lo, hi)
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo));
  }

 private:
  uint64_t s_;
};

inline Array random(const Shape& s, Rng& rng, double lo = -1, double hi = 1) {
  Array a(s);
  for (double& x : a.v) x = rng.uniform(lo, hi);
  return a;
}

// Values in [lo, hi), pairwise at least (hi - lo) / (2 n) apart, in random order: for max and
// relu gradients, where finite differences must not cross a tie or a kink.
inline Array distinct(const Shape& s, Rng& rng, double lo = -1, double hi = 1) {
  Array a(s);
  const int64_t n = a.numel();
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = i;
  for (int64_t i = n - 1; i > 0; --i)
    std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(rng.integer(0, i + 1))]);
  for (int64_t i = 0; i < n; ++i) {
    a[i] =
        lo + (hi - lo) *
                 (static_cast<double>(perm[static_cast<size_t>(i)]) + 0.25 + 0.5 * rng.uniform()) /
                 static_cast<double>(n);
  }
  return a;
}

inline Array indices(const Shape& s, Rng& rng, int64_t hi) {
  Array a(s);
  for (double& x : a.v) x = static_cast<double>(rng.integer(0, hi));
  return a;
}

// The values a tensor of dtype t holds for `a` (float32 rounds), so the reference computes
// from exactly the numbers the library sees.
inline Array rounded(const Array& a, DType t) {
  Array out = a;
  if (t == DType::f32) {
    for (double& x : out.v) x = static_cast<double>(static_cast<float>(x));
  } else if (t == DType::i64) {
    for (double& x : out.v) x = static_cast<double>(static_cast<int64_t>(x));
  }
  return out;
}

// ---- conversions (through from_vector / to_vector only: no kernels involved) -------------------

inline Tensor to_tensor(const Array& a, DType t = DType::f32) {
  Dims shape{std::vector<int64_t>(a.shape)};
  switch (t) {
    case DType::f32:
      return from_vector(std::vector<float>(a.v.begin(), a.v.end()), shape);
    case DType::f64:
      return from_vector(a.v, shape);
    case DType::i64: {
      std::vector<int64_t> iv;
      for (double x : a.v) iv.push_back(static_cast<int64_t>(x));
      return from_vector(iv, shape);
    }
    default:
      throw std::invalid_argument("to_tensor: the reference arrays hold f32, f64 or i64 only");
  }
  return Tensor();
}

inline Array of(const Tensor& t) {
  return Array(t.shape().vec(), t.to_vector<double>());
}

// ---- views, written as copies -------------------------------------------------------------------

inline Array permute(const Array& a, const std::vector<int>& order) {
  Shape s;
  for (int d : order) s.push_back(a.shape[static_cast<size_t>(d)]);
  Array out(s);
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> oi = unravel(i, s), ai(a.shape.size());
    for (size_t k = 0; k < order.size(); ++k) ai[static_cast<size_t>(order[k])] = oi[k];
    out[i] = a.at(ai);
  }
  return out;
}

inline Array transpose(const Array& a, int d0, int d1) {
  std::vector<int> order;
  for (int i = 0; i < a.dim(); ++i) order.push_back(i);
  std::swap(order[static_cast<size_t>(wrap(d0, a.dim()))],
            order[static_cast<size_t>(wrap(d1, a.dim()))]);
  return permute(a, order);
}

// Elements start, start + step, ... below stop along d (0 <= start <= stop <= size, step > 0).
inline Array slice(const Array& a, int d, int64_t start, int64_t stop, int64_t step = 1) {
  Shape s = a.shape;
  s[static_cast<size_t>(d)] = stop > start ? (stop - start + step - 1) / step : 0;
  Array out(s);
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    idx[static_cast<size_t>(d)] = start + idx[static_cast<size_t>(d)] * step;
    out[i] = a.at(idx);
  }
  return out;
}

inline Array select(const Array& a, int d, int64_t index) {
  Array s = slice(a, d, index, index + 1);
  s.shape.erase(s.shape.begin() + d);
  return s;
}

inline Array reshape(const Array& a, const Shape& s) {
  return Array(s, a.v);
}

// NumPy broadcasting, shapes aligned at the right.
inline Shape broadcast_shape(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i + a.size() >= n ? a[i + a.size() - n] : 1;
    const int64_t db = i + b.size() >= n ? b[i + b.size() - n] : 1;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// The element of `a` that position `idx` of the broadcast shape reads.
inline double broadcast_read(const Array& a, const std::vector<int64_t>& idx) {
  const size_t off = idx.size() - a.shape.size();
  std::vector<int64_t> ai(a.shape.size());
  for (size_t d = 0; d < a.shape.size(); ++d) ai[d] = a.shape[d] == 1 ? 0 : idx[d + off];
  return a.at(ai);
}

inline Array expand(const Array& a, const Shape& s) {
  Array out(s);
  for (int64_t i = 0; i < out.numel(); ++i) out[i] = broadcast_read(a, unravel(i, s));
  return out;
}

// ---- elementwise ------------------------------------------------------------------------------

template <class F>
Array map(const Array& a, F f) {
  Array out = a;
  for (double& x : out.v) x = f(x);
  return out;
}

template <class F>
Array zip(const Array& a, const Array& b, F f) {
  Array out(broadcast_shape(a.shape, b.shape));
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, out.shape);
    out[i] = f(broadcast_read(a, idx), broadcast_read(b, idx));
  }
  return out;
}

inline double relu(double x) {
  return !(x <= 0) ? x : 0;  // a NaN passes through, as in prism (and PyTorch)
}
inline double sigmoid(double x) {
  return 1 / (1 + std::exp(-x));
}
// GELU, tanh approximation (Hendrycks & Gimpel): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
inline double gelu(double x) {
  const double pi = 3.14159265358979323846;
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
}

inline Array abs(const Array& a) {
  return map(a, [](double x) { return std::fabs(x); });
}

// ---- reductions -------------------------------------------------------------------------------

// The output shape and, per input element, the output element it reduces into.
struct ReducePlan {
  Shape out_shape;
  std::vector<int64_t> target;  // per input element
};

inline ReducePlan plan_reduce(const Shape& s, std::vector<int> dims, bool keepdim) {
  const int nd = static_cast<int>(s.size());
  std::vector<bool> reduced(static_cast<size_t>(nd), dims.empty());
  for (int d : dims) {
    if (nd > 0) reduced[static_cast<size_t>(wrap(d, nd))] = true;
  }
  ReducePlan p;
  Shape keep_shape;
  for (int d = 0; d < nd; ++d) {
    if (!reduced[static_cast<size_t>(d)]) p.out_shape.push_back(s[static_cast<size_t>(d)]);
    keep_shape.push_back(reduced[static_cast<size_t>(d)] ? 1 : s[static_cast<size_t>(d)]);
  }
  for (int64_t i = 0; i < numel(s); ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    for (int d = 0; d < nd; ++d) {
      if (reduced[static_cast<size_t>(d)]) idx[static_cast<size_t>(d)] = 0;
    }
    p.target.push_back(ravel(idx, keep_shape));
  }
  if (keepdim) p.out_shape = keep_shape;
  return p;
}

inline Array sum(const Array& a, const std::vector<int>& dims = {}, bool keepdim = false) {
  ReducePlan p = plan_reduce(a.shape, dims, keepdim);
  std::vector<long double> acc(static_cast<size_t>(numel(p.out_shape)), 0.0L);
  for (int64_t i = 0; i < a.numel(); ++i)
    acc[static_cast<size_t>(p.target[static_cast<size_t>(i)])] += a[i];
  Array out(p.out_shape);
  for (int64_t i = 0; i < out.numel(); ++i)
    out[i] = static_cast<double>(acc[static_cast<size_t>(i)]);
  return out;
}

inline Array mean(const Array& a, const std::vector<int>& dims = {}, bool keepdim = false) {
  Array s = sum(a, dims, keepdim);
  const double count =
      static_cast<double>(a.numel()) / static_cast<double>(std::max<int64_t>(s.numel(), 1));
  return map(s, [count](double x) { return x / count; });
}

// Max over one dim, and the index of its first occurrence along that dim.
inline void max_argmax(const Array& a, int dim, bool keepdim, Array& values, Array& index) {
  const int nd = a.dim();
  const int d = wrap(dim, nd);
  ReducePlan p = plan_reduce(a.shape, {dim}, keepdim);
  values = Array(p.out_shape, -std::numeric_limits<double>::infinity());
  index = Array(p.out_shape, -1);
  for (int64_t i = 0; i < a.numel(); ++i) {
    const int64_t t = p.target[static_cast<size_t>(i)];
    const int64_t pos = nd == 0 ? 0 : unravel(i, a.shape)[static_cast<size_t>(d)];
    if (index[t] < 0 || a[i] > values[t]) {  // strictly greater: ties keep the first
      values[t] = a[i];
      index[t] = static_cast<double>(pos);
    }
  }
}

inline Array amax(const Array& a, int dim, bool keepdim = false) {
  Array v, i;
  max_argmax(a, dim, keepdim, v, i);
  return v;
}

inline Array argmax(const Array& a, int dim, bool keepdim = false) {
  Array v, i;
  max_argmax(a, dim, keepdim, v, i);
  return i;
}

// Sums `a` down to `shape`, the inverse of broadcasting `shape` up to a's shape.
inline Array sum_to(const Array& a, const Shape& shape) {
  Array out(shape);
  for (int64_t i = 0; i < a.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, a.shape);
    const size_t off = a.shape.size() - shape.size();
    std::vector<int64_t> oi(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) oi[d] = shape[d] == 1 ? 0 : idx[d + off];
    out.at(oi) += a[i];
  }
  return out;
}

// ---- matmul ---------------------------------------------------------------------------------

// NumPy matmul: a 1-d left operand is a row, a 1-d right operand a column (the added dim is
// removed from the result); batch dims broadcast.
inline Array matmul(const Array& a0, const Array& b0) {
  Array a = a0, b = b0;
  if (a.dim() == 1) a.shape.insert(a.shape.begin(), 1);
  if (b.dim() == 1) b.shape.push_back(1);
  const int64_t m = a.shape[a.shape.size() - 2], k = a.shape.back(), n = b.shape.back();
  Shape ba(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  Shape batch = broadcast_shape(ba, bb);
  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  Array out(out_shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, out_shape);
    const int64_t r = idx[idx.size() - 2], c = idx.back();
    std::vector<int64_t> bi(idx.begin(), idx.end() - 2);
    long double acc = 0;
    for (int64_t p = 0; p < k; ++p) {
      std::vector<int64_t> ia = bi, ib = bi;
      ia.push_back(r), ia.push_back(p);
      ib.push_back(p), ib.push_back(c);
      acc += static_cast<long double>(broadcast_read(a, ia)) * broadcast_read(b, ib);
    }
    out[i] = static_cast<double>(acc);
  }
  if (b0.dim() == 1) out.shape.pop_back();
  if (a0.dim() == 1) out.shape.erase(out.shape.end() - (b0.dim() == 1 ? 1 : 2));
  return out;
}

// ---- softmax --------------------------------------------------------------------------------

inline Array softmax_impl(const Array& a, int dim, bool log) {
  Array out(a.shape);
  if (a.numel() == 0) return out;
  const int d = wrap(dim, a.dim());
  const int64_t len = a.dim() == 0 ? 1 : a.shape[static_cast<size_t>(d)];
  ReducePlan p = plan_reduce(a.shape, {dim}, true);
  const int64_t groups = numel(p.out_shape);
  // Members of each group (a line along `dim`), in order.
  std::vector<std::vector<int64_t>> members(static_cast<size_t>(groups));
  for (int64_t i = 0; i < a.numel(); ++i)
    members[static_cast<size_t>(p.target[static_cast<size_t>(i)])].push_back(i);
  for (const auto& g : members) {
    if (static_cast<int64_t>(g.size()) != len) continue;  // never happens; keeps the loop honest
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t i : g) m = std::max(m, a[i]);
    long double s = 0;
    for (int64_t i : g) s += std::exp(static_cast<long double>(a[i] - m));
    for (int64_t i : g) {
      out[i] = log ? static_cast<double>(static_cast<long double>(a[i] - m) - std::log(s))
                   : static_cast<double>(std::exp(static_cast<long double>(a[i] - m)) / s);
    }
  }
  return out;
}

inline Array softmax(const Array& a, int dim) {
  return softmax_impl(a, dim, false);
}
inline Array log_softmax(const Array& a, int dim) {
  return softmax_impl(a, dim, true);
}

// ---- indexing and joining ---------------------------------------------------------------------

// out[..i..] = a[..index[..i..]..] along dim (torch.gather); index has a's ndim.
inline Array gather(const Array& a, int dim, const Array& index) {
  const int d = wrap(dim, a.dim());
  Array out(index.shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, index.shape);
    idx[static_cast<size_t>(d)] = static_cast<int64_t>(index[i]);
    out[i] = a.at(idx);
  }
  return out;
}

inline Array index_select(const Array& a, int dim, const std::vector<int64_t>& index) {
  const int d = wrap(dim, a.dim());
  Shape s = a.shape;
  s[static_cast<size_t>(d)] = static_cast<int64_t>(index.size());
  Array out(s);
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, s);
    idx[static_cast<size_t>(d)] = index[static_cast<size_t>(idx[static_cast<size_t>(d)])];
    out[i] = a.at(idx);
  }
  return out;
}

inline Array concat(const std::vector<Array>& xs, int dim) {
  const int d = wrap(dim, xs.front().dim());
  Shape s = xs.front().shape;
  s[static_cast<size_t>(d)] = 0;
  for (const Array& x : xs) s[static_cast<size_t>(d)] += x.shape[static_cast<size_t>(d)];
  Array out(s);
  int64_t at = 0;
  for (const Array& x : xs) {
    for (int64_t i = 0; i < x.numel(); ++i) {
      std::vector<int64_t> idx = unravel(i, x.shape);
      idx[static_cast<size_t>(d)] += at;
      out.at(idx) = x[i];
    }
    at += x.shape[static_cast<size_t>(d)];
  }
  return out;
}

// ---- comparison ---------------------------------------------------------------------------------

// "" when every element of `actual` is within atol + rtol * scale of `expected` (scale defaults
// to |expected|; pass e.g. sum(|x|) for a sum, so cancellation does not demand the impossible).
// Otherwise a message naming the shapes or the worst element. NaNs must match NaNs.
inline std::string mismatch(const Array& actual, const Array& expected, double rtol, double atol,
                            const Array* scale = nullptr) {
  if (actual.shape != expected.shape) {
    return "shape " + shape_str(actual.shape) + " vs expected " + shape_str(expected.shape);
  }
  if (actual.v.size() != expected.v.size()) return "element counts differ";
  double worst = 0;
  int64_t worst_i = -1;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual[i], e = expected[i];
    if (std::isnan(e) || std::isnan(a)) {
      if (std::isnan(e) != std::isnan(a)) {
        worst_i = i;
        worst = std::numeric_limits<double>::infinity();
        break;
      }
      continue;
    }
    if (std::isinf(e) || std::isinf(a)) {
      if (a != e) {
        worst_i = i;
        worst = std::numeric_limits<double>::infinity();
        break;
      }
      continue;
    }
    const double sc = scale ? std::fabs((*scale)[i]) : std::fabs(e);
    const double excess = std::fabs(a - e) / (atol + rtol * sc);
    if (excess > 1 && excess > worst) {
      worst = excess;
      worst_i = i;
    }
  }
  if (worst_i < 0) return "";
  std::ostringstream m;
  m.precision(17);
  const std::vector<int64_t> idx = unravel(worst_i, actual.shape);
  m << "element " << worst_i << " (index " << shape_str(idx) << ") of " << shape_str(actual.shape)
    << ": actual " << actual[worst_i] << " vs expected " << expected[worst_i] << " (error "
    << std::fabs(actual[worst_i] - expected[worst_i]) << ", " << worst << "x the tolerance)";
  return m.str();
}

inline std::string mismatch(const Tensor& actual, const Array& expected, double rtol, double atol,
                            const Array* scale = nullptr) {
  return mismatch(of(actual), expected, rtol, atol, scale);
}

// Tolerances for results computed in dtype t: an elementwise float32 op is good to a few ulps
// (2^-23 ~ 1.2e-7); float64 results are held to ~1e-12.
struct Tol {
  double rtol, atol;
};
inline Tol tol_for(DType t, double f32_rtol = 1e-5, double f32_atol = 1e-6) {
  return t == DType::f32 ? Tol{f32_rtol, f32_atol} : Tol{1e-12, 1e-13};
}

// ---- one input in both worlds ------------------------------------------------------------------

// How a test input is laid out in memory: the same logical values, different strides.
enum class Layout {
  contiguous,  // a fresh row-major tensor
  transposed,  // last two dims swapped in memory (a transpose view); 1-d: like `stepped`
  stepped,     // every other element of a longer last dim, from offset 1 (slice with step 2)
  expanded,    // the first dim larger than 1 is a stride-0 broadcast of a size-1 dim
};

inline const char* layout_name(Layout l) {
  switch (l) {
    case Layout::contiguous:
      return "contiguous";
    case Layout::transposed:
      return "transposed";
    case Layout::stepped:
      return "stepped";
    case Layout::expanded:
      return "expanded";
  }
  return "?";
}

constexpr Layout kAllLayouts[] = {Layout::contiguous, Layout::transposed, Layout::stepped,
                                  Layout::expanded};

struct Input {
  Tensor t;  // the library's tensor, possibly a non-contiguous view
  Array a;   // its logical values, as the reference sees them
};

// A random input of logical shape `s` with layout `l` and dtype `dt`, values in [lo, hi), or
// in +-[lo, hi) with `random_sign` (a divisor kept away from zero).
inline Input make_input(const Shape& s, Layout l, DType dt, Rng& rng, double lo = -1, double hi = 1,
                        bool random_sign = false) {
  const int nd = static_cast<int>(s.size());
  if (nd == 0) l = Layout::contiguous;
  if (l == Layout::transposed && nd < 2) l = Layout::stepped;
  if (l == Layout::expanded && std::none_of(s.begin(), s.end(), [](int64_t d) { return d > 1; })) {
    l = Layout::contiguous;
  }
  Input in;
  Shape base_shape = s;
  switch (l) {
    case Layout::contiguous:
      break;
    case Layout::transposed:
      std::swap(base_shape[static_cast<size_t>(nd - 2)], base_shape[static_cast<size_t>(nd - 1)]);
      break;
    case Layout::stepped:
      base_shape.back() = 2 * s.back() + 1;
      break;
    case Layout::expanded:
      for (int64_t& d : base_shape) {
        if (d > 1) {
          d = 1;
          break;
        }
      }
      break;
  }
  Array base = random(base_shape, rng, lo, hi);
  if (random_sign) {
    for (double& x : base.v) x = rng.uniform() < 0.5 ? -x : x;
  }
  base = rounded(base, dt);
  Tensor bt = to_tensor(base, dt);
  switch (l) {
    case Layout::contiguous:
      in.t = bt, in.a = base;
      break;
    case Layout::transposed:
      in.t = bt.transpose(-1, -2), in.a = transpose(base, -1, -2);
      break;
    case Layout::stepped:
      in.t = bt.slice(-1, 1, 2 * s.back() + 1, 2);
      in.a = slice(base, nd - 1, 1, 2 * s.back() + 1, 2);
      break;
    case Layout::expanded:
      in.t = bt.expand(Dims(s)), in.a = expand(base, s);
      break;
  }
  return in;
}

}  // namespace prism::ref
