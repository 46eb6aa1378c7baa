// Exercise 15, a reference solution: warm-up, a batch size found by doubling, n samples, then
// the median, the MAD and the order-statistic interval of the median. Read it after writing your
// own (exercises/README.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "exercises/15_median_timer/median_timer.h"

namespace median_timer {
namespace {

// The median of x: the middle value of the sorted samples, or the mean of the two middle ones
// for an even count (both halves then have the same number of samples).
double median_of(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  const size_t n = x.size();
  return n % 2 == 1 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

// The wall time of `calls` back-to-back calls: two clock reads, none inside the loop.
int64_t time_batch(const std::function<void()>& fn, const Clock& clock, int64_t calls) {
  const int64_t t0 = clock.now_ns();
  for (int64_t i = 0; i < calls; ++i) fn();
  return clock.now_ns() - t0;
}

}  // namespace

Summary summarize_samples(const std::vector<double>& samples_ns) {
  const int n = static_cast<int>(samples_ns.size());
  if (n < 1 || n > 1000) throw std::invalid_argument("summarize_samples: needs 1 to 1000 samples");
  Summary r;
  // The median and the MAD.
  r.median_ns = median_of(samples_ns);
  std::vector<double> dev;
  for (double x : samples_ns) dev.push_back(std::abs(x - r.median_ns));
  r.mad_ns = median_of(dev);

  // The interval [x(j), x(k)], k = n + 1 - j. With B ~ Binomial(n, 1/2) the number of samples
  // below the true median, it misses on the left when B <= j - 1 and on the right when B >= k,
  // each with probability tail(j) = P(B <= j - 1). Take the largest j with tail(j) <= 0.025;
  // when even j = 1 misses more often (n <= 5), [min, max] is the best there is, and the
  // coverage says how good.
  double p = std::ldexp(1.0, -n);  // P(B = 0) = 2^-n: a normal double for n <= 1000
  double tail = p;                 // tail(1)
  int j = 1;
  while (j + 1 <= (n + 1) / 2) {  // j never passes the middle: j <= k
    p = p * (n - j + 1) / j;      // P(B = j) from P(B = j - 1)
    if (tail + p > 0.025) break;  // tail(j + 1) would be too large
    tail += p;
    ++j;
  }
  std::vector<double> sorted = samples_ns;
  std::sort(sorted.begin(), sorted.end());
  r.ci_low_rank = j;
  r.ci_high_rank = n + 1 - j;
  r.ci_low_ns = sorted[static_cast<size_t>(j - 1)];
  r.ci_high_ns = sorted[static_cast<size_t>(n - j)];
  r.ci_coverage = 1 - 2 * tail;
  return r;
}

TimerResult time_calls(const std::function<void()>& fn, const Clock& clock,
                       const TimerConfig& cfg) {
  if (cfg.warmup_calls < 0 || cfg.samples < 1 || cfg.samples > 1000 || cfg.max_calls < 1) {
    throw std::invalid_argument(
        "time_calls: warmup_calls >= 0, samples in 1..1000, max_calls >= 1");
  }
  // 1. Warm-up: the first calls pay for cold caches, page faults and lazy initialisation; they
  //    say nothing about the steady cost, so they are made and not timed.
  for (int i = 0; i < cfg.warmup_calls; ++i) fn();

  // 2. The batch size: double it until one batch lasts min_sample_ns (or reaches max_calls).
  //    A batch much longer than the clock's tick and its read cost makes both negligible per
  //    call.
  TimerResult r;
  int64_t c = 1;
  while (time_batch(fn, clock, c) < cfg.min_sample_ns && c < cfg.max_calls) {
    c = std::min(2 * c, cfg.max_calls);
  }
  r.calls_per_sample = c;

  // 3. The samples: time per call of each batch.
  for (int s = 0; s < cfg.samples; ++s) {
    r.samples_ns.push_back(static_cast<double>(time_batch(fn, clock, c)) / static_cast<double>(c));
  }

  // 4 and 5. What they say.
  r.summary = summarize_samples(r.samples_ns);
  return r;
}

}  // namespace median_timer
