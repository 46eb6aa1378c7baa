// The bottleneck map as a user meets it: the section after `prism train --profile`'s op table
// and in `prism bench`, its JSON object, the commands its verdicts print (each run here), and
// `prism bench --model-off`, the input pipeline alone.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "tests/cli/cli_run.h"

using namespace prism::cli_test;
using nlohmann::json;

namespace {

// An empty machine cache in the run's directory: no figures, so the map takes its documented
// overhead-only path whatever this machine has cached.
std::string no_cache(const TempDir& dir) {
  return "PRISM_MACHINE_CACHE='" + (dir / "machine.json").string() + "'";
}

// The commands the verdicts print ("     try: prism bench ...").
std::vector<std::string> tried_commands(const std::string& out) {
  std::vector<std::string> v;
  const std::regex line(R"(try: prism ([^\n]+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator();
       ++it) {
    v.push_back((*it)[1].str());
  }
  return v;
}

}  // namespace

TEST_CASE("prism train --profile prints the bottleneck map after the op table, and its JSON") {
  TempDir dir;
  const RunResult r =
      run_prism("train mlp --data spirals --steps 10 --profile-steps 4 --threads 1 --json p.json",
                dir.path(), no_cache(dir));
  REQUIRE(r.exited);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const size_t table = r.out.find("prism profile:"), map = r.out.find("bottleneck map: a step of");
  REQUIRE(table != std::string::npos);
  REQUIRE(map != std::string::npos);
  CHECK(table < map);
  for (const char* s :
       {"(mean of 4 profiled)", "where it went: data wait", "optimizer: ", "overhead threshold T =",
        "cannot be told apart without the machine's figures", "verdicts, ranked by share of",
        "evidence: ", "lever: ", "undetermined"}) {
    CHECK_MESSAGE(contains(r.out, s), s);
  }

  const json doc = json::parse(read_file(dir / "p.json"));
  REQUIRE(doc.contains("bottleneck"));
  const json& b = doc["bottleneck"];
  CHECK(b["has_peaks"] == false);
  CHECK(b["steps"] == 4);
  CHECK(b["threshold_ns"].get<double>() > b["dispatch_ns"].get<double>());
  CHECK(b["rows"].size() >= 5);
  CHECK(b["verdicts"].size() >= 1);
  for (const char* k : {"data_wait", "compute", "memory", "overhead", "undetermined", "between_ops",
                        "profiler", "optimizer"}) {
    CHECK_MESSAGE(b["shares"].contains(k), k);
  }
  // Without figures no row is compute- or memory-bound.
  for (const json& row : b["rows"]) {
    CHECK(row["bound"] != "compute");
    CHECK(row["bound"] != "memory");
  }
  // The data wait was recorded (the DataLoader's "data" scope) and the optimizer ran.
  CHECK(b["shares"]["optimizer"].get<double>() > 0);
}

TEST_CASE("prism bench prints a bottleneck map per batch size, and the commands it prints run") {
  TempDir dir;
  const RunResult r = run_prism(
      "bench mlp --mode train --data spirals --batch 4,16 --duration 0.05 --warmup 1 "
      "--threads 1 --no-peak --json b.json",
      dir.path());
  REQUIRE(r.exited);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "batch 4: bottleneck map: a step of"));
  CHECK(contains(r.out, "batch 16: bottleneck map: a step of"));
  CHECK(contains(r.out, "(--no-peak)"));
  const json doc = json::parse(read_file(dir / "b.json"));
  REQUIRE(doc["bottleneck"].size() == 2);
  CHECK(doc["bottleneck"][1]["batch"] == 16);
  CHECK(doc["bottleneck"][1]["map"]["verdicts"].size() >= 1);

  // Every `prism bench` command a verdict prints parses and runs (shortened).
  const std::vector<std::string> tries = tried_commands(r.out);
  REQUIRE(!tries.empty());
  for (const std::string& c : tries) {
    if (c.rfind("bench ", 0) != 0) continue;
    const RunResult t = run_prism(c + " --duration 0.05 --warmup 1 --no-peak", dir.path());
    CHECK_MESSAGE(t.code == 0, c << "\n" << t.err);
  }
}

TEST_CASE("prism bench --model-off --data: the loader's rate beside the model's") {
  TempDir dir;
  const RunResult r = run_prism(
      "bench mlp --model-off --data spirals --mode train --batch 8,64 --duration 0.05 --warmup 1 "
      "--threads 1 --json p.json",
      dir.path());
  REQUIRE(r.exited);
  REQUIRE_MESSAGE(r.code == 0, r.err);
  for (const char* s : {"--model-off: the input pipeline alone", "batches/s", "samples/s",
                        "batch 8: the loader delivers", "batch 64: the loader delivers",
                        "the model's training step consumes", "times"}) {
    CHECK_MESSAGE(contains(r.out, s), s);
  }
  const json doc = json::parse(read_file(dir / "p.json"));
  CHECK(doc["kind"] == "bench --model-off");
  REQUIRE(doc["points"].size() == 2);
  CHECK(doc["points"][1]["batch"] == 64);
  CHECK(doc["points"][1]["samples_per_s"].get<double>() > 0);
  CHECK(doc["points"][1]["model_samples_per_s"].get<double>() > 0);
  CHECK(doc["loader"]["prefetch"] == true);
}

TEST_CASE("prism bench --model-off: usage errors before any work") {
  TempDir dir;
  RunResult r = run_prism("bench mlp --model-off", dir.path());
  CHECK(r.code == 2);
  CHECK(contains(r.err, "synthetic inputs have no pipeline to measure"));
  CHECK(contains(r.err, "--data"));

  r = run_prism("bench mlp --model-off --data spirals --batch 5000", dir.path());
  CHECK(r.code == 2);
  CHECK(contains(r.err, "batch 5000 is larger than"));

  r = run_prism("bench mlp --model-off --data spirals --qps 10", dir.path());
  CHECK(r.code == 2);
  CHECK(contains(r.err, "--qps"));
}
