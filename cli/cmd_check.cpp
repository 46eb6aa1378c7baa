// `prism check NAME`: check one exercise in seconds. It builds the exercise's checker program
// (cmake --build on target exercise_NAME: the learner's file is compiled, everything else is
// already built and only linked), runs it with the learner's flags, prints
// its verdict as it goes, and records the outcome in the course's progress file (course.h) for
// `prism course`. The exit code is the checker's (0 correct, 1 a case failed, 2 could not check,
// 77 cannot run on this machine), or 1 when the file does not compile.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/course.h"
#include "kernels/types.h"

extern char** environ;

namespace prism::cli {
namespace {

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

std::string names_list(const std::vector<course::Exercise>& all) {
  std::string s;
  for (const course::Exercise& e : all) s += (s.empty() ? "" : ", ") + e.name;
  return s;
}

// The checker's --result file (exercises/checker/checker.cpp write_result) as a record.
course::Record read_result(const std::string& path) {
  std::ifstream in(path);
  course::Record r;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    r.result = j.at("result").get<std::string>();
    r.tier = j.at("tier").get<int>();
    r.tiers = j.at("tiers").get<int>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("the checker's verdict file {} is unreadable: {}", path, e.what()));
  }
  r.best_tier = r.result == "correct" ? r.tier : 0;
  return r;
}

}  // namespace

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
  if (run_program({b.cmake, "--build", b.build_dir, "--target", target}) != 0) {
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
  std::vector<std::string> args = {(fs::path(b.build_dir) / "exercises" / target).string()};
  if (o.quick) args.push_back("--quick");
  if (o.no_timing) args.push_back("--no-timing");
  if (o.seed >= 0) args.insert(args.end(), {"--seed", std::to_string(o.seed)});
  if (o.threads > 0) args.insert(args.end(), {"--threads", std::to_string(o.threads)});
  if (o.runs > 0) args.insert(args.end(), {"--runs", std::to_string(o.runs)});
  args.insert(args.end(), {"--result", result});
  const int code = run_program(args);
  if (fs::exists(result)) {
    const course::Record r = read_result(result);
    fs::remove(result, ec);
    course::save_record(progress, e->id, r);
    fmt::print("\nprogress recorded in {} (`prism course` shows where you are)\n", progress);
  } else if (code != 0) {
    // The checker ended before its verdict: a crash in the kernel (a signal) counts as failing.
    course::Record r;
    r.result = "failing";
    course::save_record(progress, e->id, r);
    if (code > 128) {
      fmt::print(stderr,
                 "prism check: the checker was killed by signal {} while running your "
                 "code (the last line above names the case)\n",
                 code - 128);
    }
  }
  return code;
}

}  // namespace prism::cli
