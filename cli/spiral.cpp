#include "cli/spiral.h"

#include <cmath>

#include "kernels/types.h"
#include "tensor/random.h"

namespace prism::cli {

SpiralData make_spiral(int points_per_class, int classes, uint64_t seed, double noise) {
  if (points_per_class < 2 || classes < 1) {
    throw Error("make_spiral: needs at least 2 points per class and 1 class");
  }
  // A generator of our own, so the data do not depend on (or disturb) the global one that
  // initialises the weights.
  Generator gen(seed);
  SpiralData d;
  d.classes = classes;
  d.count = static_cast<int64_t>(points_per_class) * classes;
  d.points.reserve(static_cast<size_t>(d.count) * 2);
  d.labels.reserve(static_cast<size_t>(d.count));
  for (int k = 0; k < classes; ++k) {
    for (int i = 0; i < points_per_class; ++i) {
      const double r = static_cast<double>(i) / (points_per_class - 1);
      const double theta = 4.0 * k + 4.0 * r + noise * gen.normal();
      d.points.push_back(static_cast<float>(r * std::sin(theta)));
      d.points.push_back(static_cast<float>(r * std::cos(theta)));
      d.labels.push_back(k);
    }
  }
  return d;
}

}  // namespace prism::cli
