// Exercise 15: a timer that reports the median time per call with a 95% interval. The task,
// with the derivation of the interval, is in README.md, next to this file.
//
// Two functions (median_timer.h). time_calls(fn, clock, cfg) reads time only through
// clock.now_ns() and:
//   1. calls fn cfg.warmup_calls times, timing nothing;
//   2. finds the batch size c: c = 1; time a batch of c back-to-back calls (one clock read
//      before, one after); if it lasted less than cfg.min_sample_ns and c < cfg.max_calls,
//      c = min(2 c, cfg.max_calls) and time a new batch; these batches are not samples;
//   3. takes n = cfg.samples samples: each a batch of c calls, sample = batch time / c (a double);
//   4. returns c, the samples in time order, and summarize_samples(samples).
// summarize_samples(x) returns, for n = x.size() samples in any order:
//   - their median (the mean of the two middle ones when n is even) and their
//     MAD = median |x_i - median|;
//   - the median's interval [x(j), x(k)] from the sorted samples x(1) <= ... <= x(n):
//     k = n + 1 - j, with j the largest rank such that P(B <= j - 1) <= 0.025 for
//     B ~ Binomial(n, 1/2) (j = 1 if none), and its coverage 1 - 2 P(B <= j - 1).
//     P(B = i) = C(n, i) / 2^n, and P(B = i + 1) = P(B = i) (n - i) / (i + 1).
// n is at most 1000, so 2^-n is still a normal double (std::ldexp(1.0, -n)).
//
// Check it:  build/prism check median_timer
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "exercises/15_median_timer/median_timer.h"

namespace median_timer {

// [[maybe_unused]]: the empty bodies do not use their parameters yet, and -Wextra warns about
// unused parameters. Delete the attributes once your code uses them.
Summary summarize_samples([[maybe_unused]] const std::vector<double>& samples_ns) {
  Summary r;
  // TODO(exercise): the median, the MAD, the interval's ranks, values and coverage. Write the
  // median as a helper (sort a copy): the MAD needs it too. Delete this TODO line, and the one
  // below, when the checker passes: ctest then checks your timer instead of expecting this
  // empty one to fail.
  return r;
}

TimerResult time_calls([[maybe_unused]] const std::function<void()>& fn,
                       [[maybe_unused]] const Clock& clock,
                       [[maybe_unused]] const TimerConfig& cfg) {
  TimerResult r;
  // TODO(exercise): steps 1 to 4 above.
  return r;
}

}  // namespace median_timer
