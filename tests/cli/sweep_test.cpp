// `prism sweep` as a user runs it: the report and the JSON of a good run, the thread sweep,
// and every kind of bad input refused before any work with exit 2 (usage) or 1 (run time).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.h"

using namespace prism::cli_test;

namespace {
const char* kQuick = "--duration 0.04 --warmup 1 --no-peak";
}

TEST_CASE("prism sweep mlp --vary batch: points, fits, a checked prediction, JSON") {
  TempDir dir;
  const RunResult r = run_prism(std::string("sweep mlp --vary batch=1,2,4 --mode infer "
                                            "--threads 1 --predict 8 --check --json s.json ") +
                                    kQuick,
                                dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  for (const char* s :
       {"sweep mlp --mode infer: batch = 1,2,4, 1 thread", "median", "95% interval", "pass gap",
        "samples/s", "FLOP/call", "tracked peak", "parameter", "matmul %", "fits:", "time    ~",
        "memory  ~", "FLOPs   ~", "R^2", "knees:", "prediction at batch=8 (extrapolation",
        "check: measured at batch=8", "prediction error", "findings:",
        // A finding on time per sample, whichever way it went: under the
        // sanitizers (make asan) batching stops paying, and the finding says so.
        "time per sample", "wrote s.json"}) {
    CHECK_MESSAGE(contains(r.out, s), s);
  }
  const auto doc = nlohmann::json::parse(read_file(dir / "s.json"));
  CHECK(doc["kind"] == "prism.sweep");
  CHECK(doc["vary"] == "batch");
  CHECK(doc["points"].size() == 3);
  CHECK(doc["points"][0]["value"] == 1);
  const int64_t f1 = doc["points"][0]["counters"]["flops"];
  CHECK(doc["points"][2]["counters"]["flops"] == 4 * f1);
  CHECK(doc["fits"]["time"]["k_ci"].size() == 2);
  CHECK(doc["prediction"]["at"] == 8);
  CHECK(doc["check"]["point"]["counters"]["flops"] == 8 * f1);
  CHECK(doc["findings"].size() >= 1);
  CHECK(doc["fingerprint"].contains("git_commit"));
}

TEST_CASE("prism sweep --vary threads=1,2: speed-up, efficiency and Amdahl per op class") {
  TempDir dir;
  const RunResult r = run_prism(
      std::string("sweep mlp --vary threads=1,2 --batch 16 --mode infer ") + kQuick, dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  for (const char* s : {"thread scaling against 1 thread(s)", "speed-up", "efficiency",
                        "Amdahl, T(p) = T1 (s + (1 - s) / p):", "overall: serial fraction",
                        "solved exactly from 2 counts", "matmul: serial fraction"}) {
    CHECK_MESSAGE(contains(r.out, s), s);
  }
}

TEST_CASE("prism sweep: bad input is refused before any work, naming the problem") {
  TempDir dir;
  struct Bad {
    const char* args;
    int code;
    const char* says;
  };
  const Bad cases[] = {
      {"sweep mlp --vary size=1,2", 2, "unknown size 'size'"},
      {"sweep mlp --vary batch", 2, "expected NAME=V1,V2,..."},
      {"sweep mlp --vary batch=", 2, "no values"},
      {"sweep mlp --vary batch=1,,2", 2, "value 2 is empty"},
      {"sweep mlp --vary batch=1,two", 2, "'two' is not a whole number >= 1"},
      {"sweep mlp --vary batch=2,2", 2, "2 is given twice"},
      {"sweep mlp --vary batch=4", 2, "a fit needs at least 2 values (3 or more for an interval)"},
      {"sweep mlp --vary seq=64,128", 2, "mlp has no context length"},
      {"sweep cnn --vary depth=1,2", 2, "depth is fixed"},
      {"sweep resnet18 --vary width=8,16", 2, "width is fixed"},
      {"sweep mlp --vary batch=1,2 --check", 2, "give --predict N"},
      {"sweep mlp --vary batch=1,2000000", 2, "batch size 2000000 is not in 1..1000000"},
      {"sweep mlp --vary batch=1,2 --predict 5000000", 2, "--predict batch=5000000"},
      {"sweep mlp --vary batch=1,2 --batch 4", 2, "with --vary batch= leave it out"},
      {"sweep mlp --vary threads=1,2 --threads 2", 2, "with --vary threads= leave it out"},
      {"sweep nosuch --vary batch=1,2", 2, "nosuch"},
      // Issue 16's hostile test: a --block for a model without a context was dropped silently.
      {"sweep mlp --vary batch=1,2 --block 5", 2, "--block: mlp has no context length"},
      {"sweep mlp --vary batch=1,2 --json no/such/dir/s.json", 1, "no/such/dir/s.json"},
  };
  for (const Bad& b : cases) {
    const RunResult r = run_prism(std::string(b.args) + " " + kQuick, dir.path());
    REQUIRE(r.exited);
    CHECK_MESSAGE(r.code == b.code, b.args, "\n", r.err);
    CHECK_MESSAGE(contains(r.err, b.says), b.args, "\n", r.err);
    CHECK_MESSAGE(!contains(r.out, "fits:"), b.args);  // nothing was measured
  }
}
