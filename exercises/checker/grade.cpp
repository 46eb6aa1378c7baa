#include "exercises/checker/grade.h"

#include <fmt/core.h>

#include <algorithm>

#include "profiler/statistics.h"

namespace prism::exercises {
namespace {

const lab::TimingRow* row_of(const lab::LabResult& r, const std::string& size,
                             const std::string& variant) {
  for (const lab::TimingRow& row : r.rows) {
    if (row.size == size && row.variant == variant) return &row;
  }
  return nullptr;
}

// The yardstick at one size: the built-in variant of that name, or for "best" the timed
// built-in (never a learner's kernel) with the lowest median.
const lab::TimingRow* yardstick(const lab::LabResult& r, const std::string& size,
                                const std::string& name) {
  if (name != "best") return row_of(r, size, name);
  const lab::TimingRow* pick = nullptr;
  for (const lab::TimingRow& row : r.rows) {
    if (row.size != size || !row.timed || row.tag == "user") continue;
    if (!pick || row.median_ns < pick->median_ns) pick = &row;
  }
  return pick;
}

std::vector<std::string> sizes_of(const lab::LabResult& r) {
  std::vector<std::string> sizes;
  for (const lab::TimingRow& row : r.rows) {
    if (sizes.empty() || sizes.back() != row.size) sizes.push_back(row.size);
  }
  return sizes;
}

const char* result_word(TierResult t) {
  switch (t) {
    case TierResult::reached:
      return "reached";
    case TierResult::missed:
      return "missed";
    case TierResult::inconclusive:
      return "inconclusive";
  }
  return "";
}

}  // namespace

TierResult judge(double low, double high, double bound) {
  if (high < bound) return TierResult::reached;
  if (low > bound) return TierResult::missed;
  return TierResult::inconclusive;
}

Grade grade_kernel(const std::vector<Tier>& tiers, const lab::LabResult& r, const std::string& user,
                   uint64_t seed) {
  Grade g;
  g.of = static_cast<int>(tiers.size());
  const std::vector<std::string> sizes = sizes_of(r);
  for (const Tier& tier : tiers) {
    std::vector<TierCheck> checks;
    bool missed = false, unsure = false;
    for (const std::string& size : sizes) {
      const lab::TimingRow* mine = row_of(r, size, user);
      const lab::TimingRow* yard = yardstick(r, size, tier.yardstick);
      if (!mine || !mine->valid) {
        g.note = "not graded: your kernel failed the lab's validation at size " + size +
                 " (prism lab " + r.op + " shows where)";
        g.checks.push_back(std::move(checks));
        return g;
      }
      if (!yard || !yard->timed) {
        TierCheck skip;
        skip.size = size;
        skip.yardstick = tier.yardstick;
        skip.skipped = true;
        checks.push_back(skip);
        continue;
      }
      if (!mine->timed) {
        // Too slow to time where the yardstick was timed: that tier is missed here.
        TierCheck slow;
        slow.size = size;
        slow.yardstick = yard->variant;
        slow.too_slow = mine->note;
        slow.result = TierResult::missed;
        missed = true;
        checks.push_back(slow);
        continue;
      }
      TierCheck c;
      c.size = size;
      c.yardstick = yard->variant;
      c.ratio = mine->median_ns / yard->median_ns;
      if (yard == mine) {
        c.low = c.high = 1;
      } else {
        const auto ci = profiler::stats::bootstrap_ratio_ci(mine->samples_ns, yard->samples_ns,
                                                            0.95, 2000, seed);
        c.low = ci.low;
        c.high = ci.high;
      }
      c.result = judge(c.low, c.high, tier.bound);
      missed = missed || c.result == TierResult::missed;
      unsure = unsure || c.result == TierResult::inconclusive;
      checks.push_back(c);
    }
    const bool judged =
        std::any_of(checks.begin(), checks.end(), [](const TierCheck& c) { return !c.skipped; });
    g.checks.push_back(std::move(checks));
    if (!judged) {
      g.note = "tier \"" + tier.name + "\" could not be judged: " + tier.yardstick +
               " was too slow to time at every size";
      return g;
    }
    if (missed) return g;
    if (unsure) {
      g.inconclusive = true;
      return g;
    }
    ++g.reached;
  }
  return g;
}

std::string format_grade(const std::vector<Tier>& tiers, const Grade& g, int runs) {
  std::string out = fmt::format("performance: tier {} of {}", g.reached, g.of);
  if (g.reached > 0) out += fmt::format(" ({})", tiers[g.reached - 1].name);
  if (g.reached == 0) out += " (correct)";
  if (g.inconclusive) out += fmt::format(", inconclusive for tier {}", g.reached + 1);
  out += "\n";
  for (size_t t = 0; t < g.checks.size(); ++t) {
    out += fmt::format(
        "  tier {}: {} (your time / {} below {:.2f}x at every size)\n", t + 1, tiers[t].name,
        tiers[t].yardstick == "best" ? "the best built-in's" : tiers[t].yardstick + "'s",
        tiers[t].bound);
    for (const TierCheck& c : g.checks[t]) {
      if (c.skipped) {
        out += fmt::format("    {:<24} {} was too slow to time here: not judged\n", c.size,
                           c.yardstick);
        continue;
      }
      if (!c.too_slow.empty()) {
        out += fmt::format("    {:<24} yours was too slow to time here ({}): missed\n", c.size,
                           c.too_slow);
        continue;
      }
      out += fmt::format("    {:<24} yours / {:<10} {:>7.3f}x  [{:.3f}, {:.3f}]  {}\n", c.size,
                         c.yardstick, c.ratio, c.low, c.high, result_word(c.result));
    }
  }
  if (!g.note.empty()) {
    out += "  " + g.note + "\n";
  } else if (g.inconclusive) {
    // More samples narrow the interval as 1/sqrt(n); past 100 the noise of the machine, not the
    // count, is what keeps it across the bound.
    const int more = runs < 30 ? 30 : runs < 100 ? 100 : 0;
    out += more > 0 ? fmt::format(
                          "  the interval straddles tier {}'s bound with {} samples: run again "
                          "with --runs {} to narrow it\n",
                          g.reached + 1, runs, more)
                    : fmt::format(
                          "  the interval straddles tier {}'s bound even with {} samples: the "
                          "two are within this machine's noise of each other; run again when "
                          "it is quieter, or take the tier as not shown\n",
                          g.reached + 1, runs);
  } else if (g.reached < g.of) {
    out += fmt::format("  next: {}\n", tiers[g.reached].hint);
  }
  return out;
}

}  // namespace prism::exercises
