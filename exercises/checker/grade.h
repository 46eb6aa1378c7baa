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
// Against the tier's bound b:
//   high < b   reached: even the interval's slow end is inside the bound
//   low  > b   missed:  even its fast end is outside
//   otherwise  inconclusive: the interval straddles b, and more samples (--runs) may decide.
// A yardstick too slow to time at some size (naive matmul at 1024) is skipped there: the tier is
// judged at the sizes where it was timed. Yours too slow to time where the yardstick was timed
// misses the tier there. A tier counts only if it is reached at every size (a tile
// that is fast at 512 but collapses at 2048 or on a transposed B has not reached it), and only
// after every tier before it. Tiers never fail an exercise: a correct kernel passes; the tier says
// how far it got.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/lab/lab.h"

namespace prism::exercises {

struct Tier {
  std::string name;       // "beats naive", "within 1.5x of the best built-in"
  std::string yardstick;  // a built-in variant's name, or "best": the fastest built-in
  double bound;           // r = yours / yardstick must stay below this
  std::string hint;       // what to try when this tier is missed
};

enum class TierResult { reached, missed, inconclusive };

// The rule above for one ratio interval.
TierResult judge(double low, double high, double bound);

// One tier at one size.
struct TierCheck {
  std::string size;
  std::string yardstick;  // the variant compared with
  double ratio = 0, low = 0, high = 0;
  TierResult result = TierResult::missed;
  bool skipped = false;  // the yardstick was not timed at this size
  std::string too_slow;  // yours was not timed here (the lab's note why): the tier is missed
};

struct Grade {
  int reached = 0;            // how many tiers, in order, were reached at every size
  int of = 0;                 // how many tiers there are
  bool inconclusive = false;  // tier `reached` (the next one) straddled its bound somewhere
  std::vector<std::vector<TierCheck>> checks;  // per tier looked at, per size
  std::string note;  // why grading stopped early (the kernel was not timed at some size)
};

// Grades variant `user` of `r` against `tiers`. `seed` makes the bootstrap reproducible.
Grade grade_kernel(const std::vector<Tier>& tiers, const lab::LabResult& r, const std::string& user,
                   uint64_t seed);

// The verdict in words: the tier reached, each tier's ratios per size, and the hint for the
// first tier missed; when inconclusive, the next thing to try given `runs`, the samples this run
// took: more of them (--runs 30, then 100), and past that a quieter machine, never the same
// advice again.
std::string format_grade(const std::vector<Tier>& tiers, const Grade& g, int runs = 15);

}  // namespace prism::exercises
