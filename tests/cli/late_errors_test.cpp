// Errors that used to come late or in the wrong form (issue 34): each is now found before the
// work it would spoil, with the exit code of its kind (docs/RELIABILITY.md, "Exit codes").
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_run.h"

using namespace prism::cli_test;

namespace {

const char* kQuickBench =
    "bench mlp --data spirals --batch 4 --duration 0.05 --warmup 1 --no-peak --threads 1";

}  // namespace

TEST_CASE("compare MODEL: both sides are checked before the first round") {
  TempDir dir;
  const RunResult kernel = run_prism(
      "compare mlp --data spirals --batch 4 --duration 0.05 --b \"--kernel matmul=nosuch\"",
      dir.path());
  REQUIRE(kernel.exited);
  CHECK(kernel.code == 2);
  CHECK_MESSAGE(contains(kernel.err, "--b: --kernel matmul=nosuch"), kernel.err);
  CHECK_FALSE(contains(kernel.err, "round 1"));  // refused before any measuring
  const RunResult load = run_prism(
      "compare mlp --data spirals --batch 4 --duration 0.05 --b \"--precision int8 --load "
      "nosuch.st\"",
      dir.path());
  CHECK(load.code == 1);
  CHECK_MESSAGE(contains(load.err, "nosuch.st"), load.err);
  CHECK_FALSE(contains(load.err, "round 1"));
  CHECK(contains(load.err, "prism: error:"));
}

TEST_CASE("a model and a data set that do not fit: one message, exit 2, for train and quantize") {
  TempDir dir;
  REQUIRE(run_prism("train mlp --data spirals --steps 1 --save w.st", dir.path()).code == 0);
  for (const char* args :
       {"train mlp --data text --steps 1", "quantize w.st -o q.st --data text"}) {
    CAPTURE(args);
    const RunResult r = run_prism(args, dir.path());
    CHECK(r.code == 2);
    CHECK_MESSAGE(contains(r.err, "model 'mlp' classifies images; text data needs a transformer"),
                  r.err);
  }
  const RunResult text = run_prism("train transformer --data spirals --steps 1", dir.path());
  CHECK(text.code == 2);
  CHECK(contains(text.err, "model 'transformer' reads text; use --data text or a text file"));
}

TEST_CASE("gate: an output it cannot write is exit 3, never the verdict's 1") {
  TempDir dir;
  REQUIRE(run_prism(std::string(kQuickBench) + " --json a.json", dir.path()).code == 0);
  const RunResult r = run_prism("gate a.json a.json --json /dev/full", dir.path());
  REQUIRE(r.exited);
  CHECK(r.code == 3);
  CHECK(contains(r.out, "gate: passed"));
  CHECK_MESSAGE(contains(r.err, "the verdict above stands (passed), but --json was not written"),
                r.err);
}

TEST_CASE("compare and gate refuse negative memory, FLOPs and times, naming the field") {
  TempDir dir;
  REQUIRE(run_prism(std::string(kQuickBench) + " --json a.json", dir.path()).code == 0);
  const nlohmann::json good = nlohmann::json::parse(read_file(dir / "a.json"));
  const struct {
    nlohmann::json::json_pointer where;
    int64_t value;
    const char* field;
  } edits[] = {
      {nlohmann::json::json_pointer("/batches/0/tracked_peak_bytes"), -5,
       "field 'batches[].tracked_peak_bytes' is -5: a peak is bytes, or -1 when unknown"},
      {nlohmann::json::json_pointer("/batches/0/peak_rss_bytes"), -2,
       "field 'batches[].peak_rss_bytes' is -2"},
      {nlohmann::json::json_pointer("/batches/0/counters/flops"), -1000,
       "field 'batches[].counters.flops' is negative (-1000)"},
      {nlohmann::json::json_pointer("/batches/0/tracked_peak_by_role/activation"), -1,
       "field 'batches[].tracked_peak_by_role.activation' is negative (-1)"},
      {nlohmann::json::json_pointer("/batches/0/ops/0/flops"), -3,
       "field 'batches[].ops[].flops' is negative (-3)"},
  };
  for (const auto& e : edits) {
    CAPTURE(e.field);
    nlohmann::json bad = good;
    bad[e.where] = e.value;
    std::ofstream(dir / "b.json") << bad.dump();
    for (const char* command : {"gate a.json b.json", "compare a.json b.json"}) {
      CAPTURE(command);
      const RunResult r = run_prism(command, dir.path());
      // gate: a file it cannot read is exit 2, never the verdict's 1; compare: an error.
      const bool gate = std::string(command).rfind("gate", 0) == 0;
      CHECK(r.code == (gate ? 2 : r.code));
      CHECK(r.code != 0);
      CHECK_MESSAGE(contains(r.err, e.field), r.err);
    }
  }
}
