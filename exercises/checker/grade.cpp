#include "exercises/checker/grade.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>

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

std::string result_word(TierResult t) {
  switch (t) {
    case TierResult::reached:
      return "reached";
    case TierResult::missed:
      return "missed";
    case TierResult::at_bound:
      return fmt::format("missed: within {:.0f}% of the bound, not a clear win", kTierMargin * 100);
    case TierResult::inconclusive:
      return "inconclusive";
  }
  return "";
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == words.size() ? " and " : ", ") + words[i];
  }
  return out;
}

// How many samples of yours would decide every undecided interval of `checks`, its half-width h
// shrinking as 1/sqrt(n) about its centre c: it is decided once h is below the larger of |c - b|
// (then it clears the bound) and m b - |c - b| (then it fits in the margin). At least n + 10;
// 0 when none is undecided.
int samples_to_decide(const std::vector<TierCheck>& checks, double bound) {
  double need = 0;
  for (const TierCheck& c : checks) {
    if (c.result != TierResult::inconclusive || c.samples <= 0) continue;
    const double centre = (c.low + c.high) / 2, half = (c.high - c.low) / 2;
    const double off = std::abs(centre - bound);
    const double target = std::max(off, kTierMargin * bound - off);
    const double n = target > 0 ? c.samples * (half / target) * (half / target) : 1e9;
    need = std::max({need, n, c.samples + 10.0});
  }
  return static_cast<int>(std::min(std::ceil(need / 10) * 10, 1e9));
}

// The judged sizes of one tier, by what became of them (skipped sizes are in none).
struct SizesByResult {
  std::vector<std::string> missed, reached, undecided;
};

SizesByResult sizes_by_result(const std::vector<TierCheck>& checks) {
  SizesByResult s;
  for (const TierCheck& c : checks) {
    if (c.skipped) continue;
    (c.missed()                             ? s.missed
     : c.result == TierResult::inconclusive ? s.undecided
                                            : s.reached)
        .push_back(c.size);
  }
  return s;
}

}  // namespace

TierResult judge(double low, double high, double bound, double margin) {
  // The margin first, on both sides: an interval within it is no clear win, even when it lies
  // just below the bound (two identical loops compiled in two files can differ by 1%).
  if (low >= bound * (1 - margin) && high <= bound * (1 + margin)) return TierResult::at_bound;
  if (high < bound) return TierResult::reached;
  if (low > bound) return TierResult::missed;
  return TierResult::inconclusive;
}

Grade grade_kernel(const std::vector<Tier>& tiers, const lab::LabResult& r, const std::string& user,
                   uint64_t seed) {
  Grade g;
  g.op = r.op;
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
      c.samples = static_cast<int>(mine->samples_ns.size());
      if (yard == mine) {
        c.low = c.high = 1;
      } else {
        const auto ci = profiler::stats::bootstrap_ratio_ci(mine->samples_ns, yard->samples_ns,
                                                            0.95, 2000, seed);
        c.low = ci.low;
        c.high = ci.high;
      }
      c.result = judge(c.low, c.high, tier.bound);
      missed = missed || c.missed();
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

std::string hint_for(const Tier& tier, const std::vector<TierCheck>& checks) {
  const SizesByResult by = sizes_by_result(checks);
  if (by.missed.empty()) return "";
  if (by.reached.empty() && by.undecided.empty()) return tier.hint;  // missed at every size
  // A size hint says the kernel holds elsewhere: only when every other size was reached.
  if (!by.undecided.empty()) return "";
  for (const SizeHint& h : tier.at) {
    const bool covers = std::all_of(by.missed.begin(), by.missed.end(), [&](const std::string& s) {
      return std::find(h.sizes.begin(), h.sizes.end(), s) != h.sizes.end();
    });
    if (covers) return h.hint;
  }
  return "";
}

std::string format_grade(const std::vector<Tier>& tiers, const Grade& g) {
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
    const std::vector<TierCheck>& checks = g.checks[g.reached];
    const double bound = tiers[g.reached].bound;
    int samples = INT_MAX;
    for (const TierCheck& c : checks) {
      if (c.result == TierResult::inconclusive) samples = std::min(samples, c.samples);
    }
    // The width of an interval shrinks as 1/sqrt(n): the samples that would bring the widest to
    // the margin, at the noise this run saw. Past about a thousand, the machine is the problem.
    const int need = samples_to_decide(checks, bound);
    out += fmt::format(
        "  with {} samples the interval still straddles tier {}'s bound and does not lie within "
        "its +-{:.0f}% margin: ",
        samples, g.reached + 1, kTierMargin * 100);
    out += need <= 1000 ? fmt::format(
                              "at this run's noise about {} samples would decide it: run again "
                              "with --runs {} (or when the machine is quieter)\n",
                              need, need)
                        : fmt::format(
                              "at this run's noise it would take about {} samples; this machine "
                              "is too noisy to decide it: run again when it is quieter, or take "
                              "the tier as not shown\n",
                              need);
  } else if (g.reached < g.of) {
    const Tier& tier = tiers[g.reached];
    const std::vector<TierCheck>& checks = g.checks[g.reached];
    const std::string hint = hint_for(tier, checks);
    if (!hint.empty()) {
      out += fmt::format("  next: {}\n", hint);
    } else {
      // No hint fits: say where it was missed, reached and left undecided: the evidence.
      const SizesByResult by = sizes_by_result(checks);
      std::string where = "missed at " + joined(by.missed);
      if (!by.reached.empty()) where += ", reached at " + joined(by.reached);
      if (!by.undecided.empty()) where += ", undecided at " + joined(by.undecided);
      out += fmt::format(
          "  next: tier {} was {}: what differs between those sizes (the working set, the layout) "
          "is where to look; {} lab {} --sizes {} times your kernel beside the built-ins "
          "there\n",
          g.reached + 1, where, g.lab_tool, g.op.empty() ? "OP" : g.op, by.missed.front());
    }
  }
  return out;
}

Grade grade_until_decided(const std::vector<Tier>& tiers, lab::LabResult& r,
                          const std::string& user, const lab::LabOptions& lo,
                          const SamplingLimits& limits, uint64_t seed,
                          const std::function<void(const std::string&)>& say,
                          const LabRunner& time) {
  using clock = std::chrono::steady_clock;
  const clock::time_point start = clock::now();
  Grade g = grade_kernel(tiers, r, user, seed);
  int rounds = 0;
  while (g.inconclusive && g.note.empty()) {
    const size_t tier = static_cast<size_t>(g.reached);
    // The sizes where the undecided tier straddled and yours has samples to add, with their
    // counts now.
    std::vector<std::string> sizes;
    std::vector<int> before;
    for (const TierCheck& c : g.checks[tier]) {
      if (c.result != TierResult::inconclusive || c.samples >= limits.cap) continue;
      sizes.push_back(c.size);
      before.push_back(c.samples);
    }
    if (sizes.empty()) break;
    const double left =
        limits.budget_s - std::chrono::duration<double>(clock::now() - start).count();
    if (left <= 0) {
      say(fmt::format("  (sampling again stopped: the budget of {:.0f} s is spent)",
                      limits.budget_s));
      break;
    }
    // Every yardstick of the tiers up to this one, at those sizes, joins the round: the pooled
    // samples of any two variants compared then come from the same interleaved rounds
    // (lab::pool_samples). "best" is the variant that was fastest there when the round began.
    std::vector<std::string> variants = {user};
    for (size_t t = 0; t <= tier; ++t) {
      for (const TierCheck& c : g.checks[t]) {
        if (c.skipped || std::find(sizes.begin(), sizes.end(), c.size) == sizes.end()) continue;
        if (std::find(variants.begin(), variants.end(), c.yardstick) == variants.end()) {
          variants.push_back(c.yardstick);
        }
      }
    }
    const int fewest = *std::min_element(before.begin(), before.end());
    lab::LabOptions more = lo;
    more.sizes = sizes;
    more.variants = variants;
    more.repetitions = std::min(limits.step, limits.cap - fewest);
    // No variant may take longer than its share of what is left of the budget.
    more.max_variant_s =
        std::min(lo.max_variant_s, left / static_cast<double>(variants.size() * sizes.size()));
    std::string others;
    for (size_t i = 1; i < variants.size(); ++i) others += (i > 1 ? ", " : "") + variants[i];
    say(fmt::format(
        "  tier {} undecided at {}: {} more interleaved samples of yours and {} ({} so far)",
        tier + 1, joined(sizes), more.repetitions, others, fewest));
    const lab::LabResult extra = time(more);
    lab::pool_samples(r, extra, seed);
    ++rounds;
    g = grade_kernel(tiers, r, user, seed);
    // Stop rather than loop when no straddling size got a sample this round (the lab would not
    // time yours there within its share of the budget).
    bool grew = false;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const lab::TimingRow* mine = row_of(r, sizes[i], user);
      grew = grew || (mine && static_cast<int>(mine->samples_ns.size()) > before[i]);
    }
    if (!grew) break;
  }
  if (rounds > 0) {
    say(fmt::format(
        "  (the ratios below pool every round's samples; the table above shows the first {})",
        lo.repetitions));
  }
  return g;
}

}  // namespace prism::exercises
