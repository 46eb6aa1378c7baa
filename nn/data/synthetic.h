// Generated data sets: there whenever no files are, the same on every machine for a seed
// (each draws from its own prism::Generator, never the global one that initialises weights).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/data/dataset.h"

namespace prism::nn::data {

// K interleaved spiral arms in the plane, one class per arm: the classic problem a linear
// classifier cannot solve and a one-hidden-layer MLP can. Point i (of n) of class k sits at
//   r = i / (n - 1),   theta = 4k + 4r + noise * N(0, 1),   (x, y) = (r sin theta, r cos theta)
// (the same family as the `prism demo` spiral). Inputs [n*K, 2] float32, labels [n*K] int64,
// class by class.
TensorDataset spirals(int64_t n_per_class, int classes = 3, double noise = 0.2, uint64_t seed = 0);

// Small grayscale images of ten shapes, a stand-in for Fashion-MNIST that a CNN can learn in
// seconds: inputs [count, 1, size, size] float32 in [0, 1], labels [count] int64 with example i
// in class i % 10. Each shape gets a random centre, size (from a quarter to two thirds of the
// image) and brightness, is drawn with 4x4 supersampling (soft edges), and gets Gaussian pixel
// noise of standard deviation `noise`, clipped to [0, 1]. The classes, in order, are those of
// shape_classes(): filled square, square outline, disk, ring, triangle, plus, cross (an x),
// horizontal bar, vertical bar, diamond.
TensorDataset shapes(int64_t count, uint64_t seed = 0, double noise = 0.1, int size = 28);
const std::vector<std::string>& shape_classes();

}  // namespace prism::nn::data
