#include "exercises/checker/checker.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string_view>

#ifdef _OPENMP
#include <omp.h>
#include <unistd.h>
#endif

#include "exercises/checker/compare.h"
#include "kernels/lab/lab.h"
#include "kernels/registry.h"
#include "profiler/busy.h"
#include "profiler/machine.h"
#include "profiler/output_file.h"
#include "profiler/statistics.h"
#include "tensor/random.h"

namespace prism::exercises {
namespace {

constexpr const char* kUsage =
    "usage: exercise_NAME [--quick] [--no-timing] [--seed N] [--threads N] [--runs N] "
    "[--max-seconds S] [--grade-busy] [--result F] [--progress F]\n"
    "  --quick       time small sizes, 3 short samples each (what the test suite runs)\n"
    "  --no-timing   check correctness only (no timing, no performance tier)\n"
    "  --seed N      other random inputs (default 1; the same seed gives the same inputs)\n"
    "  --threads N   OpenMP threads for every variant while timing (default 1)\n"
    "  --runs N      timed samples per variant, 1 to 1000 (default 15; 3 with --quick); an\n"
    "                undecided tier is sampled again up to max(100, N) (9 with --quick)\n"
    "  --max-seconds S  the longest a variant's samples may take at one size, 1 to 3600 (default "
    "10; 2 with --quick): a slower one is not timed there\n"
    "  --result F    also write the verdict to file F as JSON (prism check does, for prism "
    "course)\n"
    "  --progress F  write the step under way to file F as each starts (prism check names the "
    "step that ran past its time limit)\n"
    "  --grade-busy  grade the speed even when other processes are busy (by default not graded "
    "then)\n"
    "  --profile     exercise 16: print your loop's op table and bottleneck map, check nothing\n"
    "  --record F    exercise 16: write your loop's run to F, a result file for prism compare\n";

std::optional<long> parse_number(const char* text, long low, long high) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (!text[0] || *end || v < low || v > high) return std::nullopt;
  return v;
}

// Returns false (after printing why) on a bad command line.
bool parse_options(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--no-timing") {
      o.timing = false;
    } else if (a == "--grade-busy") {
      o.grade_busy = true;
    } else if (a == "--result" && i + 1 < argc) {
      o.result_file = argv[++i];
    } else if (a == "--progress" && i + 1 < argc) {
      o.progress_file = argv[++i];
    } else if (a == "--profile") {
      o.profile = true;
    } else if (a == "--record" && i + 1 < argc) {
      o.record_file = argv[++i];
    } else if ((a == "--seed" || a == "--threads" || a == "--runs" || a == "--max-seconds") &&
               i + 1 < argc) {
      const long high = a == "--seed"          ? 1L << 62
                        : a == "--threads"     ? 256
                        : a == "--max-seconds" ? 3600
                                               : 1000;
      const auto v = parse_number(argv[++i], a == "--seed" ? 0 : 1, high);
      if (!v) {
        fmt::print(stderr, "{} needs a whole number from {} to {}, got '{}'\n{}", a,
                   a == "--seed" ? 0 : 1, high, argv[i], kUsage);
        return false;
      }
      if (a == "--seed")
        o.seed = static_cast<uint64_t>(*v);
      else if (a == "--threads")
        o.threads = static_cast<int>(*v);
      else if (a == "--max-seconds")
        o.max_seconds = static_cast<double>(*v);
      else
        o.runs = static_cast<int>(*v);
    } else {
      fmt::print(stderr, "unknown flag '{}'\n{}", a, kUsage);
      return false;
    }
  }
  return true;
}

void set_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

// "0", "inf", or two significant digits: how a compare.h error or a tolerance is printed.
std::string error_str(double e) {
  if (e == 0) return "0";
  if (std::isinf(e)) return "inf";
  return fmt::format("{:.1e}", e);
}

// What went wrong in one case, most serious first; `ok` when nothing did.
enum class Verdict { ok, threw, out_of_bounds, unwritten, read_first, mismatch };

struct CaseResult {
  Verdict verdict = Verdict::ok;
  std::vector<BufferReport> reports;
  Comparison cmp;
  Dims out_shape;
  std::string what;  // the exception's message when it threw
};

// The guard report of the buffer that matters most for the verdict.
const BufferReport* worst_report(const CaseResult& r) {
  for (Verdict v : {Verdict::out_of_bounds, Verdict::unwritten, Verdict::read_first}) {
    for (const BufferReport& b : r.reports) {
      if ((v == Verdict::out_of_bounds && b.out_of_bounds()) ||
          (v == Verdict::unwritten && b.unwritten > 0) ||
          (v == Verdict::read_first && b.read_first > 0)) {
        return &b;
      }
    }
  }
  return nullptr;
}

std::string out_of_bounds_text(const BufferReport& b) {
  std::string s;
  if (b.written_before > 0) {
    s = fmt::format("wrote {} element(s) before {} (lowest {}[{}])", b.written_before, b.name,
                    b.name, b.lowest);
  }
  if (b.written_after > 0) {
    s += fmt::format("{}wrote {} element(s) past the end of {} ({} has {}; highest {}[{}])",
                     s.empty() ? "" : "; ", b.written_after, b.name, b.name, b.size, b.name,
                     b.highest);
  }
  return s;
}

// The detail printed after PASS/FAIL on a case's line.
std::string detail(const CaseResult& r) {
  const BufferReport* b = worst_report(r);
  switch (r.verdict) {
    case Verdict::ok:
      return "error " + error_str(r.cmp.error) +
             (r.cmp.part.empty() ? "" : " (worst: " + r.cmp.part + ")");
    case Verdict::threw:
      return "threw: " + r.what;
    case Verdict::out_of_bounds:
      return out_of_bounds_text(*b);
    case Verdict::unwritten:
      return fmt::format("{} of {} elements of {} never written (first: {}[{}])", b->unwritten,
                         b->size, b->name, b->name, b->first_unwritten);
    case Verdict::read_first:
      return fmt::format("{} of {} elements of {} read before written (first: {}[{}])",
                         b->read_first, b->size, b->name, b->name, b->first_read_first);
    case Verdict::mismatch:
      return fmt::format("error {}{} at {}: got {:.7g}, want {:.7g}", error_str(r.cmp.error),
                         r.cmp.part.empty() ? "" : " in " + r.cmp.part,
                         index_str(r.out_shape, r.cmp.worst), r.cmp.got, r.cmp.want);
  }
  return "";
}

// Advice for the first failing case: what the failure means, then what the case is for.
std::string hint(const Exercise& ex, const std::string& ref, const Case& c, const CaseResult& r) {
  const BufferReport* b = worst_report(r);
  std::string h;
  switch (r.verdict) {
    case Verdict::ok:
      return "";
    case Verdict::threw:
      h = "The op threw an error while your kernel ran. Kernels should not throw: the front "
          "end has already checked the shapes.";
      break;
    case Verdict::out_of_bounds:
      h = "Your kernel wrote outside its output buffer. In the real op that overwrites other "
          "memory, so the checker stopped running it. Check each loop's bound (< versus <=, "
          "the last partial tile) and which size is the output's row length.";
      break;
    case Verdict::unwritten:
      if (b->unwritten == b->size) {
        // The stub, or loops that skip everything this small.
        return "Your kernel wrote none of " + b->name + ". If the TODO in " + ex.file +
               " is still to do, that is why. If not, check the loops' bounds: does a loop "
               "skip sizes smaller than a block or a tile?";
      }
      h = "Some output elements were never written. The output arrives uninitialised, so every "
          "element must be set. Look at the edges: the last row, the last column, a partial "
          "tile.";
      break;
    case Verdict::read_first:
      h = "Your kernel read output elements before writing them (out += ... on a buffer that "
          "was never set). The output arrives uninitialised: set each element first, to 0 or "
          "to the first term, then accumulate.";
      break;
    case Verdict::mismatch:
      h = fmt::format("The result differs from the '{}' variant's by {} (tolerance {}).", ref,
                      error_str(r.cmp.error), error_str(ex.tolerance));
      break;
  }
  // What the case is there to catch explains a wrong value or a gap, not a stray write or a
  // missing initialisation.
  const bool case_matters = r.verdict == Verdict::mismatch || r.verdict == Verdict::unwritten;
  if (case_matters && !c.hint.empty()) h += "\nThis case: " + c.hint;
  return h;
}

// Runs the exercise's op on the case's inputs with `variant` chosen for the op.
Tensor run_with(const Exercise& ex, const std::string& variant, const Case& c) {
  kernels::Use use(ex.op, variant);
  return ex.call(c);
}

CaseResult check_case(const Exercise& ex, const kernels::KernelEntry& user, const std::string& ref,
                      const Case& c, bool& unsafe) {
  CaseResult r;
  try {
    Tensor want = run_with(ex, ref, c);
    r.out_shape = want.shape();
    ex.arm_guard(ex.op, user, &r.reports);
    Tensor got = run_with(ex, kGuardVariant, c);
    for (const BufferReport& rep : r.reports) unsafe = unsafe || rep.out_of_bounds();
    auto compare_case = [&](const Tensor& out) {
      return ex.parts ? compare_parts(out, want, ex.parts(c)) : compare(out, want);
    };
    r.cmp = compare_case(got);
    if (!unsafe) {
      // Both results must match: the guarded run makes uninitialised memory deterministic
      // (NaN), the plain run is the op as prism runs it. (After an out-of-bounds write the
      // plain run would corrupt memory, so it is left out.)
      const Comparison plain = compare_case(run_with(ex, user.name, c));
      if (!(plain.error <= r.cmp.error)) r.cmp = plain;
    }
    if (const BufferReport* b = worst_report(r)) {
      r.verdict = b->out_of_bounds() ? Verdict::out_of_bounds
                  : b->unwritten > 0 ? Verdict::unwritten
                                     : Verdict::read_first;
    } else {
      r.verdict = r.cmp.error <= ex.tolerance ? Verdict::ok : Verdict::mismatch;
    }
  } catch (const std::exception& e) {
    r.verdict = Verdict::threw;
    r.what = e.what();
  }
  return r;
}

}  // namespace

// ---- timing -----------------------------------------------------------------------------

// Times the learner's kernel beside the op's built-in float32 variants with the kernel lab, on
// the op's own description (kernels/opinfo/): the lab validates every variant again on the op's
// odd sizes, then takes `repetitions` samples of each, interleaved, on the wall clock (a sample:
// calls back to back for at least `min_sample_ms`), and reports the median time per call with
// a 95% bootstrap interval. The kernel alone is timed, on raw buffers: no output allocation, no
// front end. Then grades it (grade.h), prints the verdict and returns the tiers reached.
namespace {

// --result FILE: the verdict as one JSON object, written atomically (profiler/output_file.h:
// a reader never sees half of it). False, after saying why, when it cannot be written.
// With the token `prism check` put in PRISM_CHECK_TOKEN: a verdict file that lacks it was not
// written by this run (prism check then counts no verdict, a failure).
bool write_result(const std::string& path, const std::string& id, const Outcome& out) {
  const char* word = out.code == 0                ? "correct"
                     : out.code == 1              ? "failing"
                     : out.code == kCannotRunHere ? "cannot_run_here"
                                                  : "not_checked";
  const char* token = std::getenv("PRISM_CHECK_TOKEN");
  try {
    profiler::write_text_file(
        path, fmt::format("{{\"exercise\": \"{}\", \"result\": \"{}\", \"tier\": {}, "
                          "\"tiers\": {}, \"next_tier\": \"{}\", \"token\": \"{}\"}}\n",
                          id, word, out.tier, out.tiers, out.next_tier, token ? token : ""));
  } catch (const std::exception& e) {
    fmt::print(stderr, "checker: {}\n", e.what());
    return false;
  }
  return true;
}

}  // namespace

// The machine is busy when the other processes leave less than half a CPU beyond the ones the
// timing uses: busy_cpus > logical CPUs - threads - 1/2. Timings taken then measure their work
// too, so the tiers are not graded. On 2 CPUs and 1 thread that is more than half a core of other
// work (a compile, a spinning loop); on 16 CPUs a background process on another core leaves room.
// busy_processes' floor of 20% of a CPU per process leaves the daemons out.
bool busy_for(const profiler::BusyProcesses& busy, int threads) {
  const int cpus = std::max(1, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  return busy.cpus >= 0.2 && busy.cpus > cpus - threads - 0.5;
}

SamplingLimits sampling_limits(const Options& o, int repetitions) {
  // At least 15 (3 with --quick) a round: a round validates and calibrates again, which one or two
  // samples would not pay for.
  return {std::max(repetitions, o.quick ? 3 : 15), std::max(o.quick ? 9 : 100, repetitions),
          o.quick ? 10.0 : 90.0};
}

int time_and_grade(const Exercise& ex, const kernels::KernelEntry& user, const Options& o,
                   std::string& next_tier) {
  if (!o.grade_busy) {
    const profiler::BusyProcesses busy = profiler::busy_processes(300);
    if (busy_for(busy, o.threads)) {
      std::string list;
      for (const std::string& b : busy.names) list += (list.empty() ? "" : ", ") + b;
      fmt::print(
          "\ntiming: not graded: other processes are busy ({}), and a timing now would measure "
          "their work too. Your kernel is correct; run the check again when the machine is "
          "quiet, or with --grade-busy to grade anyway.\n",
          list);
      next_tier = "not graded";
      return 0;
    }
  }
  // Every case passed: a provisional verdict (correct, speed not graded) stands should the
  // timing be stopped at prism check's time limit; the final one replaces it.
  if (!o.result_file.empty()) {
    write_result(o.result_file, ex.id,
                 Outcome{0, 0, static_cast<int>(ex.tiers.size()), "not graded"});
  }
  lab::LabOptions lo;
  lo.op = ex.op;
  lo.sizes = o.quick ? ex.quick_timing_sizes : ex.timing_sizes;
  lo.variants = {user.name};
  for (const auto& e : kernels::registry().at(ex.op, Device::cpu).entries()) {
    if (e.tag != kernels::VariantTag::user && e.has(DType::f32)) lo.variants.push_back(e.name);
  }
  lo.threads = o.threads;
  lo.repetitions = o.runs > 0 ? o.runs : o.quick ? 3 : 15;
  lo.min_sample_ms = o.quick ? 2 : 20;
  // The cap on a variant's samples at one size grows with --runs (15 by default), so that more
  // samples, which the advice on an inconclusive tier asks for, do not drop a size from timing.
  lo.max_variant_s = o.max_seconds > 0
                         ? o.max_seconds
                         : (o.quick ? 2.0 : 10.0) * std::max(1.0, lo.repetitions / 15.0);
  lo.seed = o.seed;
  // % of this machine's peak, from `prism machine`'s cache (never measured here: seconds).
  const profiler::MachinePeak* peak = profiler::machine_peak(false);
  if (peak) {
    lo.peak_gflops = peak->peak_gflops(lo.threads);
    lo.peak_gbs = peak->peak_gbps(lo.threads);
    // With the cache levels, as `prism lab` has them: a size that fits in L1 or L2 is judged
    // against that level's bandwidth, not DRAM's (else an in-cache kernel reads "1200% of roof").
    lo.peaks_per_count = {{lo.peak_gflops, lo.peak_gbs, peak->level_roofs(lo.threads)}};
  }
  fmt::print(
      "\ntiming (the kernel lab: prism lab {} --sizes ...): {} thread{}, the kernel alone on raw "
      "buffers, median of {} interleaved samples of at least {} ms each, with its 95% "
      "interval{}:\n",
      ex.op, lo.threads, lo.threads == 1 ? "" : "s", lo.repetitions, lo.min_sample_ms,
      peak ? "; % of this machine's peak from prism machine"
           : " (run prism machine once for % of peak)");
  // Fewer samples than the lab calls stable (--quick): say so once instead of on every row.
  const bool few = lo.repetitions < static_cast<int>(profiler::stats::kMinStableSamples);
  if (few) fmt::print("  (too few samples for stable figures: run without --quick to compare)\n");
  lab::LabResult r = lab::run_lab(lo);
  size_t width = 7;  // "variant"
  for (const std::string& v : lo.variants) width = std::max(width, v.size());
  for (const std::string& size : lo.sizes) {
    std::vector<const lab::TimingRow*> rows;
    const lab::TimingRow* mine = nullptr;
    for (const lab::TimingRow& row : r.rows) {
      if (row.size != size) continue;
      rows.push_back(&row);
      if (row.variant == user.name) mine = &row;
    }
    if (rows.empty()) continue;
    fmt::print("  size {}: {:.1f} MFLOP, {:.1f} MB\n", size, rows[0]->flops / 1e6,
               rows[0]->bytes / 1e6);
    fmt::print("    {:<{}} {:>10} {:>21} {:>9} {:>8} {:>7} {:>11}\n", "variant", width, "us",
               "95% interval", "GFLOP/s", "GB/s", "%peak", "time/yours");
    for (const lab::TimingRow* row : rows) {
      if (!row->timed) {
        fmt::print("    {:<{}} {}\n", row->variant, width, row->note);
        continue;
      }
      const std::string ratio =
          mine && mine->timed ? fmt::format("{:.2f}x", row->median_ns / mine->median_ns) : "-";
      // The roofline's share: of the FLOP peak or of the bandwidth, whichever bounds this size.
      const std::string pct =
          row->pct_roofline > 0 ? fmt::format("{:.0f}", row->pct_roofline) : "-";
      fmt::print("    {:<{}} {:>10.2f} {:>21} {:>9.2f} {:>8.2f} {:>7} {:>11}{}\n", row->variant,
                 width, row->median_ns / 1e3,
                 fmt::format("[{:.2f}, {:.2f}]", row->ci_low_ns / 1e3, row->ci_high_ns / 1e3),
                 row->gflops, row->gbs, pct, ratio,
                 row->unstable && !few ? "  (unstable: more --runs or a quieter machine)" : "");
    }
  }
  if (ex.tiers.empty()) return 0;
  const SamplingLimits limits = sampling_limits(o, lo.repetitions);
  fmt::print("\n");
  Grade g = grade_until_decided(ex.tiers, r, user.name, lo, limits, o.seed,
                                [](const std::string& line) { fmt::print("{}\n", line); });
  // Plain prism has no learner kernels: the lab that has yours is prism_with_NAME's.
  g.lab_tool = "build/prism_with_" + ex.id.substr(ex.id.find('_') + 1);
  fmt::print("{}", format_grade(ex.tiers, g));
  // A grade stopped by a note (your kernel failed the lab's validation, or no yardstick could be
  // timed) judged nothing: not graded, never missed.
  next_tier = g.reached >= g.of ? ""
              : !g.note.empty() ? "not graded"
              : g.inconclusive  ? "inconclusive"
                                : "missed";
  return g.reached;
}

namespace {

// ---- one kernel ------------------------------------------------------------------------------

// Checks one user kernel: every case, then the exercise's more_checks, then (unless --no-timing)
// its speed. Returns the tiers reached, or -1 when it is not correct.
int check_kernel(const Exercise& ex, const kernels::KernelEntry& user, const Options& o,
                 std::string& next_tier) {
  const auto& ops = kernels::registry().at(ex.op, Device::cpu);
  const std::string ref = ops.find("reference") ? "reference" : "naive";
  fmt::print("\nkernel '{}' for op '{}', against '{}' (float32); tolerance {}: {}\n", user.name,
             ex.op, ref, error_str(ex.tolerance), ex.tolerance_why);
  manual_seed(o.seed);
  const std::vector<Case> cases = ex.cases();
  size_t width = 0;
  for (const Case& c : cases) width = std::max(width, c.label.size());
  bool unsafe = false;
  int passed = 0;
  std::string first_hint, bounds_hint;
  for (const Case& c : cases) {
    // The label goes out before the case runs: if the kernel crashes, the last line says where.
    fmt::print("  {:<{}}  ", c.label, width);
    std::fflush(stdout);
    note_step(o, "case " + c.label);
    if (unsafe) {
      // A kernel that wrote out of bounds may write further off on a larger case, past the
      // guard zones: stop running it.
      fmt::print("SKIP  (it wrote outside its output above: fix that first)\n");
      continue;
    }
    const CaseResult r = check_case(ex, user, ref, c, unsafe);
    const bool ok = r.verdict == Verdict::ok;
    passed += ok;
    fmt::print("{}  {}\n", ok ? "PASS" : "FAIL", detail(r));
    if (ok) continue;
    const std::string h = "hint (" + c.label + "): " + hint(ex, ref, c, r);
    if (first_hint.empty()) first_hint = h;
    if (r.verdict == Verdict::out_of_bounds) bounds_hint = h;  // the most serious: shown first
  }
  if (!bounds_hint.empty()) first_hint = bounds_hint;
  const int n = static_cast<int>(cases.size());
  fmt::print("{} of {} cases passed.\n", passed, n);
  if (passed < n) {
    fmt::print("\n{}\n", first_hint);
    return -1;
  }
  note_step(o, "the checks after the cases");
  if (ex.more_checks && !ex.more_checks(user, o)) return -1;
  note_step(o, "timing (the performance tiers)");
  if (!o.timing) {
    next_tier = ex.tiers.empty() ? "" : "not graded";
    return 0;
  }
  return time_and_grade(ex, user, o, next_tier);
}

}  // namespace

// The kernel exercises' whole check: finds the user kernels the program registered and checks
// each; the tier is the lowest any of them reached.
Outcome check_kernels(const Exercise& ex, const Options& o) {
  std::vector<const kernels::KernelEntry*> users;
  try {
    for (const auto& e : kernels::registry().at(ex.op, Device::cpu).entries()) {
      if (e.tag == kernels::VariantTag::user && e.name != kGuardVariant) users.push_back(&e);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "checker: {}\n", e.what());
    return {2};
  }
  if (users.empty()) {
    fmt::print(stderr,
               "checker: no kernel is registered for op '{}' in this program. Keep the line\n"
               "  PRISM_REGISTER_KERNEL({}, <your function>);\n"
               "at the end of {}. If the program printed 'could not register' above, your\n"
               "function's parameter is not the argument struct the op takes.\n",
               ex.op, ex.op, ex.file);
    return {2};
  }
  Outcome out{0, static_cast<int>(ex.tiers.size()),
              o.timing ? static_cast<int>(ex.tiers.size()) : 0};
  for (const kernels::KernelEntry* u : users) {
    std::string next;
    const int tier = check_kernel(ex, *u, o, next);
    if (tier < 0) out.code = 1;
    // The lowest tier over the kernels, and what stopped that one.
    if (tier >= 0 && (tier < out.tier || (tier == out.tier && out.next_tier.empty()))) {
      out.next_tier = next;
    }
    out.tier = std::min(out.tier, std::max(tier, 0));
  }
  if (out.code != 0) out.tier = 0, out.next_tier.clear();
  return out;
}

void note_step(const Options& o, const std::string& step) {
  if (o.progress_file.empty()) return;
  // Rewritten in place, not atomically: prism check polls it, and a half-written line read
  // there only restarts the step's clock once more.
  if (std::FILE* f = std::fopen(o.progress_file.c_str(), "w")) {
    std::fputs(step.c_str(), f);
    std::fclose(f);
  }
}

int run_checker(const std::string& id, int argc, char** argv) {
  Options o;
  if (!parse_options(argc, argv, o)) return 2;
  if (o.help) {
    fmt::print("{}", kUsage);
    return 0;
  }
  const Exercise* ex = nullptr;
  for (const Exercise& e : all_exercises()) {
    if (e.id == id) ex = &e;
  }
  if (!ex) {
    fmt::print(stderr, "checker: no exercise '{}'\n", id);
    return 2;
  }
  if ((o.profile || !o.record_file.empty()) && !ex->runs_a_loop) {
    fmt::print(stderr,
               "checker: --profile and --record are for an exercise that runs a loop "
               "(16_bottleneck_hunt); {} is checked as it is\n",
               ex->id);
    return 2;
  }
  note_step(o, "starting the checker");
  set_threads(o.threads);
  fmt::print("exercise {}: {}\nseed {} (--seed N for other inputs)\n", ex->id, ex->title, o.seed);
  note_step(o, "the exercise's checks");
  const Outcome out = ex->run ? ex->run(o) : check_kernels(*ex, o);
  note_step(o, "writing the verdict");
  // --profile and --record measure the learner's code and check nothing: no verdict.
  if (o.profile || !o.record_file.empty()) return out.code;
  if (out.code == 0 || out.code == 1) fmt::print("\nresult: {}\n", out.code == 0 ? "PASS" : "FAIL");
  if (!o.result_file.empty() && !write_result(o.result_file, ex->id, out)) return 2;
  return out.code;
}

}  // namespace prism::exercises
