// Exercise 15: a timer that reports the median time per call with a confidence interval. Your
// file, median_timer.cpp, defines time_calls(); README.md says what each step must do, exactly.
//
// The timer reads time through a Clock, so the checker can hand it a fake one whose time
// advances only when `fn` runs, by scripted amounts: then every answer is known exactly.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "profiler/clock.h"

namespace median_timer {

// Where the timer reads the time, in nanoseconds. Successive reads never decrease.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t now_ns() const = 0;
};

// The real clock, the profiler's: std::chrono::steady_clock (profiler/clock.h).
class SteadyClock final : public Clock {
 public:
  int64_t now_ns() const override { return prism::profiler::now_ns(); }
};

struct TimerConfig {
  int warmup_calls = 3;                  // calls made before anything is timed (>= 0)
  int samples = 15;                      // n, timed samples (1 to 1000)
  int64_t min_sample_ns = 20'000'000;    // each sample's batch of calls lasts at least this long
  int64_t max_calls = int64_t{1} << 30;  // the batch never grows past this many calls (>= 1)
};

// What n samples say about the typical call: the centre, the spread, and how well n samples pin
// the centre down.
struct Summary {
  double median_ns = 0;  // the middle sample; the mean of the two middle ones for an even n
  double mad_ns = 0;     // median of |sample - median|
  // The 95% distribution-free interval of the median: the j-th and k-th smallest samples
  // (ranks from 1), and the probability that such an interval holds the true median.
  int ci_low_rank = 0;     // j
  int ci_high_rank = 0;    // k = n + 1 - j
  double ci_low_ns = 0;    // x(j)
  double ci_high_ns = 0;   // x(k)
  double ci_coverage = 0;  // 1 - 2 P(B <= j - 1), B ~ Binomial(n, 1/2)
};

// The summary of n >= 1 samples (n <= 1000), in any order.
Summary summarize_samples(const std::vector<double>& samples_ns);

struct TimerResult {
  int64_t calls_per_sample = 0;    // c: calls in each timed batch
  std::vector<double> samples_ns;  // n samples, time per call (batch time / c), in time order
  Summary summary;                 // summarize_samples(samples_ns)
};

// Warms fn up, finds the batch size c, takes cfg.samples samples of c calls each on `clock`,
// and summarises them (README.md, "The task").
TimerResult time_calls(const std::function<void()>& fn, const Clock& clock, const TimerConfig& cfg);

}  // namespace median_timer
