#include "nn/data/synthetic.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "tensor/random.h"

namespace prism::nn::data {

TensorDataset spirals(int64_t n_per_class, int classes, double noise, uint64_t seed) {
  if (n_per_class < 2 || classes < 1) {
    throw Error("spirals: needs at least 2 points per class and 1 class, got " +
                std::to_string(n_per_class) + " and " + std::to_string(classes));
  }
  if (!(noise >= 0)) throw Error("spirals: noise must be >= 0, got " + std::to_string(noise));
  Generator gen(seed);
  const int64_t n = n_per_class * classes;
  Tensor points = make_data_tensor({n, 2}, DType::f32);
  Tensor labels = make_data_tensor({n}, DType::i64);
  float* p = points.data<float>();
  int64_t* l = labels.data<int64_t>();
  for (int k = 0; k < classes; ++k) {
    for (int64_t i = 0; i < n_per_class; ++i) {
      const double r = static_cast<double>(i) / static_cast<double>(n_per_class - 1);
      const double theta = 4.0 * k + 4.0 * r + noise * gen.normal();
      *p++ = static_cast<float>(r * std::sin(theta));
      *p++ = static_cast<float>(r * std::cos(theta));
      *l++ = k;
    }
  }
  return TensorDataset(points, labels);
}

const std::vector<std::string>& shape_classes() {
  static const std::vector<std::string> names = {"square", "outline", "disk", "ring", "triangle",
                                                 "plus",   "cross",   "hbar", "vbar", "diamond"};
  return names;
}

namespace {

// Is the point (u, v) inside shape `cls`? (u, v) are relative to the shape's centre in units
// of its half-size r (the shape fills roughly [-1, 1]^2; v grows downwards, like image rows);
// `t` is the stroke width of outlines and bars in the same units.
bool inside(int cls, double u, double v, double t) {
  const double au = std::abs(u), av = std::abs(v);
  switch (cls) {
    case 0:
      return std::max(au, av) <= 0.85;  // filled square
    case 1:
      return std::max(au, av) <= 0.9 && std::max(au, av) >= 0.9 - t;  // square outline
    case 2:
      return u * u + v * v <= 0.95 * 0.95;  // disk
    case 3: {                               // ring
      const double d = std::sqrt(u * u + v * v);
      return d <= 0.95 && d >= 0.95 - t;
    }
    case 4:
      return v >= -0.9 && v <= 0.9 && au <= (v + 0.9) * 0.5;  // triangle, apex up
    case 5:
      return (au <= t / 2 && av <= 0.95) || (av <= t / 2 && au <= 0.95);  // plus
    case 6: {                                                             // cross (an x)
      const double w = t / 2 * std::numbers::sqrt2;
      return au <= 0.8 && av <= 0.8 && (std::abs(u - v) <= w || std::abs(u + v) <= w);
    }
    case 7:
      return av <= t / 2 && au <= 0.95;  // horizontal bar
    case 8:
      return au <= t / 2 && av <= 0.95;  // vertical bar
    case 9:
      return au + av <= 0.95;  // diamond
  }
  return false;
}

}  // namespace

TensorDataset shapes(int64_t count, uint64_t seed, double noise, int size) {
  if (count < 0) throw Error("shapes: count must be >= 0, got " + std::to_string(count));
  if (size < 12 || size > 512)
    throw Error("shapes: image size must be in [12, 512], got " + std::to_string(size));
  if (!(noise >= 0)) throw Error("shapes: noise must be >= 0, got " + std::to_string(noise));
  constexpr int kClasses = 10;
  constexpr int kSuper = 4;  // kSuper x kSuper samples per pixel
  Generator gen(seed);
  Tensor images = make_data_tensor({count, 1, size, size}, DType::f32);
  Tensor labels = make_data_tensor({count}, DType::i64);
  float* img = images.data<float>();
  int64_t* lab = labels.data<int64_t>();
  const double s = size;
  for (int64_t n = 0; n < count; ++n) {
    const int cls = static_cast<int>(n % kClasses);
    lab[n] = cls;
    // Half-size from s/8 to s/3; the centre keeps the whole shape (plus a pixel) inside.
    const double r = s / 8 + gen.uniform() * (s / 3 - s / 8);
    const double lo = r + 1, hi = s - r - 1;
    const double cx = lo + gen.uniform() * (hi - lo);
    const double cy = lo + gen.uniform() * (hi - lo);
    const double brightness = 0.6 + 0.4 * gen.uniform();
    const double t = std::max(1.6, 0.3 * r) / r;  // strokes at least 1.6 pixels wide
    float* px = img + n * size * size;
    // Every shape lies within r of its centre: only pixels in that box need sampling.
    const int x0 = static_cast<int>(cx - r), x1 = static_cast<int>(cx + r);
    const int y0 = static_cast<int>(cy - r), y1 = static_cast<int>(cy + r);
    for (int y = 0; y < size; ++y) {
      for (int x = 0; x < size; ++x) {
        int hits = 0;
        const bool near = x >= x0 && x <= x1 && y >= y0 && y <= y1;
        for (int sy = 0; near && sy < kSuper; ++sy) {
          for (int sx = 0; sx < kSuper; ++sx) {
            const double u = (x + (sx + 0.5) / kSuper - cx) / r;
            const double v = (y + (sy + 0.5) / kSuper - cy) / r;
            hits += inside(cls, u, v, t);
          }
        }
        double value = brightness * hits / (kSuper * kSuper);
        if (noise > 0) value += noise * gen.normal();
        px[y * size + x] = static_cast<float>(std::clamp(value, 0.0, 1.0));
      }
    }
  }
  return TensorDataset(images, labels);
}

}  // namespace prism::nn::data
