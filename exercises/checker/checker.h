// The exercise checker: one program per exercise, built from this checker and one kernel file
// (the learner's, the solution, or a deliberately wrong one). It
//   1. finds the float32 "user" variant the linked file registered with PRISM_REGISTER_KERNEL;
//   2. for each case (fresh random inputs; sizes 1, primes, views with strides, large-ish),
//      runs the tensor op twice under kernels::Use: once through a guarded wrapper of the
//      user's kernel (guard.h: writes outside the output, elements never written, elements
//      read before written), then as the plain user variant, and compares the plain result
//      with the op's "reference" variant ("naive" where the op has no reference), compare.h;
//   3. prints one line per case and, for the first failure, a hint;
//   4. if every case passed, times the user's kernel against the op's built-in variants with
//      the kernel lab (kernels/lab/lab.h: on the op's own description, validated first, timed
//      interleaved, medians with intervals) at sizes that matter (small, past the caches, other
//      layouts), and grades it: the performance tier it reached at every size (grade.h), with
//      the hint for the next. A tier is never a fail: a correct kernel passes.
// Exit code: 0 every case passed (whatever tier the kernel reached), 1 a case failed, 2 the
// program could not check (no user kernel registered, a bad flag).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "exercises/checker/compare.h"
#include "exercises/checker/grade.h"
#include "exercises/checker/guard.h"
#include "tensor/tensor.h"

namespace prism::exercises {

// The checker's command line (run_checker parses it; every exercise sees it).
struct Options {
  bool quick = false;  // small timing sizes and few runs (the test suite)
  bool timing = true;  // false: correctness only (--no-timing)
  uint64_t seed = 1;
  int threads = 1;
  int runs = 0;  // timed samples per variant; 0: 15, or 3 with --quick
  // --max-seconds S: the longest a variant's samples may take at one size (0: 10, or 2 with
  // --quick); the lab's "not timed ... (raise --max-seconds)" names this flag.
  double max_seconds = 0;
  // --grade-busy: time and grade even when other processes are busy (by default the tiers are
  // then not graded: the timings would measure the other work too).
  bool grade_busy = false;
  // --profile: print the profile of the learner's code (the op table, the bottleneck map);
  // --record FILE: write the learner's run as a result file `prism compare` reads. Only for an
  // exercise that runs a whole loop (Exercise::runs_a_loop); the others refuse them.
  bool profile = false;
  std::string record_file;
  std::string
      result_file;  // --result FILE: the verdict as JSON, for `prism check` / `prism course`
  // --progress FILE: the step under way (a case's label, "timing"), rewritten as each starts, so
  // that `prism check`, which runs this program under a time limit, can name the step that did not
  // end (the learner's kernel runs in this process and may never return).
  std::string progress_file;
  bool help = false;
};

// Writes `step` to o.progress_file (when one was given) before the step starts.
void note_step(const Options& o, const std::string& step);

// What one check of an exercise came to.
struct Outcome {
  // 0 correct, 1 a case failed, 2 could not check (no kernel, bad flag), kCannotRunHere: the
  // exercise needs hardware this machine lacks (a GPU) and was not run.
  int code = 0;
  int tier = 0;   // performance tiers reached, in order (0 when not graded or not correct)
  int tiers = 0;  // how many the exercise has (0: not graded on speed)
  // The tier after the last reached: "missed", "inconclusive" (its interval straddles the
  // bound), "not graded" (--no-timing); "" when every tier was reached or there are none.
  std::string next_tier = {};
};

// The exit code of an exercise that cannot run on this machine (ctest's SKIP_RETURN_CODE, as
// the CUDA test suite uses): it is neither passed nor failed. Before returning it, the exercise
// prints one line "cannot run on this machine: <why>" (the tests match that phrase).
inline constexpr int kCannotRunHere = 77;

// One set of inputs.
struct Case {
  std::string label;           // what a reader needs to picture it: "[13,17] transposed view"
  std::vector<Tensor> inputs;  // the tensors handed to the op (an undefined one: no bias)
  std::vector<int> ints;       // its integer arguments: reduced dims, stride and padding
  std::string hint;            // what this case is there to catch, said as advice
};

struct Exercise {
  std::string id;     // the folder: "01_relu"
  std::string file;   // the learner's file: "exercises/01_relu/relu.cpp"
  std::string op;     // the registry op the kernel implements: "relu"
  std::string title;  // one line for the banner
  double tolerance;   // the largest compare.h error that passes
  std::string tolerance_why;
  // Registers the guarded wrapper for this op's argument struct (Guard<Args>::arm).
  void (*arm_guard)(const std::string& op, const kernels::KernelEntry& user,
                    std::vector<BufferReport>* reports);
  // The tensor-level call: relu(x), sum(x, {1}), matmul(a, b), ...
  std::function<Tensor(const Case&)> call;
  // The cases to check, made fresh (from the seeded generator) on each call.
  std::function<std::vector<Case>()> cases;
  // Sizes to time, in the lab's syntax for the op (its OpInfo, kernels/opinfo/: `prism lab OP
  // --list`): small ones with --quick (the test suite), larger ones otherwise.
  std::vector<std::string> quick_timing_sizes;
  std::vector<std::string> timing_sizes;
  // The performance tiers, in order (grade.h); each README states them with their reasons.
  std::vector<Tier> tiers;
  // Optional checks after every case passed, for what a comparison with one variant's output
  // cannot see: a float64 gradient check, peak memory, a trajectory over several steps, the same
  // bits at every thread count. Prints a line per check (and the hint for a failed one); returns
  // false when one failed.
  std::function<bool(const kernels::KernelEntry& user, const Options&)> more_checks;
  // An exercise that is not one CPU kernel of a registry op (a module, a piece of the profiler,
  // a CUDA kernel) sets `run` instead of op/arm_guard/call/cases: its whole check, printing the
  // same kind of lines (a case per line with PASS/FAIL, the first failure's hint, the tiers).
  std::function<Outcome(const Options&)> run;
  // For an output that stacks several along dim 0 (exercise 07's gradients): the parts of a case's
  // output, each compared on its own scale (compare.h, compare_parts). Unset: one output. (Last,
  // so that the exercises initialised in order need not name it.)
  std::function<std::vector<Part>(const Case&)> parts = {};
  // An exercise whose code is a whole loop (16: a training loop): its checker takes --profile
  // and --record (Options).
  bool runs_a_loop = false;
};

// Adds an exercise defined in its own folder (exercises/NN_name/check.cpp, compiled into that
// exercise's programs only; checker/shared_cases.h has what several share), from a static
// initialiser:
//   static const bool registered = prism::exercises::add_exercise(make_my_exercise());
bool add_exercise(Exercise ex);

// Every exercise this program knows: those added with add_exercise (a checker program has one).
const std::vector<Exercise>& all_exercises();

// The whole check of a kernel exercise (one without `run`): every user variant of ex.op, its
// cases, its more_checks and, with o.timing, its timing and tiers. An exercise whose `run` only
// changes the setting (exercise 13 runs it at 2 or more OpenMP threads) calls it with a copy of
// itself that has no `run`.
Outcome check_kernels(const Exercise& ex, const Options& o);

// How far the grade samples an undecided tier again (grade_until_decided), `repetitions` (at
// least 15) at a time: up to 100 samples of yours at a size, or --runs if more, within 90 s of
// sampling; with --quick (the test suite's smoke test of the timing) 9 samples and 10 s.
SamplingLimits sampling_limits(const Options& o, int repetitions);

// Times `user` beside ex.op's built-in float32 variants with the kernel lab at the exercise's
// timing sizes (quick ones with o.quick), prints the table and the grade against ex.tiers, and
// returns the tiers reached: what check_kernels does once a kernel is correct, for an exercise
// whose `run` checks a kernel of a registry op its own way (exercise 12: an in-place update).
// `next_tier` gets what became of the tier after the last reached (Outcome::next_tier); on a
// busy machine (other processes using half a CPU, o.grade_busy unset) nothing is timed and it
// is "not graded".
int time_and_grade(const Exercise& ex, const kernels::KernelEntry& user, const Options& o,
                   std::string& next_tier);

// Checks the kernels registered for exercise `id` (main.cpp passes the id it was built for);
// parses the flags in argv. Returns the exit code.
int run_checker(const std::string& id, int argc, char** argv);

}  // namespace prism::exercises
