// `prism report` on results other than profiles, as a user runs it: a real (short) sweep and a
// real models comparison each become their block of views, and a compare document gets its
// waterfall. Kept small: a fraction of a second of timing per point.
#include <filesystem>
#include <fstream>
#include <string>

#include <doctest/doctest.h>

#include "tests/cli/cli_run.h"

using namespace prism::cli_test;

namespace {

// No cached machine figures, and none measured: the report must not spend seconds on them.
std::string env(const TempDir& dir) {
  return "PRISM_MACHINE_CACHE='" + (dir / "machine.json").string() + "'";
}

std::string run_ok(const std::string& args, const TempDir& dir) {
  const RunResult r = run_prism(args, dir.path(), env(dir));
  REQUIRE(r.exited);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  return r.out;
}

}  // namespace

TEST_CASE("prism report: a real sweep, with its prediction checked, as log-log views") {
  TempDir dir;
  run_ok(
      "sweep mlp --vary batch=1,2,4 --threads 1 --warmup 1 --duration 0.1 --predict 8 --check "
      "--no-peak --json s.json",
      dir);
  CHECK(contains(run_ok("report s.json -o out.html", dir), "wrote out.html (1 input)"));
  const std::string page = read_file(dir / "out.html");
  for (const char* s :
       {"<h2>s.json</h2>", "sweep of mlp (train), varying batch over 3 points",
        "<h3>Time against batch</h3>", "<h3>Memory against batch</h3>", "class=\"roof\"",
        "predicted at batch = 8", "measured at batch = 8", "<title>batch = 4: "}) {
    CHECK_MESSAGE(contains(page, s), s);
  }
  CHECK_FALSE(contains(page, "<script"));
  CHECK_FALSE(contains(page, "http"));
}

TEST_CASE("prism report: a real models comparison as stacked bars per mode") {
  TempDir dir;
  run_ok("models mlp cnn --threads 1 --rounds 1 --duration 0.05 --batch 4 --no-peak --json m.json",
         dir);
  run_ok("report m.json -o out.html", dir);
  const std::string page = read_file(dir / "out.html");
  for (const char* s :
       {"<h2>m.json</h2>", "models side by side: mlp, cnn, batch 4",
        "<h3>Time by op class: training steps</h3>", "<h3>Time by op class: inference</h3>",
        "<title>mlp · matmul: ", "<title>cnn · conv: ", "<i class=\"r0\"></i>matmul"}) {
    CHECK_MESSAGE(contains(page, s), s);
  }
}

TEST_CASE("prism report: a compare document gets its waterfall, a bad one names the field") {
  TempDir dir;
  const std::string doc =
      R"({"kind": "prism.compare", "model": "mlp", "mode": "train", "series": [{"label": "b32",
      "median_ns_a": 1000, "median_ns_b": 2000, "ratio": 2, "ratio_ci": [1.9, 2.1],
      "p_value": 0.001, "verdict": "worse", "movers": [{"name": "matmul", "phase": "forward",
      "self_ns_a": 500, "self_ns_b": 1500}]}]})";
  std::ofstream(dir / "c.json") << doc;
  run_ok("report c.json -o out.html", dir);
  const std::string page = read_file(dir / "out.html");
  CHECK(contains(page, "<h3>Where the time moved: b32</h3>"));
  CHECK(contains(page, "Decision: <strong>worse</strong>"));
  CHECK(contains(page, "<title>matmul · forward: 500 ns -&gt; 1.50 us per call (+1.00 us)"));

  std::string bad = doc;
  bad.replace(bad.find("\"p_value\""), 9, "\"p\"");
  std::ofstream(dir / "bad.json") << bad;
  const RunResult r = run_prism("report bad.json -o bad.html", dir.path(), env(dir));
  CHECK(r.code == 1);
  CHECK(contains(r.err, "bad.json: series[0].p_value: missing"));
  CHECK_FALSE(fs::exists(dir / "bad.html"));
}

TEST_CASE("prism report: a real prism compare --json result gets its waterfall and decision") {
  TempDir dir;
  const std::string bench =
      "bench mlp --mode train --batch 16 --threads 1 --warmup 1 "
      "--duration 0.1 --no-peak --json ";
  run_ok(bench + "a.json", dir);
  run_ok(bench + "b.json --kernel matmul=naive", dir);
  CHECK(contains(run_ok("compare a.json b.json --json c.json", dir), "wrote c.json"));
  CHECK(contains(read_file(dir / "c.json"), "\"kind\": \"prism.compare\""));
  CHECK(contains(run_ok("report c.json -o out.html", dir), "wrote out.html (1 input)"));
  const std::string page = read_file(dir / "out.html");
  CHECK(contains(page, "<h2>c.json</h2>"));
  CHECK(contains(page, "matmul"));  // the op that moved most: its naive variant
  CHECK_FALSE(contains(page, "http"));
}

TEST_CASE("prism report: a real prism gate --json result lists its checks and verdict") {
  TempDir dir;
  const std::string bench =
      "bench mlp --mode infer --batch 16 --threads 1 --warmup 1 "
      "--duration 0.1 --no-peak --json ";
  run_ok(bench + "a.json", dir);
  run_ok(bench + "b.json --kernel matmul=naive", dir);
  // The naive matmul is several times slower: the gate breaks (exit 1) and still writes its JSON.
  const RunResult g = run_prism("gate a.json b.json --json g.json", dir.path(), env(dir));
  REQUIRE(g.exited);
  CHECK(g.code == 1);
  CHECK(contains(read_file(dir / "g.json"), "\"kind\": \"prism.gate\""));
  CHECK(contains(run_ok("report g.json -o out.html", dir), "wrote out.html (1 input)"));
  const std::string page = read_file(dir / "out.html");
  CHECK(contains(page, "<h3>Gate: failed</h3>"));
  CHECK(contains(page, "FAIL"));
  CHECK(contains(page, "throughput"));
}
