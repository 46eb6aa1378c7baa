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
  // Weights of another shape (an MLP trained on 2-feature spirals, timed on 784-pixel images):
  // checked against the model built on the meta device, before any round.
  REQUIRE(run_prism("train mlp --data spirals --steps 1 --save w.st", dir.path()).code == 0);
  for (const char* args : {"--load w.st --b \"--threads 2\"", "--b \"--load w.st\""}) {
    CAPTURE(args);
    const RunResult shape = run_prism(
        std::string("compare mlp --data shapes --batch 4 --duration 0.05 ") + args, dir.path());
    CHECK(shape.code == 1);
    CHECK_MESSAGE(contains(shape.err, "tensor 'fc1.weight': shape is [256,2] in the file"),
                  shape.err);
    CHECK_FALSE(contains(shape.err, "round 1"));
  }
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

TEST_CASE("gate: an output it cannot write is exit 2 up front or 3 at the end, never 1") {
  TempDir dir;
  REQUIRE(run_prism(std::string(kQuickBench) + " --json a.json", dir.path()).code == 0);
  const RunResult r = run_prism("gate a.json a.json --json /dev/full", dir.path());
  REQUIRE(r.exited);
  CHECK(r.code == 3);
  CHECK(contains(r.out, "gate: passed"));
  CHECK_MESSAGE(contains(r.err, "the verdict above stands (passed), but --json was not written"),
                r.err);
  const RunResult early = run_prism("gate a.json a.json --json nosuch/x.json", dir.path());
  CHECK(early.code == 2);
  CHECK(contains(early.err, "cannot write the json to nosuch/x.json"));
  CHECK_FALSE(contains(early.out, "gate: passed"));
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
      CHECK(r.code == 2);  // a file it cannot use: no verdict (gate's 1 is a broken threshold)
      CHECK_MESSAGE(contains(r.err, e.field), r.err);
    }
  }
}

TEST_CASE("result files: a number past double's range is a bad file, named, not a raw error") {
  TempDir dir;
  std::ofstream(dir / "big.json") << R"({"kind":"prism.bench","schema":1e400})";
  REQUIRE(run_prism(std::string(kQuickBench) + " --json a.json", dir.path()).code == 0);
  const RunResult gate = run_prism("gate a.json big.json", dir.path());
  CHECK(gate.code == 2);  // no verdict
  CHECK_MESSAGE(contains(gate.err, "big.json: not valid JSON"), gate.err);
  const RunResult report = run_prism("report big.json -o r.html", dir.path());
  CHECK(report.code == 1);
  CHECK(contains(report.err, "big.json: not valid JSON"));
  // Step times finite in ms but not in ns (1e308 ms): refused, not "mean: sample inf".
  REQUIRE(
      run_prism("train mlp --data spirals --steps 3 --profile-steps 1 --json t.json", dir.path())
          .code == 0);
  nlohmann::json t = nlohmann::json::parse(read_file(dir / "t.json"));
  t["train"]["step_samples_ms"] = {1e308, 1e308};
  std::ofstream(dir / "tbig.json") << t.dump();
  const RunResult huge = run_prism("gate t.json tbig.json", dir.path());
  CHECK(huge.code == 2);
  CHECK_MESSAGE(contains(huge.err, "field 'train.step_samples_ms' holds a value too large"),
                huge.err);
}

TEST_CASE("an output to /dev/stdout is written in place, through a pipe too, after what ran") {
  TempDir dir;
  REQUIRE(run_prism(std::string(kQuickBench) + " --json a.json", dir.path()).code == 0);
  const RunResult piped =
      run_shell("{prism} gate a.json a.json --json /dev/stdout | cat", dir.path());
  CHECK_MESSAGE(piped.code == 0, piped.err);
  const size_t verdict = piped.out.find("gate: passed"), json = piped.out.find("\"kind\"");
  CHECK(verdict != std::string::npos);
  CHECK(json != std::string::npos);
  CHECK(verdict < json);  // the verdict printed first comes first
}
