#include "analysis/fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "kernels/types.h"

namespace prism::analysis {

namespace {

// ---- Student's t ------------------------------------------------------------------------------
//
// P(|T| <= t) = 1 - I_{df / (df + t^2)}(df / 2, 1 / 2), with I the regularized incomplete beta
// function, evaluated by its continued fraction (modified Lentz; Numerical Recipes 6.4).

double beta_continued_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-16;
  const double qab = a + b, qap = a + 1, qam = a - 1;
  double c = 1, d = 1 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 10'000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1) < kEps) break;
  }
  return h;
}

double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) +
                                a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

double t_central_probability(double t, int df) {  // P(|T| <= t), t >= 0
  const double v = df;
  return 1 - regularized_incomplete_beta(v / 2, 0.5, v / (v + t * t));
}

// ---- input checks ---------------------------------------------------------------------------

void check_points(const std::vector<double>& xs, const std::vector<double>& ys, const char* fn) {
  if (xs.size() != ys.size()) {
    throw Error(fmt::format("{}: {} sizes but {} values", fn, xs.size(), ys.size()));
  }
  if (xs.size() < 2) {
    throw Error(fmt::format("{}: a fit needs at least 2 points (3 for an interval), got {}", fn,
                            xs.size()));
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!(xs[i] > 0) || !std::isfinite(xs[i])) {
      throw Error(fmt::format("{}: size {} is {}: a power law needs sizes > 0", fn, i + 1, xs[i]));
    }
    if (!(ys[i] > 0) || !std::isfinite(ys[i])) {
      throw Error(
          fmt::format("{}: value {} is {}: a power law needs values > 0", fn, i + 1, ys[i]));
    }
  }
  if (std::all_of(xs.begin(), xs.end(), [&](double x) { return x == xs[0]; })) {
    throw Error(
        fmt::format("{}: every size is {}: a slope needs at least two different sizes", fn, xs[0]));
  }
}

void check_confidence(double confidence, const char* fn) {
  if (!(confidence > 0 && confidence < 1)) {
    throw Error(fmt::format("{}: confidence must lie in (0, 1), got {}", fn, confidence));
  }
}

// exp(log y +- t * se), as a prediction.
Prediction make_prediction(double x, double log_y, double se, int df, double confidence,
                           double x_min, double x_max) {
  Prediction p;
  p.x = x;
  p.value = std::exp(log_y);
  p.low = p.high = p.value;
  p.interpolation = x >= x_min && x <= x_max;
  if (df >= 1) {
    const double t = student_t_critical(confidence, df);
    p.low = std::exp(log_y - t * se);
    p.high = std::exp(log_y + t * se);
    p.has_interval = true;
  }
  return p;
}

void check_x(double x, const char* fn) {
  if (!(x > 0) || !std::isfinite(x)) {
    throw Error(fmt::format("{}: can only predict at a size > 0, got {}", fn, x));
  }
}

// (X^T X)^-1 of a 3x3 symmetric positive definite matrix by Gauss-Jordan with partial pivoting;
// false when it is singular (a regressor that is a combination of the others).
bool invert3(std::array<std::array<double, 3>, 3> m, std::array<std::array<double, 3>, 3>& inv) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) inv[i][j] = i == j ? 1 : 0;
  double scale = 0;
  for (const auto& row : m)
    for (double v : row) scale = std::max(scale, std::fabs(v));
  for (int col = 0; col < 3; ++col) {
    int pivot = col;
    for (int r = col + 1; r < 3; ++r) {
      if (std::fabs(m[r][col]) > std::fabs(m[pivot][col])) pivot = r;
    }
    if (std::fabs(m[pivot][col]) <= 1e-12 * scale) return false;
    std::swap(m[col], m[pivot]);
    std::swap(inv[col], inv[pivot]);
    const double d = m[col][col];
    for (int j = 0; j < 3; ++j) {
      m[col][j] /= d;
      inv[col][j] /= d;
    }
    for (int r = 0; r < 3; ++r) {
      if (r == col) continue;
      const double f = m[r][col];
      for (int j = 0; j < 3; ++j) {
        m[r][j] -= f * m[col][j];
        inv[r][j] -= f * inv[col][j];
      }
    }
  }
  return true;
}

}  // namespace

double student_t_critical(double confidence, int df) {
  check_confidence(confidence, "student_t_critical");
  if (df < 1) {
    throw Error(fmt::format("student_t_critical: needs at least 1 degree of freedom, got {}", df));
  }
  // P(|T| <= t) rises from 0 to 1 in t: bracket, then bisect to the last bit.
  double lo = 0, hi = 1;
  while (t_central_probability(hi, df) < confidence) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-14 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (t_central_probability(mid, df) < confidence ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

PowerLawFit fit_power_law(const std::vector<double>& xs, const std::vector<double>& ys,
                          double confidence) {
  check_points(xs, ys, "fit_power_law");
  check_confidence(confidence, "fit_power_law");
  const size_t n = xs.size();
  std::vector<double> lx(n), ly(n);
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    lx[i] = std::log(xs[i]);
    ly[i] = std::log(ys[i]);
    mx += lx[i];
    my += ly[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (lx[i] - mx) * (lx[i] - mx);
    sxy += (lx[i] - mx) * (ly[i] - my);
    syy += (ly[i] - my) * (ly[i] - my);
  }
  PowerLawFit f;
  f.n = n;
  f.confidence = confidence;
  f.k = sxy / sxx;
  const double log_c = my - f.k * mx;
  f.c = std::exp(log_c);
  double sse = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = ly[i] - (log_c + f.k * lx[i]);
    sse += r * r;
  }
  // R^2 = 1 - SSE / SST; a constant y (SST = 0) is fitted exactly by k = 0.
  f.r2 = syy > 0 ? std::max(0.0, 1 - sse / syy) : 1;
  f.mean_log_x = mx;
  f.sxx = sxx;
  f.x_min = *std::min_element(xs.begin(), xs.end());
  f.x_max = *std::max_element(xs.begin(), xs.end());
  f.df = static_cast<int>(n) - 2;
  f.k_ci_low = f.k_ci_high = f.k;
  if (f.df >= 1) {
    f.residual_sd = std::sqrt(sse / f.df);
    f.se_k = f.residual_sd / std::sqrt(sxx);
    const double t = student_t_critical(confidence, f.df);
    f.k_ci_low = f.k - t * f.se_k;
    f.k_ci_high = f.k + t * f.se_k;
    f.has_interval = true;
  }
  return f;
}

Prediction predict(const PowerLawFit& fit, double x) {
  check_x(x, "predict");
  const double u = std::log(x) - fit.mean_log_x;
  const double log_y = std::log(fit.c) + fit.k * std::log(x);
  const double se =
      fit.residual_sd * std::sqrt(1 + 1.0 / static_cast<double>(fit.n) + u * u / fit.sxx);
  return make_prediction(x, log_y, se, fit.df, fit.confidence, fit.x_min, fit.x_max);
}

std::optional<KneeFit> find_knee(const std::vector<double>& xs, const std::vector<double>& ys,
                                 double confidence) {
  check_points(xs, ys, "find_knee");
  check_confidence(confidence, "find_knee");
  std::vector<double> distinct = xs;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (distinct.size() < kKneeMinPoints) return std::nullopt;

  const PowerLawFit single = fit_power_law(xs, ys, confidence);
  const size_t n = xs.size();
  std::vector<double> lx(n), ly(n);
  for (size_t i = 0; i < n; ++i) {
    lx[i] = std::log(xs[i]);
    ly[i] = std::log(ys[i]);
  }
  double sse_single = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = ly[i] - std::log(single.c) - single.k * lx[i];
    sse_single += r * r;
  }

  std::optional<KneeFit> best;
  // Every interior distinct x as the break: at least one point strictly on each side.
  for (size_t b = 1; b + 1 < distinct.size(); ++b) {
    const double lb = std::log(distinct[b]);
    std::array<std::array<double, 3>, 3> xtx{};
    std::array<double, 3> xty{};
    auto row_of = [&](double l) {
      return std::array<double, 3>{1.0, l - single.mean_log_x, std::max(0.0, l - lb)};
    };
    for (size_t i = 0; i < n; ++i) {
      const auto row = row_of(lx[i]);
      for (int r = 0; r < 3; ++r) {
        xty[r] += row[r] * ly[i];
        for (int c = 0; c < 3; ++c) xtx[r][c] += row[r] * row[c];
      }
    }
    std::array<std::array<double, 3>, 3> inv{};
    if (!invert3(xtx, inv)) continue;
    std::array<double, 3> beta{};
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) beta[r] += inv[r][c] * xty[c];
    double sse = 0;
    for (size_t i = 0; i < n; ++i) {
      const auto row = row_of(lx[i]);
      const double r = ly[i] - (beta[0] * row[0] + beta[1] * row[1] + beta[2] * row[2]);
      sse += r * r;
    }
    if (best && sse >= best->sse_two) continue;
    KneeFit k;
    k.x_break = distinct[b];
    k.break_index = b;
    k.sse_two = sse;
    k.beta = beta;
    k.xtx_inv = inv;
    best = k;
  }
  if (!best) return std::nullopt;

  KneeFit& k = *best;
  k.n = n;
  k.df = static_cast<int>(n) - 3;
  k.confidence = confidence;
  k.sse_single = sse_single;
  k.mean_log_x = single.mean_log_x;
  k.x_min = distinct.front();
  k.x_max = distinct.back();
  k.residual_sd = std::sqrt(k.sse_two / k.df);
  const double t = student_t_critical(confidence, k.df);
  const double s2 = k.residual_sd * k.residual_sd;
  const auto& v = k.xtx_inv;
  k.k_left = k.beta[1];
  k.k_right = k.beta[1] + k.beta[2];
  const double se_left = std::sqrt(s2 * v[1][1]);
  const double se_right = std::sqrt(s2 * (v[1][1] + v[2][2] + 2 * v[1][2]));
  k.k_left_ci_low = k.k_left - t * se_left;
  k.k_left_ci_high = k.k_left + t * se_left;
  k.k_right_ci_low = k.k_right - t * se_right;
  k.k_right_ci_high = k.k_right + t * se_right;
  k.f_critical = t * t;  // F(1, d) at confidence = t(confidence two-sided, d)^2
  const double gain = sse_single - k.sse_two;
  k.f = k.sse_two > 0 ? gain / (k.sse_two / k.df) : std::numeric_limits<double>::infinity();
  // A single line that already fits to rounding has nothing to improve on.
  const bool line_exact = sse_single <= 1e-20 * static_cast<double>(n);
  k.kept = !line_exact && k.sse_two <= kKneeMaxResidualRatio * sse_single && k.f > k.f_critical &&
           std::fabs(k.k_right - k.k_left) >= kKneeMinSlopeChange;
  return best;
}

Prediction predict(const KneeFit& fit, double x) {
  check_x(x, "predict");
  const double l = std::log(x);
  const std::array<double, 3> row{1.0, l - fit.mean_log_x,
                                  std::max(0.0, l - std::log(fit.x_break))};
  double log_y = 0, quad = 0;
  for (int r = 0; r < 3; ++r) {
    log_y += fit.beta[r] * row[r];
    for (int c = 0; c < 3; ++c) quad += row[r] * fit.xtx_inv[r][c] * row[c];
  }
  const double se = fit.residual_sd * std::sqrt(1 + quad);
  return make_prediction(x, log_y, se, fit.df, fit.confidence, fit.x_min, fit.x_max);
}

AmdahlFit fit_amdahl(const std::vector<double>& threads, const std::vector<double>& times) {
  if (threads.size() != times.size()) {
    throw Error(
        fmt::format("fit_amdahl: {} thread counts but {} times", threads.size(), times.size()));
  }
  if (threads.size() < 2) {
    throw Error(fmt::format("fit_amdahl: needs at least 2 thread counts, got {}", threads.size()));
  }
  for (size_t i = 0; i < threads.size(); ++i) {
    if (!(threads[i] >= 1) || !std::isfinite(threads[i])) {
      throw Error(
          fmt::format("fit_amdahl: thread count {} is {}: needs 1 or more", i + 1, threads[i]));
    }
    if (!(times[i] > 0) || !std::isfinite(times[i])) {
      throw Error(fmt::format("fit_amdahl: time {} is {}: needs a time > 0", i + 1, times[i]));
    }
  }
  if (std::all_of(threads.begin(), threads.end(), [&](double p) { return p == threads[0]; })) {
    throw Error(fmt::format("fit_amdahl: every thread count is {}: needs two different counts",
                            threads[0]));
  }
  AmdahlFit f;
  f.n = threads.size();
  double t1_sum = 0;
  int ones = 0;
  for (size_t i = 0; i < f.n; ++i) {
    if (threads[i] == 1) {
      t1_sum += times[i];
      ++ones;
    }
  }
  if (ones > 0) {
    f.t1 = t1_sum / ones;
    f.t1_measured = true;
    double num = 0, den = 0;
    for (size_t i = 0; i < f.n; ++i) {
      const double g = f.t1 * (1 - 1 / threads[i]);  // d model / d s
      num += (times[i] - f.t1 / threads[i]) * g;
      den += g * g;
    }
    f.serial_fraction = num / den;
  } else {
    // T = a + b z with z = 1/p, least squares; T1 = a + b, s = a / T1.
    double mz = 0, mt = 0;
    for (size_t i = 0; i < f.n; ++i) {
      mz += 1 / threads[i];
      mt += times[i];
    }
    mz /= static_cast<double>(f.n);
    mt /= static_cast<double>(f.n);
    double szz = 0, szt = 0;
    for (size_t i = 0; i < f.n; ++i) {
      szz += (1 / threads[i] - mz) * (1 / threads[i] - mz);
      szt += (1 / threads[i] - mz) * (times[i] - mt);
    }
    const double b = szt / szz, a = mt - b * mz;
    f.t1 = a + b;
    if (!(f.t1 > 0)) {
      throw Error(fmt::format(
          "fit_amdahl: the times extrapolate to {} at 1 thread: Amdahl's law does not fit them",
          f.t1));
    }
    f.serial_fraction = a / f.t1;
  }
  std::vector<double> distinct = threads;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  f.exact = distinct.size() == 2 && f.n == 2;
  double sq = 0;
  for (size_t i = 0; i < f.n; ++i) {
    const double e = (amdahl_time(f, threads[i]) - times[i]) / times[i];
    sq += e * e;
  }
  f.rms_relative_error = std::sqrt(sq / static_cast<double>(f.n));
  return f;
}

double amdahl_time(const AmdahlFit& fit, double threads) {
  return fit.t1 * (fit.serial_fraction + (1 - fit.serial_fraction) / threads);
}

}  // namespace prism::analysis
