// Exercise 13's checks: the sum of each row (op `sum`, ReduceArgs) on OpenMP threads, with the
// same bits at every thread count. Compiled into this exercise's programs only.
//
// It is a kernel exercise (checker.h's check_kernels does the cases, the guard, the timing and
// the tiers) run in a threaded setting:
//   - everything runs at 2 OpenMP threads (or --threads N, N >= 2), the cases included, so a data
//     race on a shared sum shows up as a wrong value;
//   - more_checks runs a few rows built to expose the summation order (large terms that cancel)
//     at 1, 2 and 3 threads, twice each, and requires the same bits every time (below);
//   - the timing puts beside the built-in variants "yours_1_thread": the learner's kernel called
//     with omp_set_num_threads(1), in the same interleaved lab run, so tier 1 is the ratio
//     "yours at 2 threads / yours at 1 thread" with its bootstrap interval (grade.h).
#include <omp.h>

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "exercises/checker/checker.h"
#include "exercises/checker/shared_cases.h"
#include "kernels/ops/reduce/args.h"
#include "kernels/registry.h"
#include "tensor/ops.h"
#include "tensor/random.h"

namespace prism::exercises {
namespace {

using kernels::ReduceArgs;

constexpr const char* kOp = "sum";
constexpr const char* kFile = "exercises/13_sum_threads/sum_threads.cpp";

// ---- the 1-thread yardstick --------------------------------------------------------------------

// The name of the learner's kernel run on one thread, in the lab's table and in tier 1.
constexpr const char* kOneThread = "yours_1_thread";

// A kernel is a plain function pointer, so the wrapped kernel lives in a static (as in guard.h).
void (*g_user_kernel)(const ReduceArgs<float>&) = nullptr;

// The learner's kernel with the OpenMP thread count of this thread set to 1 for the call: every
// `#pragma omp parallel` inside it (without a num_threads clause) then runs on one thread.
void one_thread(const ReduceArgs<float>& a) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  g_user_kernel(a);
  omp_set_num_threads(saved);
}

// Registers one_thread for the (first) learner kernel of `sum`. Its tag is not `user`: the
// checker times the learner's variant and the non-user ones, so a `user` wrapper would not be
// timed. Tier 2 therefore names `optimized` instead of "best", which would count this wrapper.
void register_one_thread() {
  kernels::OpKernels& k = kernels::registry().op(kOp, Device::cpu);
  if (k.find(kOneThread)) return;
  for (const kernels::KernelEntry& e : k.entries()) {
    if (e.tag == kernels::VariantTag::user && e.name != kGuardVariant) {
      g_user_kernel = e.get<ReduceArgs, float>();
      k.add<ReduceArgs>(kOneThread, kernels::VariantTag::optimized,
                        "the learner's kernel at omp_set_num_threads(1): the checker's yardstick",
                        &one_thread);
      return;
    }
  }
}

// ---- the cases ---------------------------------------------------------------------------------

std::vector<Case> sum_threads_cases() {
  const std::string strides_hint =
      std::string(kStridesHint) +
      " In ReduceArgs, element i of row o is x[o * row_stride + i * col_stride], in every path "
      "of your kernel: where you cut a row into chunks too, chunk c starting c * chunk * "
      "col_stride after the row's first element.";
  const std::string race_hint =
      "a row longer than one thread's share: if the threads add into one shared sum (acc += ... "
      "inside `#pragma omp parallel for`), their read-add-write steps interleave and updates are "
      "lost: a data race. Give each thread (better: each fixed chunk) its own partial sum, "
      "then add the partials.";
  return {
      {"[1], all dims", {randn({1})}, {}, ""},
      {"[7], all dims", {randn({7})}, {}, ""},
      {"[5,13] over dim 1", {randn({5, 13})}, {1}, ""},
      {"[13,5] over dim 0 (col_stride 5)", {randn({13, 5})}, {0}, strides_hint},
      {"[9,17] transposed, over dim 1", {randn({17, 9}).t()}, {1}, strides_hint},
      {"[10,10] every 3rd column, over dim 1",
       {randn({10, 30}).slice(1, 0, 30, 3)},
       {1},
       strides_hint},
      {"[4,6,8] over dims 1 and 2", {randn({4, 6, 8})}, {1, 2}, ""},
      {"[512,2053] over dim 1", {randn({512, 2053})}, {1}, ""},
      {"[3,100003] all 0.1, over dim 1",
       {full({3, 100003}, 0.1)},
       {1},
       "a float32 running sum of 100003 values of 0.1 drifts by about 1e-4 (exercise 02): keep "
       "every partial sum in double (a chunk's float sum, short or in several lanes, cures the "
       "drift but not float32's range: see the rows of +-3e38)."},
      {"[1,1000003] one long row", {randn({1, 1000003})}, {1}, race_hint},
      {"[3,1000003] three long rows", {randn({3, 1000003})}, {1}, race_hint},
      {"[3,200003] over dim 0 (col_stride 3, long rows)", {randn({200003, 3})}, {0}, strides_hint},
      // The extremes a row can hold, each with the mistake it catches.
      {"[2,40009] +3e38, +3e38 and -3e38 in each row (sum 3e38)",
       {near_float_max(2, 40009)},
       {1},
       "each row's sum is about 3e38, which fits in float32 (FLT_MAX = 3.4e38), but 3e38 + 3e38 "
       "does not: a float32 partial sum (a chunk's float lanes, a float running sum) that holds "
       "both reaches inf and stays there (inf - 3e38 = inf), even when the chunks are added in "
       "double. Keep the lanes in double too: a double holds 6e38 easily."},
      {"[4,50021] +inf and -inf entries (long rows)",
       {with_infinities(50021)},
       {1},
       "a row that holds +inf sums to +inf (-inf to -inf), whichever chunk or thread adds it: "
       "a plain sum gets this right. A compensated (Kahan) sum's correction c = (t - s) - y is "
       "inf - inf = NaN once the sum is inf."},
  };
}

// ---- the same bits every time ------------------------------------------------------------------

// One input for the bit checks: a [rows, cols] view of `x`.
struct BitCase {
  std::string label;
  std::vector<float> x;
  int64_t rows, cols, row_stride, col_stride;
};

// Rows whose double sum rounds differently in every summation order. A quarter of each row's
// positions, drawn at random, hold large terms in pairs +h, -h (|h| around 2^40, the pair's two
// halves at unrelated places); the others hold N(0,1) values. The large terms cancel exactly, so
// the row's true sum is that of the small ones, but while they are being added the running sum
// holds the terms whose partner has not come yet: a random walk of size about 2^40 sqrt(cols /
// 8), 2^48 for a row of 10^6, where a double keeps no bits below 2^-4. Every small value added
// to it is rounded, by an amount that depends on the sum so far; a row of 10^6 collects some
// 10^6 such roundings, about 10 in all, and a different order (a chunk boundary elsewhere, the
// partials combined in another order) collects a different 10: another float32 result, with
// near certainty. There is no right value to compare with (each order is as good as another);
// the check asks only that the kernel repeat its own.
BitCase cancelling(std::string label, int64_t rows, int64_t cols, bool transposed, Generator& g) {
  BitCase c{std::move(label),
            std::vector<float>(static_cast<size_t>(rows * cols)),
            rows,
            cols,
            transposed ? 1 : cols,
            transposed ? rows : 1};
  std::vector<int64_t> place(static_cast<size_t>(cols));
  for (int64_t o = 0; o < rows; ++o) {
    auto at = [&](int64_t i) -> float& {
      return c.x[static_cast<size_t>(o * c.row_stride + i * c.col_stride)];
    };
    for (int64_t i = 0; i < cols; ++i) at(i) = static_cast<float>(g.normal());
    // The first cols / 4 entries of a random permutation (Fisher-Yates), taken in pairs.
    for (int64_t i = 0; i < cols; ++i) place[static_cast<size_t>(i)] = i;
    const int64_t pairs = cols / 8;
    for (int64_t i = 0; i < 2 * pairs; ++i) {
      const int64_t j =
          std::min(cols - 1, i + static_cast<int64_t>(g.uniform() * static_cast<double>(cols - i)));
      std::swap(place[static_cast<size_t>(i)], place[static_cast<size_t>(j)]);
    }
    for (int64_t p = 0; p < pairs; ++p) {
      const float h = static_cast<float>(g.normal() * 0x1p40);
      at(place[static_cast<size_t>(2 * p)]) = h;
      at(place[static_cast<size_t>(2 * p + 1)]) = -h;
    }
  }
  return c;
}

// The first position where two outputs differ in their bits, or -1.
int64_t first_difference(const std::vector<float>& u, const std::vector<float>& v) {
  for (size_t i = 0; i < u.size(); ++i) {
    if (std::memcmp(&u[i], &v[i], sizeof(float)) != 0) return static_cast<int64_t>(i);
  }
  return -1;
}

// Runs each case twice at 1, 2 and 3 threads and compares the bits: run against run at the same
// thread count (a race, atomics, a dynamic schedule whose partials are added as they arrive), and
// thread count against thread count (a partition that follows the thread count, as
// `reduction(+:s)` and a static split of the row into one piece per thread do). Both are
// required; README.md says why.
bool same_bits(const kernels::KernelEntry& user, const Options& o) {
  const auto kernel = user.get<ReduceArgs, float>();
  Generator g(o.seed ^ 0x13);
  std::vector<BitCase> cases;
  cases.push_back(cancelling("[1,1000003] large terms that cancel", 1, 1000003, false, g));
  cases.push_back(cancelling("[3,333337] large terms that cancel", 3, 333337, false, g));
  cases.push_back(cancelling("[4096,257] large terms that cancel", 4096, 257, false, g));
  cases.push_back(cancelling("[3,200003] cancelling, col_stride 3", 3, 200003, true, g));
  const int threads[] = {1, 2, 3};
  const int saved = omp_get_max_threads();
  fmt::print(
      "\nthe same bits every time: each row below is summed twice at 1, 2 and 3 threads, and the "
      "outputs' bits compared (rows of large terms that cancel, whose double sum rounds "
      "differently in every order):\n");
  size_t width = 0;
  for (const BitCase& c : cases) width = std::max(width, c.label.size());
  bool ok = true, run_to_run = false, across_counts = false;
  for (const BitCase& c : cases) {
    fmt::print("  {:<{}}  ", c.label, width);
    std::fflush(stdout);
    std::vector<std::vector<float>> first;  // the first run's output at each thread count
    std::string across, again;              // what differed, in words
    for (int t : threads) {
      std::vector<float> out[2];
      for (std::vector<float>& y : out) {
        y.assign(static_cast<size_t>(c.rows), 0.0f);
        ReduceArgs<float> a{c.x.data(),   c.rows,   c.cols, c.row_stride,
                            c.col_stride, y.data(), nullptr};
        omp_set_num_threads(t);
        kernel(a);
      }
      const int64_t i = first_difference(out[0], out[1]);
      if (i >= 0 && again.empty()) {
        again = fmt::format("two runs at {} thread{} differ (out[{}] = {:.9g}, then {:.9g})", t,
                            t == 1 ? "" : "s", i, out[0][i], out[1][i]);
        run_to_run = true;
      }
      first.push_back(std::move(out[0]));
    }
    for (size_t k = 1; k < first.size(); ++k) {
      const int64_t i = first_difference(first[0], first[k]);
      if (i < 0) continue;
      across = fmt::format(
          "not the same bits at 1 and {} threads (out[{}] = {:.9g} at 1, "
          "{:.9g} at {})",
          threads[k], i, first[0][i], first[k][i], threads[k]);
      across_counts = true;
      break;
    }
    omp_set_num_threads(saved);
    if (across.empty() && again.empty()) {
      fmt::print("PASS  same bits on every run and at 1, 2 and 3 threads\n");
      continue;
    }
    ok = false;
    fmt::print("FAIL  {}{}{}\n", across, across.empty() || again.empty() ? "" : "; ", again);
  }
  if (run_to_run) {
    fmt::print(
        "\nhint (the same bits every time): the same call on the same input gave other bits: the "
        "order of the additions changed between runs. That happens with a data race on a shared "
        "sum, with atomic adds of partial sums (they land in the order the threads finish), with "
        "reduction(+:s) at 3 or more threads (GCC's OpenMP adds the threads' sums in the order "
        "they finish), "
        "and with schedule(dynamic) when a thread adds up the chunks it happened to get. Store "
        "each fixed chunk's partial sum in its own slot and add the slots in order after the "
        "parallel loop.\n");
  }
  if (across_counts) {
    fmt::print(
        "\nhint (the same bits at every thread count): the row is cut where the threads' shares "
        "end, so each thread count adds the numbers in another order (reduction(+:s) does this, "
        "and so does a row split into one piece per thread). Cut rows into chunks of a fixed "
        "length (e.g. 16384 elements) whatever the thread count, let the threads share the "
        "chunks, keep each chunk's sum in its own slot, and add the slots in chunk order.\n");
  }
  return ok;
}

// ---- the exercise ------------------------------------------------------------------------------

const char* const kTier1Hint =
    "share the work between the threads. Many rows: `#pragma omp parallel for` over the rows. "
    "Fewer rows than threads: cut each row into chunks of a fixed length, run the (row, chunk) "
    "pairs as one parallel loop that stores each chunk's sum in its own slot, then add each "
    "row's slots in order. Leave the thread count to OpenMP (no num_threads(2)): the checker "
    "times your kernel at one thread with omp_set_num_threads(1).";
// Tier 1 missed only where the rows are fewer than the threads, or only where they are many.
const char* const kTier1FewRows =
    "your kernel speeds up with many rows but not on one or three long rows: a parallel for over "
    "the rows leaves threads idle (or splits three rows 2:1). Cut each row into chunks of a fixed "
    "length, run the (row, chunk) pairs as one parallel loop that stores each chunk's sum in its "
    "own slot, then add each row's slots in order.";
const char* const kTier1ManyRows =
    "your kernel speeds up on the long rows but not with many short ones. The usual cause: a "
    "parallel loop over the chunks of each row in turn, which starts a parallel region per row "
    "(microseconds each). Put "
    "the parallel loop over the rows, or over all (row, chunk) pairs at once.";
const char* const kTier2Hint =
    "each thread's loop is one chain of dependent adds, one add per add latency. Keep 16 or 32 "
    "partial sums in double inside each chunk (element i to sum i mod 32) and fold them at the "
    "end, as exercise 02's tier 2 and kernels/ops/reduce/optimized.cpp do: then two threads "
    "run two fast loops instead of two slow ones.";

// The kernel exercise at `threads` OpenMP threads (its tier names say how many).
Exercise kernel_exercise(int threads) {
  Exercise ex;
  ex.id = "13_sum_threads";
  ex.file = kFile;
  ex.op = kOp;
  ex.title =
      "the sum of each row on OpenMP threads, the same bits at every thread count (ReduceArgs)";
  ex.tolerance = 1e-5;
  ex.tolerance_why =
      "the reference sums in double; chunked double partial sums are within a few 1e-8, a "
      "lost update or a float32 running sum is off by far more";
  ex.arm_guard = &Guard<ReduceArgs>::arm;
  ex.call = [](const Case& c) { return sum(c.inputs[0], c.ints); };
  ex.cases = sum_threads_cases;
  // Many rows and one long row, each 64 MB (past L2: 2 MB per core); three long rows, which a
  // split by rows shares 2:1 between two threads. Quick: the same kinds, small.
  ex.quick_timing_sizes = {"256x1024", "1x262144"};
  ex.timing_sizes = {"4096x4096", "1x16777216", "3x5592405"};
  const std::string n = std::to_string(threads);
  ex.tiers = {
      {"faster with " + n + " threads than with 1",
       kOneThread,
       0.8,
       kTier1Hint,
       {{{"1x16777216", "3x5592405", "1x262144"}, kTier1FewRows},
        {{"4096x4096", "256x1024"}, kTier1ManyRows}}},
      {"within 1.25x of the best built-in at " + n + " threads", "optimized", 1.25, kTier2Hint},
  };
  ex.more_checks = same_bits;
  return ex;
}

Outcome run_sum_threads(const Options& o) {
  // A second CPU is needed for a speed-up: the cases and the bit checks still run (threads
  // then take turns on one CPU), the tiers cannot be judged.
  const int procs = omp_get_num_procs();
  const bool two_cpus = procs >= 2;
  const int threads = o.threads >= 2 ? o.threads : 2;
  Options run = o;
  run.threads = threads;
  omp_set_num_threads(threads);
  fmt::print(
      "this exercise runs its cases and its timing at {} OpenMP threads (--threads N for "
      "more); this machine has {} CPU{}\n",
      threads, procs, procs == 1 ? "" : "s");
  register_one_thread();
  Exercise ex = kernel_exercise(threads);
  const int tiers = static_cast<int>(ex.tiers.size());
  if (!two_cpus) ex.tiers.clear();
  Outcome out = check_kernels(ex, run);
  if (!two_cpus && out.code == 0 && o.timing) {
    fmt::print(
        "\nperformance: not graded (inconclusive, not missed): the speed-up of {} threads over "
        "1 cannot be measured on this machine, which has {} CPU (omp_get_num_procs() = {}). "
        "Run the checker on a machine with 2 or more.\n",
        threads, procs, procs);
    out.tiers = tiers;
    out.next_tier = "not graded";
  }
  return out;
}

Exercise make_sum_threads() {
  Exercise ex = kernel_exercise(2);
  ex.run = run_sum_threads;
  return ex;
}

}  // namespace

static const bool registered = add_exercise(make_sum_threads());

}  // namespace prism::exercises
