// Robust statistics for comparing timings (the kernel lab, benchmarks).
//
// Timings on a shared machine are not normally distributed: they have a floor (the kernel's
// real cost) and a long right tail (interrupts, the other tenant, frequency changes). So the
// centre is the median, the spread is the median absolute deviation (MAD), intervals come from
// the bootstrap (no distribution assumed), and "is A faster than B" is the Mann-Whitney U test
// (ranks only, so one slow outlier cannot decide it).
//
// Every function takes the samples by value or const reference and never changes the caller's
// vector. Empty input, non-finite samples or a bad parameter throw std::invalid_argument
// naming the function: the profiler layer sits below kernels/types.h, so it cannot throw
// prism::Error; like the rest of profiler/ it throws standard exceptions (which the CLI reports
// as "prism: error: ...").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace prism::profiler::stats {

// ---- location and spread -------------------------------------------------------------------

// The middle sample; the mean of the two middle ones for an even count.
double median(std::vector<double> samples);

// Quantile q in [0, 1] by linear interpolation between order statistics (Hyndman and Fan's
// type 7, the default of R, NumPy and Excel): with x sorted and h = (n - 1) q,
//   Q(q) = x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]).
// Q(0) is the minimum, Q(1) the maximum, Q(0.5) the median.
double quantile(std::vector<double> samples, double q);

// Median absolute deviation, raw: median(|x_i - median(x)|). Half the samples lie within one
// MAD of the median whatever the distribution.
double mad(std::vector<double> samples);

// For normally distributed data MAD = 0.6745 sigma, so 1.4826 MAD estimates sigma (and unlike
// the standard deviation, a few outliers barely move it).
inline constexpr double kMadToSigma = 1.4826;
double mad_sigma(std::vector<double> samples);  // kMadToSigma * mad(samples)

double mean(const std::vector<double>& samples);
// Sample standard deviation (n - 1 in the denominator); 0 for a single sample.
double stddev(const std::vector<double>& samples);

// ---- bootstrap intervals -------------------------------------------------------------------

struct Interval {
  double low = 0;
  double high = 0;
};

// The seed used when the caller gives none: results are reproducible run to run.
inline constexpr uint64_t kDefaultSeed = 0x5eed'2026'0b00'75a9ULL;

// Percentile bootstrap of the median: draw `resamples` samples of size n with replacement,
// take each one's median, and return the (1 - confidence)/2 and (1 + confidence)/2 quantiles
// (type 7) of those medians. The draws come from splitmix64 seeded with `seed`, so the interval
// is the same on every run and every compiler. confidence in (0, 1), resamples >= 1.
Interval bootstrap_median_ci(const std::vector<double>& samples, double confidence = 0.95,
                             int resamples = 2000, uint64_t seed = kDefaultSeed);

// Interval for the ratio median(a) / median(b), e.g. a speed-up old_time / new_time: each
// resample draws a and b independently (they are separate runs), and the interval is the
// percentile interval of median(a*) / median(b*). Every sample of b must be > 0 (timings), so
// no resampled denominator is zero.
Interval bootstrap_ratio_ci(const std::vector<double>& a, const std::vector<double>& b,
                            double confidence = 0.95, int resamples = 2000,
                            uint64_t seed = kDefaultSeed);

// The same two intervals for any quantile q in [0, 1] (type 7, as quantile()): a tail latency
// (q = 0.99) gets its interval the way the median does. A high quantile of few samples is
// nearly the maximum, and its interval is then wide: that is the honest answer (100 samples
// put only one sample above p99).
Interval bootstrap_quantile_ci(const std::vector<double>& samples, double q,
                               double confidence = 0.95, int resamples = 2000,
                               uint64_t seed = kDefaultSeed);
Interval bootstrap_quantile_ratio_ci(const std::vector<double>& a, const std::vector<double>& b,
                                     double q, double confidence = 0.95, int resamples = 2000,
                                     uint64_t seed = kDefaultSeed);

// ---- samples that are not independent ------------------------------------------------------
//
// Consecutive timings are correlated: a busy neighbour, a change of clock speed or a cache
// warmed by the previous call affect whole runs of calls together. An interval computed as if
// every call were independent is then far too narrow, and a test finds a "significant"
// difference between two runs of the same code. The remedy from simulation output analysis
// (batch means): cut the series, in time order, into `blocks` contiguous blocks and treat the
// blocks, not the calls, as the independent units.

inline constexpr int kDefaultBlocks = 20;

// The medians of `blocks` contiguous blocks of near-equal size, in time order (as many blocks
// as samples when there are fewer samples than blocks).
std::vector<double> block_medians(const std::vector<double>& samples, int blocks = kDefaultBlocks);

// Block bootstrap of the q-quantile: each resample draws `blocks` whole blocks with replacement
// (keeping what happens inside a block together) and takes the type-7 q-quantile of their union.
// Each block is sorted once and the quantile of a resample is found by counting, in
// O(blocks log^2 n) per resample: 2000 resamples of 300,000 samples take about 50 ms.
Interval block_bootstrap_quantile_ci(const std::vector<double>& samples, double q,
                                     int blocks = kDefaultBlocks, double confidence = 0.95,
                                     int resamples = 2000, uint64_t seed = kDefaultSeed);
// The same for the ratio quantile_q(a) / quantile_q(b) of two independent series (every sample
// of b > 0).
Interval block_bootstrap_quantile_ratio_ci(const std::vector<double>& a,
                                           const std::vector<double>& b, double q,
                                           int blocks = kDefaultBlocks, double confidence = 0.95,
                                           int resamples = 2000, uint64_t seed = kDefaultSeed);

// ---- is A faster than B? -------------------------------------------------------------------

struct MannWhitney {
  // U of sample a: the number of pairs (a_i, b_j) with a_i > b_j, ties counting 1/2; equal to
  // R_a - n_a (n_a + 1) / 2 with R_a the sum of a's mid-ranks. Ranges 0..n_a n_b; a small U
  // means a's values tend to be smaller (faster, for times).
  double u = 0;
  // (U - n_a n_b / 2) / sigma with the continuity correction (|U - mean| shrunk by 1/2, 0 when
  // that crosses zero); negative when a tends to be smaller. sigma includes the tie correction:
  //   sigma^2 = n_a n_b / 12 * ((n + 1) - sum_t (t^3 - t) / (n (n - 1))),  n = n_a + n_b,
  // t running over the sizes of the groups of tied values.
  double z = 0;
  double p_two_sided = 1;  // P(a result at least this far from "no difference")
  double p_a_less = 1;     // one-sided: P(U <= observed U) under H0 = "a is not smaller"
  // true: the p-values are exact (no ties and both samples of at most kExactMaxSamples, where
  // the normal approximation is poorest); false: normal approximation with continuity
  // correction (always used when there are ties).
  bool exact = false;
};

inline constexpr size_t kExactMaxSamples = 50;

// Two-sample Mann-Whitney U (Wilcoxon rank-sum) test. Both samples non-empty.
// The exact distribution of U comes from the recurrence over which sample holds the largest
// value: P_{m,n}(u) = m/(m+n) P_{m-1,n}(u - n) + n/(m+n) P_{m,n-1}(u).
MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// ---- one line of the lab's table -----------------------------------------------------------

// A set of samples is called unstable (the lab marks it and suggests more repetitions or a
// quieter machine) when any of these holds:
//   n < kMinStableSamples            too few samples for the interval to mean much
//   err_pct > kUnstableErrPct        the median is known to no better than +-5%
//   100 * mad / median > kUnstableMadPct   half the runs are more than 5% off the median
inline constexpr size_t kMinStableSamples = 5;
inline constexpr double kUnstableErrPct = 5.0;
inline constexpr double kUnstableMadPct = 5.0;

struct Summary {
  size_t n = 0;
  double median = 0;
  double mad = 0;  // raw MAD (see mad())
  double min = 0;
  double max = 0;
  double ci_low = 0;  // 95% percentile-bootstrap interval of the median
  double ci_high = 0;
  // Half-width of the interval over the median, in %: (ci_high - ci_low) / 2 / median * 100.
  // 0 when the interval has no width; infinity when the median is 0 and the interval is not.
  double err_pct = 0;
  bool unstable = false;  // see the rule above
};

// The summary of one set of samples, with a 95% interval from 2000 resamples.
Summary summarize(const std::vector<double>& samples, uint64_t seed = kDefaultSeed);

}  // namespace prism::profiler::stats
