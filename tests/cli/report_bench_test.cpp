// `prism report` on a real `prism bench --json` result: one latency section per batch size, with
// the histogram, the CDF and the p50 / p95 / p99 lines at the values the bench itself wrote; a
// bench file with a field missing is refused with exit 1, naming the file and the field.
#include <cstdio>
#include <fstream>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_run.h"

using namespace prism::cli_test;

namespace {

// A tiny bench: a few hundred calls per batch size at most.
void bench(const TempDir& dir, const std::string& name) {
  const RunResult r = run_prism(
      "bench mlp --mode infer --batch 1,3 --threads 1 --duration 0.05 --warmup 1 --no-peak "
      "--json " +
          name,
      dir.path());
  REQUIRE(r.exited);
  REQUIRE_MESSAGE(r.code == 0, r.err);
}

// A percentile's tooltip as the view writes it: four significant digits in the axis' unit
// (ns below a slowest call of 10 us, us below 10 ms, else ms).
std::string percentile_text(const char* name, double ns, double max_ns) {
  const double unit = max_ns < 1e4 ? 1 : max_ns < 1e7 ? 1e3 : 1e6;
  const char* unit_name = max_ns < 1e4 ? "ns" : max_ns < 1e7 ? "us" : "ms";
  char buf[96];
  std::snprintf(buf, sizeof buf, "<title>%s = %.4g %s", name, ns / unit, unit_name);
  return buf;
}

}  // namespace

TEST_CASE("prism report: a bench result becomes its latency view, lines at the bench's numbers") {
  TempDir dir;
  bench(dir, "b.json");
  const RunResult r = run_prism("report b.json -o r.html", dir.path());
  REQUIRE(r.exited);
  CHECK_MESSAGE(r.code == 0, r.err);
  CHECK(contains(r.out, "wrote r.html (1 input)"));
  const std::string page = read_file(dir / "r.html");
  for (const char* s : {"<h2>b.json</h2>", "model mlp, infer, 1 thread, cpu; throughput: batch 1: ",
                        "<h3>Latency, batch 1</h3>", "<h3>Latency, batch 3</h3>", "class=\"area\"",
                        "class=\"roof\"", "share of calls at or below", "time per call, "}) {
    CHECK_MESSAGE(contains(page, s), s);
  }
  // The percentile lines carry the bench's own p50 / p95 / p99 (the view recomputes them with
  // the same function from the same calls), and the p50 / p99 intervals it wrote.
  const auto doc = nlohmann::json::parse(read_file(dir / "b.json"));
  for (const auto& b : doc["batches"]) {
    const auto& l = b["latency"];
    const double max_ns = l["max_ns"].get<double>();
    CAPTURE(b["batch"].get<int>());
    CHECK(contains(page,
                   percentile_text("p50", l["p50_ns"].get<double>(), max_ns) + " (95% interval "));
    CHECK(contains(page, percentile_text("p95", l["p95_ns"].get<double>(), max_ns) + "</title>"));
    CHECK(contains(page,
                   percentile_text("p99", l["p99_ns"].get<double>(), max_ns) + " (95% interval "));
  }
  CHECK_FALSE(contains(page, "http://"));
  CHECK_FALSE(contains(page, "https://"));
  CHECK_FALSE(contains(page, "<script"));
}

TEST_CASE("prism report: a bench result missing its call times is refused, naming the field") {
  TempDir dir;
  bench(dir, "b.json");
  auto doc = nlohmann::json::parse(read_file(dir / "b.json"));
  doc["batches"][1].erase("samples_ns");
  std::ofstream(dir / "bad.json") << doc.dump();
  const RunResult r = run_prism("report b.json bad.json -o r.html", dir.path());
  REQUIRE(r.exited);
  CHECK(r.code == 1);
  CHECK_MESSAGE(contains(r.err, "bad.json: batches[1].samples_ns: missing"), r.err);
  CHECK_FALSE(fs::exists(dir / "r.html"));
}
