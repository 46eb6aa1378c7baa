// `prism lab --threads LIST`: the list is parsed and checked before any work, and each variant is
// timed at every count (tests/kernels/lab_threads_test.cpp tests the lab itself).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.h"

using namespace prism::cli_test;

TEST_CASE("prism lab --threads rejects bad lists as usage errors naming the flag and the value") {
  TempDir dir;
  // The value as the shell is given it, and as the message quotes it.
  const std::pair<const char*, const char*> cases[] = {
      {"0", "0"}, {"2000", "2000"}, {"a", "a"},   {"1,1", "1,1"},
      {"''", ""}, {"1,,2", "1,,2"}, {"2,", "2,"}, {"1.5", "1.5"}};
  for (const auto& [arg, shown] : cases) {
    const RunResult r = run_prism(std::string("lab relu --no-peak --threads ") + arg, dir.path());
    REQUIRE(r.exited);
    CHECK_MESSAGE(r.code == 2, arg);
    CHECK_MESSAGE(contains(r.err, "--threads: expected distinct whole numbers from 1 to 1024"),
                  r.err);
    CHECK_MESSAGE(contains(r.err, std::string("got '") + shown + "'"), r.err);
    CHECK_FALSE(contains(r.out, "validation on"));  // refused before any work
  }
  const RunResult twice = run_prism("lab relu --threads 2,1,2", dir.path());
  CHECK(twice.code == 2);
  CHECK(contains(twice.err, "(2 twice)"));
  const RunResult cuda = run_prism("lab relu --device cuda --threads 1,2", dir.path());
  CHECK(cuda.code == 2);
  CHECK(contains(cuda.err, "--threads: give one count"));
}

TEST_CASE("prism lab --threads 1,2 times every variant at both counts") {
  TempDir dir;
  const RunResult r = run_prism(
      "lab relu --sizes 4096 --threads 1,2 --reps 3 --min-sample-ms 1 --no-peak --json lab.json",
      dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "prism lab relu - 1 and 2 threads - float32"));
  CHECK(contains(r.out, "x 1 thread [95% CI]"));
  CHECK(contains(r.out, "thread efficiency at 2 threads"));
  const auto doc = nlohmann::json::parse(read_file(dir / "lab.json"));
  CHECK(doc["threads"] == 1);
  CHECK(doc["thread_counts"] == nlohmann::json::array({1, 2}));
  int at_two = 0;
  for (const auto& row : doc["rows"]) {
    CHECK(row.contains("threads"));
    CHECK(row.contains("speedup_vs_first_threads") == (row["threads"] == 2));
    if (row["threads"] == 2) ++at_two;
  }
  CHECK(at_two == static_cast<int>(doc["validation"].size()));
  CHECK(doc["rows"].size() == 2 * doc["validation"].size());
}

TEST_CASE("prism lab --threads with one count keeps the one-count report") {
  TempDir dir;
  const RunResult r = run_prism(
      "lab relu --sizes 4096 --threads 2 --reps 3 --min-sample-ms 1 --no-peak", dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "prism lab relu - 2 threads - float32"));
  CHECK(contains(r.out, "  variant        tag            median"));
  CHECK_FALSE(contains(r.out, "thread efficiency"));
}
