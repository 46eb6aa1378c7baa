#include "nn/dist/alpha_beta.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "tensor/tensor.h"  // prism::Error

namespace prism::dist {

// Why relative error. Message sizes span 4 B to 64 MiB, and times 1 us to 10s of ms. Ordinary
// least squares minimises sum (t_i - a - b m_i)^2 in seconds: a 1% wobble of a 20 ms point is
// 200 us, a hundred times alpha, so alpha is whatever the large messages' noise leaves (often
// negative) and the small points, the only ones that measure alpha, count for nothing.
// Minimising the relative residuals instead,
//   E(a, b) = sum ((t_i - a - b m_i) / t_i)^2 = sum w_i (t_i - a - b m_i)^2,  w_i = 1 / t_i^2,
// makes a 1 us miss at a 2 us point cost as much as a 10 ms miss at a 20 ms one: every size
// has its say. It is also the maximum-likelihood fit when the noise is a constant fraction of
// the time (timing noise is about that: a 5% wobble at 1 us and at 1 s alike). (Fitting log t
// would do the same, but log(a + b m) is not linear in a and b; weighted least squares is
// linear, with a closed form.)
//
// The normal equations dE/da = dE/db = 0, solved around the weighted means
//   W = sum w_i,  mbar = sum w_i m_i / W,  tbar = sum w_i t_i / W,
//   b = sum w_i (m_i - mbar)(t_i - tbar) / sum w_i (m_i - mbar)^2,   a = tbar - b mbar,
// the centred form, because sum w m^2 alone would mix 10^12 and 10^19 in one sum.
// (Weights from the measured t_i rather than the unknown true times: the usual approximation;
// with medians of repeated runs the two differ by the noise, a few percent.)
AlphaBetaFit fit_alpha_beta(const std::vector<double>& bytes, const std::vector<double>& seconds) {
  if (bytes.size() != seconds.size()) {
    throw Error("alpha-beta fit: " + std::to_string(bytes.size()) + " sizes but " +
                std::to_string(seconds.size()) + " times");
  }
  if (bytes.size() < 2) throw Error("alpha-beta fit: needs at least two message sizes");
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (!std::isfinite(bytes[i]) || bytes[i] < 0) {
      throw Error("alpha-beta fit: message size " + std::to_string(bytes[i]) +
                  " is not a finite size >= 0");
    }
    if (!std::isfinite(seconds[i]) || seconds[i] <= 0) {
      throw Error("alpha-beta fit: time " + std::to_string(seconds[i]) + " s at " +
                  std::to_string(bytes[i]) + " bytes is not a finite time > 0");
    }
  }
  double w_sum = 0, wm = 0, wt = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const double w = 1 / (seconds[i] * seconds[i]);
    w_sum += w;
    wm += w * bytes[i];
    wt += w * seconds[i];
  }
  const double mbar = wm / w_sum, tbar = wt / w_sum;
  double smm = 0, smt = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const double w = 1 / (seconds[i] * seconds[i]);
    smm += w * (bytes[i] - mbar) * (bytes[i] - mbar);
    smt += w * (bytes[i] - mbar) * (seconds[i] - tbar);
  }
  if (!(smm > 0)) throw Error("alpha-beta fit: needs at least two different message sizes");

  AlphaBetaFit f;
  f.n = bytes.size();
  f.beta_s = smt / smm;
  f.alpha_s = tbar - f.beta_s * mbar;
  if (f.alpha_s < 0 || f.beta_s < 0) {
    // Noise can tilt the free line past a physical limit: a negative alpha (a collective that
    // pays you to start it) or a negative beta (more bytes, less time). E is a convex quadratic,
    // so the best line with alpha >= 0 and beta >= 0 lies on one of the two edges, each a
    // one-variable least squares:
    //   alpha = 0:  dE/db = 0  gives  b = sum w m t / sum w m^2   (>= 0: every m, t >= 0)
    //   beta = 0:   dE/da = 0  gives  a = tbar
    // and the better of the two (smaller E) is the constrained minimum.
    double wmt = 0, wmm = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
      const double w = 1 / (seconds[i] * seconds[i]);
      wmt += w * bytes[i] * seconds[i];
      wmm += w * bytes[i] * bytes[i];
    }
    const auto error = [&](double a, double b) {
      double e = 0;
      for (size_t i = 0; i < bytes.size(); ++i) {
        const double r = (seconds[i] - a - b * bytes[i]) / seconds[i];
        e += r * r;
      }
      return e;
    };
    const double b_only = wmt / wmm;  // wmm > 0: two different sizes, so one is > 0
    if (error(0, b_only) <= error(tbar, 0)) {
      f.alpha_s = 0;
      f.beta_s = b_only;
      f.constrained = AlphaBetaFit::Constrained::alpha_zero;
    } else {
      f.alpha_s = tbar;
      f.beta_s = 0;
      f.constrained = AlphaBetaFit::Constrained::beta_zero;
    }
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    const double r = std::abs(f.time_s(bytes[i]) - seconds[i]) / seconds[i];
    if (r > f.worst_rel_residual || i == 0) {
      f.worst_rel_residual = r;
      f.worst_bytes = bytes[i];
    }
  }
  return f;
}

StepPrediction predict_ddp_step(double compute_s, const std::vector<int64_t>& bucket_bytes,
                                const AlphaBetaFit& fit) {
  if (!std::isfinite(compute_s) || compute_s < 0) {
    throw Error("DDP step prediction: compute time " + std::to_string(compute_s) +
                " s is not a finite time >= 0");
  }
  if (bucket_bytes.empty()) throw Error("DDP step prediction: no gradient buckets");
  StepPrediction p;
  p.compute_s = compute_s;
  p.buckets = static_cast<int>(bucket_bytes.size());
  for (int64_t b : bucket_bytes) {
    if (b < 0) throw Error("DDP step prediction: a bucket of " + std::to_string(b) + " bytes");
    p.gradient_bytes += b;
    p.comm_s += fit.time_s(static_cast<double>(b));
  }
  p.last_bucket_s = fit.time_s(static_cast<double>(bucket_bytes.back()));
  p.no_overlap_s = compute_s + p.comm_s;
  p.overlap_s = std::max(compute_s + p.last_bucket_s, p.comm_s);
  return p;
}

}  // namespace prism::dist
