#include "exercises/checker/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernels/types.h"

namespace prism::exercises {
namespace {

// |a - b|, with the NaN and infinity rules of compare.h.
double difference(float a, float b) {
  const bool na = std::isnan(a), nb = std::isnan(b);
  if (na || nb) return na && nb ? 0.0 : std::numeric_limits<double>::infinity();
  if (std::isinf(a) || std::isinf(b)) return a == b ? 0.0 : std::numeric_limits<double>::infinity();
  return std::abs(static_cast<double>(a) - static_cast<double>(b));
}

}  // namespace

Comparison compare(const Tensor& got_t, const Tensor& want_t) {
  const Tensor g = got_t.contiguous(), w = want_t.contiguous();
  const float* got = g.data<float>();
  const float* want = w.data<float>();
  const int64_t n = w.numel();
  double scale = 1;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isfinite(want[i])) scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  Comparison c;
  double worst = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double d = difference(got[i], want[i]);
    if (d > worst) {
      worst = d;
      c.worst = i;
    }
  }
  if (c.worst >= 0) {
    c.error = worst / scale;
    c.got = got[c.worst];
    c.want = want[c.worst];
  }
  return c;
}

Comparison compare_parts(const Tensor& got_t, const Tensor& want_t,
                         const std::vector<Part>& parts) {
  const Tensor g = got_t.contiguous(), w = want_t.contiguous();
  const int64_t rows = w.dim() == 0 ? 1 : w.size(0);
  const int64_t per_row = rows > 0 ? w.numel() / rows : 0;
  Comparison worst;
  worst.error = -1;
  int64_t row0 = 0;
  for (const Part& p : parts) {
    if (p.rows <= 0) continue;
    Comparison c = compare(g.slice(0, row0, row0 + p.rows), w.slice(0, row0, row0 + p.rows));
    if (c.error > worst.error) {
      worst = c;
      worst.worst = c.worst < 0 ? -1 : c.worst + row0 * per_row;
      worst.part = p.name;
    }
    row0 += p.rows;
  }
  if (row0 != rows)
    throw Error("compare_parts: the parts cover " + std::to_string(row0) + " rows of " +
                std::to_string(rows));
  if (worst.error < 0) worst.error = 0;
  return worst;
}

std::string index_str(const Dims& shape, int64_t i) {
  std::string s;
  for (int d = shape.size() - 1; d >= 0; --d) {
    const int64_t n = shape[d];
    s = std::to_string(i % n) + (s.empty() ? "" : ",") + s;
    i /= n;
  }
  return "[" + s + "]";
}

}  // namespace prism::exercises
