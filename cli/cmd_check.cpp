// `prism check NAME`: check one exercise in seconds. It builds the exercise's checker program
// (cmake --build on target exercise_NAME: the learner's file is compiled, everything else is
// already built and only linked), runs it with the learner's flags, prints
// its verdict as it goes, and records the outcome in the course's progress file (course.h) for
// `prism course`. The exit code is the checker's (0 correct, 1 a case failed, 2 could not check,
// 77 cannot run on this machine) when the checker gave a verdict of this run: a result file with
// the run's token (PRISM_CHECK_TOKEN) that says what the exit code says. Without one (the
// learner's code called exit() or _exit(), exited from a static initialiser, crashed, or one step
// ran past --time-limit and was stopped) the check fails: exit 1, recorded as failing. 1 too when
// the file does not compile.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/commands.h"
#include "cli/course.h"
#include "cli/options.h"
#include "kernels/types.h"
#include "profiler/first_line.h"

extern char** environ;

namespace prism::cli {
namespace {

// The flags, as add_options (below) declares them.
struct CheckOptions {
  std::string name;  // "relu", "01_relu" or "01"
  bool quick = false;
  bool no_timing = false;
  int64_t seed = -1;        // -1: the checker's default
  int threads = 0;          // 0: the checker's default (1)
  int runs = 0;             // 0: the checker's default
  int max_seconds = 0;      // 0: the checker's default (a variant's samples at one size)
  bool grade_busy = false;  // grade the speed even when other processes are busy
  // Seconds one step of the checker (a case, the timing) may run before it is stopped and the
  // check fails: a kernel that never returns must not hang `prism check`.
  double time_limit_s = 300;
};

namespace fs = std::filesystem;

// Runs argv[0] with its arguments, stdin/stdout/stderr shared with prism (the learner sees the
// compiler's and the checker's output as it comes), and returns its exit code; 128 + signal when
// a signal ended it. No shell: no argument is ever interpreted.
int run_program(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
  if (err != 0) throw Error(fmt::format("cannot run {}: {}", args[0], std::strerror(err)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      throw Error(fmt::format("waiting for {}: {}", args[0], std::strerror(errno)));
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

struct Limited {
  int code = 0;            // as run_program's
  bool timed_out = false;  // killed after one step ran past the limit
  std::string step;        // the step under way when it was killed (the progress file)
};

// Runs the checker program as run_program does, with `extra_env` added to the environment, and
// kills it when one step (the line the program writes to `progress` as each case starts,
// exercises/checker/checker.h) has run `limit_s` seconds: the learner's kernel runs in that
// program and may never return. Polls every 20 ms. The program stays in prism's process group, so
// Ctrl-C at the terminal reaches it too; and whatever ends this function early (an error, an
// exception) kills and reaps it first, so no checker outlives its `prism check`.
Limited run_limited(const std::vector<std::string>& args, const std::vector<std::string>& extra_env,
                    const std::string& progress, double limit_s) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings(extra_env);
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = 0;
  const int err = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data());
  if (err != 0) throw Error(fmt::format("cannot run {}: {}", args[0], std::strerror(err)));
  struct Reaper {  // kills and reaps the child unless it was reaped normally
    pid_t pid;
    bool reaped = false;
    ~Reaper() {
      if (reaped) return;
      kill(pid, SIGKILL);
      int st = 0;
      while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
      }
    }
  } reaper{pid};
  Limited out;
  std::string step = profiler::first_line(progress);
  auto since = std::chrono::steady_clock::now();
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      throw Error(fmt::format("waiting for {}: {}", args[0], std::strerror(errno)));
    }
    const auto now = std::chrono::steady_clock::now();
    if (const std::string s = profiler::first_line(progress); s != step) {
      step = s;
      since = now;
    } else if (std::chrono::duration<double>(now - since).count() > limit_s) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      out.timed_out = true;
      out.step = step;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  reaper.reaped = true;
  out.code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  return out;
}

// A random token for one run: the verdict file must carry it (a file from another run, or none
// at all when the learner's code ended the process, is no verdict).
std::string fresh_token() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", rd(), rd(), rd(), rd());
}

std::string names_list(const std::vector<course::Exercise>& all) {
  std::string s;
  for (const course::Exercise& e : all) s += (s.empty() ? "" : ", ") + e.name;
  return s;
}

// The exit code the checker gives with each verdict word (exercises/checker/checker.cpp).
int code_of(const std::string& result) {
  if (result == "correct") return 0;
  if (result == "failing") return 1;
  if (result == "cannot_run_here") return 77;
  return 2;  // not_checked
}

// The checker's --result file (exercises/checker/checker.cpp write_result) as a record, when it
// is this run's (its token) and says what the exit code says; nullopt otherwise: no verdict.
std::optional<course::Record> read_result(const std::string& path, const std::string& token,
                                          const std::string& id, int code) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  course::Record r;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (j.at("token").get<std::string>() != token || j.at("exercise").get<std::string>() != id) {
      return std::nullopt;
    }
    r.result = j.at("result").get<std::string>();
    r.tier = j.at("tier").get<int>();
    r.tiers = j.at("tiers").get<int>();
    r.next_tier = j.value("next_tier", "");
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  // code -1: the run was stopped while timing; the checker's provisional verdict (correct, the
  // speed not graded), written when every case had passed, stands.
  if (code == -1 ? !(r.result == "correct" && r.next_tier == "not graded")
                 : code_of(r.result) != code) {
    return std::nullopt;
  }
  r.best_tier = r.result == "correct" ? r.tier : 0;
  return r;
}

int run_check(const CheckOptions& o) {
  const course::Build b = course::find_build();
  const std::vector<course::Exercise> all = course::exercises(b.source_dir);
  const course::Exercise* e = course::find_exercise(all, o.name);
  if (!e) {
    throw UsageError(fmt::format("no exercise '{}' (exercises: {})", o.name, names_list(all)));
  }
  if (const auto it = b.not_built.find(e->id); it != b.not_built.end()) {
    throw Error(fmt::format("exercise {} is not built here: {}", e->id, it->second));
  }
  const std::string progress = course::progress_path(b);
  const std::string target = "exercise_" + e->name;
  fmt::print(
      "prism check {}: building {} (compiles {} and links it with the checker; the rest is "
      "already built)\n",
      e->name, target, e->learner_file);
  // PRISM_CHECK_PROGRAM: another checker program of this exercise in its place, run as it is
  // (the tests run exercises/NN/escape/ files through it: kernels that exit or never return).
  // Said on the first line, so a value left in the environment cannot pass unseen.
  const char* program = std::getenv("PRISM_CHECK_PROGRAM");
  const bool other_program = program != nullptr && *program != '\0';
  if (other_program) {
    fmt::print("prism check: PRISM_CHECK_PROGRAM is set: running {} instead of your file\n",
               program);
  } else if (run_program({b.cmake, "--build", b.build_dir, "--target", target}) != 0) {
    course::Record r;
    r.result = "does_not_compile";
    course::save_record(progress, e->id, r);
    fmt::print(stderr,
               "prism check: the build of {} failed: the messages above say why (a compile error "
               "in {} names that file)\n",
               target, e->learner_file);
    return 1;
  }

  const std::string result = (fs::path(progress).parent_path() /
                              fmt::format("{}.result-{}.json", e->id, static_cast<long>(getpid())))
                                 .string();
  std::error_code ec;
  fs::create_directories(fs::path(result).parent_path(), ec);
  const std::string progress_step = result + ".step";
  std::vector<std::string> args = {other_program
                                       ? std::string(program)
                                       : (fs::path(b.build_dir) / "exercises" / target).string()};
  if (o.quick) args.push_back("--quick");
  if (o.no_timing) args.push_back("--no-timing");
  if (o.seed >= 0) args.insert(args.end(), {"--seed", std::to_string(o.seed)});
  if (o.threads > 0) args.insert(args.end(), {"--threads", std::to_string(o.threads)});
  if (o.runs > 0) args.insert(args.end(), {"--runs", std::to_string(o.runs)});
  if (o.max_seconds > 0) args.insert(args.end(), {"--max-seconds", std::to_string(o.max_seconds)});
  if (o.grade_busy) args.push_back("--grade-busy");
  args.insert(args.end(), {"--result", result, "--progress", progress_step});
  const std::string token = fresh_token();
  const Limited run =
      run_limited(args, {"PRISM_CHECK_TOKEN=" + token}, progress_step, o.time_limit_s);
  const std::string last_step = run.timed_out ? run.step : profiler::first_line(progress_step);
  // Stopped while timing: every case had passed and the checker wrote a provisional verdict
  // (correct, speed not graded) before it started; that stands.
  const bool stopped_timing = run.timed_out && last_step.rfind("timing", 0) == 0;
  const std::optional<course::Record> verdict =
      read_result(result, token, e->id, stopped_timing ? -1 : run.code);
  fs::remove(result, ec);
  fs::remove(progress_step, ec);
  if (verdict) {
    course::save_record(progress, e->id, *verdict);
    if (stopped_timing) {
      fmt::print(
          "\nprism check: the timing ran past the time limit of {:g} s (--time-limit) and was "
          "stopped: your kernel is correct, its speed not graded this time.\nresult: PASS\n",
          o.time_limit_s);
    }
    fmt::print("\nprogress recorded in {} (`prism course` shows where you are)\n", progress);
    return stopped_timing ? 0 : run.code;
  }
  // No verdict of this run: the learner's code ended the process (exit, _exit, abort, a signal,
  // a static initialiser that exits), or never returned, or the checker could not start. The
  // token guards against accidents (a file from another run, an exit in the middle), not against
  // a kernel written to forge a verdict: it runs in the checker's process. Either way the check
  // fails, and the exit code says so whatever code the process gave.
  course::Record r;
  r.result = "failing";
  course::save_record(progress, e->id, r);
  const bool in_learner_code =
      last_step.rfind("case ", 0) == 0 || last_step.rfind("timing", 0) == 0 ||
      last_step.rfind("the checks after", 0) == 0 || last_step == "the exercise's checks";
  std::string why;
  if (run.timed_out) {
    why = fmt::format(
        "{} ran past the time limit of {:g} s (--time-limit) and was stopped (does your kernel "
        "return?)",
        last_step.empty() ? std::string("the checker's start") : last_step, o.time_limit_s);
  } else if (run.code > 128) {
    why = fmt::format(
        "the checker was killed by signal {} while running your code (the last "
        "line above names the case)",
        run.code - 128);
  } else if (in_learner_code || last_step.empty()) {
    why = fmt::format(
        "the checker ended with exit code {} and no verdict: your code ended the "
        "process (exit(), _exit() or a static initialiser){}",
        run.code, last_step.empty() ? "" : "; the last step under way was " + last_step);
  } else {
    why = fmt::format(
        "the checker ended with exit code {} and no verdict, at '{}' (the messages above say "
        "why)",
        run.code, last_step);
  }
  fmt::print(stderr, "\nprism check: {}. No verdict counts as failing.\nresult: FAIL\n", why);
  return 1;
}

void add_options(CLI::App& cmd, CheckOptions& o) {
  cmd.add_option("NAME", o.name,
                 "the exercise: its name (relu), folder (01_relu) or number (01); `prism course` "
                 "lists them")
      ->required();
  cmd.add_flag("--quick", o.quick, "time small sizes, 3 short samples each (what ctest runs)");
  cmd.add_flag("--no-timing", o.no_timing, "check correctness only (no performance tier)");
  cmd.add_option("--seed", o.seed, "other random inputs (default 1)")->check(seed_number());
  cmd.add_option("--threads", o.threads, "OpenMP threads while timing, 1 to 256 (default 1)")
      ->check(whole_number(1, 256));
  cmd.add_option("--runs", o.runs,
                 "timed samples per variant to start with, 1 to 1000 (default 15); an undecided "
                 "tier is sampled again up to max(100, N)")
      ->check(whole_number(1, 1000));
  cmd.add_flag("--grade-busy", o.grade_busy,
               "grade the speed even when other processes are busy (by default not graded then: "
               "the timings would measure their work too)");
  cmd.add_option("--max-seconds", o.max_seconds,
                 "the longest a variant's samples may take at one size, 1 to 3600 (default 10): "
                 "a slower one is not timed there")
      ->check(whole_number(1, 3600));
  cmd.add_option("--time-limit", o.time_limit_s,
                 "seconds one case (or the timing) may run before the check stops it and fails "
                 "(default 300)")
      ->check(number_in(1, 86400));
}

Action setup(CLI::App& cmd) {
  auto o = std::make_shared<CheckOptions>();
  add_options(cmd, *o);
  return {.run = [o] { return run_check(*o); }};
}

const RegisteredCommand registered(
    {.order = 1300,
     .name = "check",
     .help = "build and run an exercise's checker on your kernel; record the verdict",
     .setup = &setup});

}  // namespace

}  // namespace prism::cli
