// Curve fits for "how does cost grow": a power law y = c x^k, a power law that bends once (a
// knee), and Amdahl's law for thread counts. Pure functions over plain numbers, shared by
// `prism sweep` and `prism models`.
//
// A power law is a straight line on log-log axes, log y = log c + k log x, so it is fitted by
// ordinary least squares on (log x, log y). Fitting in log space weighs every point by its
// relative error, which is what a timing has (a 5% wobble at 1 us and at 1 s alike), and k
// reads directly: k = 1 linear, k = 2 quadratic, k < 1 cheaper per unit as x grows.
//
// The interval of k comes from the t distribution on the slope's standard error,
//   se(k) = s / sqrt(Sxx),  s^2 = SSE / (n - 2),  Sxx = sum (log x_i - mean log x)^2,
// with n - 2 degrees of freedom, so it needs 3 points or more. It says how well the points pin
// the slope down assuming they scatter independently around a straight line; it does not
// protect against a curve that is not a power law: that is what R^2, the residuals and the knee
// test are for.
//
// Bad input (fewer than 2 points, a size or value <= 0 or not finite, every x equal, lengths
// that differ) throws prism::Error naming the problem.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

namespace prism::analysis {

// Two-sided critical value of Student's t with `df` degrees of freedom: P(|T| <= t) =
// confidence. t(0.95, 1) = 12.706, t(0.95, 10) = 2.228, t -> 1.960 as df grows. df >= 1.
double student_t_critical(double confidence, int df);

struct PowerLawFit {
  double c = 0;  // y = c x^k
  double k = 0;
  // The interval of k at `confidence` (t distribution, n - 2 df); equal to k when n == 2
  // (two points fix the line exactly and say nothing about its uncertainty: has_interval false).
  double k_ci_low = 0, k_ci_high = 0;
  bool has_interval = false;
  double r2 = 0;  // of the log-log line; 1 for an exact fit (constant y included)
  size_t n = 0;
  double confidence = 0.95;
  // What a prediction needs: the slope's standard error, the residual standard deviation of
  // log y (s), the mean of log x and Sxx, and the range of x the fit saw.
  double se_k = 0;
  double residual_sd = 0;
  double mean_log_x = 0, sxx = 0;
  double x_min = 0, x_max = 0;
  int df = 0;  // n - 2
};

// Least squares on (log x, log y). Every x and y > 0 and finite, at least 2 points, not all x
// equal.
PowerLawFit fit_power_law(const std::vector<double>& xs, const std::vector<double>& ys,
                          double confidence = 0.95);

// A value predicted at x, with its prediction interval: where a new measurement at x should fall
// (the line's uncertainty plus the points' scatter):
//   log y0 +- t * s * sqrt(1 + 1/n + (log x0 - mean log x)^2 / Sxx),
// taken back through exp, so the interval is not symmetric around the value.
struct Prediction {
  double x = 0;
  double value = 0;
  double low = 0, high = 0;  // equal to value when there is no interval (no degrees of freedom)
  bool has_interval = false;
  bool interpolation = false;  // x lies inside the range the fit saw
};
Prediction predict(const PowerLawFit& fit, double x);

// ---- knees ----------------------------------------------------------------------------------
//
// A curve that leaves its power law somewhere (batching stops paying, a working set spills
// out of a cache, attention's L^2 term takes over) is a line that bends on log-log axes. The
// two-segment model is a continuous "hinge" at a data point b:
//   log y = a + k1 u + (k2 - k1) max(0, u - u_b),   u = log x,
// least squares in (a, k1, k2 - k1) for every interior point b (at least 2 points on each side,
// b counted in both), keeping the b of least residual. The bend is kept only when it clearly
// improves the fit; all of:
//   1. at least kKneeMinPoints points (so the hinge keeps n - 3 >= 1 degrees of freedom);
//   2. the residual sum of squares falls to at most a quarter of the single line's (the RMS
//      error at least halves);
//   3. the F test of the extra slope, F = (SSE1 - SSE2) / (SSE2 / (n - 3)), exceeds its 95%
//      critical value t(0.95, n - 3)^2. Choosing b by the data makes this test optimistic,
//      which is why 2 and 4 are asked as well;
//   4. the slopes differ by at least kKneeMinSlopeChange.
// A single line that fits exactly (SSE1 ~ 0) has no knee.
inline constexpr size_t kKneeMinPoints = 4;
inline constexpr double kKneeMaxResidualRatio = 0.25;
inline constexpr double kKneeMinSlopeChange = 0.1;

struct KneeFit {
  double x_break = 0;      // the x where the slope changes (a data point)
  size_t break_index = 0;  // its index among the points sorted by x
  double k_left = 0, k_left_ci_low = 0, k_left_ci_high = 0;
  double k_right = 0, k_right_ci_low = 0, k_right_ci_high = 0;
  double sse_single = 0, sse_two = 0;  // of log y, the single line and the hinge
  double f = 0, f_critical = 0;        // the F test above
  bool kept = false;                   // all four criteria hold
  size_t n = 0;
  int df = 0;  // n - 3
  double confidence = 0.95;
  // What a prediction needs: the coefficients (a, k1, k2 - k1) on (1, u - mean u, max(0, u - u_b))
  // and (X^T X)^-1, with the residual standard deviation.
  std::array<double, 3> beta{};
  std::array<std::array<double, 3>, 3> xtx_inv{};
  double mean_log_x = 0, residual_sd = 0;
  double x_min = 0, x_max = 0;
};

// The best hinge and whether it is kept; nullopt with fewer than kKneeMinPoints distinct x
// (nothing to test). Same input rules as fit_power_law.
std::optional<KneeFit> find_knee(const std::vector<double>& xs, const std::vector<double>& ys,
                                 double confidence = 0.95);

// A prediction from the hinge: past the break it follows the right-hand slope.
Prediction predict(const KneeFit& fit, double x);

// ---- Amdahl's law ---------------------------------------------------------------------------
//
// With a fraction s of the work serial, p threads take T(p) = T1 (s + (1 - s) / p), so the
// speed-up T1 / T(p) never passes 1 / s. When p = 1 is among the points, T1 is its measured
// time and s the least-squares solution of
//   min_s sum_i (T_i - T1 / p_i - s T1 (1 - 1/p_i))^2
//   => s = sum (T_i - T1/p_i) T1 (1 - 1/p_i) / sum (T1 (1 - 1/p_i))^2,
// exact with two points (1 and p): s = (T_p / T1 - 1/p) / (1 - 1/p). Without p = 1, T1 and s
// come together from the line T = a + b / p (least squares), T1 = a + b, s = a / T1. s is not
// clamped: s < 0 means a super-linear speed-up (caches: each thread's share fits better), s > 1
// that more threads made it slower.
struct AmdahlFit {
  double serial_fraction = 0;
  double t1 = 0;
  bool t1_measured = false;  // p = 1 was among the points
  bool exact = false;        // two thread counts: solved, not fitted
  size_t n = 0;
  double rms_relative_error = 0;  // sqrt(mean ((model - T) / T)^2) over the points
};
// Thread counts >= 1, times > 0, at least 2 points and 2 distinct counts.
AmdahlFit fit_amdahl(const std::vector<double>& threads, const std::vector<double>& times);
// T1 (s + (1 - s) / p).
double amdahl_time(const AmdahlFit& fit, double threads);

}  // namespace prism::analysis
