// Exercise 15's checks: the learner's summarize_samples and time_calls (median_timer.h).
//
// summarize_samples first, on given samples (skewed, n = 1, outliers in shuffled places, an even
// count, ties, n < 6): the median and the MAD against prism's own profiler/statistics.h
// (stats::median, stats::mad: the reference, not re-implemented here), the interval's ranks,
// values and coverage against the binomial table below.
//
// Then time_calls, on a function `fn` and a fake clock whose time advances only when fn runs:
// call number i (counting every call, from 0) costs cost(i) nanoseconds, and the clock reads that
// time rounded down to its resolution (1 ns, or 1 us for a coarse clock). The scripts have cold
// first calls, a steady cost, a cost far below the clock's tick, periodic slow calls and an empty
// call. Since nothing else moves the clock, the right answer is known exactly: the checker runs
// the procedure README.md specifies (warm-up, doubling, samples) on a second copy of the script,
// and the learner's calls per sample, samples and summary must match it.
//
// Values are compared to 1e-9 relative: they are whole nanoseconds divided by the batch size, so
// only the order of floating-point operations can differ, and every mistake is off by far more.
// No speed tiers: this exercise is graded on exact answers.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "exercises/15_median_timer/median_timer.h"
#include "exercises/checker/checker.h"
#include "profiler/statistics.h"

namespace prism::exercises {
namespace {

namespace stats = profiler::stats;
using median_timer::TimerConfig;
using median_timer::TimerResult;

constexpr double kRelTolerance = 1e-9;

// The fake clock: its time moves only when the scripted function runs.
class ScriptedClock final : public median_timer::Clock {
 public:
  ScriptedClock(std::function<int64_t(int64_t)> cost, int64_t resolution)
      : cost_(std::move(cost)), resolution_(resolution) {}
  int64_t now_ns() const override { return t_ / resolution_ * resolution_; }
  void call() { t_ += cost_(calls_++); }  // what fn does

 private:
  std::function<int64_t(int64_t)> cost_;
  int64_t resolution_;
  int64_t t_ = 0;
  int64_t calls_ = 0;
};

// splitmix64: a reproducible pseudo-random value for (seed, stream, i), so a call's cost depends
// on its number only and both runs of a script see the same costs.
uint64_t mix(uint64_t seed, uint64_t stream, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ULL + stream * 0xD1B54A32D192ED03ULL + i + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
double uniform01(uint64_t seed, uint64_t stream, uint64_t i) {  // in (0, 1]
  return (static_cast<double>(mix(seed, stream, i) >> 11) + 1) * 0x1.0p-53;
}

// The 95% interval's rank j for the sample counts the cases use, and tail(j) = P(B <= j - 1) =
// below / 2^n for B ~ Binomial(n, 1/2), as the count below = sum_{i < j} C(n, i). j is the largest
// rank with tail(j) <= 0.025 (1 when none is, n <= 5); coverage = 1 - 2 tail(j). For example
// n = 15: C(15, 0..3) = 1 + 15 + 105 + 455 = 576, 576 / 32768 = 0.0176 <= 0.025, while adding
// C(15, 4) = 1365 gives 0.0592: j = 4, k = 12, coverage 0.9648.
struct RankRow {
  int n, j;
  double below;
};
constexpr RankRow kRanks[] = {
    {1, 1, 1},    {5, 1, 1},    {9, 2, 10},     {10, 2, 11},
    {15, 4, 576}, {16, 4, 697}, {20, 6, 21700}, {31, 10, 31621024},
};

const RankRow& rank_row(int n) {
  for (const RankRow& r : kRanks) {
    if (r.n == n) return r;
  }
  throw Error("median_timer checker: no rank table row for n = " + std::to_string(n));
}

bool same(double got, double want) {
  return std::abs(got - want) <= kRelTolerance * std::max(1.0, std::abs(want));
}

std::string ns(double v) {
  return fmt::format("{:.6g}", v);
}

// One case's verdict: `detail` after PASS/FAIL; for a failure, what it means.
struct CaseResult {
  bool ok = false;
  std::string detail;
  std::string hint;
  std::string extra;  // the bootstrap comparison, printed after the cases when all pass
};

CaseResult failed(std::string detail, std::string hint) {
  CaseResult r;
  r.detail = std::move(detail);
  r.hint = std::move(hint);
  return r;
}

const char* const kStubHint =
    " If the TODO in exercises/15_median_timer/median_timer.cpp is still to do, that is why.";

// The summary checks, shared by both kinds of case: `got` against the summary of `samples`.
CaseResult check_summary(const median_timer::Summary& got, const std::vector<double>& samples) {
  const int n = static_cast<int>(samples.size());
  // The reference: prism's own statistics on the same samples.
  const double median = stats::median(samples);
  const double mad = stats::mad(samples);
  if (!same(got.median_ns, median)) {
    std::string h =
        "The median is the middle sample of the sorted samples, and for an even count the mean "
        "of the two middle ones.";
    if (got.median_ns == 0 && got.ci_low_rank == 0) h += kStubHint;
    return failed(
        fmt::format("median: got {} ns, want {} ns (stats::median)", ns(got.median_ns), ns(median)),
        h);
  }
  if (!same(got.mad_ns, mad)) {
    return failed(fmt::format("MAD: got {} ns, want {} ns (stats::mad)", ns(got.mad_ns), ns(mad)),
                  "MAD = median_i |x_i - median(x)|, the raw median absolute deviation (no "
                  "1.4826 factor), with the same median rule as above.");
  }
  const RankRow& rr = rank_row(n);
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const int j = rr.j, k = n + 1 - rr.j;
  const double lo = sorted[static_cast<size_t>(j - 1)], hi = sorted[static_cast<size_t>(k - 1)];
  const double coverage = 1 - 2 * rr.below / std::ldexp(1.0, n);
  const std::string ci_hint =
      "The interval is [x(j), x(k)], the j-th and k-th smallest samples with k = n + 1 - j and "
      "j the largest rank with P(B <= j - 1) <= 0.025 for B ~ Binomial(n, 1/2) (j = 1 when no "
      "rank qualifies). No normal approximation: the ranks come from the binomial itself.";
  if (!same(got.ci_low_ns, lo) || !same(got.ci_high_ns, hi)) {
    return failed(fmt::format("95% CI: got [{}, {}] ns, want [x({}), x({})] = [{}, {}] ns",
                              ns(got.ci_low_ns), ns(got.ci_high_ns), j, k, ns(lo), ns(hi)),
                  ci_hint);
  }
  if (got.ci_low_rank != j || got.ci_high_rank != k) {
    return failed(fmt::format("CI ranks: got x({}), x({}), want x({}), x({})", got.ci_low_rank,
                              got.ci_high_rank, j, k),
                  "The values are right (ties?) but the ranks are not. " + ci_hint);
  }
  if (!same(got.ci_coverage, coverage)) {
    return failed(fmt::format("CI coverage: got {:.6f}, want {:.6f} = 1 - 2 x {:.0f} / 2^{}",
                              got.ci_coverage, coverage, rr.below, n),
                  "The coverage of [x(j), x(n + 1 - j)] is P(j <= B <= n - j) = 1 - 2 P(B <= "
                  "j - 1), the exact binomial probability, not the 0.95 asked for.");
  }
  CaseResult r;
  r.ok = true;
  r.detail = fmt::format(
      "median {} ns, MAD {} ns, CI [x({}), x({})] = [{}, {}] ns, coverage "
      "{:.1f}%",
      ns(median), ns(mad), j, k, ns(lo), ns(hi), 100 * coverage);
  if (n >= 20 && mad > 0) {
    const stats::Interval b = stats::bootstrap_median_ci(samples);
    r.extra = fmt::format(
        "[x({}), x({})] = [{}, {}] ns; prism's bootstrap interval "
        "(stats::bootstrap_median_ci, what prism lab prints) on the same "
        "samples: [{}, {}] ns",
        j, k, ns(lo), ns(hi), ns(b.low), ns(b.high));
  }
  return r;
}

// ---- summarize_samples on given samples --------------------------------------------------------

struct StatsCase {
  std::string label;
  std::vector<double> samples;
  std::string hint;  // what this case is there to catch
};

std::vector<StatsCase> stats_cases(uint64_t seed) {
  // n samples, sample i = value(i).
  auto make = [](int n, const std::function<double(uint64_t)>& value) {
    std::vector<double> x;
    for (int i = 0; i < n; ++i) x.push_back(value(static_cast<uint64_t>(i)));
    return x;
  };
  // A shuffle of 0..9 for the even-n case: distinct values in no order.
  std::vector<double> perm(10);
  for (int i = 0; i < 10; ++i) perm[static_cast<size_t>(i)] = i;
  for (int i = 9; i > 0; --i) {
    std::swap(perm[static_cast<size_t>(i)],
              perm[static_cast<size_t>(mix(seed, 3, static_cast<uint64_t>(i)) % (i + 1))]);
  }
  return {
      {"skewed (a floor and a long right tail), n = 31",
       make(31,
            [seed](uint64_t i) {
              // 1000 ns plus an exponential's square (a long tail); 1 sample in 8 also 20 us
              // slower.
              const double e = -std::log(uniform01(seed, 1, i));
              const bool slow = mix(seed, 2, i) % 8 == 0;
              return std::floor(1000 + 300 * e * e) + (slow ? 20'000 : 0);
            }),
       "skewed samples: most near 1000 ns, a few far above. The interval of the median is "
       "[x(j), x(k)], two of the sorted samples, whatever their distribution: mean +- 1.96 "
       "sd / sqrt(n) assumes normal samples, and the tail pulls it to the right."},
      {"n = 1",
       {static_cast<double>(1234 + mix(seed, 5, 0) % 100)},
       "one sample: it is the median, its MAD is 0, and the interval is [x(1), x(1)], which "
       "holds the true median with probability 0 (coverage 1 - 2 P(B <= 0) = 0)."},
      {"n = 15, outliers in shuffled places",
       make(15,
            [seed](uint64_t i) {
              const bool outlier = mix(seed, 6, i) % 4 == 0;
              return 2000.0 + static_cast<double>(mix(seed, 7, i) % 50) + (outlier ? 30'000 : 0);
            }),
       "outliers anywhere in the series, not at its end: sort a copy of the samples before "
       "taking the median, the MAD or the order statistics."},
      {"even n = 10, distinct values in shuffled order",
       make(10, [&perm](uint64_t i) { return 1000 + 100 * perm[i]; }),
       "an even number of samples has two middle ones: the median is their mean (prism's "
       "stats::median), so that as many samples lie below it as above."},
      {"ties, n = 16",
       make(16,
            [seed](uint64_t i) {
              constexpr double kValues[] = {1500, 1500, 1510, 1520};
              return kValues[mix(seed, 8, i) % 4];
            }),
       "many equal samples: the median, MAD and interval of tied values are still the same "
       "order statistics."},
      {"n = 5, too few for 95%",
       make(5, [seed](uint64_t i) { return 700.0 + static_cast<double>(mix(seed, 9, i) % 300); }),
       "with n <= 5 even [min, max] misses the median with probability 2 / 2^n > 5%: j = 1, "
       "and the coverage, 1 - 2 / 2^n, says how much less than 95% it holds."},
  };
}

// ---- time_calls on a scripted clock ------------------------------------------------------------

struct TimerCase {
  std::string label;
  TimerConfig cfg;
  int64_t resolution;
  std::function<int64_t(int64_t)> cost;  // ns of call i, counting every call from 0
  std::string hint;                      // what this case is there to catch
};

TimerConfig config(int warmup, int samples, int64_t min_sample_ns,
                   int64_t max_calls = int64_t{1} << 30) {
  TimerConfig c;
  c.warmup_calls = warmup;
  c.samples = samples;
  c.min_sample_ns = min_sample_ns;
  c.max_calls = max_calls;
  return c;
}

std::vector<TimerCase> timer_cases(uint64_t seed) {
  return {
      {"3 cold calls (1 ms), then 1000 ns, min sample 0, n = 15", config(3, 15, 0), 1,
       [](int64_t i) { return i < 3 ? int64_t{1'000'000} : int64_t{1000}; },
       "the first calls of a function are slow (cold caches, page faults, lazy set-up): make the "
       "warm-up calls before any timing, and time none of them."},
      {"50 ns calls on a 1 us clock, min sample 20 us, n = 9", config(5, 9, 20'000), 1000,
       [](int64_t) { return int64_t{50}; },
       "a call far shorter than the clock's tick: timed alone it reads 0 or 1000 ns. Batches of "
       "c calls, c doubled from 1 until one batch lasts min_sample_ns, make the tick's error "
       "1000 / c ns per call."},
      {"1000 ns calls, every 7th 8 us, min sample 20 us, n = 20", config(3, 20, 20'000), 1,
       [seed](int64_t i) {
         return (i % 7 == 6 ? int64_t{8000} : int64_t{1000}) +
                static_cast<int64_t>(mix(seed, 10, static_cast<uint64_t>(i)) % 10);
       },
       "batches that hold a varying number of slow calls: each sample is its batch's time "
       "divided by c, as a double."},
      {"an empty call (0 ns), max_calls 64, n = 5", config(0, 5, 1000, 64), 1,
       [](int64_t) { return int64_t{0}; },
       "a call too fast to measure at all: the doubling must stop at max_calls, and the samples "
       "are then 0."},
  };
}

// The procedure README.md specifies, run on the script: the calls per sample and the samples.
struct Expected {
  int64_t calls_per_sample = 1;
  std::vector<double> samples;
};

Expected expected_run(const TimerCase& tc) {
  ScriptedClock clock(tc.cost, tc.resolution);
  for (int i = 0; i < tc.cfg.warmup_calls; ++i) clock.call();
  auto batch = [&clock](int64_t c) {
    const int64_t t0 = clock.now_ns();
    for (int64_t i = 0; i < c; ++i) clock.call();
    return clock.now_ns() - t0;
  };
  Expected e;
  int64_t c = 1;
  while (batch(c) < tc.cfg.min_sample_ns && c < tc.cfg.max_calls) {
    c = std::min(2 * c, tc.cfg.max_calls);
  }
  e.calls_per_sample = c;
  for (int s = 0; s < tc.cfg.samples; ++s) {
    e.samples.push_back(static_cast<double>(batch(c)) / static_cast<double>(c));
  }
  return e;
}

CaseResult check_timer_case(const TimerCase& tc) {
  const Expected e = expected_run(tc);
  ScriptedClock clock(tc.cost, tc.resolution);
  TimerResult got;
  try {
    got = median_timer::time_calls([&clock] { clock.call(); }, clock, tc.cfg);
  } catch (const std::exception& ex) {
    return failed(std::string("threw: ") + ex.what(),
                  "time_calls threw an error on a valid configuration.");
  }
  if (got.calls_per_sample != e.calls_per_sample) {
    std::string h =
        "calls_per_sample is the batch size c: double it from 1 call until one batch, timed "
        "as the clock reads it, lasts at least min_sample_ns, or until it reaches max_calls. "
        "The calibration batches are not samples.";
    if (got.calls_per_sample == 1) {
      h += " With c = 1 each sample times one call: on a clock with a coarse tick (here 1 us) "
           "a 50 ns call reads as 0 or 1000 ns.";
    }
    if (got.calls_per_sample == 0) h += kStubHint;
    return failed(
        fmt::format("calls per sample: got {}, want {}", got.calls_per_sample, e.calls_per_sample),
        h);
  }
  if (got.samples_ns.size() != e.samples.size()) {
    return failed(fmt::format("samples: got {}, want {}", got.samples_ns.size(), e.samples.size()),
                  "samples_ns holds one entry per timed sample: cfg.samples of them.");
  }
  for (size_t s = 0; s < e.samples.size(); ++s) {
    if (!same(got.samples_ns[s], e.samples[s])) {
      return failed(
          fmt::format("sample {} (in time order): got {} ns, want {} ns", s + 1,
                      ns(got.samples_ns[s]), ns(e.samples[s])),
          "Each sample is one batch of c calls, timed with one clock read before and one after, "
          "divided by c as a double; the samples come after the warm-up and the calibration "
          "batches, in the order they were taken. A sample far too large holds a cold call: the "
          "warm-up calls must not be timed. A sample rounded to a whole number came from "
          "integer division.");
    }
  }
  CaseResult r = check_summary(got.summary, e.samples);
  if (r.ok) r.detail = fmt::format("c {}, {}", e.calls_per_sample, r.detail);
  return r;
}

// Runs one list of cases, printing a line each; returns how many passed and keeps the first
// failure's hint and the passing cases' extra lines.
template <class C, class Check>
int run_cases(const Options& o, const std::vector<C>& cases, size_t width, Check check,
              std::string& first_hint, std::vector<std::string>& extras) {
  int passed = 0;
  for (const C& c : cases) {
    // The label goes out before the case runs: if the timer never returns, the last line says
    // where.
    fmt::print("  {:<{}}  ", c.label, width);
    std::fflush(stdout);
    note_step(o, "case " + c.label);
    CaseResult r;
    try {
      r = check(c);
    } catch (const std::exception& ex) {
      r = failed(std::string("threw: ") + ex.what(), "Your code threw an error on valid input.");
    }
    passed += r.ok;
    fmt::print("{}  {}\n", r.ok ? "PASS" : "FAIL", r.detail);
    if (!r.extra.empty()) extras.push_back(c.label + ": " + r.extra);
    if (!r.ok && first_hint.empty()) {
      first_hint = "hint (" + c.label + "): " + r.hint + "\nThis case: " + c.hint;
    }
  }
  return passed;
}

Outcome run_timer(const Options& o) {
  fmt::print(
      "\nvalues compared to {:.0e} relative (exact answers: whole nanoseconds divided by "
      "the batch size); median and MAD against prism's stats::median and stats::mad, the "
      "median's 95% interval against the binomial's order statistics\n",
      kRelTolerance);
  const std::vector<StatsCase> scases = stats_cases(o.seed);
  const std::vector<TimerCase> tcases = timer_cases(o.seed);
  size_t width = 0;
  for (const StatsCase& c : scases) width = std::max(width, c.label.size());
  for (const TimerCase& c : tcases) width = std::max(width, c.label.size());
  std::string first_hint;
  std::vector<std::string> extras;
  fmt::print("summarize_samples, on given samples:\n");
  int passed = run_cases(
      o, scases, width,
      [](const StatsCase& c) {
        return check_summary(median_timer::summarize_samples(c.samples), c.samples);
      },
      first_hint, extras);
  fmt::print("time_calls, on a scripted clock (time moves only inside fn, by known amounts):\n");
  passed += run_cases(o, tcases, width, check_timer_case, first_hint, extras);
  const int n = static_cast<int>(scases.size() + tcases.size());
  fmt::print("{} of {} cases passed.\n", passed, n);
  if (passed < n) {
    fmt::print("\n{}\n", first_hint);
    return {1, 0, 0};
  }
  if (!extras.empty()) {
    fmt::print("\nfor comparison (not graded):\n");
    for (const std::string& x : extras) fmt::print("  {}\n", x);
  }
  return {0, 0, 0};
}

Exercise make_median_timer() {
  Exercise ex;
  ex.id = "15_median_timer";
  ex.file = "exercises/15_median_timer/median_timer.cpp";
  ex.title = "a timer: warm-up, batches, the median, its MAD and its 95% interval";
  ex.tolerance = kRelTolerance;
  ex.tolerance_why = "exact answers";
  ex.run = run_timer;
  return ex;
}

static const bool registered = add_exercise(make_median_timer());

}  // namespace
}  // namespace prism::exercises
