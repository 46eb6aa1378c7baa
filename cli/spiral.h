// The spiral data set: K interleaved arms in the plane, one class per arm.
//
// It is the classic toy problem that a linear classifier cannot solve (the arms wind around
// each other), while a small MLP with one hidden layer can. Class k's i-th point (of n) sits at
//   r = i / (n - 1),   theta = 4k + 4r + noise * N(0, 1),   (x, y) = (r sin theta, r cos theta)
// so each arm turns through 4 radians from the centre to radius 1.
#pragma once

#include <cstdint>
#include <vector>

namespace prism::cli {

struct SpiralData {
  int64_t count = 0;  // number of points (points_per_class * classes)
  int classes = 0;
  std::vector<float> points;    // [count, 2], row-major
  std::vector<int64_t> labels;  // [count], in [0, classes)
};

// Seeded: the same seed gives the same points on every machine (prism::Generator).
SpiralData make_spiral(int points_per_class, int classes, uint64_t seed, double noise = 0.2);

}  // namespace prism::cli
