// `prism demo` (the CNN, briefly, under the profiler): it trains (the loss falls), prints the
// op table and the module tree, and writes a trace and a JSON profile that parse back; kernel
// choices show up in the profile.
#include <regex>

#include <nlohmann/json.hpp>

#include "cli_run.h"

using namespace prism::cli_test;
using nlohmann::json;

namespace {

// The loss of every progress line ("step  6/60  loss 1.0443  accuracy  48.3%"), in order.
std::vector<double> losses(const std::string& out) {
  std::vector<double> v;
  const std::regex line(R"(step\s+\d+/\d+\s+loss\s+([0-9.]+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator();
       ++it) {
    v.push_back(std::stod((*it)[1].str()));
  }
  return v;
}

json parse_file(const fs::path& p) {
  REQUIRE(fs::exists(p));
  return json::parse(read_file(p));
}

// The ops rows named `name` in profile.json.
std::vector<json> rows_named(const json& profile, const std::string& name) {
  std::vector<json> rows;
  for (const json& r : profile.at("ops")) {
    if (r.at("name") == name) rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("prism demo trains, prints the op table and writes trace.json and profile.json") {
  TempDir dir;
  const RunResult r = run_prism("demo --steps 60 --threads 1", dir.path());
  REQUIRE(r.exited);
  REQUIRE(r.code == 0);
  INFO(r.err);

  const std::vector<double> loss = losses(r.out);
  REQUIRE(loss.size() >= 3);
  CHECK(loss.back() < loss.front());

  // The op table: forward and backward rows, matmul among them, and the meta footer.
  CHECK(contains(r.out, "prism profile:"));
  CHECK(contains(r.out, "matmul"));
  CHECK(contains(r.out, "backward"));
  CHECK(contains(r.out, "optimizer"));
  CHECK(contains(r.out, "1 thread"));
  CHECK(contains(r.out, "trace.json"));
  CHECK(contains(r.out, "ui.perfetto.dev"));
  // The module tree: the CNN's layers, with their parameter counts.
  CHECK(contains(r.out, "prism module tree"));
  CHECK(contains(r.out, "conv1"));
  CHECK(contains(r.out, "Conv2d"));
  CHECK(contains(r.out, "4640"));

  const json profile = parse_file(dir / "profile.json");
  CHECK(profile.at("meta").at("threads") == 1);
  const json& ops = profile.at("ops");
  REQUIRE(ops.is_array());
  REQUIRE(!ops.empty());
  for (const json& row : ops) {
    for (const char* key : {"name", "phase", "variant", "calls", "time_ns", "flops", "bytes",
                            "allocs", "alloc_bytes"}) {
      CHECK_MESSAGE(row.contains(key), "row lacks ", key);
    }
  }
  const std::vector<json> matmul = rows_named(profile, "matmul");
  REQUIRE(!matmul.empty());
  bool forward = false, backward = false;
  for (const json& row : matmul) {
    forward = forward || row.at("phase") == "forward";
    backward = backward || row.at("phase") == "backward";
    CHECK(row.at("variant") == "optimized");  // the default
    CHECK(row.at("flops").get<int64_t>() > 0);
  }
  CHECK(forward);
  CHECK(backward);
  // The SGD update is recorded as optimizer work.
  bool optimizer = false;
  for (const json& row : ops) optimizer = optimizer || row.at("phase") == "optimizer";
  CHECK(optimizer);

  const json trace = parse_file(dir / "trace.json");
  const json& events = trace.at("traceEvents");
  REQUIRE(events.is_array());
  int complete = 0, matmul_events = 0;
  for (const json& e : events) {
    if (e.value("ph", "") != "X") continue;
    ++complete;
    matmul_events += e.value("name", "") == "matmul";
  }
  CHECK(complete > 0);
  CHECK(matmul_events > 0);

  // The HTML report of the same profile: the three views, the CNN's rows, no network at all.
  CHECK(contains(r.out, "wrote report.html"));
  const std::string page = read_file(dir / "report.html");
  for (const char* s : {"<h3>Op breakdown</h3>", "<h3>Roofline</h3>", "<h3>Memory timeline (cpu)",
                        "conv2d", "model cnn"}) {
    CHECK_MESSAGE(contains(page, s), s);
  }
  CHECK_FALSE(contains(page, "http"));
  // The module rows of the JSON carry the model's types (the profiler knows paths only).
  bool conv_typed = false;
  for (const json& m : profile.at("modules")) {
    conv_typed =
        conv_typed || (m.value("path", "") == "model.conv1" && m.value("type", "") == "Conv2d");
  }
  CHECK(conv_typed);
}

TEST_CASE("prism demo --trace and --json choose the output paths") {
  TempDir dir;
  fs::create_directory(dir / "out");
  const RunResult r = run_prism(
      "demo --steps 3 --trace out/t.json --json out/p.json --report out/r.html", dir.path());
  REQUIRE(r.code == 0);
  CHECK(fs::exists(dir / "out" / "t.json"));
  CHECK(fs::exists(dir / "out" / "p.json"));
  CHECK(fs::exists(dir / "out" / "r.html"));
  CHECK_FALSE(fs::exists(dir / "trace.json"));
  CHECK_FALSE(fs::exists(dir / "report.html"));
  CHECK(contains(r.out, "out/t.json"));
}

TEST_CASE(
    "prism train --trace writes report.html beside the trace, and --report chooses its path") {
  TempDir dir;
  fs::create_directory(dir / "out");
  RunResult r = run_prism(
      "train mlp --data spirals --steps 12 --profile-steps 5 --threads 1 "
      "--trace out/t.json",
      dir.path());
  REQUIRE(r.code == 0);
  CHECK(fs::exists(dir / "out" / "report.html"));
  CHECK(contains(read_file(dir / "out" / "report.html"), "model mlp on spirals"));
  r = run_prism("train mlp --data spirals --steps 12 --profile-steps 5 --threads 1 --report p.html",
                dir.path());
  REQUIRE(r.code == 0);
  CHECK(fs::exists(dir / "p.html"));
  // The same path for two outputs is refused before the run.
  r = run_prism("train mlp --data spirals --steps 12 --json x.html --report x.html", dir.path());
  CHECK(r.code != 0);
  CHECK(contains(r.err, "--report"));
}

TEST_CASE("prism demo --kernel matmul=naive runs the naive matmul") {
  TempDir dir;
  const RunResult r = run_prism("demo --steps 5 --kernel matmul=naive", dir.path());
  REQUIRE(r.exited);
  REQUIRE(r.code == 0);
  const json profile = parse_file(dir / "profile.json");
  const std::vector<json> matmul = rows_named(profile, "matmul");
  REQUIRE(!matmul.empty());
  for (const json& row : matmul) CHECK(row.at("variant") == "naive");
}

TEST_CASE("prism demo --kernel with an unknown variant exits 2 naming the variants") {
  TempDir dir;
  const RunResult r = run_prism("demo --steps 5 --kernel matmul=nosuch", dir.path());
  REQUIRE(r.exited);
  CHECK(r.code == 2);
  CHECK(contains(r.err, "nosuch"));
  CHECK(contains(r.err, "naive"));
  CHECK(contains(r.err, "reference"));
  CHECK_FALSE(fs::exists(dir / "profile.json"));

  const RunResult op = run_prism("demo --steps 5 --kernel nosuch=naive", dir.path());
  CHECK(op.code == 2);
  CHECK(contains(op.err, "no op named 'nosuch'"));

  const RunResult form = run_prism("demo --steps 5 --kernel matmul", dir.path());
  CHECK(form.code == 2);
  CHECK(contains(form.err, "op=variant"));
}

TEST_CASE("prism demo with an unwritable output path exits 1 with a clear message") {
  TempDir dir;
  SUBCASE("a directory that does not exist") {
    const RunResult r = run_prism("demo --steps 3 --trace no/such/dir/trace.json", dir.path());
    REQUIRE(r.exited);
    CHECK(r.code == 1);
    CHECK(contains(r.err, "prism: error: cannot write"));
    CHECK(contains(r.err, "no/such/dir/trace.json"));
  }
  SUBCASE("a parent that is a file") {
    { std::ofstream(dir / "file") << "x"; }
    const RunResult r = run_prism("demo --steps 3 --json file/profile.json", dir.path());
    REQUIRE(r.exited);
    CHECK(r.code == 1);
    CHECK(contains(r.err, "file/profile.json"));
  }
}
