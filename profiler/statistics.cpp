#include "profiler/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace prism::profiler::stats {

namespace {

void require_samples(const std::vector<double>& samples, const char* fn, const char* which = "") {
  if (samples.empty()) {
    throw std::invalid_argument(std::string(fn) + ": no samples" +
                                (*which ? std::string(" in ") + which : std::string()));
  }
  for (double x : samples) {
    if (!std::isfinite(x)) {
      throw std::invalid_argument(std::string(fn) + ": sample " + std::to_string(x) +
                                  " is not a finite number");
    }
  }
}

void require_bootstrap_args(double confidence, int resamples, const char* fn) {
  if (!(confidence > 0 && confidence < 1)) {
    throw std::invalid_argument(std::string(fn) + ": confidence must be in (0, 1), got " +
                                std::to_string(confidence));
  }
  if (resamples < 1) {
    throw std::invalid_argument(std::string(fn) + ": resamples must be at least 1, got " +
                                std::to_string(resamples));
  }
}

// Median of a vector the caller lets us reorder: nth_element is O(n), which matters for the
// bootstrap's thousands of medians.
double median_in_place(std::vector<double>& v) {
  const size_t n = v.size();
  const size_t mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (n % 2 == 1) return upper;
  // The lower middle value is the largest of the elements nth_element left before mid.
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + (upper - lower) / 2;  // no overflow for huge values, exact for equal ones
}

// Type-7 quantile of already sorted values.
double quantile_sorted(const std::vector<double>& x, double q) {
  const double h = static_cast<double>(x.size() - 1) * q;
  const size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= x.size()) return x.back();
  return x[lo] + (h - static_cast<double>(lo)) * (x[lo + 1] - x[lo]);
}

// splitmix64 (Steele, Lea and Flood, 2014): one 64-bit add and a mix per number, every seed a
// good stream. Ample for picking resample indices, and the same on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // An index in [0, n): the top 53 bits as a double in [0, 1), scaled. The bias (at most
  // n / 2^53) is far below anything a bootstrap can notice.
  size_t index(size_t n) {
    const double u = static_cast<double>(next() >> 11) * 0x1.0p-53;
    return std::min(n - 1, static_cast<size_t>(u * static_cast<double>(n)));
  }

 private:
  uint64_t state_;
};

// Median of one resample (size n, with replacement) of `samples`, drawn into `scratch`.
double resampled_median(const std::vector<double>& samples, SplitMix64& rng,
                        std::vector<double>& scratch) {
  scratch.resize(samples.size());
  for (double& x : scratch) x = samples[rng.index(samples.size())];
  return median_in_place(scratch);
}

// Type-7 quantile q of one resample of `samples`, drawn into `scratch`.
double resampled_quantile(const std::vector<double>& samples, double q, SplitMix64& rng,
                          std::vector<double>& scratch) {
  scratch.resize(samples.size());
  for (double& x : scratch) x = samples[rng.index(samples.size())];
  std::sort(scratch.begin(), scratch.end());
  return quantile_sorted(scratch, q);
}

void require_q(double q, const char* fn) {
  if (!(q >= 0 && q <= 1)) {
    throw std::invalid_argument(std::string(fn) + ": q must be in [0, 1], got " +
                                std::to_string(q));
  }
}

void require_positive(const std::vector<double>& b, const char* fn) {
  for (double x : b) {
    if (!(x > 0)) {
      throw std::invalid_argument(std::string(fn) +
                                  ": every sample of b (the denominator) must be positive, got " +
                                  std::to_string(x));
    }
  }
}

// One series cut into contiguous blocks, each sorted, for the block bootstrap.
class SortedBlocks {
 public:
  SortedBlocks(const std::vector<double>& samples, int blocks) {
    const size_t n = samples.size();
    const size_t k = std::min(n, static_cast<size_t>(blocks));
    for (size_t j = 0; j < k; ++j) {
      const size_t begin = j * n / k, end = (j + 1) * n / k;
      blocks_.emplace_back(samples.begin() + static_cast<std::ptrdiff_t>(begin),
                           samples.begin() + static_cast<std::ptrdiff_t>(end));
      std::sort(blocks_.back().begin(), blocks_.back().end());
    }
    all_ = samples;
    std::sort(all_.begin(), all_.end());
  }
  size_t count() const { return blocks_.size(); }

  // Type-7 q-quantile of the union of blocks picked[0..k) (repeats allowed).
  double quantile(const std::vector<size_t>& picked, double q) const {
    size_t total = 0;
    for (size_t j : picked) total += blocks_[j].size();
    const double h = static_cast<double>(total - 1) * q;
    const size_t lo = static_cast<size_t>(std::floor(h));
    const double x_lo = order_statistic(picked, lo);
    if (lo + 1 >= total) return x_lo;
    return x_lo + (h - static_cast<double>(lo)) * (order_statistic(picked, lo + 1) - x_lo);
  }

 private:
  // The value of rank r (0-based) in the union: the smallest v of all_ with at least r + 1
  // values <= v in the union (every value of the union is one of all_).
  double order_statistic(const std::vector<size_t>& picked, size_t r) const {
    size_t lo = 0, hi = all_.size() - 1;
    while (lo < hi) {
      const size_t mid = lo + (hi - lo) / 2;
      size_t at_most = 0;
      for (size_t j : picked) {
        const auto& b = blocks_[j];
        at_most += static_cast<size_t>(std::upper_bound(b.begin(), b.end(), all_[mid]) - b.begin());
      }
      if (at_most >= r + 1) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return all_[lo];
  }

  std::vector<std::vector<double>> blocks_;
  std::vector<double> all_;
};

std::vector<size_t> pick_blocks(size_t k, SplitMix64& rng) {
  std::vector<size_t> picked(k);
  for (size_t& j : picked) j = rng.index(k);
  return picked;
}

void require_blocks(int blocks, const char* fn) {
  if (blocks < 1) {
    throw std::invalid_argument(std::string(fn) + ": blocks must be at least 1, got " +
                                std::to_string(blocks));
  }
}

Interval percentile_interval(std::vector<double>& stats, double confidence) {
  std::sort(stats.begin(), stats.end());
  const double tail = (1 - confidence) / 2;
  return {quantile_sorted(stats, tail), quantile_sorted(stats, 1 - tail)};
}

// Standard normal CDF.
double phi(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

// Exact distribution of U_a for sample sizes m, n without ties: P[u] for u = 0..m n, from
//   P_{i,j}(u) = i/(i+j) P_{i-1,j}(u - j) + j/(i+j) P_{i,j-1}(u)
// (the largest of the i + j values belongs to a with probability i/(i+j), and then beats all j
// values of b). Rows are kept for one j at a time: O(m^2 n) memory, O(m^2 n^2) time.
std::vector<double> exact_u_distribution(size_t m, size_t n) {
  std::vector<std::vector<double>> prev(m + 1, std::vector<double>{1.0});  // P_{i,0}: U = 0
  for (size_t j = 1; j <= n; ++j) {
    std::vector<std::vector<double>> cur(m + 1);
    cur[0] = {1.0};  // P_{0,j}: U = 0
    for (size_t i = 1; i <= m; ++i) {
      const double from_a = static_cast<double>(i) / static_cast<double>(i + j);
      const double from_b = 1 - from_a;
      std::vector<double>& p = cur[i];
      p.assign(i * j + 1, 0.0);
      for (size_t u = 0; u < cur[i - 1].size(); ++u) p[u + j] += from_a * cur[i - 1][u];
      for (size_t u = 0; u < prev[i].size(); ++u) p[u] += from_b * prev[i][u];
    }
    prev = std::move(cur);
  }
  return prev[m];
}

}  // namespace

double median(std::vector<double> samples) {
  require_samples(samples, "median");
  return median_in_place(samples);
}

double quantile(std::vector<double> samples, double q) {
  require_samples(samples, "quantile");
  require_q(q, "quantile");
  std::sort(samples.begin(), samples.end());
  return quantile_sorted(samples, q);
}

double mad(std::vector<double> samples) {
  require_samples(samples, "mad");
  const double m = median_in_place(samples);
  for (double& x : samples) x = std::abs(x - m);
  return median_in_place(samples);
}

double mad_sigma(std::vector<double> samples) {
  return kMadToSigma * mad(std::move(samples));
}

double mean(const std::vector<double>& samples) {
  require_samples(samples, "mean");
  return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
}

double stddev(const std::vector<double>& samples) {
  const double m = mean(samples);
  if (samples.size() < 2) return 0;
  double ss = 0;  // two passes: no cancellation from sum(x^2) - n mean^2
  for (double x : samples) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(samples.size() - 1));
}

Interval bootstrap_median_ci(const std::vector<double>& samples, double confidence, int resamples,
                             uint64_t seed) {
  require_samples(samples, "bootstrap_median_ci");
  require_bootstrap_args(confidence, resamples, "bootstrap_median_ci");
  SplitMix64 rng(seed);
  std::vector<double> scratch, medians(static_cast<size_t>(resamples));
  for (double& m : medians) m = resampled_median(samples, rng, scratch);
  return percentile_interval(medians, confidence);
}

Interval bootstrap_ratio_ci(const std::vector<double>& a, const std::vector<double>& b,
                            double confidence, int resamples, uint64_t seed) {
  require_samples(a, "bootstrap_ratio_ci", "a");
  require_samples(b, "bootstrap_ratio_ci", "b");
  require_bootstrap_args(confidence, resamples, "bootstrap_ratio_ci");
  require_positive(b, "bootstrap_ratio_ci");
  SplitMix64 rng(seed);
  std::vector<double> scratch, ratios(static_cast<size_t>(resamples));
  for (double& r : ratios) {
    const double num = resampled_median(a, rng, scratch);
    r = num / resampled_median(b, rng, scratch);
  }
  return percentile_interval(ratios, confidence);
}

Interval bootstrap_quantile_ci(const std::vector<double>& samples, double q, double confidence,
                               int resamples, uint64_t seed) {
  require_samples(samples, "bootstrap_quantile_ci");
  require_q(q, "bootstrap_quantile_ci");
  require_bootstrap_args(confidence, resamples, "bootstrap_quantile_ci");
  SplitMix64 rng(seed);
  std::vector<double> scratch, values(static_cast<size_t>(resamples));
  for (double& v : values) v = resampled_quantile(samples, q, rng, scratch);
  return percentile_interval(values, confidence);
}

Interval bootstrap_quantile_ratio_ci(const std::vector<double>& a, const std::vector<double>& b,
                                     double q, double confidence, int resamples, uint64_t seed) {
  require_samples(a, "bootstrap_quantile_ratio_ci", "a");
  require_samples(b, "bootstrap_quantile_ratio_ci", "b");
  require_q(q, "bootstrap_quantile_ratio_ci");
  require_bootstrap_args(confidence, resamples, "bootstrap_quantile_ratio_ci");
  require_positive(b, "bootstrap_quantile_ratio_ci");
  SplitMix64 rng(seed);
  std::vector<double> scratch, ratios(static_cast<size_t>(resamples));
  for (double& r : ratios) {
    const double num = resampled_quantile(a, q, rng, scratch);
    r = num / resampled_quantile(b, q, rng, scratch);
  }
  return percentile_interval(ratios, confidence);
}

std::vector<double> block_medians(const std::vector<double>& samples, int blocks) {
  require_samples(samples, "block_medians");
  require_blocks(blocks, "block_medians");
  const size_t n = samples.size();
  const size_t k = std::min(n, static_cast<size_t>(blocks));
  std::vector<double> out;
  for (size_t j = 0; j < k; ++j) {
    std::vector<double> b(samples.begin() + static_cast<std::ptrdiff_t>(j * n / k),
                          samples.begin() + static_cast<std::ptrdiff_t>((j + 1) * n / k));
    out.push_back(median_in_place(b));
  }
  return out;
}

Interval block_bootstrap_quantile_ci(const std::vector<double>& samples, double q, int blocks,
                                     double confidence, int resamples, uint64_t seed) {
  require_samples(samples, "block_bootstrap_quantile_ci");
  require_q(q, "block_bootstrap_quantile_ci");
  require_blocks(blocks, "block_bootstrap_quantile_ci");
  require_bootstrap_args(confidence, resamples, "block_bootstrap_quantile_ci");
  const SortedBlocks sb(samples, blocks);
  SplitMix64 rng(seed);
  std::vector<double> values(static_cast<size_t>(resamples));
  for (double& v : values) v = sb.quantile(pick_blocks(sb.count(), rng), q);
  return percentile_interval(values, confidence);
}

Interval block_bootstrap_quantile_ratio_ci(const std::vector<double>& a,
                                           const std::vector<double>& b, double q, int blocks,
                                           double confidence, int resamples, uint64_t seed) {
  require_samples(a, "block_bootstrap_quantile_ratio_ci", "a");
  require_samples(b, "block_bootstrap_quantile_ratio_ci", "b");
  require_q(q, "block_bootstrap_quantile_ratio_ci");
  require_blocks(blocks, "block_bootstrap_quantile_ratio_ci");
  require_bootstrap_args(confidence, resamples, "block_bootstrap_quantile_ratio_ci");
  require_positive(b, "block_bootstrap_quantile_ratio_ci");
  const SortedBlocks sa(a, blocks), sb(b, blocks);
  SplitMix64 rng(seed);
  std::vector<double> ratios(static_cast<size_t>(resamples));
  for (double& r : ratios) {
    const double num = sa.quantile(pick_blocks(sa.count(), rng), q);
    r = num / sb.quantile(pick_blocks(sb.count(), rng), q);
  }
  return percentile_interval(ratios, confidence);
}

MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  require_samples(a, "mann_whitney_u", "a");
  require_samples(b, "mann_whitney_u", "b");
  const size_t na = a.size(), nb = b.size(), n = na + nb;

  // Pool the samples (remembering which came from a), sort, and give each group of equal
  // values the mean of the ranks it spans (mid-ranks).
  std::vector<std::pair<double, bool>> pooled;
  pooled.reserve(n);
  for (double x : a) pooled.emplace_back(x, true);
  for (double x : b) pooled.emplace_back(x, false);
  std::sort(pooled.begin(), pooled.end(),
            [](const auto& l, const auto& r) { return l.first < r.first; });
  double rank_sum_a = 0, tie_term = 0;  // tie_term = sum over tie groups of t^3 - t
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double mid_rank = static_cast<double>(i + 1 + j) / 2;  // ranks i+1 .. j
    for (size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum_a += mid_rank;
    }
    tie_term += t * t * t - t;
    i = j;
  }

  const double dna = static_cast<double>(na), dnb = static_cast<double>(nb);
  const double dn = static_cast<double>(n);
  MannWhitney r;
  r.u = rank_sum_a - dna * (dna + 1) / 2;
  const double mu = dna * dnb / 2;
  const double var = dna * dnb / 12 * ((dn + 1) - tie_term / (dn * (dn - 1)));
  const double sigma = var > 0 ? std::sqrt(var) : 0;
  const double d = r.u - mu;
  if (sigma > 0) {
    r.z = std::copysign(std::max(0.0, std::abs(d) - 0.5), d) / sigma;
    r.p_two_sided = std::min(1.0, std::erfc(std::abs(r.z) / std::sqrt(2.0)));
    r.p_a_less = phi((d + 0.5) / sigma);
  }  // sigma == 0: every value is equal, no evidence either way; z = 0 and p = 1

  if (tie_term == 0 && na <= kExactMaxSamples && nb <= kExactMaxSamples) {
    const std::vector<double> p = exact_u_distribution(na, nb);
    const size_t u = static_cast<size_t>(std::llround(r.u));  // an integer without ties
    double at_most = 0, at_least = 0;
    for (size_t k = 0; k <= u; ++k) at_most += p[k];
    for (size_t k = u; k < p.size(); ++k) at_least += p[k];
    r.p_a_less = std::min(1.0, at_most);
    r.p_two_sided = std::min(1.0, 2 * std::min(at_most, at_least));
    r.exact = true;
  }
  return r;
}

Summary summarize(const std::vector<double>& samples, uint64_t seed) {
  require_samples(samples, "summarize");
  Summary s;
  s.n = samples.size();
  s.median = median(samples);
  s.mad = mad(samples);
  const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  s.min = *lo;
  s.max = *hi;
  const Interval ci = bootstrap_median_ci(samples, 0.95, 2000, seed);
  s.ci_low = ci.low;
  s.ci_high = ci.high;
  const double half = (ci.high - ci.low) / 2;
  if (half == 0) {
    s.err_pct = 0;
  } else {
    s.err_pct =
        s.median != 0 ? 100 * half / std::abs(s.median) : std::numeric_limits<double>::infinity();
  }
  const double mad_pct = s.median != 0 ? 100 * s.mad / std::abs(s.median)
                                       : (s.mad == 0 ? 0 : std::numeric_limits<double>::infinity());
  s.unstable = s.n < kMinStableSamples || s.err_pct > kUnstableErrPct || mad_pct > kUnstableMadPct;
  return s;
}

}  // namespace prism::profiler::stats
