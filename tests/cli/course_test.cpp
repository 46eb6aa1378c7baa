// `prism check` and `prism course` (cli/course.h): the course on disk and the learner's progress.
// Every run sets PRISM_COURSE_DIR to its own temporary directory, so a learner's real progress
// file (build/course/progress.json) is never touched by the tests.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.h"

using namespace prism::cli_test;

namespace {

std::string course_env(const TempDir& dir) {
  return "PRISM_COURSE_DIR='" + dir.path().string() + "'";
}

}  // namespace

TEST_CASE("prism course lists the modules and exercises in order, the progress and what is next") {
  TempDir dir;
  const RunResult r = run_prism("course --json course.json", dir.path(), course_env(dir));
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "01_relu"));
  CHECK(contains(r.out, "build/prism check relu"));
  CHECK(contains(r.out, "next: "));
  const auto doc = nlohmann::json::parse(read_file(dir / "course.json"));
  REQUIRE(doc["modules"].size() >= 10);
  CHECK(doc["modules"][0]["id"] == "01_tensors_views_autograd");
  // Module 01 links exercise 01, and the exercise row says so.
  const auto& m01 = doc["modules"][0]["exercises"];
  CHECK(std::find(m01.begin(), m01.end(), "01_relu") != m01.end());
  REQUIRE(doc["exercises"].size() >= 6);
  CHECK(doc["exercises"][0]["id"] == "01_relu");
  CHECK(doc["exercises"][0]["modules"][0] == "01");
  CHECK(doc["exercises"][0]["check"] == "build/prism check relu");
}

TEST_CASE("prism check builds the checker, runs it, and records the verdict prism course shows") {
  TempDir dir;
  // --no-timing: the verdict, not the speed, is under test here.
  const RunResult r = run_prism("check 01 --no-timing", dir.path(), course_env(dir));
  REQUIRE(r.exited);
  // The learner's file as it is in this tree: the stub (a case fails, exit 1) or, once a learner
  // has done it, a passing kernel (exit 0). Either way the record says the same as the exit code.
  REQUIRE_MESSAGE((r.code == 0 || r.code == 1), (r.out + r.err));
  CHECK(contains(r.out, "building exercise_relu"));
  CHECK(contains(r.out, r.code == 0 ? "result: PASS" : "result: FAIL"));
  const auto doc = nlohmann::json::parse(read_file(dir / "progress.json"));
  CHECK(doc["exercises"]["01_relu"]["result"] == (r.code == 0 ? "correct" : "failing"));

  const RunResult c = run_prism("course", dir.path(), course_env(dir));
  CHECK(c.code == 0);
  CHECK(contains(c.out, r.code == 0 ? "correct" : "failing"));
}

TEST_CASE("prism check refuses a name that is no exercise, naming the exercises") {
  TempDir dir;
  const RunResult r = run_prism("check no_such_exercise", dir.path(), course_env(dir));
  REQUIRE(r.exited);
  CHECK(r.code == 2);
  CHECK(contains(r.err, "no exercise 'no_such_exercise'"));
  CHECK(contains(r.err, "relu"));
  CHECK(!std::filesystem::exists(dir / "progress.json"));
  const RunResult bad_flag = run_prism("check relu --runs 0", dir.path(), course_env(dir));
  CHECK(bad_flag.code == 2);
  CHECK(contains(bad_flag.err, "--runs"));
}

TEST_CASE("prism course refuses a progress file that is not one, naming it") {
  TempDir dir;
  {
    std::ofstream f(dir / "progress.json");
    f << "{\"exercises\": [1, 2";
  }
  const RunResult r = run_prism("course", dir.path(), course_env(dir));
  REQUIRE(r.exited);
  CHECK(r.code == 1);
  CHECK(contains(r.err, "progress.json is not a prism course progress file"));
}

TEST_CASE("prism check and prism course say so when prism runs outside its build directory") {
  TempDir dir;
  const fs::path copy = dir / "prism";
  fs::copy_file(prism_binary(), copy);
  // The libraries stay where they are (the build's rpath is relative to the binary).
  const std::string cmd = "cd '" + dir.path().string() + "' && " + course_env(dir) +
                          " LD_LIBRARY_PATH='" + PRISM_BINARY_DIR + "' '" + copy.string() +
                          "' course > out.txt 2> err.txt";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(contains(read_file(dir / "err.txt"), "not a build directory of prism"));
}

// A kernel that ends the checker's process (exercises/01_relu/escape/) gives no verdict of this
// run: prism check must count it as failing, whatever exit code the process left, and stop one
// that never returns at its time limit, naming the case. PRISM_CHECK_PROGRAM runs each built
// escape program in place of the learner's checker.
TEST_CASE("prism check: a kernel that exits or never returns fails, with no verdict of its own") {
  const std::string programs = std::string(PRISM_BINARY_DIR) + "/exercises/exercise_relu_escape_";
  const struct {
    const char* escape;
    const char* why;
  } escapes[] = {
      {"exits", "the checker ended with exit code 0 and no verdict"},
      {"exit77", "the checker ended with exit code 77 and no verdict"},
      {"static_exit", "the checker ended with exit code 0 and no verdict"},
      {"never_returns", "case [1] ran past the time limit of 2 s (--time-limit) and was stopped"},
  };
  for (const auto& e : escapes) {
    CAPTURE(e.escape);
    if (!fs::exists(programs + e.escape)) {  // PRISM_EXERCISE_VARIANTS=OFF builds none
      MESSAGE("skipped: " << programs << e.escape << " was not built");
      continue;
    }
    TempDir dir;
    const std::string env = course_env(dir) + " PRISM_CHECK_PROGRAM='" + programs + e.escape + "'";
    const RunResult r = run_prism("check relu --no-timing --time-limit 2", dir.path(), env);
    REQUIRE(r.exited);
    CHECK(r.code == 1);
    CHECK_MESSAGE(contains(r.err, e.why), r.err);
    CHECK(contains(r.err, "No verdict counts as failing."));
    const auto doc = nlohmann::json::parse(read_file(dir / "progress.json"));
    CHECK(doc["exercises"]["01_relu"]["result"] == "failing");
  }
}

// The checker's advice names flags ("run again with --runs 100", the lab's "(raise
// --max-seconds)"): each must be one `prism check` accepts and lists, or the advice cannot be
// followed.
TEST_CASE("prism check accepts every flag the checker's advice names") {
  std::string advice;
  for (const char* f :
       {"exercises/checker/grade.cpp", "exercises/checker/checker.cpp", "kernels/lab/lab.cpp"}) {
    advice += read_file(fs::path(PRISM_SOURCE_DIR) / f);
  }
  const std::regex named(R"((?:with|raise|more) (--[a-z][a-z-]*))");
  std::set<std::string> flags;
  for (auto it = std::sregex_iterator(advice.begin(), advice.end(), named);
       it != std::sregex_iterator(); ++it) {
    flags.insert((*it)[1].str());
  }
  REQUIRE(flags.count("--runs") == 1);
  REQUIRE(flags.count("--max-seconds") == 1);
  const RunResult help = run_prism("check --help", fs::temp_directory_path());
  REQUIRE(help.code == 0);
  for (const std::string& flag : flags) {
    CAPTURE(flag);
    CHECK(contains(help.out, flag + " "));
  }
}

// What `prism course` makes of a record: an inconclusive tier is not a missed one, a check
// without timing is not graded, and next is what the learner left failing before anything new.
TEST_CASE(
    "prism course: inconclusive, missed and not graded apart, and next is the first failing") {
  TempDir dir;
  std::ofstream(dir / "progress.json") << R"({"exercises": {
    "02_sum_rows": {"result": "correct", "tier": 1, "tiers": 2, "best_tier": 1,
                    "next_tier": "inconclusive", "checked": "2026-11-29T08:00:00Z"},
    "03_matmul_loop_order": {"result": "correct", "tier": 0, "tiers": 0, "best_tier": 0,
                             "next_tier": "not graded", "checked": "2026-11-29T08:00:00Z"},
    "04_matmul_tiled": {"result": "correct", "tier": 1, "tiers": 3, "best_tier": 1,
                        "next_tier": "missed", "checked": "2026-11-29T08:00:00Z"},
    "06_conv2d_im2col": {"result": "correct", "tier": 0, "tiers": 2, "best_tier": 2,
                         "next_tier": "not graded", "checked": "2026-11-29T08:00:00Z"},
    "05_softmax_online": {"result": "failing", "tier": 0, "tiers": 0, "best_tier": 0,
                          "checked": "2026-11-29T08:00:00Z"}}})";
  const RunResult r = run_prism("course --json c.json", dir.path(), course_env(dir));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "1 of 2, 2 inconclusive"));
  CHECK(contains(r.out, "1 of 3, 2 missed"));
  CHECK(contains(r.out, "not graded"));
  // A later check that was not graded does not undo the best tier reached.
  CHECK(contains(r.out, "not graded (best 2)"));
  // 01 is not started, but 05 was left failing: that comes first.
  CHECK(contains(r.out, "next: 05_softmax_online"));
  const auto doc = nlohmann::json::parse(read_file(dir / "c.json"));
  CHECK(doc["next"] == "05_softmax_online");
}

// A busy machine: the speed is not graded (never "missed"), and the record says so. A spinning
// shell loop beside the check is the other work.
TEST_CASE("prism check beside a busy process: correct, and the speed not graded") {
  TempDir dir;
  const std::string env = course_env(dir) + " PRISM_CHECK_PROGRAM='" +
                          std::string(PRISM_BINARY_DIR) + "/exercises/exercise_relu_solution'";
  // In braces: run_shell redirects what follows the last command, so the group's output is kept.
  const RunResult r = run_shell("{ sh -c 'while :; do :; done' & spin=$!; sleep 0.5; env " + env +
                                    " {prism} check relu --quick; rc=$?; kill $spin; exit $rc; }",
                                dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, (r.out + r.err));
  CHECK(contains(r.out, "timing: not graded: other processes are busy"));
  CHECK(contains(r.out, "result: PASS"));
  const auto doc = nlohmann::json::parse(read_file(dir / "progress.json"));
  CHECK(doc["exercises"]["01_relu"]["result"] == "correct");
  CHECK(doc["exercises"]["01_relu"]["next_tier"] == "not graded");
}

// A correct kernel whose timing runs past the time limit keeps its verdict: the checker wrote a
// provisional one (correct, speed not graded) before timing, and prism check records that.
TEST_CASE("prism check: a timing stopped at the time limit leaves the kernel correct, not graded") {
  TempDir dir;
  const std::string env = course_env(dir) + " PRISM_CHECK_PROGRAM='" +
                          std::string(PRISM_BINARY_DIR) + "/exercises/exercise_relu_solution'";
  const RunResult r = run_prism("check relu --grade-busy --time-limit 1", dir.path(), env);
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, (r.out + r.err));
  CHECK(contains(r.out, "the timing ran past the time limit of 1 s"));
  CHECK(contains(r.out, "result: PASS"));
  const auto doc = nlohmann::json::parse(read_file(dir / "progress.json"));
  CHECK(doc["exercises"]["01_relu"]["result"] == "correct");
  CHECK(doc["exercises"]["01_relu"]["next_tier"] == "not graded");
}

// Exercise 16's loop as its README teaches it: record the original and the fixed loop,
// then prism compare the two files: the decision, the ops that moved and the loss line. The
// exercises without a loop refuse --record and --profile.
TEST_CASE("exercise 16: --record files that prism compare reads, with the loss line") {
  TempDir dir;
  const std::string programs = std::string(PRISM_BINARY_DIR) + "/exercises/exercise_";
  const RunResult before = run_shell(programs + "bottleneck_hunt --record before.json", dir.path());
  REQUIRE(before.exited);
  CHECK_MESSAGE(before.code == 0, (before.out + before.err));
  CHECK(contains(before.out, "wrote before.json"));
  CHECK_FALSE(contains(before.out, "result:"));  // measured, not checked: no verdict
  const RunResult after =
      run_shell(programs + "bottleneck_hunt_solution --record after.json", dir.path());
  REQUIRE(after.code == 0);
  const RunResult c = run_prism("compare before.json after.json --rows 0", dir.path());
  REQUIRE(c.exited);
  CHECK_MESSAGE(c.code == 0, (c.out + c.err));
  CHECK(contains(c.out, "bottleneck_hunt train"));
  CHECK(contains(c.out, "decision: "));
  CHECK(contains(c.out, "loss of the first 16 training steps"));
  CHECK(contains(c.out, "-> held"));
  // The decode's cast ran once in the fixed loop: 1/16 of a call per step, exactly.
  CHECK(contains(c.out, "cast"));
  CHECK(contains(c.out, "calls 2 -> 0.0625"));
  const RunResult refused = run_shell(programs + "relu_solution --record x.json", dir.path());
  CHECK(refused.code == 2);
  CHECK(contains(refused.err, "--profile and --record are for an exercise that runs a loop"));
  CHECK_FALSE(fs::exists(dir / "x.json"));
}
