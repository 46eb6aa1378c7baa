// Performance tiers: once a kernel is correct, how fast is it, stated with the uncertainty a
// shared machine leaves.
//
// An exercise lists its tiers in order (its check.cpp; each README says why each threshold is
// where it is). A tier compares the learner's kernel with a yardstick: a built-in variant by
// name (`naive`, `reordered`), or "best", the fastest built-in variant at each size. At every timed
// size the kernel lab gives both kernels' samples, taken interleaved, and the ratio
//
//   r = median(yours) / median(yardstick)      (below 1: yours is faster)
//
// with a 95% bootstrap interval [low, high] (profiler/statistics.h, the lab's own statistics).
// Against the tier's bound b and its margin m (kTierMargin, 5%):
//   high < b                      reached:  even the interval's slow end is inside the bound
//   low  > b                      missed:   even its fast end is outside
//   b(1-m) <= low, high <= b(1+m) at the bound: the interval holds b but lies within m of it;
//                                 a tier asks for a clear win, so this counts as missed
//   otherwise                     inconclusive: the interval is wider than the margin
// The margin makes every tier decidable: a kernel exactly as fast as the bound (a plain i-j-k
// loop against "beats naive") no longer straddles it forever; once its interval is narrower
// than 2m it is "at the bound". Until then the checker samples again (grade_until_decided,
// below) and only a machine noisier than the margin leaves a tier inconclusive.
// A yardstick too slow to time at some size (naive matmul at 1024) is skipped there: the tier is
// judged at the sizes where it was timed. Yours too slow to time where the yardstick was timed
// misses the tier there. A tier counts only if it is reached at every size (a tile
// that is fast at 512 but collapses at 2048 or on a transposed B has not reached it), and only
// after every tier before it. Tiers never fail an exercise: a correct kernel passes; the tier says
// how far it got.
//
// Hints follow the evidence (hint_for): a tier missed at every size gets its general hint (the
// step the tier is about is missing); one missed only at some sizes gets the hint written for
// those sizes (a transposed B, one long row), and with none written for them, no hint at all:
// the grade then says where it was missed and where reached, which is what to look at.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/lab/lab.h"

namespace prism::exercises {

// The relative margin around every bound (above): within 5% of it is neither a win nor a loss
// worth a tier. On a quiet machine the interval of 15 to 100 interleaved samples is a few % wide.
inline constexpr double kTierMargin = 0.05;

// A hint for a tier missed only at some sizes: printed when every size where the tier was missed
// is one of `sizes` (the lab's size names, quick and full) and it was reached elsewhere.
struct SizeHint {
  std::vector<std::string> sizes;
  std::string hint;
};

struct Tier {
  std::string name;               // "beats naive", "within 1.5x of the best built-in"
  std::string yardstick;          // a built-in variant's name, or "best": the fastest built-in
  double bound;                   // r = yours / yardstick must stay below this
  std::string hint;               // what to try when this tier is missed at every size
  std::vector<SizeHint> at = {};  // what to try when it is missed at some sizes only
};

enum class TierResult { reached, missed, at_bound, inconclusive };

// The rule above for one ratio interval.
TierResult judge(double low, double high, double bound, double margin = kTierMargin);

// One tier at one size.
struct TierCheck {
  std::string size;
  std::string yardstick;  // the variant compared with
  double ratio = 0, low = 0, high = 0;
  TierResult result = TierResult::missed;
  bool skipped = false;  // the yardstick was not timed at this size
  std::string too_slow;  // yours was not timed here (the lab's note why): the tier is missed
  int samples = 0;       // your kernel's timed samples here (after any sampling again)
  bool missed() const { return result == TierResult::missed || result == TierResult::at_bound; }
};

struct Grade {
  int reached = 0;            // how many tiers, in order, were reached at every size
  int of = 0;                 // how many tiers there are
  bool inconclusive = false;  // tier `reached` (the next one) straddled its bound somewhere
  std::vector<std::vector<TierCheck>> checks;  // per tier looked at, per size
  std::string note;  // why grading stopped early (the kernel was not timed at some size)
  std::string op;    // the lab's op, for the commands the verdict names
  // The program whose lab has the learner's kernel (the checker sets build/prism_with_NAME).
  std::string lab_tool = "build/prism";
};

// Grades variant `user` of `r` against `tiers`. `seed` makes the bootstrap reproducible.
Grade grade_kernel(const std::vector<Tier>& tiers, const lab::LabResult& r, const std::string& user,
                   uint64_t seed);

// The hint the evidence supports for a tier missed in `checks` (above), or "" for none.
std::string hint_for(const Tier& tier, const std::vector<TierCheck>& checks);

// The verdict in words: the tier reached, each tier's ratios per size, and for the first tier
// missed the hint its evidence supports (hint_for) or where it was missed. When inconclusive
// (after the checker sampled again up to its cap): how many samples would narrow the interval
// to the margin at this machine's noise, and --runs with that many when it is within reason,
// else a quieter machine.
std::string format_grade(const std::vector<Tier>& tiers, const Grade& g);

// What sequential sampling may spend: at most `cap` samples of yours at a size, added `step` at a
// time, and `budget_s` seconds: no new round starts past it, and a round's variants are each
// capped at their share of what is left (a variant that would take longer is not timed).
struct SamplingLimits {
  int step = 15;
  int cap = 100;
  double budget_s = 90;
};

// Grades `user` in `r` (timed with `lo`); while a tier is inconclusive, times yours and that
// tier's yardsticks again at the sizes where it straddled (run_lab with lo's other settings),
// pools the samples into `r` (lab::pool_samples) and grades again, within `limits`. `say` gets one
// line per round ("tier 1 undecided at 512: 15 more samples ..."). `time` runs the lab (the
// tests give one that returns made-up samples).
using LabRunner = std::function<lab::LabResult(const lab::LabOptions&)>;
Grade grade_until_decided(const std::vector<Tier>& tiers, lab::LabResult& r,
                          const std::string& user, const lab::LabOptions& lo,
                          const SamplingLimits& limits, uint64_t seed,
                          const std::function<void(const std::string&)>& say,
                          const LabRunner& time = lab::run_lab);

}  // namespace prism::exercises
