// Numbers every command refuses alike (cli/options.h: one validator per kind of number): a seed
// is a whole number from 0 to 2^62 for every command that takes one, and a threshold, a
// temperature or a percentile is a finite number in its range: NaN, infinities and values past
// the range are usage errors (exit 2) with a message that fits on a line, before any work.
#include <doctest/doctest.h>

#include <string>

#include "tests/cli/cli_run.h"

using namespace prism::cli_test;

TEST_CASE("every command takes the same seeds, and refuses the same ones") {
  TempDir dir;
  const char* commands[] = {"demo",
                            "train mlp",
                            "lab relu",
                            "bench mlp",
                            "models mlp",
                            "sweep mlp --vary batch=1,2",
                            "check relu",
                            "quantize w.st -o q.st",
                            "generate m.st --prompt a"};
  for (const char* command : commands) {
    for (const char* seed : {"-1", "1e20", "4611686018427387905", "abc", "nan"}) {
      const std::string args = std::string(command) + " --seed " + seed;
      CAPTURE(args);
      const RunResult r = run_prism(args, dir.path());
      REQUIRE(r.exited);
      CHECK(r.code == 2);
      CHECK_MESSAGE(contains(r.err, std::string("--seed: expected a whole number from 0 to "
                                                "4611686018427387904, got '") +
                                        seed + "'"),
                    r.err);
    }
  }
}

TEST_CASE(
    "thresholds, temperatures and percentiles: NaN, infinities and the out of range refused") {
  TempDir dir;
  const struct {
    const char* args;
    const char* message;
  } cases[] = {
      {"gate a.json b.json --max-quality-drop nan",
       "--max-quality-drop: expected a number from 0 to 100, got 'nan'"},
      {"gate a.json b.json --max-quality-drop -1",
       "--max-quality-drop: expected a number from 0 to 100, got '-1'"},
      {"gate a.json b.json --max-quality-drop inf",
       "--max-quality-drop: expected a number from 0 to 100, got 'inf'"},
      {"gate a.json b.json --max-output-diff nan",
       "--max-output-diff: expected a number from 0 to 1e+06, got 'nan'"},
      {"bench mlp --max-wait-ms nan --qps 10",
       "--max-wait-ms: expected a number from 0 to 1e+06, got 'nan'"},
      {"generate m.st --prompt a --temperature nan",
       "--temperature: expected a number from 0 to 1000, got 'nan'"},
      {"generate m.st --prompt a --temperature 1e400",
       "--temperature: expected a number from 0 to 1000, got '1e400'"},
      {"quantize w.st -o q.st --percentile nan",
       "--percentile: expected a number from 1e-09 to 100, got 'nan'"},
      {"quantize w.st -o q.st --percentile 0", "--percentile: expected a number from 1e-09 to 100"},
      {"gate a.json b.json --max-throughput-drop 15",
       "--max-throughput-drop: at most 1 (100%), got '15' (did you mean 15%?)"},
      {"gate a.json b.json --max-throughput-drop 150%",
       "--max-throughput-drop: at most 1 (100%), got '150%'"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const RunResult r = run_prism(c.args, dir.path());
    REQUIRE(r.exited);
    CHECK(r.code == 2);
    CHECK_MESSAGE(contains(r.err, c.message), r.err);
    CHECK(r.err.size() < 200);  // no bound printed as a 300-digit number
  }
}

TEST_CASE("a number in range is accepted however small: 1e-320 is a temperature") {
  TempDir dir;
  // The model file does not exist: exit 1 for it means the flag itself was accepted.
  const RunResult r = run_prism("generate nosuch.st --prompt a --temperature 1e-320", dir.path());
  CHECK(r.code == 1);
  CHECK(contains(r.err, "nosuch.st"));
}
